"""`hipo forget ID [--reason TEXT]`: remove a checkpoint for good (`Memory.forget`);
`hipo remember --replaces ID`: a correction; `hipo corrections [accept ID]`: the corrections
agents proposed to the user's words, and accepting one (`views/correcting`).

The command line is the user, so it may forget (`disk/trust`). The checkpoint's raw log keeps
one tombstone line (its id, the day and the reason, none of its text); every file derived from
it is rebuilt, and the whole root is scanned for its words before success is reported. A file
of the memory that still holds them exits 1; the user's own files that do (a notebook that
typed the note) are named, for the user to edit.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from hipo_jupyter.memory import HipoError, Memory
from hipo_jupyter.memory.disk import VIA_CLI, raw_log_path
from hipo_jupyter.memory.views import (
    accept_correction,
    correct,
    proposed_corrections,
    proposed_corrections_text,
)

HELP = {
    "forget": "remove a checkpoint for good (its raw log keeps a tombstone: id, date, reason)",
    "corrections": "the corrections agents proposed to your notes; "
    "`hipo corrections accept ID` makes one yours",
}


def add_arguments(sub: dict[str, argparse.ArgumentParser]) -> None:
    forget = sub["forget"]
    forget.add_argument("id", metavar="ID", help="the checkpoint's ID (or its last characters)")
    forget.add_argument("--reason", default="", metavar="TEXT", help="why, kept in the tombstone")
    forget.add_argument(
        "--keep-derived",
        action="store_true",
        help="keep what was made from it (a write-back whose call was sent it); listed",
    )
    corrections = sub["corrections"]
    corrections.add_argument(
        "action", nargs="?", choices=["accept"], help="accept: make a proposed correction yours"
    )
    corrections.add_argument("id", nargs="?", metavar="ID", help="the proposal's ID (as listed)")


def cmd_forget(args: argparse.Namespace, memory: Memory) -> int:
    report = memory.forget(args.id, reason=args.reason, via=VIA_CLI,
                           keep_derived=args.keep_derived)  # fmt: skip
    print(report.text())
    if not report.clean:
        print(f"hipo: error: {report.id} is still in " + ", ".join(report.remaining),
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def cmd_corrections(args: argparse.Namespace, memory: Memory) -> int:
    if args.action == "accept":
        if not args.id:
            raise HipoError("hipo corrections accept needs the ID of a proposed correction")
        accepted = accept_correction(memory, args.id, via=VIA_CLI)
        print(f"accepted: {accepted.id} now corrects {accepted.replaces}")
        return 0
    if args.id:
        raise HipoError(f"unknown corrections action {args.id!r}: hipo corrections [accept ID]")
    waiting = proposed_corrections(memory)
    print(proposed_corrections_text(waiting, "hipo corrections accept"), end="")
    return 0


def cmd_correct(
    args: argparse.Namespace, title: str, body: str, open_memory: Callable[..., Memory]
) -> int:
    """`hipo remember --replaces ID`: the correction, or one line and nothing written."""
    if args.trigger is not None or args.rule is not None:
        raise HipoError("--replaces takes no --trigger or --rule: restate the rule instead")
    memory = open_memory(args, reading=True)
    try:
        checkpoint = correct(
            memory, args.replaces, title, body,
            via=VIA_CLI, type=args.type, tags=args.tags, on=args.date,
        )  # fmt: skip
    finally:
        memory.close()
    what = f"replaces {checkpoint.replaces}" if checkpoint.replaces else (
        f"proposes a correction of {checkpoint.proposes}"
    )
    print(f"{raw_log_path(checkpoint.date or '')}  {checkpoint.id}  {what}")
    return 0
