"""Corrections: a checkpoint that names one it replaces (`<!-- hipo ... replaces=ID -->`, see
`disk/trust.correction`) supersedes it. Recall, contexts and every front end built on them show
the correction; the replaced checkpoint stays in its raw log and is found only when asked for
(`--all`: `RecallQuery.superseded`). An agent's proposed correction of the user's words
(`proposes=ID`) supersedes nothing until the user accepts it, which writes the user's own
correction.

What only the user may put in force, and another writer proposed (`disk/trust`), stays a
proposal in every recall and context: `mark_proposals` writes on each such hit what it is and
that the user has not accepted it (`PROPOSED_RULE`, `PROPOSED_CORRECTION`, then `NOT_ACCEPTED`,
after its provenance), and a context shows that beside the piece (`context.piece_line`), so a
model never reads a proposal as if it were in force, next to the user's note it contradicts.

Finding them must not cost a recall a parse of every log: each log's checkpoints are read once
per stamp as (id, line, replaces) from their comment lines only, and kept; what is superseded
and proposed is worked out again only when a log was read again or went (at 10,000 notes,
going through every entry on each call was 2-3 ms of every context).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from urllib.parse import unquote

from ..disk.layout import raw_log_path
from ..disk.store import RawStamps, Store
from ..errors import ParseError
from .ranking import Hit, RecallResult

_HEADING = re.compile(r"##(?:[ \t]|$)")
_COMMENT_KEYS = re.compile(r"<!--[ \t]*hipo[ \t]+(.*?)[ \t]*-->[ \t]*$")
_ID = re.compile(r"(?:^|[ \t])id=(\S+)")
_REPLACES = re.compile(r"(?:^|[ \t])replaces=(\S+)")
_PROPOSES = re.compile(r"(?:^|[ \t])proposes=(\S+)")

SUPERSEDED = "superseded by a correction"  # what a replaced checkpoint's hit says (`--all`)
PROPOSED_RULE = "a proposed rule"
PROPOSED_CORRECTION = "a proposed correction"
NOT_ACCEPTED = "not accepted by the user"
# (id, heading line, id it replaces, id it proposes to replace, its heading)
Entry = tuple[str, int, str | None, str | None, str]


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
            proposes = _PROPOSES.search(keys.group(1))
            entries.append((unquote(found.group(1)), number - 1,
                            unquote(replaces.group(1)) if replaces else None,
                            unquote(proposes.group(1)) if proposes else None,
                            lines[number - 2].strip()))  # fmt: skip
    return entries


class Corrections:
    """The checkpoints of one store by hit location (`memory/DAY.md:LINE`): their ids, and
    which of them a correction superseded."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._logs: dict[str, tuple[tuple[int, int], list[Entry]]] = {}
        self._lock = threading.Lock()
        self._generation = 0  # moves whenever a log is read again or goes
        self._kept: dict[str, tuple[int, set[str]]] = {}  # what -> (its generation, found)

    def superseded(self, stamps: RawStamps) -> set[str]:
        """Where each checkpoint a correction in force replaced starts (`Hit.location`)."""
        return self._once("superseded", stamps, self._superseded)

    def proposed(self, stamps: RawStamps) -> set[str]:
        """Where each correction an agent proposed, and the user has not accepted, starts
        (`Hit.location`). Accepting writes the user's correction of the same checkpoint under
        the same heading (`views/correcting.accept`), which settles it."""
        return self._once("proposed", stamps, self._proposed)

    def _once(
        self, what: str, stamps: RawStamps, find: Callable[[dict[str, list[Entry]]], set[str]]
    ) -> set[str]:
        """`find(logs)`, worked out again only when a log changed since (a copy: callers own
        what they are given)."""
        generation, logs = self._current_at(stamps)
        with self._lock:
            kept = self._kept.get(what)
        if kept is None or kept[0] != generation:
            kept = (generation, find(logs))
            with self._lock:
                if self._generation == generation:
                    self._kept[what] = kept
        return set(kept[1])

    @staticmethod
    def _superseded(logs: dict[str, list[Entry]]) -> set[str]:
        replaced = {entry[2] for entries in logs.values() for entry in entries if entry[2]}
        if not replaced:  # the common case: no correction at all, nothing more to look at
            return set()
        return {
            location for location, checkpoint_id in _locations(logs).items()
            if checkpoint_id in replaced
        }  # fmt: skip

    @staticmethod
    def _proposed(logs: dict[str, list[Entry]]) -> set[str]:
        entries = [entry for found in logs.values() for entry in found]
        accepted = {(entry[2], entry[4]) for entry in entries if entry[2]}
        waiting = {
            entry[0] for entry in entries if entry[3] and (entry[3], entry[4]) not in accepted
        }
        if not waiting:
            return set()
        return {location for location, found in _locations(logs).items() if found in waiting}

    def ids(self, stamps: RawStamps, files: set[str]) -> dict[str, str]:
        """The id of each checkpoint of these raw logs (`memory/DAY.md`) that has one, by where
        it starts (`Hit.location`): what a hit shows so the user can correct or forget it."""
        logs = self._current(stamps)
        names = {file.rsplit("/", 1)[-1] for file in files}
        return _locations({name: logs[name] for name in names if name in logs})

    def _current(self, stamps: RawStamps) -> dict[str, list[Entry]]:
        """Each raw log's entries, read again only when its stamp changed."""
        return self._current_at(stamps)[1]

    def _current_at(self, stamps: RawStamps) -> tuple[int, dict[str, list[Entry]]]:
        """`_current`, with the generation it is of."""
        with self._lock:
            for name in set(self._logs) - set(stamps):
                del self._logs[name]
                self._generation += 1
            for name, stamp in stamps.items():
                kept = self._logs.get(name)
                if kept is None or kept[0] != stamp:
                    self._logs[name] = (stamp, self._read(name))
                    self._generation += 1
            return self._generation, {name: entries for name, (_, entries) in self._logs.items()}

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
        for checkpoint_id, line, *_ in entries
    }


def mark_proposals(result: RecallResult, proposals: Mapping[str, str]) -> RecallResult:
    """`result` with each hit at a location of `proposals` (location -> PROPOSED_RULE or
    PROPOSED_CORRECTION) saying so after its provenance: `MCP; a proposed rule, not accepted
    by the user`. Every front end shows a hit's provenance, so each shows this too."""
    if not proposals or not any(hit.location in proposals for hit in result.hits):
        return result
    return replace(result, hits=[_marked(hit, proposals.get(hit.location)) for hit in result.hits])


def _marked(hit: Hit, kind: str | None) -> Hit:
    if kind is None or hit.kind != "raw":
        return hit
    said = f"{hit.provenance}; {kind}, {NOT_ACCEPTED}".lstrip("; ")
    return replace(hit, provenance=said, proposal=kind)


def is_proposal(hit: Hit) -> bool:
    """Whether `mark_proposals` marked `hit` a proposal the user has not accepted: its typed
    field, whatever else its provenance phrase says after it (a later change, say)."""
    return bool(hit.proposal)
