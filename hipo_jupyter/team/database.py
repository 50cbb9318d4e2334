"""The team database: one connection pool per process and URL, upserts and full-text search.

psycopg 3 and psycopg_pool are imported here and only here, and only once a team URL is set.
Every database failure becomes `TeamUnavailable`, one line naming the server (never its
password), so no front end shows a traceback for a team database that is down.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from hipo_jupyter.memory.errors import HipoError

from .schema import migrate

CONNECT_TIMEOUT_S = 5  # a server that does not answer is reported after this, not waited for
POOL_TIMEOUT_S = 5.0  # how long a caller waits for a pooled connection before "not reachable"
POOL_MAX_SIZE = 4


class TeamUnavailable(HipoError):
    """The team database cannot be reached or refused the work: one line for the user."""

    http_status = 503  # the server answers 503: the memory is fine, the team database is not


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


def describe(url: str) -> str:
    """`host:port/dbname` of a URL, for messages: never the user's password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.Error:
        return "the team database (its URL does not parse)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"{host}{port}/{parts.get('dbname') or ''}"


_pools: dict[str, ConnectionPool] = {}
_pools_lock = threading.Lock()


def _pool(url: str) -> ConnectionPool:
    """The process's one pool for `url`, opened on first use (a kernel, a CLI run, a server)."""
    with _pools_lock:
        pool = _pools.get(url)
        if pool is None:
            try:
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
            except psycopg.Error as error:
                raise TeamUnavailable(f"bad team URL: {_reason(error)}") from None
            _pools[url] = pool
        return pool


def close_pools() -> None:
    with _pools_lock:
        for pool in _pools.values():
            pool.close(timeout=1)
        _pools.clear()


atexit.register(close_pools)


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]


_UPSERT = """
INSERT INTO team_checkpoints
    (id, author, notebook, day, type, title, body, tags, host, root, source_file, source_line,
     cell, content_hash)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (id) DO UPDATE SET
    author = excluded.author, notebook = excluded.notebook, day = excluded.day,
    type = excluded.type, title = excluded.title, body = excluded.body, tags = excluded.tags,
    host = excluded.host, root = excluded.root, source_file = excluded.source_file,
    source_line = excluded.source_line, cell = excluded.cell,
    content_hash = excluded.content_hash, synced_at = now()
WHERE team_checkpoints.content_hash IS DISTINCT FROM excluded.content_hash
"""

_COLUMNS = (
    "id, author, notebook, day, type, title, body, tags, source_file, source_line, content_hash,"
    " host, root, cell"
)


MAX_RANKED = 2000  # matches ranked per query, the most recent first: bounds a common word's cost


def search_sql(*, types: bool, since: bool, until: bool, authors: bool) -> str:
    """The search statement for the filters given (a pure function: tested without a server).

    `websearch_to_tsquery` never fails on user text; the terms are OR-ed as in local recall, and
    `ts_rank_cd` ranks rows that match more of them, closer together, higher. A word most of a
    million checkpoints contain would have every one of them ranked; instead the GIN index
    finds the matches, the newest MAX_RANKED of them (by day, the order recall's recency factor
    favours anyway) are ranked, and the best `limit` come back."""
    where = ["search @@ q.query"]
    if types:
        where.append("type = ANY(%(types)s)")
    if since:
        where.append("day >= %(since)s")
    if until:
        where.append("day <= %(until)s")
    if authors:
        where.append("author = ANY(%(authors)s)")
    columns = ", ".join(f"t.{name.strip()}" for name in _COLUMNS.split(","))
    # Narrow rows (id, day, tsvector) are sorted and ranked; the text is read for `limit` only.
    return (
        f"SELECT {columns}, best.rank FROM ("
        "SELECT id, day, ts_rank_cd(search, query) AS rank FROM ("
        "SELECT id, day, search, q.query FROM team_checkpoints, "
        "websearch_to_tsquery('english', %(query)s) AS q(query) "
        f"WHERE {' AND '.join(where)} ORDER BY day DESC LIMIT %(ranked)s) AS recent "
        "ORDER BY rank DESC, day DESC, id LIMIT %(limit)s) AS best "
        "JOIN team_checkpoints AS t ON t.id = best.id "
        "ORDER BY best.rank DESC, best.day DESC, best.id"
    )


class TeamDatabase:
    """The team's PostgreSQL database. Cheap to construct; connects on first use."""

    def __init__(self, url: str) -> None:
        if not url.strip():
            raise TeamUnavailable("no team URL: set Hipo.team_url, $HIPO_TEAM or --team-url")
        self.url = url.strip()
        self.where = describe(self.url)
        self._migrated = False

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection, the schema up to date; failures as one-line TeamUnavailable."""
        try:
            with _pool(self.url).connection() as conn:
                if not self._migrated:
                    migrate(conn)
                    self._migrated = True
                yield conn
        except PoolTimeout:
            raise TeamUnavailable(
                f"the team database {self.where} is not reachable (no connection within "
                f"{POOL_TIMEOUT_S:g}s)"
            ) from None
        except psycopg.Error as error:
            raise TeamUnavailable(f"the team database {self.where}: {_reason(error)}") from None

    def push(self, rows: Sequence[TeamRow]) -> int:
        """Upsert `rows` in one transaction (all or none); return how many were new or changed.

        Idempotent by checkpoint id: a row already there with the same content is not written
        again, so a re-run after a crash, or two machines pushing the same log, add nothing."""
        if not rows:
            return 0
        params = [
            (
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
            for r in rows
        ]
        with self.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(_UPSERT, params)
            written = cursor.rowcount
        return max(written, 0)

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
        """Rows matching the websearch `query`, best `ts_rank_cd` first."""
        if not query.strip():
            return []
        sql = search_sql(
            types=bool(types), since=bool(since), until=bool(until), authors=bool(authors)
        )
        params = {
            "query": query,
            "limit": limit,
            "ranked": max(MAX_RANKED, limit),
            "types": list(types or ()),
            "since": since,
            "until": until,
            "authors": list(authors or ()),
        }
        with self.connection() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [TeamMatch(_row(values[:-1]), float(values[-1])) for values in rows]

    def count(self) -> int:
        with self.connection() as conn:
            return int(conn.execute("SELECT count(*) FROM team_checkpoints").fetchone()[0])

    def ids(self) -> list[str]:
        with self.connection() as conn:
            return [row[0] for row in conn.execute("SELECT id FROM team_checkpoints")]


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
        author=author,
        notebook=notebook,
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
