"""Team search at a million checkpoints: the same hits as ranking every match, fewer rows read.

Team recall ranks the newest MAX_RANKED rows matching the query (`ts_rank_cd`, the best
`limit` come back; recall then applies its recency factor). Finding "the newest 2,000 matches"
of a common word used to read every matching row of the table. Rows are now looked for in
recent-day windows first, counted back from the newest day the table holds (30 days, then 180,
then all): when a window already holds MAX_RANKED matches, they are exactly the newest
MAX_RANKED of the whole table (every row outside is older than every row inside), so the
hits are the ones the unbounded statement gives, and PostgreSQL reads one window's rows (the
GIN bitmap ANDed with the `day` index) instead of all of them. A rare word falls through to
the last, unbounded, pass, which is cheap because its matches are few.

Where the `rum` extension is installed and its index built (`schema.enable_rum`), the index
itself hands the matches over newest first (`ORDER BY day <=> newest`, the day stored beside
each lexeme's postings), so one pass reads just the MAX_RANKED rows, whatever the word.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

MAX_RANKED = 2000  # matches ranked per query, the most recent first: bounds a common word's cost
WINDOWS_DAYS = (30, 180, None)  # recent-day windows tried in turn; None: the whole table

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
    newest_first = "day <=> %(newest)s::date" if rum else "day DESC"
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


def _windows(newest: date | None, since: str | None) -> list[str | None]:
    """The `since` bounds to try, narrowest first: recent windows back from the newest day,
    each only when narrower than the caller's own `since`; the caller's bound last."""
    if not isinstance(newest, date):
        return [since]
    bounds: list[str | None] = []
    for days in WINDOWS_DAYS:
        if days is None:
            break
        bound = (newest - timedelta(days=days)).isoformat()
        if since is None or bound > since:
            bounds.append(bound)
    return [*bounds, since]


def has_rum(conn: Any) -> bool:
    """Whether the team table has the `rum` index (`schema.enable_rum`)."""
    sql = "SELECT to_regclass('team_checkpoints_rum') IS NOT NULL"
    return bool(conn.execute(sql).fetchone()[0])


def ranked_rows(
    conn: Any, filters: Filters, *, ranked: int = MAX_RANKED, rum: bool = False
) -> list[tuple]:
    """The best `filters.limit` rows among the newest `ranked` matches, each row's columns
    then its rank: recent windows first, widened until one holds `ranked` matches (with the
    `rum` index: one pass, the index giving the matches newest first)."""
    ranked = max(ranked, filters.limit)
    params = {
        "query": filters.query,
        "limit": filters.limit,
        "ranked": ranked,
        "types": list(filters.types),
        "until": filters.until,
        "authors": list(filters.authors),
    }
    newest = conn.execute("SELECT max(day) FROM team_checkpoints").fetchone()[0]
    bounds = [filters.since] if rum else _windows(newest, filters.since)
    rows: list[tuple] = []
    for at, bound in enumerate(bounds):
        sql = search_sql(
            types=bool(filters.types),
            since=bound is not None,
            until=bool(filters.until),
            authors=bool(filters.authors),
            rum=rum,
        )
        rows = conn.execute(sql, {**params, "since": bound, "newest": newest}).fetchall()
        found = int(rows[0][-1]) if rows else 0
        if found >= ranked or at == len(bounds) - 1:
            break
    return [values[:-1] for values in rows]
