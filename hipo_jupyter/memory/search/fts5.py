"""The search index under the memory: what is on disk, and how it is queried.

The index is derived data. The Markdown files (raw logs, compaction nodes, knowledge/) are the
truth; `Memory` splits them into `Document`s (one per checkpoint or node section) and keeps the
index in step through `file_hashes()`: a file whose hash changed is re-sent whole with
`replace_file`, a raw-log append with `add`, a deleted file with `remove_file`. Delete the index
folder and the next sync rebuilds it.

On disk, under `index_dir` (normally `<root>/memory/.index/`):

    fts5.sqlite3        the default backend, SQLite FTS5 from the standard library
    fts5.sqlite3-wal    its write-ahead log (WAL mode: several kernels may read and write at once)
    whoosh/             the optional Whoosh backend (extra `[whoosh]`), see `whoosh_backend.py`

fts5.sqlite3 holds:

- `documents`: one row per Document (`id` unique, `path`, `line`, `kind`, `date`, `type`, `title`,
  `text`, `tags` as a JSON list, `provenance`), indexed by path (for file replacement) and date
  (for filters).
- `documents_fts`: an FTS5 external-content table over `documents(title, text, tags)`, tokenized
  `porter unicode61` (English stemming, Unicode case and accent folding), kept in step by
  triggers. External content keeps one copy of the text and still lets FTS5 cut snippets.
- `files`: `path -> hash` of every file the index holds, for staleness checks.
- `_migrations`: the named schema migrations applied, in order (see `MIGRATIONS`).

Ranking is BM25 with the title weighted above the tags and the text. User text never reaches
FTS5 as syntax: `build_match_query` (`query.py`) keeps the words, drops stopwords and
quotes every term. The schema is built by the named migrations of `migrations.py`.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from functools import lru_cache
from pathlib import Path

from ..disk.jsonread import parse_json
from ..errors import HipoError, ParseError, QueryError
from .contract import ANY_HASH as ANY_HASH
from .contract import BACKENDS as BACKENDS
from .contract import Document as Document
from .contract import SearchHit as SearchHit
from .contract import SearchIndex as SearchIndex
from .contract import check_paths, remove_path
from .contract import document_id as document_id
from .migrations import MIGRATIONS as MIGRATIONS  # re-exported: tests and vectors use them here
from .migrations import REQUIRED_TABLES, _snapshot, _write, migrate
from .migrations import migration as migration
from .query import DOC_COLUMNS as _DOC_COLUMNS
from .query import MAX_QUERY_TERMS as MAX_QUERY_TERMS
from .query import RANK_FUNCTION as RANK_FUNCTION
from .query import SNIPPET_CHARS as SNIPPET_CHARS
from .query import STOPWORDS as STOPWORDS
from .query import TAGS_WEIGHT as TAGS_WEIGHT
from .query import TEXT_WEIGHT as TEXT_WEIGHT
from .query import TITLE_WEIGHT as TITLE_WEIGHT
from .query import build_match_query, normalize_day, placeholders, plain_snippet
from .query import query_terms as query_terms
from .query import quote_fts as quote_fts
from .query import search_sql as search_sql

FTS5_FILENAME = "fts5.sqlite3"

BUSY_TIMEOUT_MS = 10_000
ID_BATCH = 500  # ids per `in (...)` query
SEEN_DOCUMENTS = 10_000  # documents kept from searches for `documents_by_id` (a year: ~7,700)


# ---------------------------------------------------------------------------------------------
# The FTS5 backend.


class _Unusable(Exception):
    """The file opens as SQLite but is not a usable index: foreign tables, failed checks."""


def _is_corruption(error: sqlite3.Error) -> bool:
    """A damaged or foreign file, as opposed to a busy one (which must never be deleted)."""
    name = getattr(error, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return True
    message = str(error).lower()
    return "malformed" in message or "not a database" in message


class Fts5Index:
    """SQLite FTS5 search index in `index_dir / "fts5.sqlite3"`. Use `open_index` to get one."""

    name = "fts5"

    def __init__(self, db_path: Path) -> None:
        self.path = db_path
        self._lock = threading.RLock()
        # Documents this handle read since the index last changed (`version`), by id: a
        # context reads the whole text of the hits its recall's search has just returned.
        self._seen: dict[str, Document] = {}
        self._seen_at: tuple[int, int] | None = None
        # Autocommit mode (transactions are explicit, see `_write`); the timeout is SQLite's busy
        # timeout: a writer waits that long for another kernel's write to finish.
        self._db = sqlite3.connect(
            db_path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        try:
            self._db.execute("pragma journal_mode = wal")
            self._db.execute("pragma synchronous = normal")  # WAL: durable enough for derived data
            self._check_foreign()
            quick = self._db.execute("pragma quick_check").fetchone()
            if not quick or quick[0] != "ok":
                raise _Unusable(f"quick_check failed: {quick}")
            migrate(self._db)
            missing = REQUIRED_TABLES - self._tables()
            if missing:
                raise _Unusable(f"missing tables: {sorted(missing)}")
            # FTS5 keeps its index in shadow tables; a probe query fails if they are damaged.
            self._db.execute(
                "select rowid from documents_fts where documents_fts match '\"hipo\"' limit 1"
            ).fetchall()
        except BaseException:
            self._db.close()
            raise

    def _tables(self) -> set[str]:
        rows = self._db.execute("select name from sqlite_master where type = 'table'")
        return {row[0] for row in rows}

    def _check_foreign(self) -> None:
        """A database with tables but no migration record is someone else's file."""
        tables = self._tables()
        if tables and "_migrations" not in tables:
            raise _Unusable(f"not a hipo index: tables {sorted(tables)[:5]}")

    # -- writing ----------------------------------------------------------------------------

    _UPSERT = """
        insert into documents (id, path, line, kind, date, type, title, text, tags, provenance,
                               writer, via, provider, conversation, proposes, speaker)
        values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        on conflict(id) do update set
            path = excluded.path, line = excluded.line, kind = excluded.kind,
            date = excluded.date, type = excluded.type, title = excluded.title,
            text = excluded.text, tags = excluded.tags, provenance = excluded.provenance,
            writer = excluded.writer, via = excluded.via, provider = excluded.provider,
            conversation = excluded.conversation, proposes = excluded.proposes,
            speaker = excluded.speaker
    """

    def _put(self, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        rows = [
            (
                *(d.id, d.path, d.line, d.kind, d.date, d.type, d.title, d.text),
                *(json.dumps(d.tags), d.provenance),
                *(d.writer, d.via, d.provider, d.conversation, int(d.proposes), d.speaker),
            )
            for d in docs
        ]
        self._db.executemany(self._UPSERT, rows)
        self._db.execute(
            "insert into files (path, hash) values (?, ?)"
            " on conflict(path) do update set hash = excluded.hash",
            (path, file_hash),
        )

    def replace_file(
        self, path: str, file_hash: str, docs: Sequence[Document], *, if_hash: object = ANY_HASH
    ) -> bool:
        check_paths(path, docs)
        with self._lock, self._guard(), _write(self._db):
            if if_hash is not ANY_HASH:
                row = self._db.execute("select hash from files where path = ?", (path,)).fetchone()
                if (row[0] if row else None) != if_hash:
                    return False
            self._db.execute("delete from documents where path = ?", (path,))
            self._put(path, file_hash, docs)
        return True

    def add(self, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        check_paths(path, docs)
        with self._lock, self._guard(), _write(self._db):
            self._put(path, file_hash, docs)

    def remove_file(self, path: str) -> None:
        with self._lock, self._guard(), _write(self._db):
            self._db.execute("delete from documents where path = ?", (path,))
            self._db.execute("delete from files where path = ?", (path,))

    def clear(self) -> None:
        with self._lock, self._guard(), _write(self._db):
            self._db.execute("delete from documents")
            self._db.execute("delete from files")

    # -- reading ----------------------------------------------------------------------------

    def file_hashes(self) -> dict[str, str]:
        with self._lock, self._guard():
            return dict(self._db.execute("select path, hash from files"))

    def count(self) -> int:
        with self._lock, self._guard():
            return self._db.execute("select count(*) from documents").fetchone()[0]

    def version(self) -> tuple[int, int]:
        """(rows this connection changed, SQLite's `data_version`, which moves when another
        connection commits): equal twice only if nothing was written in between."""
        with self._lock, self._guard():
            return self._db.total_changes, self._db.execute("pragma data_version").fetchone()[0]

    def _known(self) -> dict[str, Document]:
        """`_seen`, emptied when the index changed since it was filled (or it is full). Asked
        inside the `_snapshot` its rows are read in, so they are all of that version."""
        version = self.version()
        if version != self._seen_at or len(self._seen) >= SEEN_DOCUMENTS:
            self._seen, self._seen_at = {}, version
        return self._seen

    def documents(self, *, kinds: Collection[str] | None = None) -> Iterator[Document]:
        sql = f"select {_DOC_COLUMNS} from documents d"
        params: list[object] = []
        if kinds is not None:
            sql += f" where d.kind in ({placeholders(kinds)})"
            params.extend(kinds)
        sql += " order by d.path, d.line"
        with self._lock, self._guard():
            rows = self._db.execute(sql, params).fetchall()
        return (_row_to_document(row) for row in rows)

    def documents_by_id(self, ids: Collection[str]) -> dict[str, Document]:
        found: dict[str, Document] = {}
        with self._lock, self._guard(), _snapshot(self._db):
            seen = self._known()
            wanted = []
            for doc_id in dict.fromkeys(ids):
                doc = seen.get(doc_id)
                if doc is None:
                    wanted.append(doc_id)
                else:
                    found[doc_id] = doc
            for start in range(0, len(wanted), ID_BATCH):  # under SQLite's variable limit
                chunk = wanted[start : start + ID_BATCH]
                where = f"d.id in ({placeholders(chunk)})"
                rows = self._db.execute(
                    f"select {_DOC_COLUMNS} from documents d where {where}", chunk
                ).fetchall()
                found.update((row[0], _row_to_document(row)) for row in rows)
            seen.update((doc_id, found[doc_id]) for doc_id in wanted if doc_id in found)
        return found

    def _read_into(self, seen: dict[str, Document], ids: Sequence[str]) -> None:
        """Read the documents of `ids` into `seen` (in the caller's snapshot and lock)."""
        for start in range(0, len(ids), ID_BATCH):  # under SQLite's variable limit
            chunk = ids[start : start + ID_BATCH]
            rows = self._db.execute(
                f"select {_DOC_COLUMNS} from documents d where d.id in ({placeholders(chunk)})",
                chunk,
            ).fetchall()
            seen.update((row[0], _row_to_document(row)) for row in rows)

    def documents_of(self, path: str) -> list[Document]:
        sql = f"select {_DOC_COLUMNS} from documents d where d.path = ? order by d.line"
        with self._lock, self._guard(), _snapshot(self._db):
            seen = self._known()
            docs = [_row_to_document(row) for row in self._db.execute(sql, (path,))]
            seen.update((doc.id, doc) for doc in docs)
        return docs

    def file_hash(self, path: str) -> str | None:
        with self._lock, self._guard():
            row = self._db.execute("select hash from files where path = ?", (path,)).fetchone()
        return row[0] if row else None

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        snippets: bool = True,
    ) -> list[SearchHit]:
        since, until = normalize_day(since, "since"), normalize_day(until, "until")
        match = build_match_query(query)
        if not match or limit <= 0:
            return []
        # Without snippets the ranked query reads ids alone, and only the documents not read
        # since the index last changed are read whole: a candidate's text is read once, not
        # on every query that finds it (300 pasted pages of 20 KB were 6 MB a query).
        sql, params = search_sql(
            match,
            limit=limit,
            kinds=kinds,
            types=types,
            since=since,
            until=until,
            snippets=snippets,
            **({} if snippets else {"columns": "d.id"}),
        )
        with self._lock, self._guard(), _snapshot(self._db):
            seen = self._known()
            try:
                rows = self._db.execute(sql, params).fetchall()
            except sqlite3.OperationalError as error:
                if "fts5" in str(error).lower() or "syntax" in str(error).lower():
                    raise QueryError(f"search could not run {query!r}: {error}") from error
                raise
            if not snippets:
                self._read_into(seen, [row[0] for row in rows if row[0] not in seen])
                rows = [row for row in rows if row[0] in seen]
                docs = [seen[row[0]] for row in rows]
            else:  # a document read since the index last changed is that row: not built again
                docs = [seen.get(row[0]) or _row_to_document(row) for row in rows]
            seen.update((doc.id, doc) for doc in docs)
        return [
            SearchHit(doc=doc, score=row[-2], snippet=plain_snippet(row[-1] or doc.text))
            if snippets
            else SearchHit(doc=doc, score=row[-2], snippet="")
            for row, doc in zip(rows, docs, strict=True)
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite errors as HipoError: the front ends show one line, not a traceback."""
        try:
            yield
        except sqlite3.Error as error:
            if _is_corruption(error):
                raise HipoError(
                    f"the search index {self.path} is damaged ({error}); it is rebuilt from the "
                    "Markdown files when the memory is next opened"
                ) from error
            if isinstance(error, sqlite3.OperationalError) and "locked" in str(error).lower():
                raise HipoError(
                    f"the search index {self.path} is locked by another process; try again"
                ) from error
            raise


def _row_to_document(row: Sequence) -> Document:
    return Document(
        id=row[0],
        path=row[1],
        line=row[2],
        kind=row[3],
        date=row[4],
        type=row[5],
        title=row[6],
        text=row[7],
        tags=_tags(row[8]),
        provenance=row[9],
        writer=row[10],
        via=row[11],
        provider=row[12],
        conversation=row[13],
        proposes=bool(row[14]),
        speaker=row[15],
    )


@lru_cache(maxsize=1024)
def _tags(column: str) -> tuple[str, ...]:
    """The tags column (a JSON list) as a tuple. A memory holds a few hundred sets of tags,
    and a year's context reads ~300 rows: each set parsed once, not once per row."""
    if column == "[]":
        return ()
    try:
        tags = parse_json(column, "the index's tags column")
    except ParseError:  # a tampered index: no tags rather than a traceback
        return ()
    return tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()


# ---------------------------------------------------------------------------------------------
# Opening, with recovery: the index is derived data, so a damaged one is replaced, never fatal.


def open_fts5(index_dir: Path) -> Fts5Index:
    db_path = index_dir / FTS5_FILENAME
    if db_path.exists() and not db_path.is_file():
        remove_path(db_path)  # a folder or socket where our file belongs
    try:
        return Fts5Index(db_path)
    except _Unusable:
        pass
    except sqlite3.Error as error:
        if not _is_corruption(error):
            raise HipoError(f"cannot open the search index {db_path}: {error}") from error
    for suffix in ("", "-wal", "-shm", "-journal"):
        remove_path(db_path.with_name(db_path.name + suffix))
    try:
        return Fts5Index(db_path)
    except (sqlite3.Error, _Unusable) as error:
        raise HipoError(f"cannot create the search index {db_path}: {error}") from error


def memory_index() -> SearchIndex:
    """An FTS5 index held in memory only: for a folder whose index cannot be saved."""
    return Fts5Index(Path(":memory:"))
