"""The FTS5 index's schema: named migrations, appended at the end, never edited once released.

`migrate` applies those not yet recorded in `_migrations`, in one write transaction; `_write` is
the write transaction every writer of the index file uses (IMMEDIATE: a second kernel waits),
and `_snapshot` the read transaction of a reader that keeps what it read.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

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


@migration
def m003_document_provenance(db: sqlite3.Connection) -> None:
    """Each raw checkpoint's provenance (notebook, cell, front end, model), read from its
    comment line when it is indexed, so a recall or a context names where each hit came from
    without parsing the hit's raw log again (at a year, a context holds ~60 pieces from ~20
    logs). The recorded file hashes are forgotten: the next sync re-sends every file, which
    fills the column in."""
    db.execute("alter table documents add column provenance text not null default ''")
    db.execute("delete from files")


@migration
def m004_node_text_without_comments(db: sqlite3.Connection) -> None:
    """A node's text is indexed without the hipo comment lines of the checkpoints it copies
    (`checkpoint.without_comments`): their ids, notebook names and "via=import" matched queries
    as if they were memory. The recorded hashes are forgotten, so the next sync re-sends every
    file and the nodes are indexed again; so are the nodes' vectors (semantic extra), whose
    128-token window the comment lines filled: the next catch-up embeds their text anew."""
    db.execute("delete from files")
    db.execute(
        "delete from vector_files where path like 'memory/daily/%'"
        " or path like 'memory/weekly/%' or path like 'memory/monthly/%'"
    )


@migration
def m005_provenance_phrases(db: sqlite3.Connection) -> None:
    """Provenance is kept as the phrase every front end shows after "from" ("the command
    line", "analysis.ipynb cell 3"), no longer "via cli", which read "from via cli" in the
    sidebar. The recorded hashes are forgotten, so the next sync re-sends every file and each
    raw checkpoint's phrase is written anew."""
    db.execute("delete from files")


@migration
def m006_typed_provenance(db: sqlite3.Connection) -> None:
    """Provenance as typed columns beside the phrase: who wrote each raw checkpoint (its
    writer, `disk/trust`), the front end, the provider, the conversation, an imported turn's
    speaker, and whether it is
    an agent's proposed correction (1) (never the id it names: a forgotten checkpoint's id
    must not stay here). Recall's decisions read these, never the phrase, which starts with
    a notebook's name ("an important launch.ipynb" held "an import"). The recorded hashes
    are forgotten, so the next sync re-sends every file and fills them."""
    for column in ("writer", "via", "provider", "conversation", "speaker"):
        db.execute(f"alter table documents add column {column} text not null default ''")
    db.execute("alter table documents add column proposes integer not null default 0")
    db.execute("delete from files")


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


@contextlib.contextmanager
def _snapshot(db: sqlite3.Connection) -> Iterator[None]:
    """One read transaction (unless one is open): a version read first (`Fts5Index._known`:
    the first read starts the transaction) and every row read after it are of one state of
    the index, whatever another kernel commits meanwhile (WAL readers keep their snapshot)."""
    if db.in_transaction:
        yield
        return
    db.execute("begin")
    try:
        yield
    finally:
        if db.in_transaction:
            db.execute("commit")
