"""Team search at a million checkpoints: the same hits as ranking every match, fewer rows read.

Team recall ranks the newest MAX_RANKED rows matching the query (`ts_rank_cd`, the best
`limit` come back; recall then applies its recency factor). Finding "the newest 2,000 matches"
of a common word used to read every matching row of the table. Rows are now looked for in a
window of recent days first, counted back from the newest day the table holds: when a window
already holds MAX_RANKED matches, they are exactly the newest MAX_RANKED of the whole table
(every row outside is older than every row inside), so the hits are the ones the unbounded
statement gives; a window short of them is widened, then the whole table is searched.

The window is sized before the first pass, from the planner's own statistics: its estimate of
the rows the query matches (EXPLAIN, from the frequency of each common lexeme ANALYZE keeps)
and its histogram of `day` give the days that should hold MAX_RANKED matches (WINDOW_MARGIN
more), so one pass almost always does. How that window is read is chosen by what it costs
(`choose_pass`): a few thousand recent rows are walked newest first down the day index; a
wider window is asked of the full-text index itself, which holds each row's week beside its
lexemes (`schema.WEEK`): the GIN scan of "these words in these weeks" skips the words' other
matches, where ANDing a bitmap of every match with one of months of the day index cost 60 to
100 ms at a million rows; a word with few matches is read whole.

Where the `rum` extension is installed and its index built (`schema.enable_rum`), the index
itself hands the matches over newest first (`ORDER BY rum_day <=> newest`, the day stored
beside each lexeme's postings), so one pass reads just the MAX_RANKED rows, whatever the word.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .schema import WEEK, WEEK_EPOCH

MAX_RANKED = 2000  # matches ranked per query, the most recent first: bounds a common word's cost
WINDOW_MARGIN = 1.3  # a window is sized for this many times the matches it needs
MAX_PASSES = 3  # windows tried before the whole table
MAX_WEEKS = 104  # weeks one pass asks the index for; a wider window is the whole table

# What a pass costs, in microseconds a row, read off EXPLAIN (ANALYZE, BUFFERS) on the
# benchmark's million-row table (PostgreSQL 15 as Debian ships it, 128 MB of shared buffers,
# 2 busy cores): their ratios, not the figures, choose the pass.
WALK_ROW_US = 1.0  # a recent row walked newest first down the day index, its tsvector tested
MATCH_ENTRY_US = 0.25  # an entry the GIN scan reads (a match, or a row of the window's weeks)
HEAP_ROW_US = 4.0  # a row a bitmap fetches from the table (most on a page of their own)

_COLUMNS = (
    "id, author, notebook, day, type, title, body, tags, source_file, source_line, content_hash,"
    " host, root, cell"
)

_EPOCH = date.fromisoformat(WEEK_EPOCH)


@dataclass(frozen=True)
class Filters:
    """One team search: the websearch query and recall's filters."""

    query: str
    limit: int
    types: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    authors: tuple[str, ...] = ()


def search_sql(
    *,
    types: bool,
    since: bool,
    until: bool,
    authors: bool,
    rum: bool = False,
    weeks: bool = False,
) -> str:
    """The search statement for the filters given (a pure function: tested without a server).

    `websearch_to_tsquery` never fails on user text; the terms are OR-ed as in local recall, and
    `ts_rank_cd` ranks rows that match more of them, closer together, higher. The GIN index
    finds the matches (with `weeks`, only those of the weeks in %(weeks)s), the newest
    %(ranked)s of them (by day, the order recall's recency factor favours anyway) are ranked,
    and the best `limit` come back, each with how many rows were ranked (the caller widens the
    window when that is short of %(ranked)s)."""
    where = _where(types=types, since=since, until=until, authors=authors)
    if weeks:
        where += f" AND {WEEK} @@ %(weeks)s::tsquery"
    columns = ", ".join(f"t.{name.strip()}" for name in _COLUMNS.split(","))
    newest_first = "rum_day <=> %(newest)s::timestamp" if rum else "day DESC, id"
    # Narrow rows (id, day, tsvector) are sorted and ranked; the text is read for `limit` only.
    return (
        "WITH recent AS MATERIALIZED (SELECT id, day, search FROM team_checkpoints "
        f"WHERE {where} ORDER BY {newest_first} LIMIT %(ranked)s), "
        "best AS (SELECT id, day, "
        "ts_rank_cd(search, websearch_to_tsquery('english', %(query)s)) AS rank FROM recent "
        "ORDER BY rank DESC, day DESC, id LIMIT %(limit)s) "
        f"SELECT {columns}, best.rank, (SELECT count(*) FROM recent) FROM best "
        "JOIN team_checkpoints AS t ON t.id = best.id "
        "ORDER BY best.rank DESC, best.day DESC, best.id"
    )


def _where(*, types: bool, since: bool, until: bool, authors: bool) -> str:
    where = ["search @@ websearch_to_tsquery('english', %(query)s)"]
    if types:
        where.append("type = ANY(%(types)s)")
    if since:
        where.append("day >= %(since)s")
    if until:
        where.append("day <= %(until)s")
    if authors:
        where.append("author = ANY(%(authors)s)")
    return " AND ".join(where)


def estimate_sql(*, types: bool, since: bool, until: bool, authors: bool) -> str:
    """The planner's estimate of how many rows a search matches (its statistics of the
    `search` column: the frequency of each common lexeme, gathered by ANALYZE), read from
    EXPLAIN: planning only, a fraction of a millisecond, no row read."""
    where = _where(types=types, since=since, until=until, authors=authors)
    return f"EXPLAIN (FORMAT JSON) SELECT 1 FROM team_checkpoints WHERE {where}"


def week_of(day: date) -> int:
    """The week `schema.WEEK` gives a day on or after WEEK_EPOCH."""
    return (day - _EPOCH).days // 7


def weeks_query(first: date, last: date) -> str:
    """The tsquery of the weeks from `first`'s to the one after `last`'s (a row written while
    the search runs, dated after the newest day it saw, is in the window too)."""
    return " | ".join(f"'w{week}'" for week in range(week_of(first), week_of(last) + 2))


@dataclass(frozen=True)
class Extent:
    """What the table spans: its newest and oldest day, about how many rows (the planner's
    own estimate, `pg_class.reltuples`) and ANALYZE's histogram of `day` (bounds of buckets
    holding as many rows each): enough to find the day from which the newest N rows run."""

    newest: date | None
    oldest: date | None
    rows: float
    bounds: tuple[date, ...] = ()

    @property
    def per_day(self) -> float:
        if self.newest is None or self.oldest is None:
            return 0.0
        return self.rows / max(1, (self.newest - self.oldest).days + 1)

    def days_holding(self, rows: float) -> int | None:
        """Days back from the newest day that hold about the newest `rows` rows of the table
        (at least one), or None when that is the whole table."""
        if self.newest is None or self.oldest is None or rows >= self.rows:
            return None
        span = (self.newest - self.oldest).days + 1
        if len(self.bounds) >= 2:  # the histogram: rows are rarely spread evenly over days
            buckets = len(self.bounds) - 1
            at = buckets * (1 - rows / self.rows)  # buckets counted from the oldest
            low = self.bounds[min(int(at), buckets)]
            high = self.bounds[min(int(at) + 1, buckets)]
            day = low + timedelta(days=math.floor((high - low).days * (at - int(at))))
            days = (self.newest - day).days
        else:
            days = math.ceil(rows / self.per_day) if self.per_day > 0 else span
        days = max(days, 1)
        return days if days < span else None


def extent(conn: Any) -> Extent:
    newest, oldest, rows, bounds = conn.execute(
        "SELECT max(day), min(day), (SELECT reltuples FROM pg_class "
        "WHERE oid = 'team_checkpoints'::regclass), (SELECT histogram_bounds::text::date[] "
        "FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'team_checkpoints' "
        "AND attname = 'day') FROM team_checkpoints"
    ).fetchone()
    return Extent(newest, oldest, max(float(rows or 0), 0.0), tuple(sorted(bounds or ())))


# --- choosing the passes --------------------------------------------------------------------


@dataclass(frozen=True)
class Pass:
    """One search statement: the window `days` back from the newest day (None: the whole
    table), holding about `rows` rows, walked down the day index newest first (`walk`) or
    asked of the full-text index by its weeks."""

    days: int | None
    rows: float = 0.0
    walk: bool = False


def choose_pass(table: Extent, matches: float, ranked: int) -> Pass:
    """The cheapest pass expected to hold the newest `ranked` of about `matches` matches.

    The window holds `ranked` matches (with WINDOW_MARGIN) if matches are spread over the
    table's rows as evenly as the planner assumes. Walking it costs a visit of each of its
    rows; asking the index for its weeks costs the entries the GIN scan reads (the matches, or
    the window's rows where they are fewer) and a fetch of the rows kept; the whole table
    costs a fetch of every match, the right pass for a word with few of them."""
    matches = max(matches, 1.0)
    need = ranked * WINDOW_MARGIN
    if matches <= need or table.newest is None:
        return Pass(None)
    rows = need * table.rows / matches
    days = table.days_holding(rows)
    if days is None:
        return Pass(None)
    whole = (MATCH_ENTRY_US + HEAP_ROW_US) * matches
    walk = WALK_ROW_US * rows
    weeks = MATCH_ENTRY_US * min(matches, rows) + HEAP_ROW_US * need
    start = table.newest - timedelta(days=days)
    if start < _EPOCH or week_of(table.newest) - week_of(start) >= MAX_WEEKS:
        weeks = math.inf  # the index knows no week before the epoch; too many weeks to ask
    if whole <= min(walk, weeks):
        return Pass(None)
    return Pass(days, rows, walk=walk <= weeks)


def next_pass(table: Extent, tried: Pass, found: int, ranked: int) -> Pass:
    """After a window held only `found` of `ranked` matches: the rate it saw sizes the next
    (a wider one, or the whole table); no match at all means the whole table."""
    if found == 0 or tried.days is None:
        return Pass(None)
    following = choose_pass(table, found * table.rows / max(tried.rows, 1.0), ranked)
    if following.days is not None and following.days <= tried.days:
        return Pass(None)  # the estimate would not widen the window: take all of it
    return following


def ranked_rows(
    conn: Any, filters: Filters, *, ranked: int = MAX_RANKED, rum: bool = False
) -> list[tuple]:
    """The best `filters.limit` rows among the newest `ranked` matches, each row's columns
    then its rank: a recent window first, widened until one holds `ranked` matches (with the
    `rum` index: one pass, the index giving the matches newest first)."""
    ranked = max(ranked, filters.limit)
    with conn.transaction():  # SET LOCAL ends with it
        return _search(conn, filters, ranked, rum=rum)


def estimate(conn: Any, filters: Filters, params: dict) -> float:
    """The planner's estimate of the rows `filters` match (planned, not run)."""
    sql = estimate_sql(
        types=bool(filters.types),
        since=filters.since is not None,
        until=bool(filters.until),
        authors=bool(filters.authors),
    )
    plan = conn.execute(sql, {**params, "since": filters.since}, prepare=False).fetchone()[0]
    return float(plan[0]["Plan"]["Plan Rows"])


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
    step = choose_pass(table, estimate(conn, filters, params), ranked)
    for _ in range(MAX_PASSES):
        start = None
        if step.days is not None and table.newest is not None:
            start = table.newest - timedelta(days=step.days)
            if filters.since is not None and start.isoformat() <= filters.since:
                start, step = None, Pass(None)  # the caller's own bound is narrower
        _plan(conn, walk=step.walk)
        if start is None:
            rows, found = _pass(conn, filters, params, filters.since)
        elif step.walk:
            rows, found = _pass(conn, filters, params, start.isoformat())
        else:
            weeks = weeks_query(start, table.newest)
            rows, found = _pass(conn, filters, params, filters.since, weeks=weeks)
        if found >= ranked or step.days is None:
            return rows
        step = next_pass(table, step, found, ranked)
    _plan(conn, walk=False)
    return _pass(conn, filters, params, filters.since)[0]  # every window short


def _plan(conn: Any, *, walk: bool) -> None:
    """How a pass finds its matches (`choose_pass` chose): a short window is walked newest
    first down the day index, each row's tsvector tested, so a common word's GIN posting list
    (most of a million rows) is never read; a wider window, or the whole table, is a GIN
    bitmap. Left to itself the planner may walk a wide window row by row instead, or scan the
    table: where the window is a tenth of a small table it read all of it (100 ms at
    100,000 rows)."""
    walk_on, bitmap_on = ("on", "off") if walk else ("off", "on")
    conn.execute(f"SET LOCAL enable_indexscan = {walk_on}")
    conn.execute(f"SET LOCAL enable_bitmapscan = {bitmap_on}")
    conn.execute("SET LOCAL enable_seqscan = off")


def _pass(
    conn: Any,
    filters: Filters,
    params: dict,
    since: str | None,
    *,
    rum: bool = False,
    weeks: str | None = None,
) -> tuple[list[tuple], int]:
    """One search statement: the rows (columns then rank) and how many matches were ranked."""
    sql = search_sql(
        types=bool(filters.types),
        since=since is not None,
        until=bool(filters.until),
        authors=bool(filters.authors),
        rum=rum,
        weeks=weeks is not None,
    )
    # Never a prepared statement: after five runs psycopg prepares it, and PostgreSQL's generic
    # plan, blind to the window's bound, read ten times the rows (team recall p50 228 ms at a
    # million checkpoints, 19 ms planned for each window).
    values = {**params, "since": since, "weeks": weeks}
    rows = conn.execute(sql, values, prepare=False).fetchall()
    found = int(rows[0][-1]) if rows else 0
    return [row[:-1] for row in rows], found


def has_rum(conn: Any) -> bool:
    """Whether the team table has the `rum` index (`schema.enable_rum`)."""
    sql = "SELECT to_regclass('team_checkpoints_rum') IS NOT NULL"
    return bool(conn.execute(sql).fetchone()[0])
