"""Corrections: a checkpoint that names one it replaces (`<!-- hipo ... replaces=ID -->`, see
`disk/trust.correction`) supersedes it. Recall, contexts and every front end built on them show
the correction; the replaced checkpoint stays in its raw log and is found only when asked for
(`--all`: `RecallQuery.superseded`). An agent's proposed correction of the user's words
(`proposes=ID`) supersedes nothing until the user accepts it, which writes the user's own
correction.

Finding them must not cost a recall a parse of every log: each log's checkpoints are read once
per stamp as (id, line, replaces) from their comment lines only, and kept.
"""

from __future__ import annotations

import re
import threading
from urllib.parse import unquote

from ..disk.layout import raw_log_path
from ..disk.store import RawStamps, Store
from ..errors import ParseError

_HEADING = re.compile(r"##(?:[ \t]|$)")
_COMMENT_KEYS = re.compile(r"<!--[ \t]*hipo[ \t]+(.*?)[ \t]*-->[ \t]*$")
_ID = re.compile(r"(?:^|[ \t])id=(\S+)")
_REPLACES = re.compile(r"(?:^|[ \t])replaces=(\S+)")

SUPERSEDED = "superseded by a correction"  # what a replaced checkpoint's hit says (`--all`)
Entry = tuple[str, int, str | None]  # (id, heading line, id it replaces)


def log_entries(text: str) -> list[Entry]:
    """(id, heading line, replaced id) of each checkpoint of a raw log that has an id."""
    entries: list[Entry] = []
    lines = text.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if not line.startswith("<!--") or not _HEADING.match(lines[number - 2]):
            continue
        keys = _COMMENT_KEYS.match(line)
        found = _ID.search(keys.group(1)) if keys else None
        if keys and found:
            replaces = _REPLACES.search(keys.group(1))
            entries.append((unquote(found.group(1)), number - 1,
                            unquote(replaces.group(1)) if replaces else None))  # fmt: skip
    return entries


class Corrections:
    """The checkpoints of one store by hit location (`memory/DAY.md:LINE`): their ids, and
    which of them a correction superseded."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._logs: dict[str, tuple[tuple[int, int], list[Entry]]] = {}
        self._lock = threading.Lock()

    def superseded(self, stamps: RawStamps) -> set[str]:
        """Where each checkpoint a correction in force replaced starts (`Hit.location`)."""
        logs = self._current(stamps)
        replaced = {r for entries in logs.values() for _, _, r in entries if r}
        if not replaced:  # the common case: no correction at all, nothing more to look at
            return set()
        return {
            location for location, checkpoint_id in _locations(logs).items()
            if checkpoint_id in replaced
        }  # fmt: skip

    def ids(self, stamps: RawStamps, files: set[str]) -> dict[str, str]:
        """The id of each checkpoint of these raw logs (`memory/DAY.md`) that has one, by where
        it starts (`Hit.location`): what a hit shows so the user can correct or forget it."""
        logs = self._current(stamps)
        names = {file.rsplit("/", 1)[-1] for file in files}
        return _locations({name: logs[name] for name in names if name in logs})

    def _current(self, stamps: RawStamps) -> dict[str, list[Entry]]:
        """Each raw log's entries, read again only when its stamp changed."""
        with self._lock:
            for name in set(self._logs) - set(stamps):
                del self._logs[name]
            for name, stamp in stamps.items():
                kept = self._logs.get(name)
                if kept is None or kept[0] != stamp:
                    self._logs[name] = (stamp, self._read(name))
            return {name: entries for name, (_, entries) in self._logs.items()}

    def _read(self, name: str) -> list[Entry]:
        try:
            text = self.store.read_text(self.store.memory_dir / name)
        except (OSError, ParseError):
            return []
        return log_entries(text)


def _locations(logs: dict[str, list[Entry]]) -> dict[str, str]:
    return {
        f"{raw_log_path(name.removesuffix('.md'))}:{line}": checkpoint_id
        for name, entries in logs.items()
        for checkpoint_id, line, _ in entries
    }
