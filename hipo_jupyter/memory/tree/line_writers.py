"""Who wrote the lines of Layer 1's working files (SCRATCHPAD.md, WORKING.md, TASK-QUEUE.md).

The working files are plain Markdown that the user edits by hand and an agent edits through
Claude's memory tool (`Memory.write_note`). Layer 1 puts them into every prompt, where a line
reads as the user's: an agent's `# rules` section would read as the user's rules. So a write by
a writer who may not make a rule in force (`trust.may`) records, in `memory/.working-writers.json`,
the lines it added (by hash of the line, not its text), and Layer 1 shows those lines as that
writer's (`tree/layer1`), whatever their shape:

    {"SCRATCHPAD.md": {"9f2c4e1a0b3d5f67": "memory-tool", ...}, ...}   line hash -> `via`

A line is the agent's when its hash is recorded for its file. A line the user edits afterwards
is the user's (its hash changed); a line the agent writes again unchanged was not added by it,
so it stays the user's. Each write forgets the hashes of lines no longer in the file. The file
is outside everything a writer other than the user can reach (`intake/notes.check_writable`);
deleting it makes every line read as the user's again, which only the user can do. A record
that cannot be read (damaged, not a regular file) is never taken as "the user wrote it all":
`LineWriters.of` then says so (`UNKNOWN`) and Layer 1 marks every line, and writes leave it
as it is, until the user deletes it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from ..disk.jsonread import read_record
from ..disk.layout import MEMORY_DIR
from ..disk.trust import RULE_IN_FORCE, may, writer_of_provenance

RECORD_FILE = ".working-writers.json"
RECORD_SHOWN = f"{MEMORY_DIR}/{RECORD_FILE}"
UNKNOWN = "unknown"  # the `via` of every line when the record cannot be read
Record = dict[str, dict[str, str]]


def line_key(line: str) -> str:
    """The hash a line is recorded by: its text without trailing blanks, 16 hex digits."""
    return hashlib.sha256(line.rstrip().encode("utf-8", "surrogatepass")).hexdigest()[:16]


def added_lines(before: str, after: str) -> list[str]:
    """The non-blank lines of `after` that `before` did not hold (as many times)."""
    had = Counter(line.rstrip() for line in before.split("\n"))
    added = []
    for line in after.split("\n"):
        key = line.rstrip()
        if had[key] > 0:
            had[key] -= 1
        elif key.strip():
            added.append(key)
    return added


def steers(via: str | None) -> bool:
    """Whether what `via`'s writer writes may read as the user's (only the user's may)."""
    return may(writer_of_provenance(via), RULE_IN_FORCE)


class LineWriters:
    """The record of one memory root (`memory/.working-writers.json`)."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / MEMORY_DIR / RECORD_FILE

    def read(self) -> Record | None:
        """The record: {} when there is none, None when it cannot be read."""
        return read_record(self.path, Record, shown=RECORD_SHOWN)

    def of(self, relative: str, text: str) -> dict[str, str]:
        """line hash -> `via` of the lines of `text` (the file `relative` as read) another
        writer than the user added; every non-blank line (`UNKNOWN`) when the record cannot
        be read."""
        record = self.read()
        if record is None:
            return {line_key(line): UNKNOWN for line in text.split("\n") if line.strip()}
        return record.get(relative, {})

    def record(self, relative: str, before: str, after: str, via: str | None) -> str | None:
        """The record's new JSON after `via` wrote `after` over `before` in `relative`: the
        lines it added, when its writer's words may not read as the user's, and none of the
        lines `after` no longer holds. None when nothing changes (no JSON to write)."""
        record = self.read()
        if record is None:  # damaged: left as it is, so Layer 1 goes on marking every line
            return None
        kept = record.get(relative, {})
        present = {line_key(line) for line in after.split("\n")}
        lines = {key: who for key, who in kept.items() if key in present}  # the user's edits
        if not steers(via):
            lines.update(dict.fromkeys(map(line_key, added_lines(before, after)), via or ""))
        if lines == kept and relative in record:
            return None
        record = {**record, relative: lines}
        return json.dumps(record, indent=1, sort_keys=True) + "\n"
