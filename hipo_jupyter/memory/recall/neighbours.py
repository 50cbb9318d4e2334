"""The checkpoints around a recalled one: in a conversation the answer is often the reply to the
turn that matches the words, and in a task log the step before or after.

With neighbours, recall lifts the checkpoints after a raw hit (NEXT_WEIGHT, AFTER_NEXT_WEIGHT of
its relevance) and the one before it (PREVIOUS_WEIGHT), unless they matched better on their own;
only neighbours that add are lifted: another speaker's (or task's) checkpoint, not the same
author's next words. `IndexNeighbours` (what `Memory` uses) reads a log's checkpoints from the
search index; `LogNeighbours` parses the raw log itself.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from ..disk.files import MAX_LOG_BYTES, read_regular
from ..errors import HipoError
from ..search.contract import Document, SearchHit, SearchIndex

NEXT_WEIGHT = 0.7  # the checkpoint after a hit gets this share of its relevance,
AFTER_NEXT_WEIGHT = 0.5  # the one after that this share (a reply, then its elaboration),
PREVIOUS_WEIGHT = 0.5  # and the one before the hit this share
# Raw logs whose checkpoints `IndexNeighbours` keeps: a context's hits fall in a few hundred
# logs anywhere in the memory, and at 1,024 a memory of 1,500 daily logs (30,000 notes) read
# logs again on every context (24 of its 57 ms CPU); a log's checkpoints are its text once.
KEPT_LOGS = 8192


class Neighbours(Protocol):
    """A raw log's checkpoints in file order, and each heading line's place among them."""

    def positions(self, path: str) -> tuple[Sequence[Document], Mapping[int, int]]: ...


class IndexNeighbours:
    """The checkpoints of raw logs in file order, read from the search index (`documents_of`:
    one indexed query, no parsing) and kept per log while the hash the index records for it
    holds, so a query asks the index one hash per log its hits fall in. The index is what
    recall searched, so the neighbours are of the same version of the log as the hits.

    `current()` is the same for one recall, asking the index's `version()` once: a log whose
    hash was checked at that version of that index handle is not asked again (a year's
    context lifts from ~150 logs; asking each its hash was a tenth of the recall under
    cProfile). A reopened index is another handle, whose versions start again."""

    def __init__(self, index: Callable[[], SearchIndex], max_files: int = KEPT_LOGS) -> None:
        self._index = index
        self._max_files = max_files
        # path -> (hash, its documents, line -> place, the (handle, version) it was checked
        # at, each document's `author_of`)
        self._logs: OrderedDict[
            str, tuple[str, list[Document], dict[int, int], object, list[str]]
        ]
        self._logs = OrderedDict()
        self._handle: SearchIndex | None = None  # the index the versions are of
        self._handles = 0  # ... counted, so a version of an earlier handle never matches

    def positions(self, path: str) -> tuple[list[Document], dict[int, int]]:
        return self._positions(self._index(), None, path)[:2]

    def current(self) -> Neighbours:
        """The neighbours for one recall, the index's version read now (see the class)."""
        index = self._index()
        if index is not self._handle:
            self._handle, self._handles = index, self._handles + 1
        version = index.version()
        tag = None if version is None else (self._handles, version)
        return _AtVersion(lambda path: self._positions(index, tag, path))

    def _positions(
        self, index: SearchIndex, version: object, path: str
    ) -> tuple[list[Document], dict[int, int], list[str]]:
        """A log's checkpoints, places and authors (`author_of`, worked out once per version
        of the log), its hash asked unless checked at `version` (None: always asked)."""
        cached = self._logs.get(path)
        if version is None or cached is None or cached[3] != version:
            digest = index.file_hash(path)
            if digest is None:
                self._logs.pop(path, None)
                return [], {}, []
            if cached is None or cached[0] != digest:
                docs = index.documents_of(path)
                places = {doc.line: i for i, doc in enumerate(docs)}
                cached = (digest, docs, places, version, [author_of(doc) for doc in docs])
            else:
                cached = (*cached[:3], version, cached[4])
            self._logs[path] = cached
            while len(self._logs) > self._max_files:
                self._logs.popitem(last=False)
        self._logs.move_to_end(path)
        return cached[1], cached[2], cached[4]


class _AtVersion:
    """`IndexNeighbours.current()`: positions (and authors: `authored`) as of one reading of
    the index's version."""

    def __init__(
        self, authored: Callable[[str], tuple[list[Document], dict[int, int], list[str]]]
    ) -> None:
        self.authored = authored

    def positions(self, path: str) -> tuple[list[Document], dict[int, int]]:
        return self.authored(path)[:2]


class LogNeighbours:
    """The checkpoints of raw logs in file order, for the neighbours of a hit, read from the raw
    logs themselves (the truth).

    Each log is parsed once per version (its size and modification time) and kept, up to
    `max_files` logs, so a query reads only the logs its hits fall in, and a log again only
    after it changed: no query scans the whole memory.
    """

    def __init__(
        self,
        root: Path,
        documents: Callable[[str, bytes], list[Document]],
        max_files: int = 1024,
    ) -> None:
        self.root = Path(root)
        self._folder = str(self.root)
        self._documents = documents
        self._max_files = max_files
        self._logs: OrderedDict[str, tuple[tuple[int, int], list[Document], dict[int, int]]]
        self._logs = OrderedDict()

    def __call__(self, path: str) -> list[Document]:
        log = self._log(path)
        return log[0] if log is not None else []

    def positions(self, path: str) -> tuple[list[Document], dict[int, int]]:
        """The log's checkpoints and each heading line's place among them, both kept with
        the log (recall asks them of every log a hit falls in, on every query)."""
        log = self._log(path)
        return log if log is not None else ([], {})

    def around(self, path: str, line: int) -> tuple[Document | None, Document | None]:
        """The checkpoints just before and after the one whose heading is at `line`."""
        log = self._log(path)
        at = log[1].get(line) if log is not None else None
        if log is None or at is None:
            return None, None
        docs = log[0]
        return (docs[at - 1] if at > 0 else None, docs[at + 1] if at + 1 < len(docs) else None)

    def _log(self, path: str) -> tuple[list[Document], dict[int, int]] | None:
        file = os.path.join(self._folder, path)
        try:
            stat = os.stat(file)
        except OSError:
            return None
        version = (stat.st_mtime_ns, stat.st_size)
        cached = self._logs.get(path)
        if cached is None or cached[0] != version:
            try:
                data = read_regular(Path(file), MAX_LOG_BYTES, path)
                docs = sorted(self._documents(path, data), key=lambda d: d.line)
            except (OSError, HipoError):
                return None
            cached = (version, docs, {doc.line: i for i, doc in enumerate(docs)})
            self._logs[path] = cached
            while len(self._logs) > self._max_files:
                self._logs.popitem(last=False)
        self._logs.move_to_end(path)
        return cached[1], cached[2]


def lift_neighbours(
    found: Sequence[SearchHit],
    best: float,
    neighbours: Neighbours,
    relevance: dict[str, float],
    candidates: dict[str, tuple[Document, str]],
    type: str | None,
    since: str | None,
    until: str | None,
) -> None:
    """Give the checkpoints after a raw hit NEXT_WEIGHT and AFTER_NEXT_WEIGHT of the hit's
    relevance, and the one before it PREVIOUS_WEIGHT, unless it matched better on its own;
    the filters still apply."""
    logs: dict[str, tuple[Sequence[Document], dict[int, int], Sequence[str]]] = {}
    authored = getattr(neighbours, "authored", None)  # the authors kept with the log, if any
    for hit in found:
        if hit.doc.kind != "raw":
            continue
        path = hit.doc.path
        if path not in logs:  # each log read (or found cached) once per query
            if authored is not None:
                logs[path] = authored(path)
            else:
                docs, places = neighbours.positions(path)
                logs[path] = (docs, places, [author_of(doc) for doc in docs])
        docs, position, authors = logs[path]
        at = position.get(hit.doc.line)
        if at is None:
            continue
        lifted = hit.score / best
        author = authors[at]
        for offset, weight in ((1, NEXT_WEIGHT), (2, AFTER_NEXT_WEIGHT), (-1, PREVIOUS_WEIGHT)):
            if not 0 <= at + offset < len(docs):
                continue
            if authors[at + 1 if offset == 2 else at + offset] == author:
                continue  # not `adds`: the same author's next words
            doc = docs[at + offset]
            if (type and doc.type != type) or (since and doc.date < since):
                continue
            if until and doc.date > until:
                continue
            if weight * lifted > relevance.get(doc.id, 0.0):
                relevance[doc.id] = weight * lifted
                candidates.setdefault(doc.id, (doc, ""))  # its snippet is cut if shown


def adds(docs: Sequence[Document], at: int, offset: int) -> bool:
    """Does the checkpoint at `at + offset` add to the hit at `at`? It does when it answers or
    prompts it: another speaker or task next to it, or, two after it, the turn after a reply.
    The same author's next words (a log of one person's requests, where the replies are not
    kept) are only another thing they said, and would take budget from a hit."""
    author = author_of(docs[at])
    if offset == 2:
        return author_of(docs[at + 1]) != author
    return author_of(docs[at + offset]) != author


def author_of(doc: Document) -> str:
    """Who a checkpoint is by, for `adds`: an imported turn's speaker (its typed field: an
    imported title is its conversation's or its first words), else its title (a task)."""
    return (doc.speaker or doc.title).casefold()
