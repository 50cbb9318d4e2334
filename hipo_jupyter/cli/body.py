"""What `hipo remember` writes: the title and the body, from the line and stdin.

`hipo remember TITLE` with the body on stdin, as always; `hipo remember "TEXT"` on a terminal
or with nothing piped in is a one-line note, titled from its words (`one_line_note`, the rule
`%remember` keeps too). A body is read bounded: `hipo remember < /dev/zero` stops at once.
"""

from __future__ import annotations

import argparse
import sys

from hipo_jupyter.memory import MAX_BODY_CHARS, one_line_note

from .parser import UsageError


def title_and_body(args: argparse.Namespace) -> tuple[str, str]:
    """(title line, body) of `hipo remember`: the title is `--title` or the words given."""
    title = args.title if args.title is not None else " ".join(args.title_words)
    body = "" if one_line_form(args) else read_stdin_body()
    if not body and args.title is None and title.strip():  # nothing piped in; blanks piped
        return one_line_note(title)  # are a body, refused as %%remember refuses it
    return title, body


def one_line_form(args: argparse.Namespace) -> bool:
    """Whether `hipo remember TEXT` is a one-line note: text given, no `--title`, and no body
    piped in. On a terminal nothing is read (the note is the line; `--title` still reads a
    body typed on the terminal)."""
    if args.title is not None or not args.title_words:
        return False
    return sys.stdin is None or sys.stdin.isatty()


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
