"""The vectors of one model held in memory as a numpy matrix, searched by brute-force cosine.

`VectorStore` (vectors.py) loads the current model's vectors from SQLite into a `VectorMatrix`
once and keeps it in step with its own writes; a search is one matrix-vector product and a
partial sort, with the filters (kind, type, dates) as vectorised masks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from .contract import Document


class VectorMatrix:
    """The cached vectors of one model: rows, their metadata, and the id -> row map.

    Rows of removed documents are blanked (never matched) and squeezed out once they are half
    the matrix; new rows go into spare capacity, doubled when full, so a remember is cheap. The
    filter columns are numpy arrays rebuilt on the first search after a change.
    """

    def __init__(
        self,
        dim: int,
        rows: Sequence[tuple],
        blobs: Sequence[bytes] = (),
        vectors: np.ndarray | None = None,
    ) -> None:
        """`rows` (id, path, line, kind, date, type) with their vectors: as float32 `blobs`, or
        already in `vectors` (at least len(rows) rows: spare rows are capacity)."""
        self.dim = dim
        if vectors is None:
            vectors = np.zeros((max(len(rows), 16), dim), dtype=np.float32)
            for at, blob in enumerate(blobs):
                vectors[at] = np.frombuffer(blob, dtype=np.float32)
        self.vectors = vectors
        self.ids: list[str | None] = [r[0] for r in rows]
        self.meta: list[tuple[str, int, str, str, str]] = [tuple(r[1:6]) for r in rows]
        self.row = {doc_id: i for i, doc_id in enumerate(self.ids)}
        self.dead = 0
        self._columns: tuple[np.ndarray, ...] | None = None

    @property
    def n(self) -> int:
        return len(self.ids)

    def put(self, doc: Document, vector: np.ndarray) -> None:
        at = self.row.get(doc.id)
        meta = (doc.path, doc.line, doc.kind, doc.date, doc.type)
        if at is None:
            at = self.n
            if at == len(self.vectors):
                grown = np.zeros((2 * len(self.vectors), self.dim), dtype=np.float32)
                grown[:at] = self.vectors[:at]
                self.vectors = grown
            self.ids.append(doc.id)
            self.meta.append(meta)
            self.row[doc.id] = at
        else:
            self.meta[at] = meta
        self.vectors[at] = vector
        self._columns = None

    def remove(self, doc_id: str) -> None:
        at = self.row.pop(doc_id, None)
        if at is not None:
            self.ids[at] = None
            self.vectors[at] = 0.0
            self.dead += 1
            self._columns = None

    def columns(self) -> tuple[np.ndarray, ...]:
        """(live, kinds, types, dates) as arrays, for vectorised filters."""
        if self._columns is None:
            live = np.array([doc_id is not None for doc_id in self.ids], dtype=bool)
            kinds = np.array([m[2] for m in self.meta], dtype=str)
            types = np.array([m[4] for m in self.meta], dtype=str)
            dates = np.array([m[3] for m in self.meta], dtype=str)
            self._columns = (live, kinds, types, dates)
        return self._columns

    def search(
        self,
        query: np.ndarray,
        limit: int,
        kinds: Collection[str] | None,
        types: Collection[str] | None,
        since: str | None,
        until: str | None,
    ) -> list[tuple[int, float]]:
        n = self.n
        if n == 0 or limit <= 0:
            return []
        # einsum runs numpy's own single-threaded loop; `@` goes to BLAS, whose threads were
        # measured here at 12 ms against 0.7 ms for 7,300 vectors on two busy cores.
        scores = np.einsum("ij,j->i", self.vectors[:n], query)
        live, kind_column, type_column, date_column = self.columns()
        keep = live.copy()
        if kinds is not None:
            keep &= np.isin(kind_column, list(kinds))
        if types is not None:
            keep &= np.isin(type_column, list(types))
        if since is not None:
            keep &= date_column >= since
        if until is not None:
            keep &= date_column <= until
        candidates = np.flatnonzero(keep)
        if candidates.size == 0:
            return []
        chosen = scores[candidates]
        if candidates.size > limit:
            top = np.argpartition(-chosen, limit - 1)[:limit]
            candidates, chosen = candidates[top], chosen[top]
        order = np.lexsort((candidates, -chosen))  # best first, ties by row (insertion) order
        return [(int(candidates[i]), float(chosen[i])) for i in order]
