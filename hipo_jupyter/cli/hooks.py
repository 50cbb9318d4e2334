"""`hipo hook EVENT`: the memory handed to Claude Code unasked, by the hooks `hipo mcp --install
claude-code` writes in `.claude/settings.json` (`mcp/hooks_config.py`).

Claude Code runs the command with the event's JSON on stdin and reads what it prints:

- `session-start` (SessionStart: startup, resume, clear, compact): Layer 1, fenced as memory
  (`fence_layer1`, the block `%%ask` sends), with its token count, as `additionalContext`,
  under Claude Code's 10,000-character limit (a longer Layer 1 is cut at a line, and says so);
- `prompt` (UserPromptSubmit): the memory recalled for the prompt (`Memory.context`, as
  `%%ask` recalls, without Layer 1, which the session already has), within PROMPT_BUDGET tokens
  and PROMPT_SECONDS; nothing at all when nothing matches. Keyword recall only: loading the
  embedding model costs seconds per process (benchmarks/hook_prompt.py measures the hook);
- `stop`, `pre-compact`, `session-end` (Stop, PreCompact, SessionEnd): the session's exchanges
  in `transcript_path` become checkpoints (`intake.session_records`), in a detached process
  (`write`) that `hook_handoff.py` starts before the engine loads, so the hook itself answers
  in a fraction of a second (SessionEnd allows 1.5 s).

The memory is the folder Claude Code works in: `--root` when given, else $CLAUDE_PROJECT_DIR,
else the `cwd` of the event, so a copied folder or a clone talks to its own memory. A folder
without a memory is left alone (a hook installed for every project, `--scope user`).

A hook never blocks or fails the session: whatever goes wrong is one line in
`memory/.hooks.log` and the exit code is 0 (Claude Code reads 2 as "block this prompt").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hipo_jupyter.memory import HipoError, Memory, MemoryConfig, ParseError
from hipo_jupyter.memory.disk import MAX_LINE_BYTES, parse_json, redact
from hipo_jupyter.memory.intake import LAYER1_HEAD, session_records
from hipo_jupyter.memory.recall import fence_layer1

from . import hook_handoff
from .hook_handoff import HANDED_OFF

EVENTS = ("session-start", "prompt", "stop", "pre-compact", "session-end")
WRITE = "write"  # the detached step of the last three: reads the transcript, writes checkpoints
HOOK_EVENT_NAMES = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}
MAX_CONTEXT_CHARS = 9_500  # Claude Code keeps at most 10,000 characters of a hook's context
PROMPT_BUDGET = 1_500  # tokens of recalled memory per prompt: ~6,000 characters
PROMPT_SECONDS = 5.0  # Claude Code gives a hook 30 s by default (the settings say 10)
QUERY_CHARS = 2_000  # a pasted file in a prompt is not all query
LOG_NAME = ".hooks.log"
MAX_LOG_BYTES = 1 << 20  # the log stops growing here (it is for the last few problems)
CUT_NOTE = "[cut at {shown:,} of {total:,} characters: `hipo layer1` or hipo's layer1 tool has all]"


class HookInputError(ValueError):
    """The event's JSON is not what Claude Code sends."""


def add_arguments(hook: argparse.ArgumentParser) -> None:
    hook.add_argument("event", choices=(*EVENTS, WRITE), help="the Claude Code event")
    hook.add_argument("--event", dest="written_for", choices=HANDED_OFF, default="stop",
                      help=argparse.SUPPRESS)  # `write`: the hook it writes for  # fmt: skip


def cmd_hook(args: argparse.Namespace) -> int:
    """Run one hook; always 0. Its problems go to the memory's .hooks.log, one line each."""
    root: Path | None = None
    name = args.written_for if args.event == WRITE else args.event
    try:
        data = sys.stdin.buffer.read(MAX_LINE_BYTES + 1)
        if args.event in HANDED_OFF:  # reached without `entry.py` (python -m): as it does
            words = [*(["--root", args.root] if args.root else []), "hook", args.event]
            hook_handoff.start_writer(hook_handoff.writer_command(words), data)
            return 0
        event = read_event(data)
        root = memory_root(args.root, event)
        if root is None:
            return 0
        if args.event == WRITE:
            write_event(name, root, event)
            return 0
        answer = answer_event(args.event, root, event)
        if answer:
            sys.stdout.write(json.dumps(answer, ensure_ascii=True) + "\n")
    except Exception as error:  # noqa: BLE001 - a hook must never fail the session
        log_problem(root, name, error)
    return 0


def read_event(data: bytes) -> dict[str, Any]:
    """The event's JSON object (at most MAX_LINE_BYTES, the engine's bounded parser)."""
    if len(data) > MAX_LINE_BYTES:
        raise HookInputError(f"the event's JSON is over {MAX_LINE_BYTES:,} bytes")
    if not data.strip():
        return {}
    try:
        event = parse_json(data.decode("utf-8", errors="replace"), "the hook's input")
    except ParseError as error:
        raise HookInputError(str(error)) from None
    if not isinstance(event, dict):
        raise HookInputError("the hook's input is not a JSON object")
    return event


def text_field(event: dict[str, Any], name: str) -> str:
    value = event.get(name)
    return value if isinstance(value, str) else ""


def memory_root(explicit: str | None, event: dict[str, Any]) -> Path | None:
    """The folder whose memory this session uses, or None when it has none (left alone)."""
    chosen = explicit or os.environ.get("CLAUDE_PROJECT_DIR") or text_field(event, "cwd")
    if not chosen:
        return None
    root = Path(chosen).expanduser().absolute()
    if not (root / "memory").is_dir():
        return None
    return root


def answer_event(name: str, root: Path, event: dict[str, Any]) -> dict[str, Any] | None:
    """What the hook prints for `name` (session-start, prompt), or None (nothing to add)."""
    if name == "session-start":
        return context_answer(name, session_start_text(root))
    text = prompt_text(root, text_field(event, "prompt"))
    return context_answer(name, text) if text else None


def context_answer(name: str, text: str) -> dict[str, Any]:
    output = {"hookEventName": HOOK_EVENT_NAMES[name], "additionalContext": text}
    return {"hookSpecificOutput": output}


def quick_memory(root: Path) -> Memory:
    """The memory for a hook that only reads: no embedding model (seconds to load)."""
    return Memory(root, config=MemoryConfig(semantic=False))


def session_start_text(root: Path) -> str:
    """Layer 1 fenced, with its tokens said, in at most MAX_CONTEXT_CHARS characters."""
    memory = quick_memory(root)
    try:
        layer1 = memory.layer1()
    finally:
        memory.close()
    text, total = layer1.text, len(layer1.text)
    head = f"{LAYER1_HEAD} ({layer1.total_tokens:,} tokens), quoted data:"
    shown = text
    while True:
        block = f"{head}\n{fence_layer1(shown)}"
        if len(block) <= MAX_CONTEXT_CHARS:
            return block
        over = len(block) - MAX_CONTEXT_CHARS + len(CUT_NOTE) + 20
        cut = text[: max(0, len(shown) - over)]
        cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
        shown = f"{cut}{CUT_NOTE.format(shown=len(cut), total=total)}"


def prompt_text(root: Path, prompt: str) -> str:
    """The recalled memory for `prompt` ("" when nothing matches or recall is too slow)."""
    query = " ".join(prompt[:QUERY_CHARS].split())
    if not query:
        return ""
    found: list[str] = []

    def recall() -> None:
        memory = quick_memory(root)
        try:
            context = memory.context(query, budget=PROMPT_BUDGET, layer1=False, mode="keyword")
            budget = PROMPT_BUDGET
            while context.hits and len(context.text) > MAX_CONTEXT_CHARS and budget > 100:
                budget //= 2
                context = memory.context(query, budget=budget, layer1=False, mode="keyword")
            if context.hits and len(context.text) <= MAX_CONTEXT_CHARS:
                found.append(context.text)
        finally:
            memory.close()

    errors: list[BaseException] = []

    def guarded() -> None:
        try:
            recall()
        except BaseException as error:  # noqa: BLE001 - reported by the caller
            errors.append(error)

    worker = threading.Thread(target=guarded, daemon=True)
    worker.start()
    worker.join(PROMPT_SECONDS)
    if worker.is_alive():
        raise TimeoutError(f"recall took over {PROMPT_SECONDS:g} s; the prompt went without it")
    if errors:
        raise errors[0]
    return found[0] if found else ""


# --- writing the session: a detached process ----------------------------------------------------


def write_event(name: str, root: Path, event: dict[str, Any]) -> int:
    """The detached writer's work for the hook `name`: its transcript's new exchanges."""
    transcript = text_field(event, "transcript_path")
    if not transcript:
        raise HookInputError(f"{name}: the event names no transcript_path")
    if not Path(transcript).is_absolute():
        raise HookInputError("transcript_path is not an absolute path")
    held = name == "pre-compact" and text_field(event, "trigger") == "auto"  # mid-reply
    return write_session(root, Path(transcript), hold_last=held)


def write_session(root: Path, transcript: Path | None, *, hold_last: bool) -> int:
    """The transcript's new exchanges written as checkpoints; how many. One writer per memory
    at a time (a lock file beside the index), so two hooks never write one exchange twice."""
    if transcript is None:
        raise HookInputError("write needs --transcript")
    records = session_records(transcript, hold_last=hold_last)
    if not records:
        return 0
    memory = Memory(root)
    try:
        with session_lock(memory):
            return memory.import_records(records).written
    finally:
        memory.close()


class session_lock:  # noqa: N801 - used as a context manager, named as one reads
    """An exclusive lock (flock) on memory/.index/claude-code.lock, opened inside the root
    through the memory folder, never a symlink."""

    def __init__(self, memory: Memory) -> None:
        self.index_dir = memory.store.index_dir
        self.fd = -1

    def __enter__(self) -> None:
        import fcntl

        self.index_dir.mkdir(parents=True, exist_ok=True)
        folder = os.open(self.index_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            self.fd = os.open("claude-code.lock", flags, 0o600, dir_fd=folder)
        finally:
            os.close(folder)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)  # closing releases the lock


# --- the log --------------------------------------------------------------------------------------


def log_problem(root: Path | None, event: str, error: BaseException) -> None:
    """One line in memory/.hooks.log (redacted, control characters out); nowhere when the
    folder has no memory. Never raises."""
    try:
        if root is None or not (root / "memory").is_dir():
            return
        message = " ".join(str(error).split())[:300] or type(error).__name__
        if not isinstance(error, (HipoError, HookInputError, OSError)):
            message = f"{type(error).__name__}: {message}"
        line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {event}: {redact(message)}"
        line = "".join(ch if ch.isprintable() else "?" for ch in line) + "\n"
        folder = os.open(root / "memory", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(LOG_NAME, flags | os.O_NONBLOCK, 0o600, dir_fd=folder)
        finally:
            os.close(folder)
        try:
            import stat

            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_size < MAX_LOG_BYTES:
                os.write(fd, line.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001, S110 - the log is the last resort; nothing after it
        pass
