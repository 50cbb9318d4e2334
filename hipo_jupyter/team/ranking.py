"""Team search at a million checkpoints: the same hits as ranking every match, fewer rows read.

Team recall ranks the newest MAX_RANKED rows matching the query (`ts_rank_cd`, the best
`limit` come back; recall then applies its recency factor). Finding "the newest 2,000 matches"
of a common word used to read every matching row of the table. Rows are now looked for in
recent-day windows first, counted back from the newest day the table holds (the first spans
about FIRST_WINDOW_ROWS rows; the next is sized by the rate of matches the first saw; then
the whole table): when a window already holds MAX_RANKED matches, they are exactly the newest
MAX_RANKED of the whole table (every row outside is older than every row inside), so the
hits are the ones the unbounded statement gives, and PostgreSQL reads one window's rows (the
GIN bitmap ANDed with the `day` index) instead of all of them. A rare word falls through to
the last, unbounded, pass, which is cheap because its matches are few.

Where the `rum` extension is installed and its index built (`schema.enable_rum`), the index
itself hands the matches over newest first (`ORDER BY rum_day <=> newest`, the day stored
beside each lexeme's postings), so one pass reads just the MAX_RANKED rows, whatever the word.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

MAX_RANKED = 2000  # matches ranked per query, the most recent first: bounds a common word's cost
FIRST_WINDOW_ROWS = 6000  # rows of the table the first, most recent, window spans (about)
WINDOW_MARGIN = 1.3  # the next window is sized for this many times the matches it needs
MAX_PASSES = 3  # windows tried before the whole table

_COLUMNS = (
    "id, author, notebook, day, type, title, body, tags, source_file, source_line, content_hash,"
    " host, root, cell"
)


@dataclass(frozen=True)
class Filters:
    """One team search: the websearch query and recall's filters."""

    query: str
    limit: int
    types: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    authors: tuple[str, ...] = ()


def search_sql(*, types: bool, since: bool, until: bool, authors: bool, rum: bool = False) -> str:
    """The search statement for the filters given (a pure function: tested without a server).

    `websearch_to_tsquery` never fails on user text; the terms are OR-ed as in local recall, and
    `ts_rank_cd` ranks rows that match more of them, closer together, higher. The GIN index
    finds the matches, the newest %(ranked)s of them (by day, the order recall's recency factor
    favours anyway) are ranked, and the best `limit` come back, each with how many rows were
    ranked (the caller widens the day window when that is short of %(ranked)s)."""
    where = ["search @@ websearch_to_tsquery('english', %(query)s)"]
    if types:
        where.append("type = ANY(%(types)s)")
    if since:
        where.append("day >= %(since)s")
    if until:
        where.append("day <= %(until)s")
    if authors:
        where.append("author = ANY(%(authors)s)")
    columns = ", ".join(f"t.{name.strip()}" for name in _COLUMNS.split(","))
    newest_first = "rum_day <=> %(newest)s::timestamp" if rum else "day DESC, id"
    # Narrow rows (id, day, tsvector) are sorted and ranked; the text is read for `limit` only.
    return (
        "WITH recent AS MATERIALIZED (SELECT id, day, search FROM team_checkpoints "
        f"WHERE {' AND '.join(where)} ORDER BY {newest_first} LIMIT %(ranked)s), "
        "best AS (SELECT id, day, "
        "ts_rank_cd(search, websearch_to_tsquery('english', %(query)s)) AS rank FROM recent "
        "ORDER BY rank DESC, day DESC, id LIMIT %(limit)s) "
        f"SELECT {columns}, best.rank, (SELECT count(*) FROM recent) FROM best "
        "JOIN team_checkpoints AS t ON t.id = best.id "
        "ORDER BY best.rank DESC, best.day DESC, best.id"
    )


@dataclass(frozen=True)
class Extent:
    """What the table spans: its newest and oldest day and about how many rows (the planner's
    own estimate, `pg_class.reltuples`): enough to size a window that holds a few thousand."""

    newest: date | None
    oldest: date | None
    rows: float

    @property
    def per_day(self) -> float:
        if self.newest is None or self.oldest is None:
            return 0.0
        return self.rows / max(1, (self.newest - self.oldest).days + 1)


def extent(conn: Any) -> Extent:
    newest, oldest, rows = conn.execute(
        "SELECT max(day), min(day), (SELECT reltuples FROM pg_class "
        "WHERE oid = 'team_checkpoints'::regclass) FROM team_checkpoints"
    ).fetchone()
    return Extent(newest, oldest, max(float(rows or 0), 0.0))


def next_window(table: Extent, tried_days: int | None, found: int, ranked: int) -> int | None:
    """Days back from the newest day for the next pass, or None for the whole table.

    The first pass covers about FIRST_WINDOW_ROWS rows of the table (a word in a quarter of
    the rows has its newest `ranked` there). After a short pass, the rate of matches it saw
    gives the window that should hold `ranked` of them, with a margin; no match at all, or a
    window as long as the table, means the whole table (whose matches are then few)."""
    per_day = table.per_day
    if per_day <= 0 or table.newest is None or table.oldest is None:
        return None
    span = (table.newest - table.oldest).days + 1
    if tried_days is None:
        days = math.ceil(FIRST_WINDOW_ROWS / per_day)
    elif found == 0:
        return None
    else:
        days = math.ceil(ranked / (found / tried_days) * WINDOW_MARGIN)
    return days if days < span else None


def ranked_rows(
    conn: Any, filters: Filters, *, ranked: int = MAX_RANKED, rum: bool = False
) -> list[tuple]:
    """The best `filters.limit` rows among the newest `ranked` matches, each row's columns
    then its rank: a recent window first, widened until one holds `ranked` matches (with the
    `rum` index: one pass, the index giving the matches newest first)."""
    ranked = max(ranked, filters.limit)
    with conn.transaction():  # one snapshot; SET LOCAL ends with it
        return _search(conn, filters, ranked, rum=rum)


def _search(conn: Any, filters: Filters, ranked: int, *, rum: bool) -> list[tuple]:
    table = extent(conn)
    params = {
        "query": filters.query,
        "limit": filters.limit,
        "ranked": ranked,
        "types": list(filters.types),
        "until": filters.until,
        "authors": list(filters.authors),
        "newest": table.newest,
    }
    if rum:
        return _pass(conn, filters, params, filters.since, rum=True)[0]
    days: int | None = None
    found = 0
    for at in range(MAX_PASSES):
        days = next_window(table, days, found, ranked)
        bound = None if days is None else (table.newest - timedelta(days=days)).isoformat()
        if bound is not None and filters.since is not None and bound <= filters.since:
            bound, days = filters.since, None  # the caller's own bound is narrower
        _plan(conn, walk=at == 0 and days is not None)
        rows, found = _pass(conn, filters, params, bound or filters.since, rum=False)
        if found >= ranked or days is None:
            return rows
    _plan(conn, walk=False)
    return _pass(conn, filters, params, filters.since, rum=False)[0]  # every window short


def _plan(conn: Any, *, walk: bool) -> None:
    """How a pass finds its matches. The first window (a few thousand rows) is walked newest
    first down the day index, each row's tsvector tested: a common word's GIN posting list
    (most of a million rows) is never read. A later, wider window, sized for a rarer word, is
    found by ANDing the GIN bitmap with the day index's; left to itself the planner may walk
    a wide window row by row instead. Never a sequential scan: where the first window is a
    tenth of a small table the planner would read all of it (100 ms at 100,000 rows)."""
    walk_on, bitmap_on = ("on", "off") if walk else ("off", "on")
    conn.execute(f"SET LOCAL enable_indexscan = {walk_on}")
    conn.execute(f"SET LOCAL enable_bitmapscan = {bitmap_on}")
    conn.execute("SET LOCAL enable_seqscan = off")


def _pass(
    conn: Any, filters: Filters, params: dict, since: str | None, *, rum: bool
) -> tuple[list[tuple], int]:
    """One search statement: the rows (columns then rank) and how many matches were ranked."""
    sql = search_sql(
        types=bool(filters.types),
        since=since is not None,
        until=bool(filters.until),
        authors=bool(filters.authors),
        rum=rum,
    )
    # Never a prepared statement: after five runs psycopg prepares it, and PostgreSQL's generic
    # plan, blind to the window's bound, read ten times the rows (team recall p50 228 ms at a
    # million checkpoints, 19 ms planned for each window).
    rows = conn.execute(sql, {**params, "since": since}, prepare=False).fetchall()
    found = int(rows[0][-1]) if rows else 0
    return [values[:-1] for values in rows], found


def has_rum(conn: Any) -> bool:
    """Whether the team table has the `rum` index (`schema.enable_rum`)."""
    sql = "SELECT to_regclass('team_checkpoints_rum') IS NOT NULL"
    return bool(conn.execute(sql).fetchone()[0])
