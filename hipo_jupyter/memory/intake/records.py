"""What an import is made of, shared by the readers of each format (`importers.py`,
`exports.py`): the record of one turn, the error that names a bad one, and how a tool's
output is kept or counted."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import date

from ..disk.provenance import VIA_IMPORT
from ..errors import HipoError

TOOL_RESULT_CHARS = 2_000
TOOL_RESULT_NOTE = "[tool result]"
_FIGURE = re.compile(r"\d")


class ImportFormatError(HipoError):
    """A transcript that cannot be imported; the message names the line or the record."""


class NoTurnsError(ImportFormatError):
    """A file that holds no turn to import (an empty list: in a folder, not a chat)."""


@dataclass(frozen=True)
class ImportRecord:
    """One turn of a conversation, ready to become a checkpoint."""

    day: date  # the raw log it goes to
    title: str  # the speaker or role
    body: str  # what was said
    source: str  # where it came from ("conv-26:D1:3", a message uuid): the checkpoint's id
    reply: str = ""  # the assistant's reply to this user turn (`exchanges.pair`), if any
    dated: str = ""  # what dated a turn that had no time: "the file's time" or "now"
    conversation: str = ""  # the conversation's title (or a Claude Code session's summary)
    via: str = VIA_IMPORT  # the front end it is written as (Claude Code's hooks: claude-code)


def tool_result_text(text: str, left_out: Counter[str]) -> str:
    """A tool's output, kept as part of the reply when it carries figures (a digit: the
    numbers an analysis printed are often the answer), cut at TOOL_RESULT_CHARS; else ""
    and counted in `left_out` as a tool result."""
    if not text.strip() or not _FIGURE.search(text):
        left_out["tool results"] += 1
        return ""
    cut = text if len(text) <= TOOL_RESULT_CHARS else text[:TOOL_RESULT_CHARS] + " [...]"
    return f"{TOOL_RESULT_NOTE}\n{cut.strip()}"
