"""The team database: one connection pool per process and URL, upserts and full-text search.

psycopg 3 and psycopg_pool are imported here and only here, and only once a team URL is set.
Every database failure becomes `TeamUnavailable`, one line naming the server (never its
password), so no front end shows a traceback for a team database that is down.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any, TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from hipo_jupyter.memory import HipoError

from .connect import CONNECT_TIMEOUT_S, cause, describe, libpq_reason, probe, scrub
from .ranking import Filters, has_rum, ranked_rows
from .schema import clean_name, enable_rum, migrate
from .url import read_url

T = TypeVar("T")
POOL_TIMEOUT_S = 5.0  # how long a caller waits for a pooled connection before "not reachable"
POOL_MAX_SIZE = 4


class TeamUnavailable(HipoError):
    """The team database cannot be reached or refused the work: one line for the user."""

    http_status = 503  # the server answers 503: the memory is fine, the team database is not


class TeamUrlUnusable(HipoError):
    """The team URL cannot be read for certain (url.read_url): never handed to the driver,
    and not retried by the background sync, since waiting does not mend it."""

    http_status = 503  # as for a database that is down: the server's setting, not the request


class _TableGone(TeamUnavailable):
    """The team table vanished under a running process (DROP TABLE): migrate, try again."""


@dataclass(frozen=True)
class TeamRow:
    """One checkpoint as the team database stores it (already redacted and filtered)."""

    id: str
    author: str
    notebook: str
    day: str  # YYYY-MM-DD
    type: str
    title: str
    body: str
    tags: tuple[str, ...]
    source_file: str
    source_line: int
    content_hash: str
    host: str = ""
    root: str = ""
    cell: str | None = None


@dataclass(frozen=True)
class TeamMatch:
    """A row the full-text search found, with PostgreSQL's rank (`ts_rank_cd`, > 0)."""

    row: TeamRow
    rank: float


_pools: dict[str, ConnectionPool] = {}
_pools_lock = threading.Lock()


def _pool(url: str) -> ConnectionPool:
    """The process's one pool for `url` (a kernel, a CLI run, a server). Before it is opened
    one direct connection is made, so a wrong password, a missing database, a closed port or
    a silent server is reported with its own cause, at once, instead of the pool's retries."""
    with _pools_lock:
        pool = _pools.get(url)
        if pool is None:
            probe(url)  # psycopg.Error with the server's reason; the caller words it
            pool = ConnectionPool(
                url,
                min_size=1,
                max_size=POOL_MAX_SIZE,
                kwargs={"connect_timeout": CONNECT_TIMEOUT_S},
                timeout=POOL_TIMEOUT_S,
                open=False,
                name="hipo-team",
            )
            pool.open(wait=False)
            _pools[url] = pool
        return pool


def _forget_pool(url: str) -> None:
    """Drop a pool that timed out: the next use probes again and names the real cause."""
    with _pools_lock:
        pool = _pools.pop(url, None)
    if pool is not None:
        pool.close(timeout=0)


def close_pools() -> None:
    with _pools_lock:
        for pool in _pools.values():
            pool.close(timeout=1)
        _pools.clear()


atexit.register(close_pools)


_COLUMN_NAMES = (
    "id",
    "author",
    "notebook",
    "day",
    "type",
    "title",
    "body",
    "tags",
    "host",
    "root",
    "source_file",
    "source_line",
    "cell",
    "content_hash",
)
_INSERTED = ", ".join(_COLUMN_NAMES)
_INCOMING = """
CREATE TEMP TABLE team_incoming (
    id text, author text, notebook text, day date, type text, title text, body text,
    tags text, host text, root text, source_file text, source_line integer, cell text,
    content_hash text
) ON COMMIT DROP
"""
# The owner of what a push writes and deletes: the server's own `current_user` (the role the
# connection logged in as), never a name the client sends, and the folder's id (a parameter).
# COLLATE "default": `current_user` is a `name`, whose text keeps the C collation, and a
# comparison of two collations matches no index, so the owner's role was a filter over all of
# the folder's rows instead of a condition of 0007's index.
_ROLE = 'current_user::text COLLATE "default"'
# Whether any row still waits to be claimed (migration 0007): an index probe of `folder_id`.
_LEGACY = "SELECT EXISTS (SELECT 1 FROM team_checkpoints WHERE folder_id = '')"
# Legacy rows this push sends again, under their own (author, root), made this owner's: the
# ownership they had before 0007, handed over once, only for the ids this folder's logs hold.
_CLAIM = f"""
UPDATE team_checkpoints AS t SET owner_role = {_ROLE}, folder_id = %(folder)s
FROM team_incoming AS i
WHERE t.id = i.id AND t.folder_id = '' AND t.owner_role IN ('', {_ROLE})
  AND t.author = i.author AND t.root = i.root
"""
# Rows whose id another owner (role, folder) already holds: refused, never overwritten.
_REFUSED = f"""
SELECT count(*) FROM team_incoming AS i JOIN team_checkpoints AS t ON t.id = i.id
WHERE t.owner_role <> {_ROLE} OR t.folder_id <> %(folder)s
"""
# Ids another owner holds are left out before the upsert, not only by its WHERE: under
# row-level security (migration 0009) PostgreSQL checks the UPDATE policy on the existing row
# of a conflict before the WHERE, and a row of another role fails the whole statement.
_MERGE = f"""
INSERT INTO team_checkpoints ({_INSERTED}, owner_role, folder_id)
SELECT DISTINCT ON (id) {_INSERTED}, {_ROLE}, %(folder)s FROM team_incoming AS i
WHERE NOT EXISTS (
    SELECT 1 FROM team_checkpoints AS t
    WHERE t.id = i.id AND (t.owner_role <> {_ROLE} OR t.folder_id <> %(folder)s)
)
ORDER BY id
ON CONFLICT (id) DO UPDATE SET
    notebook = excluded.notebook, day = excluded.day,
    type = excluded.type, title = excluded.title, body = excluded.body, tags = excluded.tags,
    host = excluded.host, source_file = excluded.source_file,
    source_line = excluded.source_line, cell = excluded.cell,
    content_hash = excluded.content_hash, synced_at = now()
WHERE team_checkpoints.owner_role = excluded.owner_role
  AND team_checkpoints.folder_id = excluded.folder_id
  AND {{changed}}
"""
# What a row holds that its log decides (the content hash's fields, where it stands in the log,
# and the hash itself); author, root and host are this machine's settings, not the log's.
_CONTENT = (
    "notebook",
    "day",
    "type",
    "title",
    "body",
    "tags",
    "source_file",
    "source_line",
    "cell",
    "content_hash",
)


def _differs(stored: str, incoming: str) -> str:
    """SQL: the row `stored` holds other content than `incoming` (NULL-safe, column by column)."""
    return (
        f"({', '.join(f'{stored}.{c}' for c in _CONTENT)}) IS DISTINCT FROM "
        f"({', '.join(f'{incoming}.{c}' for c in _CONTENT)})"
    )


# An ordinary push trusts the stored hash: a row is written when its checkpoint changed. A full
# sync verifies (issue 51): a row is written when anything it holds differs from the log, so a
# body rewritten behind the owner's back, its hash left, is put back.
_MERGE_CHANGED = _MERGE.format(
    changed="team_checkpoints.content_hash IS DISTINCT FROM excluded.content_hash"
)
_MERGE_VERIFIED = _MERGE.format(changed=_differs("team_checkpoints", "excluded"))
# The owner's rows a verifying push finds other than its logs say, though the database claims
# to hold them: the stored hash is the log's own (the text was changed and the hash left), or
# the row comes from a log unchanged since it was last sent (the hash was changed too).
_TAMPERED = f"""
SELECT count(DISTINCT t.id) FROM team_incoming AS i JOIN team_checkpoints AS t ON t.id = i.id
WHERE t.owner_role = {_ROLE} AND t.folder_id = %(folder)s AND {_differs("t", "i")}
  AND (t.content_hash = i.content_hash OR i.source_file = ANY(%(unchanged)s))
"""
# The incoming ids, indexed once the COPY is done: the stale-row delete below looks each of
# the owner's rows up in it. Without it PostgreSQL, which has no statistics for a new temp
# table or a new owner, planned a nested loop reading all of team_incoming for each row: a
# quadratic 270-470 ms for every batch of 2,000 rows (half the time of a full sync).
_INCOMING_INDEX = "CREATE INDEX ON team_incoming (id)"
# The owner's rows of these logs that the logs no longer hold (edited out, now excluded);
# the (folder_id, owner_role, source_file) index of migration 0007 finds them without reading
# the owner's other rows. Only the owner's: another folder's rows are never deleted, whatever
# author and root it claims.
_STALE = f"""
DELETE FROM team_checkpoints AS t
WHERE t.folder_id = %(folder)s AND t.owner_role = {_ROLE} AND t.source_file = ANY(%(files)s)
  AND NOT EXISTS (SELECT 1 FROM team_incoming AS i WHERE i.id = t.id)
"""
# How many rows the owner holds: an index-only count of 0007's index.
_OWNED = f"SELECT count(*) FROM team_checkpoints WHERE folder_id = %s AND owner_role = {_ROLE}"
# Rows a client of before migration 0008 wrote with the folder's plain id: given its key (an
# index probe of 0007's index; no row in a team whose clients are all upgraded). A plain id is
# 32 hex digits and a key 64 (schema.FOLDER_KEY_SQL): a key read from the database and written
# into an id file is refused by `identity.read_folder_id`, and no key is ever re-keyed.
_REKEY = f"""
UPDATE team_checkpoints SET folder_id = %(key)s
WHERE folder_id = %(plain)s AND owner_role = {_ROLE}
"""
# How many other folders hold rows written as this role: the distinct keys of 0007's index
# walked one probe each (a loose index scan: a few probes per folder, not a read of the table),
# each asked whether this role wrote any of its rows.
_OTHER_FOLDERS = f"""
WITH RECURSIVE folders (key) AS (
    (SELECT folder_id FROM team_checkpoints WHERE folder_id > '' ORDER BY folder_id LIMIT 1)
    UNION ALL
    SELECT (SELECT t.folder_id FROM team_checkpoints AS t WHERE t.folder_id > f.key
            ORDER BY t.folder_id LIMIT 1)
    FROM folders AS f WHERE f.key IS NOT NULL
)
SELECT current_user::text, count(*) FILTER (
    WHERE f.key <> %s AND EXISTS (
        SELECT 1 FROM team_checkpoints AS t WHERE t.folder_id = f.key AND t.owner_role = {_ROLE}
    )
) FROM folders AS f WHERE f.key IS NOT NULL
"""

_COLUMNS = (
    "id, author, notebook, day, type, title, body, tags, source_file, source_line, content_hash,"
    " host, root, cell"
)


@dataclass(frozen=True)
class PushResult:
    """What one push did: rows written (new or changed), refused (another owner's id),
    removed (this owner's rows its log no longer holds), claimed (rows of before migration
    0007 this owner's logs sent again, now its own) and repaired (rows a full sync found
    rewritten behind the owner's back, put back as the logs hold them)."""

    written: int
    refused: int
    removed: int = 0
    claimed: int = 0
    repaired: int = 0  # rows a verifying push found other than their logs say (not in written)


class TeamDatabase:
    """The team's PostgreSQL database. Cheap to construct; connects on first use."""

    def __init__(self, url: str) -> None:
        if not url.strip():
            raise TeamUnavailable("no team URL: set Hipo.team_url, $HIPO_TEAM or --team-url")
        self.url = url.strip()
        self.where = describe(self.url)
        # A URL libpq cannot parse, or whose password it would read differently from its text,
        # is never handed to the driver: no error of the driver can then quote a piece of it.
        reading = read_url(self.url)
        self._unusable = "" if reading.readable else reading.problem
        self._migrated = False
        self._rum: bool | None = None  # whether the rum index is there, looked up once
        # One line each for the user, from the migrations (row-level security left off, since
        # this role does not own the table): the sync hands them on (SyncReport.notices).
        self.notices: list[str] = []

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection, the schema up to date; failures as one-line TeamUnavailable
        naming the cause (never the password). A table dropped under a running process is
        noticed (UndefinedTable) and the migrations run again on the next use."""
        if self._unusable:
            raise TeamUrlUnusable(
                f"the team database {self.where}: its URL does not parse "
                f"({scrub(libpq_reason(self._unusable), self.url)})"
            )
        try:
            with _pool(self.url).connection() as conn:
                if not self._migrated:
                    migrate(conn, self.notices)
                    self._migrated = True
                yield conn
        except PoolTimeout:
            _forget_pool(self.url)
            raise TeamUnavailable(
                f"the team database {self.where}: no answer within {POOL_TIMEOUT_S:g} s"
            ) from None
        except psycopg.errors.UndefinedTable as error:
            self._migrated = False
            raise _TableGone(f"the team database {self.where}: {cause(error, self.url)}") from None
        except psycopg.Error as error:
            raise TeamUnavailable(
                f"the team database {self.where}: {cause(error, self.url)}"
            ) from None

    def _retrying(self, work: Callable[[Any], T]) -> T:
        """`work(conn)`, once more if the table vanished meanwhile (recreated in between)."""
        try:
            with self.connection() as conn:
                return work(conn)
        except _TableGone:
            with self.connection() as conn:
                return work(conn)

    def push(
        self,
        rows: Sequence[TeamRow],
        *,
        folder: str,
        files: Sequence[str] = (),
        verify: bool = False,
        unchanged: Sequence[str] = (),
    ) -> PushResult:
        """Merge `rows` in one transaction (all or none) by COPY into a temporary table, as
        rows of the owner (this connection's role, `folder`).

        Idempotent by checkpoint id: a row already there with the same content is not written
        again. A row belongs to the owner that first wrote it: another owner's row with that
        id is refused and counted, never overwritten, whatever author and root it names. The
        owner's rows of the logs `files` which `rows` no longer hold are removed; no other
        owner's row is ever removed. Rows of before migration 0007 that `rows` send again
        under their own author and root are claimed first (`_CLAIM`).

        `verify` (a full sync): the stored rows are compared with `rows` column by column, not
        by their stored hash, and every one that differs is rewritten; those the database
        claimed to hold as sent (their hash the log's, or their log among `unchanged`, the
        logs not changed since they were last sent) are counted as repaired."""
        if not rows and not files:
            return PushResult(0, 0)
        params = {"folder": folder, "files": list(files), "unchanged": list(unchanged)}

        def work(conn: Any) -> PushResult:
            with conn.transaction(), conn.cursor() as cursor:
                cursor.execute(_INCOMING)
                with cursor.copy(f"COPY team_incoming ({_INSERTED}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(_values(row))
                cursor.execute(_INCOMING_INDEX)
                claimed = 0
                if rows and cursor.execute(_LEGACY).fetchone()[0]:
                    cursor.execute(_CLAIM, params)
                    claimed = max(cursor.rowcount, 0)
                refused = int(cursor.execute(_REFUSED, params).fetchone()[0])
                repaired = 0
                if verify and rows:
                    repaired = int(cursor.execute(_TAMPERED, params).fetchone()[0])
                cursor.execute(_MERGE_VERIFIED if verify else _MERGE_CHANGED, params)
                written = max(cursor.rowcount - repaired, 0)
                removed = 0
                if files:
                    cursor.execute(_STALE, params)
                    removed = max(cursor.rowcount, 0)
            return PushResult(written, refused, removed, claimed, repaired)

        return self._retrying(work)

    def enable_rum(self) -> bool:
        """Build the `rum` index where the extension is installed (schema.enable_rum)."""
        self._rum = self._retrying(enable_rum)
        return self._rum

    def owned(self, folder: str) -> int:
        """How many rows the owner (this connection's role, `folder`) holds: a sync's cheap
        check that nobody truncated, dropped or deleted them (an index-only count)."""
        return self._retrying(lambda conn: int(conn.execute(_OWNED, (folder,)).fetchone()[0]))

    def rekey(self, plain: str, key: str) -> int:
        """Give this role's rows written with the folder's plain id (by a client of before
        migration 0008) the folder's key; how many."""

        def work(conn: Any) -> int:
            with conn.transaction():
                return max(conn.execute(_REKEY, {"plain": plain, "key": key}).rowcount, 0)

        return self._retrying(work)

    def other_folders(self, folder: str) -> tuple[str, int]:
        """This connection's role and how many folders other than `folder` hold rows it wrote:
        more than none, and rows among them are told apart by folder alone (issue 51)."""

        def work(conn: Any) -> tuple[str, int]:
            role, count = conn.execute(_OTHER_FOLDERS, (folder,)).fetchone()
            return str(role), int(count)

        return self._retrying(work)

    def search(
        self,
        query: str,
        *,
        limit: int,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        authors: Collection[str] | None = None,
    ) -> list[TeamMatch]:
        """Rows matching the websearch `query`, best `ts_rank_cd` first (team/ranking.py)."""
        if not query.strip():
            return []
        filters = Filters(query, limit, tuple(types or ()), since, until, tuple(authors or ()))

        def work(conn: Any) -> list[tuple]:
            if self._rum is None:
                self._rum = has_rum(conn)
            return ranked_rows(conn, filters, rum=self._rum)

        rows = self._retrying(work)
        return [TeamMatch(_row(values[:-1]), float(values[-1])) for values in rows]

    def count(self) -> int:
        sql = "SELECT count(*) FROM team_checkpoints"
        return self._retrying(lambda conn: int(conn.execute(sql).fetchone()[0]))

    def ids(self) -> list[str]:
        sql = "SELECT id FROM team_checkpoints"
        return self._retrying(lambda conn: [row[0] for row in conn.execute(sql)])


def _values(r: TeamRow) -> tuple:
    """A row in `_COLUMN_NAMES` order, for COPY."""
    return (
        r.id,
        r.author,
        r.notebook,
        date.fromisoformat(r.day),
        r.type,
        r.title,
        r.body,
        ",".join(r.tags),
        r.host,
        r.root,
        r.source_file,
        r.source_line,
        r.cell,
        r.content_hash,
    )


def _row(values: Sequence[Any]) -> TeamRow:
    (
        id_,
        author,
        notebook,
        day,
        type_,
        title,
        body,
        tags,
        source_file,
        source_line,
        content_hash,
        host,
        root,
        cell,
    ) = values
    return TeamRow(
        id=id_,
        author=clean_name(author),
        notebook=clean_name(notebook),
        day=day.isoformat(),
        type=type_,
        title=title,
        body=body,
        tags=tuple(t for t in tags.split(",") if t),
        source_file=source_file,
        source_line=source_line,
        content_hash=content_hash,
        host=host,
        root=root,
        cell=cell,
    )
