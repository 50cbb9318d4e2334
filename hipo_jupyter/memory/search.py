"""The search index under the memory: what is on disk, and how it is queried.

The index is derived data. The Markdown files (raw logs, compaction nodes, knowledge/) are the
truth; `Memory` splits them into `Document`s (one per checkpoint or node section) and keeps the
index in step through `file_hashes()`: a file whose hash changed is re-sent whole with
`replace_file`, a raw-log append with `add`, a deleted file with `remove_file`. Delete the index
folder and the next sync rebuilds it.

On disk, under `index_dir` (normally `<root>/memory/.index/`):

    fts5.sqlite3        the default backend, SQLite FTS5 from the standard library
    fts5.sqlite3-wal    its write-ahead log (WAL mode: several kernels may read and write at once)
    whoosh/             the optional Whoosh backend (extra `[whoosh]`), see `search_whoosh`

fts5.sqlite3 holds:

- `documents`: one row per Document (`id` unique, `path`, `line`, `kind`, `date`, `type`, `title`,
  `text`, `tags` as a JSON list), indexed by path (for file replacement) and date (for filters).
- `documents_fts`: an FTS5 external-content table over `documents(title, text, tags)`, tokenized
  `porter unicode61` (English stemming, Unicode case and accent folding), kept in step by
  triggers. External content keeps one copy of the text and still lets FTS5 cut snippets.
- `files`: `path -> hash` of every file the index holds, for staleness checks.
- `_migrations`: the named schema migrations applied, in order (see `MIGRATIONS`).

Ranking is BM25 with the title weighted above the tags and the text. User text never reaches
FTS5 as syntax: `build_match_query` keeps the words, drops stopwords and quotes every term.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Protocol

from .errors import HipoError, QueryError

BACKENDS = ("fts5", "whoosh")

FTS5_FILENAME = "fts5.sqlite3"

# Column weights for bm25(): title, text, tags (the order of the FTS5 columns).
TITLE_WEIGHT = 5.0
TEXT_WEIGHT = 1.0
TAGS_WEIGHT = 3.0
RANK_FUNCTION = f"bm25({TITLE_WEIGHT}, {TEXT_WEIGHT}, {TAGS_WEIGHT})"

SNIPPET_CHARS = 200
MAX_QUERY_TERMS = 32  # a pasted paragraph still searches fast; the first terms are kept
BUSY_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Document:
    """One searchable piece of memory: a checkpoint, or a section of a node or knowledge file."""

    id: str  # unique in the index: f"{path}#L{line}"
    path: str  # relative to the memory root, e.g. "memory/2026-03-12.md"
    line: int  # 1-based
    kind: str  # "raw" | "daily" | "weekly" | "monthly" | "root" | "knowledge"
    date: str  # ISO date "YYYY-MM-DD" (period start for nodes): filters and recency
    type: str  # checkpoint type (project|feedback|user|reference) or "" for nodes
    title: str
    text: str
    tags: tuple[str, ...] = ()


ANY_HASH = object()  # `replace_file(..., if_hash=...)` not given: replace whatever is recorded


def document_id(path: str, line: int) -> str:
    """The id of the document at `line` of `path`."""
    return f"{path}#L{line}"


@dataclass(frozen=True)
class SearchHit:
    doc: Document
    score: float  # higher is better, always > 0
    snippet: str  # plain text around the matched terms, at most ~SNIPPET_CHARS ("" if not asked)


class SearchIndex(Protocol):
    """What every backend offers; `tests/test_search_contract.py` holds them all to it."""

    name: str

    def replace_file(
        self, path: str, file_hash: str, docs: Sequence[Document], *, if_hash: object = ANY_HASH
    ) -> bool:
        """Make `docs` the whole content of `path` and record its hash, in one transaction.
        With `if_hash` (a hash, or None for a file not indexed), only if the recorded hash is
        still that one: a sync that read a file must not overwrite what another process
        indexed since (its append is newer). Returns whether it wrote."""

    def add(self, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        """Append `docs` to `path` (a raw-log append; a doc with a known id replaces it)."""

    def remove_file(self, path: str) -> None: ...

    def file_hashes(self) -> dict[str, str]: ...

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
        """Ranked hits, best first. `snippets=False`: each hit's snippet is "" (a caller cuts
        one from the text if it shows it): a caller that shows whole texts (a context packed
        to a budget, from hundreds of candidates) need not pay for cuts it drops."""

    def documents(self, *, kinds: Collection[str] | None = None) -> Iterator[Document]: ...

    def documents_by_id(self, ids: Collection[str]) -> dict[str, Document]:
        """The documents with these ids (unknown ids left out): hybrid recall's vector hits,
        read in one go rather than by parsing each hit's Markdown file."""

    def documents_of(self, path: str) -> list[Document]:
        """The documents of one file in line order (a raw log's checkpoints: the neighbours
        of a hit, read from the index rather than by parsing the log again)."""

    def file_hash(self, path: str) -> str | None:
        """The hash recorded for `path` (None: not indexed): what a cache of `documents_of`
        is keyed by."""

    def count(self) -> int: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


# ---------------------------------------------------------------------------------------------
# Query building: pure functions, shared by both backends.

# English stopwords: too common to tell documents apart, so a query drops them.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    d ll m re s t ve
    """.split()  # noqa: SIM905 - a word list reads better as text
)

# A word as unicode61 sees one: a run of letters and digits (underscore and punctuation split).
WORD = re.compile(r"[^\W_]+")
# Words held together by a single connector ("2026-03-12", "foo_bar", "v2.1", "q1/q2", "it's")
# are one term, searched as a phrase; any other punctuation or space separates terms.
_TERM = re.compile(r"[^\W_]+(?:[-_./'’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’][sS]\Z")


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The searchable terms of user text, each a tuple of lower-cased words (a phrase when
    several: "2026-03-12" -> ("2026", "03", "12")). A possessive loses its "'s" ("Melanie's" ->
    ("melanie",)). Terms made only of stopwords and repeats are dropped, and at most
    MAX_QUERY_TERMS are kept."""
    terms: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    for match in _TERM.finditer(unicodedata.normalize("NFKC", text)):
        words = tuple(word.casefold() for word in WORD.findall(match.group()))
        if len(words) > 1 and _POSSESSIVE.search(match.group()):
            words = words[:-1]  # "Melanie's" finds "Melanie" too, not only "Melanie's"
        if all(word in STOPWORDS for word in words) or words in seen:
            continue
        seen.add(words)
        terms.append(words)
        if len(terms) == MAX_QUERY_TERMS:
            break
    return terms


def quote_fts(words: Sequence[str]) -> str:
    """One FTS5 string (a phrase when there are several words); quotes inside are doubled."""
    return '"' + " ".join(words).replace('"', '""') + '"'


def build_match_query(text: str) -> str:
    """User text -> an FTS5 MATCH expression: every term quoted, OR-ed, stopwords dropped.

    Quoting means no user text is ever FTS5 syntax (AND, NEAR, `col:`, `*`, `^`, brackets are
    just words), so a query can never be a syntax error. "" when nothing is searchable.
    """
    return " OR ".join(quote_fts(words) for words in query_terms(text))


def normalize_day(value: str | date | None, name: str) -> str | None:
    """An inclusive date filter as "YYYY-MM-DD" (a `date` is accepted too), or QueryError."""
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise QueryError(f"{name}={value!r} is not a date; use YYYY-MM-DD") from None


def plain_snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """Whitespace collapsed to single spaces and cut to `limit` characters at a word boundary.
    Only a head of the text is flattened, widened until it holds more than `limit`: the
    same result as flattening it all, without splitting a long node for 200 characters."""
    window = 2 * limit + 16
    while True:
        flat = " ".join(text[:window].split())  # a prefix of the whole text's flattening
        if window >= len(text) or len(flat) > limit:
            break
        window *= 4
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + "…"


def check_paths(path: str, docs: Sequence[Document]) -> None:
    for doc in docs:
        if doc.path != path:
            raise ValueError(f"document {doc.id!r} belongs to {doc.path!r}, not {path!r}")


# ---------------------------------------------------------------------------------------------
# Schema: named migrations, appended at the end, never edited once released.

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_documents_files_fts(db: sqlite3.Connection) -> None:
    db.execute(
        """
        create table documents (
            pk integer primary key,
            id text not null unique,
            path text not null,
            line integer not null,
            kind text not null,
            date text not null,
            type text not null,
            title text not null,
            text text not null,
            tags text not null
        )
        """
    )
    db.execute("create index documents_path on documents(path)")
    db.execute("create index documents_date on documents(date)")
    db.execute("create table files (path text primary key, hash text not null)")
    db.execute(
        """
        create virtual table documents_fts using fts5(
            title, text, tags,
            content='documents', content_rowid='pk', tokenize='porter unicode61'
        )
        """
    )
    db.execute(
        """
        create trigger documents_ai after insert on documents begin
            insert into documents_fts(rowid, title, text, tags)
            values (new.pk, new.title, new.text, new.tags);
        end
        """
    )
    db.execute(
        """
        create trigger documents_ad after delete on documents begin
            insert into documents_fts(documents_fts, rowid, title, text, tags)
            values ('delete', old.pk, old.title, old.text, old.tags);
        end
        """
    )
    db.execute(
        """
        create trigger documents_au after update on documents begin
            insert into documents_fts(documents_fts, rowid, title, text, tags)
            values ('delete', old.pk, old.title, old.text, old.tags);
            insert into documents_fts(rowid, title, text, tags)
            values (new.pk, new.title, new.text, new.tags);
        end
        """
    )


@migration
def m002_vectors(db: sqlite3.Connection) -> None:
    """Embeddings for semantic recall (extra `[semantic]`, see `vectors`): one row per Document
    id, with the model that made it and a hash of the text it was made from, so a changed text
    or another model is re-embedded; `vector_files` records which version of each file (and
    which model) the vectors were made from, as `files` does for the text. Every write bumps
    `vectors_state.generation`, so a reader's cached matrix knows it is stale. Empty, and never
    read, without the extra."""
    db.execute(
        """
        create table vectors (
            id text primary key,
            path text not null,
            line integer not null,
            kind text not null,
            date text not null,
            type text not null,
            model text not null,
            text_hash text not null,
            dim integer not null,
            vector blob not null
        )
        """
    )
    db.execute("create index vectors_path on vectors(path)")
    db.execute(
        "create table vector_files (path text primary key, hash text not null, model text not null)"
    )
    db.execute("create table vectors_state (generation integer not null)")
    db.execute("insert into vectors_state (generation) values (0)")


REQUIRED_TABLES = frozenset({"_migrations", "documents", "documents_fts", "files"})


def migrate(db: sqlite3.Connection) -> None:
    """Apply the migrations not yet recorded, in one write transaction, so two kernels opening a
    fresh index at once do not both create it."""
    with _write(db):
        db.execute(
            "create table if not exists _migrations (name text primary key, applied_at text)"
        )
        applied = {row[0] for row in db.execute("select name from _migrations")}
        for fn in MIGRATIONS:
            if fn.__name__ not in applied:
                fn(db)
                db.execute(
                    "insert into _migrations (name, applied_at) values (?, ?)",
                    (fn.__name__, datetime.now(UTC).isoformat()),
                )


@contextlib.contextmanager
def _write(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction. IMMEDIATE takes the write lock up front, so a second writer waits
    for the busy timeout instead of failing on a read-to-write upgrade."""
    db.execute("begin immediate")
    try:
        yield
    except BaseException:
        if db.in_transaction:  # some errors (a full disk, corruption) have rolled back already
            db.execute("rollback")
        raise
    db.execute("commit")


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
        insert into documents (id, path, line, kind, date, type, title, text, tags)
        values (?, ?, ?, ?, ?, ?, ?, ?, ?)
        on conflict(id) do update set
            path = excluded.path, line = excluded.line, kind = excluded.kind,
            date = excluded.date, type = excluded.type, title = excluded.title,
            text = excluded.text, tags = excluded.tags
    """

    def _put(self, path: str, file_hash: str, docs: Sequence[Document]) -> None:
        rows = [
            (d.id, d.path, d.line, d.kind, d.date, d.type, d.title, d.text, json.dumps(d.tags))
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

    def documents(self, *, kinds: Collection[str] | None = None) -> Iterator[Document]:
        sql = f"select {_DOC_COLUMNS} from documents d"
        params: list[object] = []
        if kinds is not None:
            sql += f" where d.kind in ({_placeholders(kinds)})"
            params.extend(kinds)
        sql += " order by d.path, d.line"
        with self._lock, self._guard():
            rows = self._db.execute(sql, params).fetchall()
        return (_row_to_document(row) for row in rows)

    def documents_by_id(self, ids: Collection[str]) -> dict[str, Document]:
        wanted = list(dict.fromkeys(ids))
        found: dict[str, Document] = {}
        with self._lock, self._guard():
            for start in range(0, len(wanted), ID_BATCH):  # under SQLite's variable limit
                chunk = wanted[start : start + ID_BATCH]
                where = f"d.id in ({_placeholders(chunk)})"
                rows = self._db.execute(
                    f"select {_DOC_COLUMNS} from documents d where {where}", chunk
                ).fetchall()
                found.update((row[0], _row_to_document(row)) for row in rows)
        return found

    def documents_of(self, path: str) -> list[Document]:
        sql = f"select {_DOC_COLUMNS} from documents d where d.path = ? order by d.line"
        with self._lock, self._guard():
            return [_row_to_document(row) for row in self._db.execute(sql, (path,))]

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
        sql, params = search_sql(
            match,
            limit=limit,
            kinds=kinds,
            types=types,
            since=since,
            until=until,
            snippets=snippets,
        )
        with self._lock, self._guard():
            try:
                rows = self._db.execute(sql, params).fetchall()
            except sqlite3.OperationalError as error:
                if "fts5" in str(error).lower() or "syntax" in str(error).lower():
                    raise QueryError(f"search could not run {query!r}: {error}") from error
                raise
        return [
            SearchHit(doc=doc, score=row[-2], snippet=plain_snippet(row[-1] or doc.text))
            if snippets
            else SearchHit(doc=doc, score=row[-2], snippet="")
            for row in rows
            for doc in (_row_to_document(row),)
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


SNIPPET_SQL = "snippet(documents_fts, -1, '', '', '…', 20)"
_DOC_COLUMNS = "d.id, d.path, d.line, d.kind, d.date, d.type, d.title, d.text, d.tags"
ID_BATCH = 500  # ids per `in (...)` query


def _placeholders(values: Collection[str]) -> str:
    return ", ".join("?" for _ in values)


def search_sql(
    match: str,
    *,
    limit: int,
    kinds: Collection[str] | None = None,
    types: Collection[str] | None = None,
    since: str | None = None,
    until: str | None = None,
    snippets: bool = True,
) -> tuple[str, list[object]]:
    """The SQL and parameters of one ranked, filtered search; pure, so tests can read it.

    Rows: the document columns, the score (-bm25, > 0) and the raw snippet. Ranking goes through
    FTS5's `rank` column (`rank match 'bm25(...)'`, `order by rank`): FTS5 then sorts inside the
    virtual table, measured 1.5-2x faster than `order by bm25(...)` on a common term.
    Without `snippets` the snippet column is empty: FTS5's snippet() re-reads each row's text,
    and at a year of memory, over a thousand candidates, it was four fifths of the query.
    """
    where = ["documents_fts match ?", "documents_fts.rank match ?"]
    params: list[object] = [match, RANK_FUNCTION]
    if kinds is not None:
        where.append(f"d.kind in ({_placeholders(kinds)})")
        params.extend(kinds)
    if types is not None:
        where.append(f"d.type in ({_placeholders(types)})")
        params.extend(types)
    if since is not None:
        where.append("d.date >= ?")
        params.append(since)
    if until is not None:
        where.append("d.date <= ?")
        params.append(until)
    params.append(limit)
    sql = f"""
        select {_DOC_COLUMNS},
            -documents_fts.rank as score,
            {SNIPPET_SQL if snippets else "''"} as snippet
        from documents_fts join documents d on d.pk = documents_fts.rowid
        where {" and ".join(where)}
        order by documents_fts.rank
        limit ?
    """
    return sql, params


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
        tags=() if row[8] == "[]" else tuple(json.loads(row[8])),  # most have none: no parse
    )


# ---------------------------------------------------------------------------------------------
# Opening, with recovery: the index is derived data, so a damaged one is replaced, never fatal.


def remove_path(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


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


def open_index(index_dir: Path, backend: str = "fts5") -> SearchIndex:
    """Open (creating if needed) the index of `backend` under `index_dir`.

    A damaged or foreign index file is deleted and an empty index created in its place: the
    caller re-syncs it from the Markdown files through `file_hashes()`.
    """
    if backend not in BACKENDS:
        raise HipoError(f"unknown search backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    index_dir = Path(index_dir)
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HipoError(f"cannot create the search index folder {index_dir}: {error}") from error
    if backend == "fts5":
        return open_fts5(index_dir)
    try:
        from .search_whoosh import open_whoosh
    except ImportError as error:
        raise HipoError(
            "the whoosh backend needs Whoosh: pip install 'hipo-jupyter[whoosh]'"
        ) from error
    return open_whoosh(index_dir)
