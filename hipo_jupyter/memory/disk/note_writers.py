"""Who wrote a note under knowledge/ or plans/, when it is not the user: a typed fact, recorded
by the write, read by the index.

Claude's memory tool creates and edits notes (`Memory.write_note(..., via="memory-tool")`) and a
`%%ask` write-back offloads a long reply to knowledge/ (`Memory.save_knowledge(..., via=...)`).
Recalled, such a note would read as the user's. So each write by a writer other than the user
records the note's path and the front end that wrote it in `memory/.note-writers.json`:

    {"knowledge/churn.md": "memory-tool", "knowledge/2026-03-12-reply.md": "write-back"}

and the index reads the record when it indexes a note (`search/indexing`), so every hit of it
carries the writer (`trust.writer_of_provenance` of the `via`) and a context labels it as that
writer's. The record, not the note's text, says it:

- it survives a rebuild of the index (the index is rebuilt from the files; this is one of them);
- the note's text is the writer's own: front matter saying `writer: user` would be the agent's
  to write. The record is outside what any writer but the user can reach
  (`intake/notes.check_writable`: a hidden file);
- it is kept by path, not by content, so the default falls away from the user: a note another
  writer wrote stays theirs after the user edits it by hand (an edit cannot turn the agent's
  words into the user's by accident). The user takes a note as their own by removing its line
  (or the record); a rename carries the line with the note, a delete drops it.

A record that cannot be read (damaged, not a regular file) is never taken as "the user wrote
them all": every note then reads as written by a writer not known (`UNKNOWN`), which is not the
user, and writes leave the record as it is until the user deletes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from .jsonread import read_record
from .layout import MEMORY_DIR
from .trust import USER, writer_of_provenance

RECORD_FILE = ".note-writers.json"
RECORD_SHOWN = f"{MEMORY_DIR}/{RECORD_FILE}"
UNKNOWN = "unknown"  # the `via` of every note when the record cannot be read
Record = dict[str, str]


def is_users(via: str | None) -> bool:
    """Whether what `via` writes is the user's own note (nothing to record)."""
    return writer_of_provenance(via) == USER


class NoteWriters:
    """The record of one memory root (`memory/.note-writers.json`): note path -> `via`."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / MEMORY_DIR / RECORD_FILE

    def read(self) -> Record | None:
        """The record: {} when there is none, None when it cannot be read."""
        return read_record(self.path, Record, shown=RECORD_SHOWN)

    def via_of(self, relative: str) -> str | None:
        """The front end that wrote the note `relative`, when not the user (None: the user's);
        `UNKNOWN` for every note when the record cannot be read."""
        record = self.read()
        if record is None:
            return UNKNOWN
        return record.get(relative)

    def wrote(self, relative: str, via: str | None) -> str | None:
        """The record's new JSON after `via` wrote `relative`: the note is `via`'s when its
        writer is not the user; a write of the user's leaves the record as it is (the note may
        still hold the other writer's words). None when nothing changes."""
        record = self.read()
        if record is None or is_users(via) or record.get(relative) == via:
            return None
        return _dumped({**record, relative: via or UNKNOWN})

    def moved(self, old: str, new: str) -> str | None:
        """The record's new JSON after the note `old` was renamed `new`: its line follows it
        (and a line left for a note once at `new` goes). None when nothing changes."""
        record = self.read()
        if record is None or (old not in record and new not in record):
            return None
        record = dict(record)
        via = record.pop(old, None)
        record.pop(new, None)
        if via is not None:
            record[new] = via
        return _dumped(record)

    def deleted(self, relative: str) -> str | None:
        """The record's new JSON after the note `relative` was deleted. None when nothing
        changes."""
        record = self.read()
        if record is None or relative not in record:
            return None
        return _dumped({path: via for path, via in record.items() if path != relative})


def _dumped(record: Record) -> str:
    return json.dumps(record, indent=1, sort_keys=True) + "\n"
