"""`hipo check --transcript`: did an agent keep the protocol in one Claude Code session?

A transcript (the `.jsonl` that `hipo import` reads) is walked record by record for three
kinds of event:

- memory loaded: Layer 1 in the context (a message holding `# memory/ROOT.md`, the header
  `Memory.layer1()` writes, or ROOT.md's `## Topics Index`), a `Read` of a `ROOT.md`, a tool
  whose name contains `recall` (`mcp__hipo__recall`), or a shell command running
  `hipo recall`, `hipo layer1` or reading `ROOT.md`;
- a substantive answer: an assistant text of at least SUBSTANTIVE_WORDS words (a short "Let me
  look" before the first tool call is not an answer);
- a checkpoint: a `Write`/`Edit` of a raw log `memory/YYYY-MM-DD.md`, a tool whose name
  contains `remember`, or a shell command running `hipo remember`.

Two rules follow: the memory was loaded before the first substantive answer, and a checkpoint
was written before the session ended. Loading the memory only after answering passes with a
warning, and fails with `strict` (a read-after-respond).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..views.check import CheckResult
from .importers import claude_code_records, read_transcript_text

SUBSTANTIVE_WORDS = 20
LAYER1_MARKERS = ("# memory/ROOT.md", "## Topics Index")
RAW_LOG_RE = re.compile(r"(?:^|/)memory/\d{4}-\d{2}-\d{2}\.md\Z")
LOAD_COMMAND_RE = re.compile(r"\bhipo\s+(?:recall|layer1)\b|ROOT\.md")
REMEMBER_COMMAND_RE = re.compile(r"\bhipo\s+remember\b|>>\s*\S*memory/\d{4}-\d{2}-\d{2}\.md")


@dataclass(frozen=True)
class Event:
    kind: str  # "load" | "answer" | "checkpoint"
    line: int  # line of the transcript
    detail: str


def transcript_events(records: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[Event]:
    """The protocol events of a transcript, in order (see the module doc)."""
    for number, record in records:
        if record.get("isSidechain"):
            continue  # a sub-agent's own conversation
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else record.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        assistant = record.get("type") == "assistant"
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and assistant:
                yield from _tool_events(number, block)
            elif block.get("type", "text") == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if assistant:
                    if len(text.split()) >= SUBSTANTIVE_WORDS:
                        yield Event("answer", number, "an answer")
                elif any(marker in text for marker in LAYER1_MARKERS):
                    yield Event("load", number, "Layer 1 in the context")


def _tool_events(number: int, block: dict[str, Any]) -> Iterator[Event]:
    name = str(block.get("name", ""))
    given = block.get("input")
    given = given if isinstance(given, dict) else {}
    path = str(given.get("file_path") or given.get("path") or "")
    command = str(given.get("command") or "")
    lowered = name.lower()
    if (name == "Read" and path.endswith("ROOT.md")) or "recall" in lowered:
        yield Event("load", number, f"{name} {path}".strip())
    elif lowered in ("bash", "shell") and LOAD_COMMAND_RE.search(command):
        yield Event("load", number, f"{name}: {' '.join(command.split())[:60]}")
    if name in ("Write", "Edit", "MultiEdit") and RAW_LOG_RE.search(path):
        yield Event("checkpoint", number, f"{name} {path}")
    elif "remember" in lowered:
        yield Event("checkpoint", number, name)
    elif lowered in ("bash", "shell") and REMEMBER_COMMAND_RE.search(command):
        yield Event("checkpoint", number, f"{name}: {' '.join(command.split())[:60]}")


def check_transcript(path: str | Path, *, strict: bool = False) -> list[CheckResult]:
    """The two protocol rules for one session transcript; ImportFormatError if it is not one."""
    path = Path(path)
    text = read_transcript_text(path)
    events = list(transcript_events(claude_code_records(text, path.name)))
    return [_loaded_first(events, strict), _checkpointed(events)]


def _loaded_first(events: list[Event], strict: bool) -> CheckResult:
    rule = "memory was loaded before the first answer"
    load = next((e for e in events if e.kind == "load"), None)
    answer = next((e for e in events if e.kind == "answer"), None)
    if load is None:
        where = f"first answer at line {answer.line}" if answer else "and no answer either"
        return CheckResult(rule, False, f"no Layer 1, ROOT.md read or recall; {where}")
    if answer is None or load.line <= answer.line:
        after = f", first answer at line {answer.line}" if answer else ", no answer"
        return CheckResult(rule, True, f"{load.detail} at line {load.line}{after}")
    detail = (
        f"read after respond: first answer at line {answer.line}, {load.detail} only at "
        f"line {load.line}"
    )
    return CheckResult(rule, not strict, detail if strict else f"warning: {detail}")


def _checkpointed(events: list[Event]) -> CheckResult:
    rule = "a checkpoint was written before the session ended"
    written = [e for e in events if e.kind == "checkpoint"]
    if not written:
        return CheckResult(rule, False, "no write to memory/YYYY-MM-DD.md and no remember")
    last = written[-1]
    count = f"{len(written)} checkpoint{'s' * (len(written) != 1)}"
    return CheckResult(rule, True, f"{count}, the last at line {last.line} ({last.detail})")
