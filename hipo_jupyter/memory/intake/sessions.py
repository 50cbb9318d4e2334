"""A live Claude Code session's exchanges, as its hooks hand them in (`hipo hook stop`).

Claude Code keeps each session's transcript as JSON Lines under ~/.claude, outside the memory
root, and names it in the `transcript_path` of every hook's input. This reads it as `hipo
import` reads one (`importers.parse_claude_code`: user and assistant text kept; tool calls,
thinking, meta and sub-agent records left out), with what a live file needs on top:

- read-only, a regular `.jsonl` file of at most MAX_SESSION_BYTES (`read_user_file`: a FIFO or a
  device is refused before it is opened); the last line is left out until it is complete (the
  session is still writing it);
- each user turn and the reply to it is one exchange (`exchanges.pair`) keyed by the user
  turn's uuid, so the Stop hook after every reply, PreCompact and SessionEnd may all hand in the
  same file and nothing is written twice (`Writer.imports`, which also keeps out what the user
  forgot);
- written as the front end `claude-code` (`provenance.VIA_CLAUDE_CODE`): an agent's words for
  trust (`disk/trust`), "from Claude Code" wherever a hit says where it came from; titled by
  the user's first words, as a one-line note is;
- memory we handed the session (Layer 1, recalled pieces: our fences) is cut out of a turn if
  it shows up in one, so what the memory said is never written back as something new.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..disk.exchanges import is_user, pair
from ..disk.files import UnsafeFileError, read_user_file
from ..disk.provenance import VIA_CLAUDE_CODE
from ..recall.fence import LAYER1_TAG, MEMORY_TAG, RECALL_TAG, SUFFIX_DIGITS
from ..requests import title_from_text
from .importers import ImportFormatError, ImportRecord, parse_claude_code

MAX_SESSION_BYTES = 64 << 20  # a long session with large tool outputs stays well under this
SESSION_SUFFIX = ".jsonl"
# Wrappers Claude Code writes as user text that are not the user's words: a slash command and
# its output. The record types and flags (`isMeta`) are read first; these are its own markers.
COMMAND_MARKERS = ("<command-name>", "<command-message>", "<local-command-stdout>")
LAYER1_HEAD = "hipo: this folder's memory, Layer 1"  # the line before the SessionStart fence
_TAGS = "|".join(map(re.escape, (LAYER1_TAG, RECALL_TAG, MEMORY_TAG)))
_DIGITS = rf"\d{{{SUFFIX_DIGITS}}}"
_OUR_FENCES = re.compile(
    rf"(?:{re.escape(LAYER1_HEAD)}[^\n]*\n)?<({_TAGS})-{_DIGITS}[^>]*>.*?</\1-{_DIGITS}>", re.DOTALL
)


def session_records(path: Path, *, hold_last: bool = False) -> list[ImportRecord]:
    """The exchanges of the Claude Code transcript at `path`, ready for `Memory.import_records`.
    `hold_last`: leave the last exchange for a later hook (PreCompact fired mid-reply, its
    reply not finished). ImportFormatError, one line, for a file that is not a transcript."""
    if path.suffix != SESSION_SUFFIX:
        raise ImportFormatError(f"{path.name}: not a Claude Code transcript (.jsonl)")
    try:
        data = read_user_file(path, MAX_SESSION_BYTES, path.name)
    except UnsafeFileError as error:
        raise ImportFormatError(str(error)) from None
    except OSError as error:
        raise ImportFormatError(f"cannot read {path.name}: {error.strerror or error}") from None
    text = data.decode("utf-8-sig", errors="replace")
    complete = text[: text.rfind("\n") + 1]  # a line still being written waits for the next hook
    turns = [own_words(record) for record in parse_claude_code(complete, path.name)]
    exchanges = pair([turn for turn in turns if turn.body.strip()])
    if hold_last and exchanges:
        exchanges = exchanges[:-1]
    return [
        replace(record, title=title_from_text(record.body) or "Claude Code", via=VIA_CLAUDE_CODE)
        for record in exchanges
    ]


def own_words(record: ImportRecord) -> ImportRecord:
    """A turn without the memory we handed the session, and a slash command's echo dropped."""
    body = _OUR_FENCES.sub("", record.body)
    if is_user(record.title) and body.lstrip().startswith(COMMAND_MARKERS):
        body = ""
    return replace(record, body=body.strip())
