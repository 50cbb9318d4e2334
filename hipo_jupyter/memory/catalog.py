"""Every checkpoint of the raw logs, parsed once and kept while its log is unchanged.

The rules index, `Memory.frame()` and the graph all start from the list of checkpoints. Parsing
a year of raw logs for each prompt would be most of the cost of Layer 1, so each log's
checkpoints are kept against its (size, mtime) and only a changed log is read again. The cache
lives in the process; the raw logs stay the truth.
"""

from __future__ import annotations

from datetime import date

from .checkpoint import Checkpoint, parse_log
from .errors import ParseError
from .store import Store


class CheckpointCatalog:
    """`checkpoints()` of one store, re-reading only the raw logs whose stamp changed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._by_log: dict[str, tuple[tuple[int, int], list[Checkpoint]]] = {}
        self._holds: dict[tuple[str, bytes], tuple[tuple[int, int], bool]] = {}

    def checkpoints(self) -> list[Checkpoint]:
        """All checkpoints, oldest day first and in file order within a day."""
        stamps = self.store.raw_stamps()
        for name in set(self._by_log) - set(stamps):
            del self._by_log[name]
        found: list[Checkpoint] = []
        for name in sorted(stamps):
            held = self._by_log.get(name)
            if held is None or held[0] != stamps[name]:
                held = (stamps[name], self._parse(name))
                self._by_log[name] = held
            found.extend(held[1])
        return found

    def of_log(self, name: str, stamp: tuple[int, int] | None = None) -> list[Checkpoint]:
        """The checkpoints of one raw log (`YYYY-MM-DD.md`), reading only that log; `stamp`
        is its (size, mtime) when the caller has just listed the logs."""
        stamp = stamp or self.store.raw_stamps().get(name)
        if stamp is None:
            self._by_log.pop(name, None)
            return []
        held = self._by_log.get(name)
        if held is None or held[0] != stamp:
            held = (stamp, self._parse(name))
            self._by_log[name] = held
        return held[1]

    def logs_holding(self, marker: bytes) -> list[str]:
        """The raw logs whose bytes contain `marker`, oldest first: a byte search, no parsing,
        remembered per log while its stamp holds. The rules index reads only the logs holding
        a `- trigger:` line, so Layer 1 stays cheap at a year of memory."""
        found = []
        for name, stamp in sorted(self.store.raw_stamps().items()):
            held = self._holds.get((name, marker))
            if held is None or held[0] != stamp:
                try:
                    data = self.store.read_bytes(self.store.raw_path(date.fromisoformat(name[:-3])))
                except (OSError, ParseError):
                    data = b""
                held = (stamp, marker in data)
                self._holds[(name, marker)] = held
            if held[1]:
                found.append(name)
        return found

    def at(self, relative: str, line: int) -> Checkpoint | None:
        """The checkpoint whose heading is at `line` of the raw log `relative`
        (`memory/YYYY-MM-DD.md`)."""
        found = self.of_log(relative.removeprefix("memory/"))
        return next((c for c in found if c.line == line), None)

    def _parse(self, name: str) -> list[Checkpoint]:
        day = date.fromisoformat(name[:-3])
        try:
            text = self.store.read_text(self.store.raw_path(day))
        except (OSError, ParseError):
            return []  # gone or unreadable: the store warned; `hipo check` says which
        return parse_log(text, date=day.isoformat())
