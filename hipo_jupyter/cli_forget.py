"""`hipo forget ID [--reason TEXT]`: remove a checkpoint for good (`Memory.forget`).

The command line is the user, so it may forget (`disk/trust`). The checkpoint's raw log keeps
one tombstone line (its id, the day and the reason, none of its text); every file derived from
it is rebuilt, and the whole root is scanned for its words before success is reported. A file
of the memory that still holds them exits 1; the user's own files that do (a notebook that
typed the note) are named, for the user to edit.
"""

from __future__ import annotations

import argparse
import sys

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk import VIA_CLI

HELP = {
    "forget": "remove a checkpoint for good (its raw log keeps a tombstone: id, date, reason)",
}


def add_arguments(sub: dict[str, argparse.ArgumentParser]) -> None:
    forget = sub["forget"]
    forget.add_argument("id", metavar="ID", help="the checkpoint's ID (or its last characters)")
    forget.add_argument("--reason", default="", metavar="TEXT", help="why, kept in the tombstone")


def cmd_forget(args: argparse.Namespace, memory: Memory) -> int:
    report = memory.forget(args.id, reason=args.reason, via=VIA_CLI)
    print(report.text())
    if not report.clean:
        print(f"hipo: error: {report.id} is still in " + ", ".join(report.remaining),
              file=sys.stderr)  # fmt: skip
        return 1
    return 0
