"""`hipo`'s arguments: every command, its options and their help.

Values are only collected here; the engine's one request parser (`memory.requests`) checks
them, so the CLI, the magics and the server give the same answer and the same error.
"""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path
from typing import Any

from hipo_jupyter.mcp.config import CONFIG_TARGETS
from hipo_jupyter.memory import (
    CHECKPOINT_TYPES,
    DEFAULT_BUDGET,
    DEFAULT_RECALL_MODE,
    RECALL_MODES,
    RequestError,
    parse_number,
)
from hipo_jupyter.memory.intake import FORMATS

from . import forget as cli_forget
from . import hooks as cli_hooks
from . import views as cli_views

HELP: dict[str, str] = {
    "init": "create memory/, knowledge/, plans/ and the Layer 1 files",
    "remember": "append one checkpoint (body read from stdin) to a raw daily log",
    "recall": "search the memory: Topics Index, compaction tree and raw logs",
    "compact": "bring the compaction tree (daily, weekly, monthly, ROOT) up to date",
    "status": "counts of logs, checkpoints, nodes and topics; the Layer 1 budget",
    "layer1": "print Layer 1 (ROOT.md and the working files) as a prompt sees it",
    "reindex": "rebuild the search index from the Markdown files",
    "import": "bring in past conversations: ChatGPT and Claude.ai exports (a file, folder or "
    "zip), JSON turns, LoCoMo, Claude Code .jsonl",
    "team": "team memory on PostgreSQL: `team sync` sends this folder's checkpoints",
    "check": "pass or fail for each protocol rule the memory folder can show",
    "mcp": "serve the memory to MCP clients: Claude Code, jupyter-ai, Claude Desktop",
    "demo": "run the quickstart notebook (in a temporary folder, or --dir) and show the memory",
    "hook": "a Claude Code hook (what `hipo mcp --install claude-code` registers): reads the "
    "event's JSON on stdin",
    **cli_views.HELP,
    **cli_forget.HELP,
}
"""Command -> one line of help, in the order `hipo --help` lists them."""

TYPES = "|".join(CHECKPOINT_TYPES)


class UsageError(Exception):
    """Bad command-line input: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad input as one line instead of usage plus a SystemExit."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def positive_int(text: str) -> int:
    """A flag's whole number of at least 1 (`requests.parse_number`: ASCII digits only)."""
    return int(_number(text, whole=True, low=1))


def positive_real(text: str) -> float:
    """A flag's finite number above 0 (`requests.parse_number`: no NaN, no infinity)."""
    value = float(_number(text, whole=False, low=0))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}")
    return value


def _number(text: str, **limits: Any) -> int | float:
    try:
        return parse_number(text, "the value", **limits)
    except RequestError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def package_version() -> str:
    try:
        return importlib.metadata.version("hipo-jupyter")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (see the module docstring for who checks the values)."""
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
        for name, text in HELP.items()
    }
    add_remember(sub["remember"])
    add_recall(sub["recall"])
    add_others(sub)
    return parser


def add_remember(remember: argparse.ArgumentParser) -> None:
    remember.add_argument(
        "title_words",
        nargs="*",
        metavar="TITLE",
        help="checkpoint title; `[type]` and `#tags` at its end are read as in %%%%remember",
    )
    remember.add_argument("--title", help="checkpoint title (instead of the positional TITLE)")
    remember.add_argument(
        "--type", metavar=TYPES, help="checkpoint type (default: the title's [type], or project)"
    )
    remember.add_argument("--tags", metavar="A,B", help="comma-separated tags")
    remember.add_argument("--date", metavar="YYYY-MM-DD", help="day of the log (default: today)")
    remember.add_argument(
        "--trigger", metavar="WHEN", help="a feedback rule: when it fires (implies feedback)"
    )
    remember.add_argument("--rule", metavar="DO", help="a feedback rule: what to do")
    remember.add_argument(
        "--replaces", metavar="ID", help="a correction of that checkpoint, which it supersedes"
    )


def add_recall(recall: argparse.ArgumentParser) -> None:
    recall.add_argument("query", nargs="+", metavar="QUERY", help="words to look for")
    recall.add_argument("-k", metavar="N", help="hits (default 5)")
    recall.add_argument("--since", metavar="YYYY-MM-DD", help="from this day")
    recall.add_argument("--until", metavar="YYYY-MM-DD", help="up to this day")
    recall.add_argument("--type", metavar=TYPES, help="only checkpoints of this type")
    recall.add_argument(
        "--all", action="store_true", help="also checkpoints a correction replaced"
    )
    recall.add_argument(
        "--mode",
        metavar="|".join(RECALL_MODES),
        default=DEFAULT_RECALL_MODE,
        help="keyword, semantic, hybrid, or auto: hybrid when the model is installed",
    )
    recall.add_argument("--json", action="store_true", help="print the hits as stable JSON")
    recall.add_argument(
        "--paths",
        action="store_true",
        help="also show each hit's way down the tree (ROOT -> monthly -> weekly -> daily -> raw)",
    )
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


def add_others(sub: dict[str, argparse.ArgumentParser]) -> None:
    team = sub["team"]
    team.add_argument("action", choices=("sync",), help="sync: push new raw checkpoints")
    team.add_argument(
        "--full",
        action="store_true",
        help="re-send every raw log and repair rows the database holds otherwise",
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
    cli_forget.add_arguments(sub)

    importing = sub["import"]
    importing.add_argument(
        "file", type=Path, metavar="FILE", help="the transcript, export, folder or zip to import"
    )
    importing.add_argument(
        "--format", choices=FORMATS, help="the file's format (default: detected from its content)"
    )
    importing.add_argument(
        "--progress", action="store_true", help="show the progress bar even when not on a TTY"
    )

    registering = sub["mcp"].add_mutually_exclusive_group()
    registering.add_argument(
        "--config",
        choices=CONFIG_TARGETS,
        help="print what registers this server in that client, instead of serving",
    )
    registering.add_argument(
        "--install",
        choices=CONFIG_TARGETS,
        metavar="CLIENT",
        help="merge this server into that client's config file (%(choices)s)",
    )
    registering.add_argument(
        "--uninstall",
        choices=CONFIG_TARGETS,
        metavar="CLIENT",
        help="take this server out of that client's config file",
    )
    sub["mcp"].add_argument(
        "--scope",
        choices=("project", "user"),
        default="project",
        help="with --install claude-code: this folder's .mcp.json and .claude/settings.json "
        "(project, the default) or the user's, for every project (user)",
    )

    cli_hooks.add_arguments(sub["hook"])

    demo = sub["demo"]
    demo.add_argument("--keep", action="store_true", help="keep the temporary folder")
    demo.add_argument(
        "--dir",
        type=Path,
        metavar="DIR",
        help="run in DIR and keep it (an earlier demo's DIR is made afresh)",
    )
    demo.add_argument(
        "--timeout", type=positive_int, default=300, metavar="S", help="seconds per cell"
    )
