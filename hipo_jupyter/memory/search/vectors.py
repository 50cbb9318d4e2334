"""Embeddings beside the text index, searched by brute-force cosine with numpy (extra `[semantic]`).

On disk: the table `vectors` (migration `m002_vectors` in `migrations.py`) inside
`<root>/memory/.index/fts5.sqlite3`, the same file as the FTS5 text index:

- `vectors`: one row per `Document` id: `path`, `line`, `kind`, `date`, `type` (copied from the
  Document, so results can be filtered and located without the text index), `model` (the
  embedder's `model_id`), `text_hash` (sha256 of the text embedded), `dim` and `vector`, a
  float32 blob of `dim * 4` bytes, L2-normalised (cosine = dot product);
- `vector_files`: `path -> hash` (and `model`) of every file whose vectors are held;
- `vectors_state.generation`: bumped by every write, so a reader knows when its cached matrix is
  stale (another kernel wrote) without reading the vectors again.

Why that file, whatever the text backend: one schema with one list of migrations, one folder to
delete to rebuild everything, SQLite's transactions and WAL for several kernels, and no second
database format. With FTS5 the vectors sit next to the documents they describe; with Whoosh the
file holds empty text tables and the vectors, so both backends share the same vector code and
tests. The store has its own connection: its writes never hold the text index's lock while a
model runs (texts are embedded before the write transaction opens).

Search loads the current model's vectors once into a numpy matrix (float32, ~1.5 KB a document:
~11 MB at a year of 20 checkpoints a day) and multiplies: brute force is exact, and measured here
at 0.7 ms for 7,300 vectors and 2.3 ms for 20,000 (one core). An ANN index would start to pay
around 100,000 documents (~12 ms a query, and ~150 MB of matrix), some fifteen years of that
pace. Writes through this store update the cached matrix in place; a write by another process
(the generation moved under us) reloads it.

Like the text index, the vectors are derived from the Markdown files and kept in step per file:
`vector_files` holds `path -> hash` of the version each file's vectors were made from (and the
model), so a caller re-sends a file whose hash moved, and every file after a model change. A
text already embedded by the current model is never embedded again (its `text_hash` matches).
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import HipoError
from .contract import Document, check_paths
from .embed import Embedder, embed_query
from .fts5 import BUSY_TIMEOUT_MS, FTS5_FILENAME, migrate, open_fts5
from .query import normalize_day
from .vector_matrix import VectorMatrix

Progress = Callable[[int, int, str], None]

SYNC_BATCH = 256  # documents embedded, then written, per step of `replace_files`
_EMPTY = np.zeros((0, 0), dtype=np.float32)


@dataclass(frozen=True)
class VectorHit:
    """A document near the query: where it is, and its cosine similarity (-1..1)."""

    id: str
    path: str
    line: int
    kind: str
    date: str
    type: str
    score: float


def embedding_text(doc: Document) -> str:
    """What is embedded for a document: its title, then its text (the model reads the first
    256 tokens). Tags stay out: they are keywords, which BM25 and the Topics Index match."""
    return f"{doc.title}\n{doc.text}".strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class _NotOurs(Exception):
    """The file opens as SQLite but does not hold our schema (a foreign or damaged file)."""


class VectorStore:
    """The `vectors` table of one index folder, with `embedder` turning texts into vectors.

    Mirrors the text index's writes (`replace_file`, `add`, `remove_file`, `clear`,
    `file_hashes`) so a caller keeps both in step in the same call, and catches up the same way:
    a file whose hash differs from `file_hashes()` is sent again (with another model, every file
    differs). Use `open_vectors` to get one.
    """

    def __init__(self, db_path: Path, embedder: Embedder) -> None:
        self.path = Path(db_path)
        self.embedder = embedder
        self._lock = threading.RLock()
        self._matrix: VectorMatrix | None = None
        self._matrix_model = ""
        self._generation = -1
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        try:
            self._db.execute("pragma journal_mode = wal")
            self._db.execute("pragma synchronous = normal")
            tables = {r[0] for r in self._db.execute("select name from sqlite_master")}
            if tables and "_migrations" not in tables:
                raise _NotOurs(f"not a hipo index: {sorted(tables)[:5]}")
            migrate(self._db)
            self._db.execute("select generation from vectors_state").fetchone()
        except BaseException:
            self._db.close()
            raise

    def __repr__(self) -> str:
        return f"VectorStore({str(self.path)!r})"

    # -- writing ----------------------------------------------------------------------------

    def replace_file(self, path: str, file_hash: str, docs: Sequence[Document]) -> int:
        """Make `docs` the vectors of `path` and record its hash; texts already embedded with
        this model are kept, other vectors of the file dropped. Returns how many were embedded."""
        return self.replace_files([(path, file_hash, docs)])

    def add(self, path: str, file_hash: str, docs: Sequence[Document]) -> int:
        """Embed and store `docs` (a raw-log append) and record the file's new hash; a known id
        with a new text is replaced. Returns how many were embedded."""
        check_paths(path, docs)
        with self._lock:
            fresh = self.unembedded(docs)
            vectors = self._embed(fresh)
            self._write(fresh, vectors, gone=[], files=[(path, file_hash)])
            return len(fresh)

    def remove_file(self, path: str) -> None:
        with self._lock:
            gone = [r[0] for r in self._read("select id from vectors where path = ?", (path,))]
            self._write([], _EMPTY, gone=gone, files=[], dropped=[path])

    def replace_files(
        self,
        files: Iterable[tuple[str, str, Sequence[Document]]],
        *,
        progress: Progress | None = None,
        batch: int = SYNC_BATCH,
        total: int | None = None,
    ) -> int:
        """`replace_file` for many files (a rebuild, an import, a model change): texts are
        embedded in batches of about `batch` across files, each batch written with its files'
        hashes in one transaction (an interrupted run keeps what it finished), and
        `progress(done, total, "embedding")` called after each. Returns how many were embedded.

        `files` is consumed as it goes: given as a generator, only one batch's files are held
        at once (a reindex of 7,000 exchanges held ~28 MB of documents before embedding any,
        issue 25); `total`, the texts to embed when known, spares reading it all first for the
        progress bar.
        """
        with self._lock:
            if progress and total is None:
                files = [(path, file_hash, list(docs)) for path, file_hash, docs in files]
                total = len(self.unembedded([d for *_, docs in files for d in docs]))
            done = 0
            if progress and total:
                progress(0, total, "embedding")
            group: list[tuple[str, str, list[Document]]] = []
            fresh: list[Document] = []
            for path, file_hash, docs in files:
                docs = list(docs)
                check_paths(path, docs)
                group.append((path, file_hash, docs))
                fresh += self.unembedded(docs)
                if len(fresh) >= batch:
                    done += self._replace_group(group, fresh)
                    if progress and fresh:
                        progress(done, max(total or 0, done), "embedding")
                    group, fresh = [], []
            if group:
                done += self._replace_group(group, fresh)
                if progress and fresh:
                    progress(done, max(total or 0, done), "embedding")
            return done

    def _replace_group(
        self, group: Sequence[tuple[str, str, Sequence[Document]]], fresh: Sequence[Document]
    ) -> int:
        """Embed `fresh`, then in one transaction write them, drop the group's other vectors
        and record its files' hashes; how many were embedded."""
        vectors = self._embed(fresh)
        keep = {d.id for *_, docs in group for d in docs}
        held = self._ids_of([path for path, *_ in group])
        self._write(
            fresh,
            vectors,
            gone=[doc_id for doc_id in held if doc_id not in keep],
            files=[(path, file_hash) for path, file_hash, _ in group],
        )
        return len(fresh)

    def clear(self) -> None:
        with self._lock, self._guard(), self._transaction():
            self._db.execute("delete from vectors")
            self._db.execute("delete from vector_files")
            self._bump()
            self._matrix, self._generation = None, -1

    def file_hashes(self) -> dict[str, str]:
        """path -> hash of the file version its vectors were made from; "" (never a file's
        hash) for a file embedded by another model, so a caller sends it again."""
        model = self.embedder.model_id
        rows = self._read("select path, hash, model from vector_files")
        return {path: (file_hash if held == model else "") for path, file_hash, held in rows}

    def file_hash(self, path: str) -> str | None:
        """`file_hashes().get(path)` without reading every row: a remember asks it each time."""
        rows = self._read("select hash, model from vector_files where path = ?", (path,))
        if not rows:
            return None
        return rows[0][0] if rows[0][1] == self.embedder.model_id else ""

    def _ids_of(self, paths: Sequence[str]) -> list[str]:
        ids: list[str] = []
        for start in range(0, len(paths), 500):  # SQLite's variable limit
            part = list(paths[start : start + 500])
            sql = f"select id from vectors where path in ({_marks(part)})"
            ids.extend(r[0] for r in self._read(sql, part))
        return ids

    def unembedded(self, docs: Sequence[Document]) -> list[Document]:
        """The docs with no vector from the current model for their current text."""
        if not docs:
            return []
        model = self.embedder.model_id
        held: dict[str, tuple[str, str]] = {}
        ids = [d.id for d in docs]
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            sql = f"select id, model, text_hash from vectors where id in ({_marks(part)})"
            held.update((r[0], (r[1], r[2])) for r in self._read(sql, part))
        fresh = {}
        for d in docs:
            if held.get(d.id) != (model, text_hash(embedding_text(d))):
                fresh[d.id] = d  # a repeated id: the last one wins, as in the text index
        return list(fresh.values())

    def _embed(self, docs: Sequence[Document]) -> np.ndarray:
        if not docs:
            return _EMPTY
        vectors = np.asarray(self.embedder.embed([embedding_text(d) for d in docs]))
        if vectors.shape != (len(docs), self.embedder.dim):
            raise HipoError(
                f"the embedder returned shape {vectors.shape} for {len(docs)} texts, "
                f"expected ({len(docs)}, {self.embedder.dim})"
            )
        return vectors.astype(np.float32, copy=False)

    def _write(
        self,
        docs: Sequence[Document],
        vectors: np.ndarray,
        *,
        gone: Sequence[str],
        files: Sequence[tuple[str, str]],
        dropped: Sequence[str] = (),
    ) -> None:
        """One transaction: upsert `docs` with their vectors, delete the `gone` ids, record the
        `files`' hashes and forget the `dropped` files; then update the cached matrix."""
        model = self.embedder.model_id
        rows = [
            (
                d.id,
                d.path,
                d.line,
                d.kind,
                d.date,
                d.type,
                model,
                text_hash(embedding_text(d)),
                int(vectors.shape[1]),
                np.ascontiguousarray(vectors[i], dtype=np.float32).tobytes(),
            )
            for i, d in enumerate(docs)
        ]
        with self._guard(), self._transaction():
            before = self._db.execute("select generation from vectors_state").fetchone()[0]
            for start in range(0, len(gone), 500):
                part = list(gone[start : start + 500])
                self._db.execute(f"delete from vectors where id in ({_marks(part)})", part)
            self._db.executemany(_UPSERT, rows)
            self._db.executemany(
                "insert into vector_files (path, hash, model) values (?, ?, ?)"
                " on conflict(path) do update set hash = excluded.hash, model = excluded.model",
                [(path, file_hash, model) for path, file_hash in files],
            )
            self._db.executemany(
                "delete from vector_files where path = ?", [(path,) for path in dropped]
            )
            after = self._bump()
        # Keep the cached matrix if nobody else wrote since it was read; else read it again.
        matrix = self._matrix
        if matrix is None or before != self._generation or self._matrix_model != model:
            self._matrix, self._generation = None, -1
            return
        for doc_id in gone:
            matrix.remove(doc_id)
        for i, doc in enumerate(docs):
            matrix.put(doc, vectors[i])
        self._generation = after
        if matrix.dead > max(64, matrix.n // 2):
            self._matrix, self._generation = None, -1  # squeezed on the next search

    def _bump(self) -> int:
        self._db.execute("update vectors_state set generation = generation + 1")
        return self._db.execute("select generation from vectors_state").fetchone()[0]

    # -- reading ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> list[VectorHit]:
        """The `limit` documents nearest to `query` (cosine, best first), filtered like the
        text index's search. Only vectors made by the current model count."""
        since, until = normalize_day(since, "since"), normalize_day(until, "until")
        if not query.strip() or limit <= 0:
            return []
        vector = np.asarray(embed_query(self.embedder, [query]), dtype=np.float32)[0]
        return self.search_vector(
            vector, limit=limit, kinds=kinds, types=types, since=since, until=until
        )

    def search_vector(
        self,
        vector: np.ndarray,
        *,
        limit: int = 20,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> list[VectorHit]:
        with self._lock:
            matrix = self._current_matrix()
            if matrix is None or vector.shape != (matrix.dim,):
                return []
            found = matrix.search(vector, limit, kinds, types, since, until)
            return [
                VectorHit(matrix.ids[at] or "", *matrix.meta[at], score=round(score, 6))
                for at, score in found
            ]

    def _current_matrix(self) -> VectorMatrix | None:
        generation = self._read("select generation from vectors_state")[0][0]
        model = self.embedder.model_id
        if self._matrix is None or generation != self._generation or self._matrix_model != model:
            self._matrix = self._load_matrix(model, self.embedder.dim)
            self._matrix_model, self._generation = model, generation
        return self._matrix

    def _load_matrix(self, model: str, dim: int) -> VectorMatrix:
        """The model's vectors read row by row straight into the matrix: the blobs are never
        all held at once (at a year of memory, ~12 MB more of a kernel's memory kept, issue 35)."""
        where = " from vectors where model = ? and dim = ?"
        count = self._read("select count(*)" + where, (model, dim))[0][0]
        vectors = np.zeros((max(count, 16), dim), dtype=np.float32)
        rows: list[tuple] = []
        with self._lock, self._guard():
            cursor = self._db.execute(
                "select id, path, line, kind, date, type, vector" + where + " order by rowid",
                (model, dim),
            )
            for row in cursor:
                if len(row[6]) != 4 * dim or len(rows) == len(vectors):
                    continue  # a damaged blob is skipped (or one written since the count)
                vectors[len(rows)] = np.frombuffer(row[6], dtype=np.float32)
                rows.append(row[:6])
        return VectorMatrix(dim, rows, vectors=vectors)

    def count(self, *, current_model: bool = True) -> int:
        """Vectors held (by default only the current model's: the others await re-embedding)."""
        if current_model:
            sql, params = "select count(*) from vectors where model = ?", (self.embedder.model_id,)
        else:
            sql, params = "select count(*) from vectors", ()
        return self._read(sql, params)[0][0]

    def models(self) -> dict[str, int]:
        """model id -> vectors held, for status lines and tests."""
        return dict(self._read("select model, count(*) from vectors group by model"))

    def close(self) -> None:
        with self._lock:
            self._matrix = None
            self._db.close()

    # -- plumbing -----------------------------------------------------------------------------

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock, self._guard():
            return self._db.execute(sql, params).fetchall()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("begin immediate")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("rollback")
            raise
        self._db.execute("commit")

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite errors as HipoError, as the text index reports them."""
        try:
            yield
        except sqlite3.Error as error:
            if isinstance(error, sqlite3.OperationalError) and "locked" in str(error).lower():
                raise HipoError(
                    f"the vector index {self.path} is locked by another process; try again"
                ) from error
            raise HipoError(
                f"the vector index {self.path} failed ({error}); delete {self.path.parent} "
                "to rebuild it from the Markdown files"
            ) from error


_UPSERT = """
    insert into vectors (id, path, line, kind, date, type, model, text_hash, dim, vector)
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    on conflict(id) do update set
        path = excluded.path, line = excluded.line, kind = excluded.kind, date = excluded.date,
        type = excluded.type, model = excluded.model, text_hash = excluded.text_hash,
        dim = excluded.dim, vector = excluded.vector
"""


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" for _ in values)


def open_vectors(index_dir: Path, embedder: Embedder) -> VectorStore:
    """The vector store of `index_dir` (its `fts5.sqlite3`, whatever the text backend).

    A damaged or foreign file is handed to `search.open_fts5`, which replaces it with an empty
    index (the Markdown files rebuild it), and opened again.
    """
    index_dir = Path(index_dir)
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HipoError(f"cannot create the search index folder {index_dir}: {error}") from error
    db_path = index_dir / FTS5_FILENAME
    try:
        return VectorStore(db_path, embedder)
    except (_NotOurs, sqlite3.DatabaseError):
        pass
    open_fts5(index_dir).close()  # recovers: deletes what it cannot use, creates a fresh index
    try:
        return VectorStore(db_path, embedder)
    except (_NotOurs, sqlite3.Error) as error:
        raise HipoError(f"cannot open the vector index {db_path}: {error}") from error
