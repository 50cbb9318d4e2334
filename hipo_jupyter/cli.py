"""`hipo`: the memory of a notebook folder, from the shell.

Each command opens the one `Memory` of the root, calls one engine function, formats the result
and maps errors to one line on stderr (exit code 2), never a traceback. The root is decided in one
place (`resolve_root`): `--root DIR`, else the HIPO_ROOT environment variable, else the working
directory. HIPO_TODAY=YYYY-MM-DD pins "today" for reproducible runs (tests, demos).

`recall --json` prints `RecallResult.to_json()`, the same document the server's /hipo/api/recall
answers, stable across versions (fields are only ever added):

    {"query": "pricing",
     "hits": [{"file": "memory/2026-03-12.md", "line": 14, "date": "2026-03-12",
               "kind": "raw", "type": "project", "title": "Competitor pricing",
               "snippet": "decisions: cut the starter tier by 15%", "score": 3.2,
               "path": ["memory/ROOT.md", "memory/monthly/2026-03.md",
                        "memory/weekly/2026-W11.md", "memory/daily/2026-03-12.md",
                        "memory/2026-03-12.md#L14"],
               "topics": ["pricing"], "provenance": "analysis.ipynb cell 7 via magic"}],
     "mode": "keyword", "did_you_mean": [], "topic_matches": ["pricing"]}

`file` is relative to the root and `line` 1-based; `kind` is raw, daily, weekly, monthly, root or
knowledge; `type` is the checkpoint type (project, feedback, user, reference) or "" for a
compaction node; `score` is higher for better hits (comparable within one answer only); `path` is
the drill-down from ROOT.md to the hit; `provenance` says where a raw hit came from (notebook,
cell, front end, model; "" when its checkpoint does not record it).
`recall --mode keyword|semantic|hybrid` chooses the ranking (default: hybrid when the
`[semantic]` extra is installed, else keyword).
`recall --context [--budget N]` prints instead the text a model is sent (`Memory.context`:
Layer 1, then the recalled memory fenced as data, within N tokens, 2,000 by default); with
`--json`, one object: query, text, tokens, budget, layer1_tokens, mode and the hits it holds
(in the form above). `status --json` prints the fields of `Status` (root, raw_days,
checkpoints, nodes, topics, layer1_tokens, layer1_budget, backend, last_compaction,
dirty_nodes, semantic) as one object. `recall --team` hits also carry `author` and `notebook`
(the team database's, `hipo team sync`). Exit codes: 0 done, 1 `check` found a rule failing,
2 bad input or a memory error (one line on stderr), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.metadata
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from hipo_jupyter import cli_views
from hipo_jupyter.demo import TODAY_ENV, execute_notebook, find_quickstart, notebook_today
from hipo_jupyter.memory import (
    CHECKPOINT_TYPES,
    HipoError,
    Memory,
    MemoryConfig,
    RecallResult,
    resolve_root,
)
from hipo_jupyter.memory.check import check_folder, results_text
from hipo_jupyter.memory.config import resolve_team_url
from hipo_jupyter.memory.importers import FORMATS, read_file
from hipo_jupyter.memory.nodes import parse_node
from hipo_jupyter.memory.provenance import VIA_CLI
from hipo_jupyter.memory.requests import (
    DEFAULT_BUDGET,
    MAX_BODY_CHARS,
    RECALL_MODES,
    CheckpointDraft,
    RecallQuery,
    parse_day,
)
from hipo_jupyter.memory.transcript_check import check_transcript

QUICKSTART = "quickstart.ipynb"


class UsageError(Exception):
    """Bad command-line input: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one line instead of usage plus a SystemExit."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# --- argument values --------------------------------------------------------------------------


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def today_from_env() -> Callable[[], date] | None:
    """The clock pinned by HIPO_TODAY, or None for the real one."""
    value = os.environ.get(TODAY_ENV, "").strip()
    if not value:
        return None
    pinned = parse_day(value, TODAY_ENV)
    return lambda: pinned


def open_memory(args: argparse.Namespace, *, reading: bool = False) -> Memory:
    """The one Memory of the root named by --root, HIPO_ROOT or the working directory.
    A command that only reads (`reading`) never creates a memory where there is none."""
    root = resolve_root(args.root)
    if not root.exists():
        raise HipoError(f"the memory root {root} does not exist (create it with `hipo init`)")
    if not root.is_dir():
        raise HipoError(f"the memory root {root} is not a folder")
    team = MemoryConfig(team_url=resolve_team_url(getattr(args, "team_url", None)))
    memory = Memory(root, today=today_from_env(), config=team)
    if reading and not memory.has_memory():
        raise HipoError(
            f"no memory in {root} yet: `hipo init` makes one, or `hipo remember` writes the "
            "first checkpoint"
        )
    return memory


def read_stdin_body() -> str:
    """The checkpoint body from stdin: UTF-8, at most the body limit (bounded: `hipo remember
    < /dev/zero` stops at once)."""
    if sys.stdin is None:
        return ""
    if sys.stdin.isatty():
        print("Reading the checkpoint body from stdin; end with Ctrl-D.", file=sys.stderr)
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream without bytes (tests, embedding): already decoded
        return sys.stdin.read(MAX_BODY_CHARS + 1)
    data = stream.read(4 * MAX_BODY_CHARS + 4)
    if len(data) > 4 * MAX_BODY_CHARS:
        raise UsageError(f"the body on stdin is over the {MAX_BODY_CHARS:,}-character limit")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UsageError(f"the body on stdin is not UTF-8 text (byte {error.start})") from None


# --- progress ---------------------------------------------------------------------------------


class ProgressBar:
    """The engine's `progress(done, total, label)` shown as a tqdm bar on stderr, only on a TTY."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, file=self.stream, leave=False, dynamic_ncols=True)
        self._bar.total = total
        self._bar.set_description(label, refresh=False)
        self._bar.n = done
        self._bar.refresh()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


# --- formatting -------------------------------------------------------------------------------


def format_recall(result: RecallResult) -> str:
    if not result.hits:
        lines = [f"No memory of {result.query!r}."]
        if result.did_you_mean:
            lines.append("Did you mean: " + ", ".join(result.did_you_mean) + "?")
        return "\n".join(lines)
    lines = []
    if result.topic_matches:
        lines.append("Topics: " + ", ".join(result.topic_matches))
    for number, hit in enumerate(result.hits, 1):
        kind = f"{hit.kind}/{hit.type}" if hit.type else hit.kind
        by = f"  by {hit.author} in {hit.notebook}" if hit.author else ""
        lines.append(f"{number}. {hit.title}  [{kind}, {hit.date}]  {hit.file}:{hit.line}{by}")
        for snippet_line in hit.snippet.strip().splitlines():
            lines.append(f"     {snippet_line}")
        if hit.path:
            lines.append("     via " + " -> ".join(hit.path))
        if hit.provenance:
            lines.append(f"     source: {hit.provenance}")
    return "\n".join(lines)


def format_status(status: Any) -> str:
    nodes = ", ".join(f"{count} {kind}" for kind, count in status.nodes.items())
    return "\n".join(
        [
            f"root:            {status.root}",
            f"raw logs:        {status.raw_days} day{'' if status.raw_days == 1 else 's'}, "
            f"{status.checkpoints} checkpoint{'' if status.checkpoints == 1 else 's'}",
            f"nodes:           {nodes or 'none'}",
            f"topics:          {status.topics}",
            f"layer 1:         {status.layer1_tokens:,} / {status.layer1_budget:,} tokens",
            f"search backend:  {status.backend}",
            f"last compaction: {status.last_compaction or 'never'}",
            f"dirty nodes:     {status.dirty_nodes}",
            *([f"semantic:        {status.semantic}"] if getattr(status, "semantic", "") else []),
        ]
    )


def format_import(report: Any, file: Path) -> str:
    if not report.written:
        return f"Nothing new in {file.name}: its {report.skipped} turns are already in memory."
    days = report.days
    span = days[0] if len(days) == 1 else f"{days[0]} .. {days[-1]}"
    lines = [
        f"Imported {report.written} turns from {file.name} into {len(days)} raw logs ({span})"
        + (f"; {report.skipped} already there" if report.skipped else "")
        + "."
    ]
    if report.compaction is not None:
        lines.append(format_compaction(report.compaction).split("\n", 1)[0])
    return "\n".join(lines)


def format_compaction(report: Any) -> str:
    if not report.changed and not report.fixed and not report.errors:
        return f"Nothing to compact ({report.seconds:.2f}s)."
    lines = [
        f"Compacted: {len(report.built)} built ({len(report.summarized)} summarized), "
        f"{len(report.fixed)} fixed, {len(report.reopened)} reopened in {report.seconds:.2f}s"
    ]
    lines += [f"  {path}" for path in report.built]
    return "\n".join(lines)


# --- commands ---------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> int:
    root = resolve_root(args.root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HipoError(f"cannot create the memory root {root}: {error.strerror}") from None
    memory = Memory(root, today=today_from_env())
    try:
        memory.init()
    finally:
        memory.close()
    print(f"Memory ready at {memory.root}")
    return 0


def cmd_remember(args: argparse.Namespace) -> int:
    # the title line reads as in %%remember: `Competitor pricing [project] #pricing #q1`
    title = args.title if args.title is not None else " ".join(args.title_words)
    if not title.strip():
        raise UsageError("remember needs a title: `hipo remember TITLE` or `--title TITLE`")
    draft = CheckpointDraft.parse(
        title,
        read_stdin_body(),
        type=args.type,
        tags=args.tags,
        on=args.date,
        trigger=args.trigger,
        rule=args.rule,
    )
    memory = open_memory(args)
    try:
        checkpoint = memory.write_checkpoint(draft, via=VIA_CLI)
    finally:
        memory.close()
    print(f"memory/{checkpoint.date}.md  {checkpoint.id}")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    request = RecallQuery.parse(
        args.query,
        k=args.k,
        since=args.since,
        until=args.until,
        type=args.type,
        mode=args.mode,
        budget=args.budget,
    )  # checked before the folder is looked at, as everywhere
    if request.budget is not None and not args.context:
        raise UsageError("--budget goes with --context (the token budget of the context)")
    memory = open_memory(args, reading=not args.team)
    try:
        if args.context:  # the text a model would be sent: Memory.context
            answer: Any = memory.context_query(request, team=args.team)
        elif args.team:
            answer = memory.team_recall(request)
        else:
            answer = memory.recall_query(request)
    finally:
        memory.close()
    if args.json:
        print(json.dumps(answer.to_json(), indent=2, ensure_ascii=False))
    else:
        print(answer.text if args.context else format_recall(answer))
    return 0


def cmd_team(args: argparse.Namespace) -> int:
    """`hipo team sync`: this folder's raw checkpoints to the team database (issue 16)."""
    memory = open_memory(args, reading=True)
    try:
        report = memory.team_sync(full=args.full)
    finally:
        memory.close()
    print(
        f"Team sync: {report.rows} checkpoints from {report.sent_files} changed of "
        f"{report.files} raw logs, {report.written} new or updated in the team database"
        + (f"; {report.excluded} kept local (team_exclude)" if report.excluded else "")
        + "."
    )
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    try:
        with ProgressBar() as progress:
            report = memory.compact(progress=progress)
    finally:
        memory.close()
    print(format_compaction(report))
    for error in report.errors:
        print(f"hipo: warning: {error}", file=sys.stderr)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    memory = open_memory(args, reading=True)
    try:
        status = memory.status()
    finally:
        memory.close()
    if args.json:
        print(json.dumps(dataclasses.asdict(status), indent=2, ensure_ascii=False))
    else:
        print(format_status(status))
    return 0


def cmd_layer1(args: argparse.Namespace) -> int:
    memory = open_memory(args, reading=True)
    try:
        layer1 = memory.layer1()
    finally:
        memory.close()
    print(layer1.text)
    for part in layer1.parts:
        note = " (cut to budget)" if part.truncated else "" if part.exists else " (no file)"
        usage = f"{part.tokens:>6,} / {part.budget:>6,} tokens"
        print(f"{part.name:<11} {usage}{note}", file=sys.stderr)
    total = f"{layer1.total_tokens:>6,} / {layer1.total_budget:>6,} tokens"
    print(f"{'total':<11} {total}", file=sys.stderr)
    return 0


def cmd_reindex(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    try:
        with ProgressBar() as progress:
            count = memory.reindex(progress=progress)
    finally:
        memory.close()
    print(f"Indexed {count} documents.")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    records = read_file(args.file, args.format)  # the whole file is checked before any write
    memory = open_memory(args)
    try:
        with ProgressBar() as progress:
            report = memory.import_records(records, progress=progress)
    finally:
        memory.close()
    print(format_import(report, args.file))
    if report.compaction is not None:
        for error in report.compaction.errors:
            print(f"hipo: warning: {error}", file=sys.stderr)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    if args.transcript is not None:  # a session's transcript, not the memory folder
        results = check_transcript(args.transcript, strict=args.strict)
        print(results_text(results))
        return 0 if all(r.passed for r in results) else 1
    if args.strict:
        raise UsageError("--strict goes with --transcript FILE")
    memory = open_memory(args, reading=True)
    try:
        results = check_folder(memory)
    finally:
        memory.close()
    print(results_text(results))
    return 0 if all(r.passed for r in results) else 1


def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        from hipo_jupyter import mcp as mcp_server
    except ImportError as error:
        missing = error.name or error
        raise UsageError(f"hipo mcp needs {missing}: pip install 'hipo-jupyter[mcp]'") from None
    memory = open_memory(args)
    if args.config:
        memory.close()
        print(mcp_server.config_snippet(args.config, memory.root))
        print(f"hipo: {mcp_server.CONFIG_WHERE[args.config]}", file=sys.stderr)
        return 0
    try:
        mcp_server.serve(memory)
    finally:
        memory.close()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    source = find_quickstart()
    folder = Path(tempfile.mkdtemp(prefix="hipo-demo-"))
    try:
        notebook = folder / QUICKSTART
        shutil.copyfile(source, notebook)
        today = os.environ.get(TODAY_ENV) or notebook_today(notebook)
        print(f"Running {source.name} in {folder} ...", file=sys.stderr)
        executed = execute_notebook(notebook, timeout=args.timeout, today=today)
        import nbformat

        nbformat.write(executed, notebook)
        print(format_demo(folder, today=today))
        if args.keep:
            print(f"\nThe executed notebook and its memory are in {folder}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


# --- demo output ------------------------------------------------------------------------------


def topics_index(root_text: str) -> str:
    """The `## Topics Index` section of ROOT.md, without its heading."""
    match = re.search(r"^## Topics Index[^\n]*\n(.*?)(?=^## |\Z)", root_text, re.DOTALL | re.M)
    return match.group(1).strip() if match else ""


TREE_ORDER = {"daily": 1, "weekly": 2, "monthly": 3, "ROOT.md": 4}


def memory_tree(root: Path) -> list[str]:
    """Files under memory/ (hidden ones left out), raw logs first and ROOT.md last, each with
    its node status."""
    memory_dir = root / "memory"
    files = [
        file
        for file in memory_dir.rglob("*.md")
        if not any(part.startswith(".") for part in file.relative_to(memory_dir).parts)
    ]
    files.sort(key=lambda f: (TREE_ORDER.get(f.relative_to(memory_dir).parts[0], 0), f.name))
    lines = []
    for file in files:
        status = parse_node(file.read_text(encoding="utf-8", errors="replace")).status
        lines.append(f"  {file.relative_to(root).as_posix():<30} {status or 'raw log'}")
    return lines


def format_demo(folder: Path, *, today: str | None = None) -> str:
    """What the demo shows of the memory it made: the tree, the Topics Index, one recall."""
    pinned = parse_day(today, TODAY_ENV) if today else None
    memory = Memory(folder, today=(lambda: pinned) if pinned else None)
    try:
        root_file = folder / "memory" / "ROOT.md"
        index = topics_index(root_file.read_text(encoding="utf-8")) if root_file.is_file() else ""
        result = memory.recall("pricing", k=3)
    finally:
        memory.close()
    parts = ["Memory tree:", *memory_tree(folder), "", "Topics Index (memory/ROOT.md):"]
    parts.append(index or "  (empty)")
    parts += ["", "$ hipo recall pricing -k 3", format_recall(result)]
    return "\n".join(parts)


# --- parser -----------------------------------------------------------------------------------


def _with_memory(
    command: Callable[[argparse.Namespace, Memory], int],
) -> Callable[[argparse.Namespace], int]:
    """A command of cli_views run on the memory of the root (read-only: never creates one)."""

    def run(args: argparse.Namespace) -> int:
        memory = open_memory(args, reading=True)
        try:
            return command(args, memory)
        finally:
            memory.close()

    return run


COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], str]] = {
    "init": (cmd_init, "create memory/, knowledge/, plans/ and the Layer 1 files"),
    "remember": (cmd_remember, "append one checkpoint (body read from stdin) to a raw daily log"),
    "recall": (cmd_recall, "search the memory: Topics Index, compaction tree and raw logs"),
    "compact": (cmd_compact, "bring the compaction tree (daily, weekly, monthly, ROOT) up to date"),
    "status": (cmd_status, "counts of logs, checkpoints, nodes and topics; the Layer 1 budget"),
    "layer1": (cmd_layer1, "print Layer 1 (ROOT.md and the working files) as a prompt sees it"),
    "reindex": (cmd_reindex, "rebuild the search index from the Markdown files"),
    "import": (cmd_import, "bring in past conversations: JSON turns, LoCoMo, Claude Code .jsonl"),
    "team": (cmd_team, "team memory on PostgreSQL: `team sync` sends this folder's checkpoints"),
    "check": (cmd_check, "pass or fail for each protocol rule the memory folder can show"),
    "mcp": (cmd_mcp, "serve the memory to MCP clients: Claude Code, jupyter-ai, Claude Desktop"),
    "demo": (cmd_demo, "run the quickstart notebook in a temporary folder and show the memory"),
    **{name: (_with_memory(getattr(cli_views, f"cmd_{name}")), text)
       for name, text in cli_views.HELP.items()},  # fmt: skip
}


def build_parser() -> argparse.ArgumentParser:
    """Values are checked by the engine's one parser (`memory.requests`), not by argparse, so
    the CLI, the magics and the server give the same answer and the same error."""
    parser = _Parser(
        prog="hipo",
        description="Persistent memory for a notebook folder (the Hipocampus layout).",
        epilog="The memory root is --root, else $HIPO_ROOT, else the working directory.",
    )
    parser.add_argument(
        "--root", metavar="DIR", help="memory root folder (default: $HIPO_ROOT or the cwd)"
    )
    parser.add_argument(
        "--team-url", metavar="URL", help="the team's PostgreSQL database (default: $HIPO_TEAM)"
    )
    parser.add_argument("--version", action="version", version=f"hipo {package_version()}")
    # Global options are also accepted after the command; SUPPRESS keeps a value given before.
    global_options = _Parser(add_help=False)
    global_options.add_argument(
        "--root", default=argparse.SUPPRESS, metavar="DIR", help="memory root folder"
    )
    global_options.add_argument(
        "--team-url", default=argparse.SUPPRESS, metavar="URL", help="team database URL"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub = {
        name: commands.add_parser(name, help=text, description=text, parents=[global_options])
        for name, (_, text) in COMMANDS.items()
    }
    types = "|".join(CHECKPOINT_TYPES)

    remember = sub["remember"]
    remember.add_argument(
        "title_words",
        nargs="*",
        metavar="TITLE",
        help="checkpoint title; `[type]` and `#tags` at its end are read as in %%%%remember",
    )
    remember.add_argument("--title", help="checkpoint title (instead of the positional TITLE)")
    remember.add_argument(
        "--type", metavar=types, help="checkpoint type (default: the title's [type], or project)"
    )
    remember.add_argument("--tags", metavar="A,B", help="comma-separated tags")
    remember.add_argument("--date", metavar="YYYY-MM-DD", help="day of the log (default: today)")
    remember.add_argument(
        "--trigger", metavar="WHEN", help="a feedback rule: when it fires (implies feedback)"
    )
    remember.add_argument("--rule", metavar="DO", help="a feedback rule: what to do")

    recall = sub["recall"]
    recall.add_argument("query", nargs="+", metavar="QUERY", help="words to look for")
    recall.add_argument("-k", metavar="N", help="hits (default 5)")
    recall.add_argument("--since", metavar="YYYY-MM-DD", help="from this day")
    recall.add_argument("--until", metavar="YYYY-MM-DD", help="up to this day")
    recall.add_argument("--type", metavar=types, help="only checkpoints of this type")
    recall.add_argument(
        "--mode",
        metavar="|".join(RECALL_MODES),
        default="auto",
        help="keyword, semantic (extra [semantic]), hybrid, or auto: hybrid when it is installed",
    )
    recall.add_argument("--json", action="store_true", help="print the hits as stable JSON")
    recall.add_argument(
        "--context",
        action="store_true",
        help="print the context a model is sent (Layer 1, then the recalled memory, fenced)",
    )
    recall.add_argument(
        "--budget",
        metavar="N",
        help=f"with --context: its size in tokens (default {DEFAULT_BUDGET:,})",
    )
    recall.add_argument(
        "--team", action="store_true", help="search the team database (--team-url, $HIPO_TEAM)"
    )

    team = sub["team"]
    team.add_argument("action", choices=("sync",), help="sync: push new raw checkpoints")
    team.add_argument(
        "--full", action="store_true", help="re-send every raw log (adds nothing twice)"
    )

    sub["status"].add_argument("--json", action="store_true", help="print the status as JSON")
    check = sub["check"]
    check.add_argument(
        "--transcript",
        type=Path,
        metavar="SESSION.jsonl",
        help="audit a Claude Code session transcript instead of the folder",
    )
    check.add_argument(
        "--strict", action="store_true", help="with --transcript: fail a read after the answer"
    )
    cli_views.add_arguments(sub)

    importing = sub["import"]
    importing.add_argument("file", type=Path, metavar="FILE", help="the transcript to import")
    importing.add_argument(
        "--format", choices=FORMATS, help="the file's format (default: detected from its content)"
    )

    sub["mcp"].add_argument(
        "--config",
        choices=("claude-code", "jupyter-ai", "claude-desktop"),
        help="print what registers this server in that client, instead of serving",
    )

    demo = sub["demo"]
    demo.add_argument("--keep", action="store_true", help="keep the temporary folder")
    demo.add_argument(
        "--timeout", type=positive_int, default=300, metavar="S", help="seconds per cell"
    )
    return parser


def package_version() -> str:
    try:
        return importlib.metadata.version("hipo-jupyter")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def one_line(message: str) -> str:
    """Errors are reported on one line, whatever the engine's message looks like."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code (0 ok, 2 bad input or a memory error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler, _ = COMMANDS[args.command]
        code = handler(args)
        sys.stdout.flush()
        return code
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except BrokenPipeError:
        return quiet_broken_pipe()
    except (UsageError, HipoError) as error:
        print(f"hipo: error: {one_line(str(error))}", file=sys.stderr)
        return 2
    except OSError as error:
        where = f" {error.filename}:" if error.filename else ""
        print(f"hipo: error:{where} {error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hipo: interrupted", file=sys.stderr)
        return 130


def quiet_broken_pipe() -> int:
    """The reader went away (`hipo recall x | head -1`): stop quietly, as Unix tools do when
    SIGPIPE ends them, and keep Python from complaining about stdout at exit."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":
    sys.exit(main())
