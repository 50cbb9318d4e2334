"""`hipo rules`, `hipo export` and `hipo sparql`: the structured views of the memory.

`hipo rules` lists the rules in force, then the rules others proposed (agents, Claude's
write-back, imports) with who proposed each and its ID; `hipo rules accept ID` makes one the
user's own rule (`Memory.accept_rule`).

Each takes the parsed arguments and the opened Memory (commands.py opens it, so the root is decided
in one place), makes one engine call and prints. Errors are HipoErrors, which `hipo` reports
as one line with exit code 2; a SPARQL error names the line and column of the query.

`sparql --json` prints one object: {"variables": [...], "rows": [[...], ...]} for SELECT,
{"boolean": true} for ASK, {"triples": ["<s> <p> <o> .", ...]} for CONSTRUCT.
"""

from __future__ import annotations

import argparse
import io
import sys
from datetime import date
from pathlib import Path
from typing import Any, TextIO

from hipo_jupyter import terminal
from hipo_jupyter.memory import HipoError, Memory, RequestError, parse_number, render
from hipo_jupyter.memory.disk import VIA_CLI
from hipo_jupyter.memory.intake import ImportReport
from hipo_jupyter.memory.views import (
    EXPORT_FORMATS,
    MAX_QUERY_CHARS,
    accepted_text,
    inert_cell,
    proposals_text,
    rules_index_text,
)

HELP = {
    "rules": "the feedback rules by trigger (trigger -> rule -> checkpoint), superseded last, "
    "then the rules others proposed; `hipo rules accept ID` accepts one",
    "export": "the memory as csv, parquet or jsonl (a row per checkpoint) or turtle (RDF)",
    "sparql": "run a SPARQL query over the memory as RDF (schema:, hipo:, field: predefined)",
}


def add_arguments(sub: dict[str, argparse.ArgumentParser]) -> None:
    rules = sub["rules"]
    rules.add_argument(
        "action", nargs="?", choices=["accept"], help="accept: make a proposed rule yours"
    )
    rules.add_argument("id", nargs="?", metavar="ID", help="the proposed rule's ID (as listed)")
    export = sub["export"]
    export.add_argument(
        "--format", choices=EXPORT_FORMATS, default="jsonl", help="output format (default jsonl)"
    )
    export.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="write here: a file (replaced atomically), a FIFO or device, '-' for stdout "
        "(the default); never a file of the memory",
    )
    sparql = sub["sparql"]
    sparql.add_argument("query", metavar="QUERY", help="the query; '-' reads it from stdin")
    sparql.add_argument("--json", action="store_true", help="print the result as JSON")
    sparql.add_argument(
        "--timeout", type=_seconds, metavar="S", help="stop the query after S seconds (default 30)"
    )
    sparql.add_argument(
        "--max-rows", type=_rows, metavar="N", help="refuse a result of more rows (default 100000)"
    )


def cmd_rules(args: argparse.Namespace, memory: Memory) -> int:
    if args.action == "accept":
        if not args.id:
            raise HipoError("hipo rules accept needs the ID of a proposed rule (hipo rules)")
        print(accepted_text(memory.accept_rule(args.id, via=VIA_CLI)))
        return 0
    if args.id:
        raise HipoError(f"unknown rules action {args.id!r}: hipo rules [accept ID]")
    print(rules_listing(memory, "hipo rules accept"))
    return 0


def rules_listing(memory: Memory, accept: str) -> str:
    """The rules in force, then the proposals waiting (`hipo rules`, `%hipo rules`)."""
    text = rules_index_text(memory.rules())
    text = text or "no rules yet: hipo remember TITLE --trigger WHEN --rule DO\n"
    waiting = proposals_text(memory.proposals(), accept)
    return (text + ("\n" + waiting if waiting else "")).rstrip()


def cmd_export(args: argparse.Namespace, memory: Memory) -> int:
    """Export to stdout (no -o, or `-o -`) or to a target `export_target` checks."""
    if args.output is None or str(args.output) == "-":
        on_screen = sys.stdout.isatty()
        if args.format == "parquet" and (args.output is None or on_screen):
            where = "a terminal" if on_screen else "stdout"
            raise HipoError(f"parquet is binary, not for {where}: give a file with -o FILE.parquet")
        if on_screen:  # shown, not stored: through the terminal's sanitizer, as every output
            shown = io.BytesIO()
            memory.export(args.format, shown)
            sys.stdout.write(shown.getvalue().decode("utf-8"))
        else:  # data for a pipe or a file: exactly the bytes
            memory.export(args.format, sys.stdout.buffer)
        sys.stdout.flush()
        return 0
    count = memory.export(args.format, args.output)
    unit = "triples" if args.format == "turtle" else "checkpoints"
    print(f"{args.output}: {count:,} {unit} as {args.format}", file=sys.stderr)
    return 0


def _seconds(text: str) -> float:
    try:
        return float(parse_number(text, "--timeout", whole=False, low=0.1, high=86_400))
    except RequestError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _rows(text: str) -> int:
    try:
        return int(parse_number(text, "--max-rows", low=1, high=100_000_000))
    except RequestError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def read_query(stream: TextIO) -> str:
    """The query from stdin, read at most one character past MAX_QUERY_CHARS (so the limit is
    checked while reading: `hipo sparql - < /dev/zero` stops at once)."""
    text = stream.read(MAX_QUERY_CHARS + 1)
    if len(text) > MAX_QUERY_CHARS:
        raise HipoError(f"the query on stdin is over {MAX_QUERY_CHARS:,} characters, the limit")
    return text


def cmd_sparql(args: argparse.Namespace, memory: Memory) -> int:
    query = read_query(sys.stdin) if args.query == "-" else args.query
    result = memory.sparql(query, timeout=args.timeout, max_rows=args.max_rows)
    if args.json:
        print(terminal.json_text(result.to_json()))
    elif result.boolean is not None:
        print("true" if result.boolean else "false")
    elif result.triples:
        print("\n".join(result.triples))
    else:
        print("\t".join(result.variables))
        for row in result.rows:  # tab-separated: a spreadsheet may open it, so no formulas
            print("\t".join("" if value is None else inert_cell(str(value)) for value in row))
    return 0


def format_import(report: ImportReport, file: Path) -> str:
    """The one report of an import: turns written, days, what was already there or forgotten,
    and what the source held that the memory does not keep, by kind."""
    forgot = report.forgotten
    kept_out = (f"{forgot} turns you forgot were not imported again (a forget is kept)"
                if forgot else "")  # fmt: skip
    left = left_out_text(report.left_out)
    if not report.written:
        if kept_out and not report.skipped:
            return f"Nothing new in {file.name}: {kept_out}." + left
        there = f"Nothing new in {file.name}: its {report.skipped} turns are already in memory."
        return there + (f" {kept_out[0].upper()}{kept_out[1:]}." if kept_out else "") + left
    days = report.days
    span = days[0] if len(days) == 1 else f"{days[0]} .. {days[-1]}"
    conversations = report.conversations
    of = f" of {conversations} conversation{'s' * (conversations != 1)}" if conversations else ""
    lines = [
        f"Imported {report.written} turns{of} from {file.name} into {len(days)} raw logs ({span})"
        + (f"; {report.skipped} already there" if report.skipped else "")
        + (f"; {kept_out}" if kept_out else "")
        + render.redacted_note(report.redacted)
        + "."
        + left
    ]
    if report.compaction is not None:
        lines.append(render.compaction_text(report.compaction).split("\n", 1)[0])
    return "\n".join(lines)


def left_out_text(left_out: Any) -> str:
    """The report's " Left out: 3 images, 2 tool results." for what an import did not keep."""
    kinds = [(kind, count) for kind, count in left_out if count]
    if not kinds:
        return ""
    shown = [f"{count} {kind[:-1] if count == 1 and kind.endswith('s') else kind}"
             for kind, count in kinds]  # fmt: skip
    return " Left out: " + ", ".join(shown) + "."


def future_turns(per_day: dict[str, int], today: date) -> str:
    """One line for imported turns dated after today (a clock or time-zone mix-up in the
    source, usually): they are kept on their own dates, and the person should know."""
    ahead = sorted(day for day in per_day if day > today.isoformat())
    if not ahead:
        return ""
    count = sum(per_day[day] for day in ahead)
    span = ahead[0] if len(ahead) == 1 else f"{ahead[0]} .. {ahead[-1]}"
    turns = "turn is" if count == 1 else "turns are"
    return f"{count} imported {turns} dated after today ({today}): {span}; kept on those dates"
