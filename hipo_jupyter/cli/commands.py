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
               "topics": ["pricing"], "provenance": "analysis.ipynb cell 7"}],
     "mode": "keyword", "did_you_mean": [], "topic_matches": ["pricing"]}

`file` is relative to the root and `line` 1-based; `kind` is raw, daily, weekly, monthly, root or
knowledge; `type` is the checkpoint type (project, feedback, user, reference) or "" for a
compaction node; `score` is higher for better hits (comparable within one answer only); `path` is
the drill-down from ROOT.md to the hit; `snippet` is the passage of the hit that answers the
query; `provenance` says where a raw hit came from, as a phrase read after "from"
("analysis.ipynb cell 7", "the command line", "MCP"; "" when its checkpoint does not record it).
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
import logging
import os
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from hipo_jupyter import terminal
from hipo_jupyter.memory import (
    CheckpointDraft,
    HipoError,
    Memory,
    MemoryConfig,
    RecallQuery,
    parse_day,
    render,
    require_title,
    resolve_root,
    resolve_team_url,
)
from hipo_jupyter.memory.disk import VIA_CLI, raw_log_path
from hipo_jupyter.memory.intake import check_transcript, plan_import
from hipo_jupyter.memory.views import check_folder, results_text
from hipo_jupyter.team.link import team_backend
from hipo_jupyter.team.url import mask_url

from . import forget as cli_forget
from . import hooks as cli_hooks
from . import views as cli_views
from .body import title_and_body
from .demo import TODAY_ENV, run_demo
from .parser import UsageError, build_parser


def today_from_env() -> Callable[[], date] | None:
    """The clock pinned by HIPO_TODAY, or None for the real one."""
    value = os.environ.get(TODAY_ENV, "").strip()
    if not value:
        return None
    pinned = parse_day(value, TODAY_ENV)
    return lambda: pinned


def checked_root(args: argparse.Namespace) -> Path:
    """The root named by --root, HIPO_ROOT or the working directory, which must be a folder."""
    root = resolve_root(args.root)
    if not root.exists():
        raise HipoError(f"the memory root {root} does not exist (create it with `hipo init`)")
    if not root.is_dir():
        raise HipoError(f"the memory root {root} is not a folder")
    return root


def open_memory(args: argparse.Namespace, *, reading: bool = False) -> Memory:
    """The one Memory of the root named by --root, HIPO_ROOT or the working directory.
    A command that only reads (`reading`) never creates a memory where there is none."""
    root = checked_root(args)
    config = MemoryConfig(team_url=resolve_team_url(getattr(args, "team_url", None)))
    memory = Memory(root, today=today_from_env(), config=config, team=team_backend(config))
    if reading and not memory.has_memory():
        raise HipoError(
            f"no memory in {root} yet: `hipo init` makes one, or `hipo remember` writes the "
            "first checkpoint"
        )
    return memory


# --- progress ---------------------------------------------------------------------------------


class ProgressBar:
    """The engine's `progress(done, total, label)` shown as a tqdm bar on stderr, only on a TTY."""

    def __init__(self, stream: TextIO | None = None, *, shown: bool = False) -> None:
        # tqdm's own \r must reach the terminal; the label is escaped here instead
        self.stream = terminal.unfiltered(stream if stream is not None else sys.stderr)
        self.enabled = shown or bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, file=self.stream, leave=False, dynamic_ncols=True)
        self._bar.total = total
        self._bar.set_description(terminal.visible(label), refresh=False)
        self._bar.n = done
        self._bar.refresh()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


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


def compact_after_write(memory: Memory) -> None:
    """`hipo remember` is a session of its own: like `hipo import`, it leaves the tree in step
    with what it wrote, so `hipo check` right after it passes. The checkpoint is safe in its
    log whatever happens here (a failed pass is one line on stderr; `hipo compact` says more)."""
    try:
        memory.compact()
    except (HipoError, OSError) as error:
        print(f"hipo: checkpoint written; the compaction after it failed: {error}", file=sys.stderr)


def cmd_remember(args: argparse.Namespace) -> int:
    # the title line reads as in %%remember: `Competitor pricing [project] #pricing #q1`
    title, body = title_and_body(args)
    if args.replaces is not None:  # a correction (cli_forget)
        return cli_forget.cmd_correct(args, title, body, open_memory)
    if not title.strip():
        raise UsageError(
            'remember needs a note or a title: `hipo remember "TEXT"`, or `hipo remember TITLE` '
            "with the body on stdin"
        )
    require_title(title)  # the one rule: not only `[type]` and `#tags` either
    draft = CheckpointDraft.parse(
        title,
        body,
        type=args.type,
        tags=args.tags,
        on=args.date,
        trigger=args.trigger,
        rule=args.rule,
    )
    memory = open_memory(args)
    try:
        checkpoint = memory.write_checkpoint(draft, via=VIA_CLI)
        if not checkpoint.repeated:
            compact_after_write(memory)
    finally:
        memory.close()
    written = f"{raw_log_path(checkpoint.date)}  {checkpoint.id}"
    written += render.redacted_note(checkpoint.redacted)
    print(render.checkpoint_line(checkpoint) if checkpoint.repeated else written)  # not twice
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
        superseded=args.all,
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
        print(terminal.json_text(answer.to_json(), indent=2))
    else:
        print(answer.text if args.context else render.recall_text(answer, paths=args.paths))
    return 0


def cmd_team(args: argparse.Namespace) -> int:
    """`hipo team sync`: this folder's raw checkpoints to the team database (issue 16)."""
    memory = open_memory(args, reading=True)
    try:
        report = memory.team_sync(full=args.full)
    finally:
        memory.close()
    from hipo_jupyter.team.sync import refusal  # psycopg is there: the sync just used it

    print(
        f"Team sync: {report.rows} checkpoints from {report.sent_files} changed of "
        f"{report.files} raw logs, {report.written} new or updated in the team database"
        + (f"; {report.excluded} kept local (team_exclude)" if report.excluded else "")
        + (f"; {report.removed} no longer in the logs removed" if report.removed else "")
        + (
            f"; {report.repaired} repaired (rows the database held other than this folder's "
            "logs say)"
            if report.repaired
            else ""
        )
        + (
            "; the team database lacked rows sent before, so every log was sent again"
            if report.resent
            else ""
        )
        + (f"; {refusal(report.refused)}" if report.refused else "")
        + "."
    )
    for notice in report.notices:  # row-level security off, a shared role: one line each
        print(f"Note: {notice}")
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    memory = open_memory(args)
    try:
        with ProgressBar() as progress:
            report = memory.compact(progress=progress)
    finally:
        memory.close()
    print(render.compaction_text(report))  # its notes (a skipped source, a repair) included
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    memory = open_memory(args, reading=True)
    try:
        status = memory.status()
        team_url = mask_url(memory.config.team_url) if memory.config.team_url else None
    finally:
        memory.close()
    if args.json:
        team = {"team_url": team_url} if team_url else {}  # as the text: only when there is one
        print(terminal.json_text({**status.to_json(), **team}, indent=2))
    else:
        print(render.status_text(status))
        if team_url:
            print(f"team database: {team_url} (hipo team sync, recall --team)")
    return 0


def cmd_layer1(args: argparse.Namespace) -> int:
    memory = open_memory(args, reading=True)
    try:
        layer1 = memory.layer1()
    finally:
        memory.close()
    print(layer1.text)
    print(render.budget_text(layer1), file=sys.stderr)  # the token table, out of the prompt's way
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
    with ProgressBar(shown=args.progress) as progress:
        plan = plan_import(args.file, args.format, progress)  # everything checked before a write
        memory = open_memory(args)
        try:
            report = memory.import_batches(plan.batches(progress), progress=progress)
        finally:
            memory.close()
    report = dataclasses.replace(
        report, left_out=tuple(sorted(plan.left_out.items())), conversations=plan.conversations
    )
    print(cli_views.format_import(report, args.file))
    if plan.undated:
        print(f"{plan.undated} turn{'s' * (plan.undated != 1)} of {args.file.name} had no "
              f"time: dated {plan.undated_as}")  # fmt: skip
    skipped = plan.not_chats + [f"{name} (unsafe name or not a regular member)"
                                for name in plan.unsafe]  # fmt: skip
    if skipped:
        print(f"Not read, not chats ({len(skipped)}): "
              + ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else ""))  # fmt: skip
    ahead = cli_views.future_turns(report.per_day, memory.today)
    if ahead:
        print(f"hipo: warning: {ahead}", file=sys.stderr)
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
    if args.config:
        # Printing a config needs neither the MCP SDK nor an open index: only the root's path.
        from hipo_jupyter.mcp import config as mcp_config

        print(mcp_config.config_snippet(args.config, checked_root(args)))
        print(f"hipo: {mcp_config.CONFIG_WHERE[args.config]}", file=sys.stderr)
        return 0
    if args.scope != "project" and not (args.install or args.uninstall):
        raise UsageError("--scope goes with --install or --uninstall claude-code")
    if args.install or args.uninstall:
        from hipo_jupyter.mcp import install as mcp_install

        target = args.install or args.uninstall
        try:
            user = args.scope == "user"
            root = checked_root(args)
            print(mcp_install.install(target, root, remove=bool(args.uninstall), user=user))
        except mcp_install.InstallError as error:
            raise UsageError(str(error)) from None
        return 0
    import importlib.util

    from hipo_jupyter.mcp import early as mcp_early

    if importlib.util.find_spec("mcp") is None:
        raise UsageError("hipo mcp needs mcp: pip install 'hipo-jupyter[mcp]'")
    checked_root(args)  # a wrong root is one line before anything is served

    def start() -> None:
        from hipo_jupyter.mcp import server as mcp_server

        memory = open_memory(args)
        try:
            mcp_server.serve(memory)
        finally:
            memory.close()

    # `initialize` is answered while the SDK still imports (hipo_jupyter/mcp/early.py)
    mcp_early.serve_early(start)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    run_demo(timeout=args.timeout, keep=args.keep, folder=args.dir)
    return 0


# --- dispatch ---------------------------------------------------------------------------------


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


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "init": cmd_init,
    "remember": cmd_remember,
    "recall": cmd_recall,
    "compact": cmd_compact,
    "status": cmd_status,
    "layer1": cmd_layer1,
    "reindex": cmd_reindex,
    "import": cmd_import,
    "team": cmd_team,
    "check": cmd_check,
    "mcp": cmd_mcp,
    "demo": cmd_demo,
    "hook": cli_hooks.cmd_hook,
    **{name: _with_memory(getattr(cli_views, f"cmd_{name}")) for name in cli_views.HELP},
    "forget": _with_memory(cli_forget.cmd_forget),
    "corrections": _with_memory(cli_forget.cmd_corrections),
}
"""Command -> what runs it; `cli_parser.HELP` gives each its help, in the same order."""


def one_line(message: str) -> str:
    """Errors are reported on one line, whatever the engine's message looks like."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def quiet_library_logs() -> None:
    """A command's problems are its own one line on stderr. Libraries that log through Python's
    last-resort handler (psycopg's pool logs each failed connection attempt, a dozen lines while
    the team database is down) are kept out of the terminal."""
    logging.getLogger("psycopg").addHandler(logging.NullHandler())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code (0 ok, 2 bad input or a memory error). Everything
    it prints, errors included, goes through `terminal.TerminalText` (control characters of
    stored text shown as visible escapes)."""
    with terminal.standard_streams_shown_as_text():
        return run_command(argv)


def run_command(argv: Sequence[str] | None) -> int:
    quiet_library_logs()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler = COMMANDS[args.command]
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
