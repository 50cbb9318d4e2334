"""Team ranking at scale (issue 26): recent-day windows, and the rum index where installed,
give exactly the hits of ranking the newest matches of the whole table."""

from __future__ import annotations

import math
import random
from datetime import date, timedelta

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

import psycopg  # noqa: E402

from hipo_jupyter.team import TeamDatabase, migrate, websearch_query  # noqa: E402
from hipo_jupyter.team.ranking import Extent, Filters, ranked_rows  # noqa: E402

NEWEST = date(2026, 3, 12)
WORDS = [f"w{n}" for n in range(40)]  # w0 in most rows, w39 in few
RANKED = 150

# Every match sorted by day (id breaking ties), the newest RANKED ranked: the pre-issue plan.
UNBOUNDED = """
SELECT id FROM (
  SELECT id, day, ts_rank_cd(search, q) AS rank FROM (
    SELECT id, day, search, q FROM team_checkpoints,
      websearch_to_tsquery('english', %(query)s) AS q
    WHERE search @@ q {extra} ORDER BY day DESC, id LIMIT %(ranked)s) AS recent
  ORDER BY rank DESC, day DESC, id LIMIT 20) AS best
"""


def fill(url: str, rows: int, *, distinct_days: bool) -> None:
    rng = random.Random(26)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    with psycopg.connect(url) as conn:
        migrate(conn)
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY team_checkpoints (id, author, notebook, day, type, title, body, tags, "
                "source_file, source_line, content_hash) FROM STDIN"
            ) as copy,
        ):
            for n in range(rows):
                back = n if distinct_days else rng.randrange(rows // 8)
                day = NEWEST - timedelta(days=back)
                body = " ".join(rng.choices(WORDS, weights=weights, k=6))
                title = " ".join(rng.choices(WORDS, weights=weights, k=2))
                row = (f"r{n:05d}", "ana", "nb", day, "project", title, body, "", "m.md", 1, "h")
                copy.write_row(row)
        conn.execute("ANALYZE team_checkpoints")


def queries() -> list[str]:
    rng = random.Random(7)
    return [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(40)]


def unbounded(url: str, query: str, extra: str = "", ranked: int = RANKED, **params) -> list[str]:
    with psycopg.connect(url) as conn:
        sql = UNBOUNDED.format(extra=extra)
        found = conn.execute(sql, {"query": query, "ranked": ranked, **params})
        return [row[0] for row in found]


# How choose_pass would read each window, forced through its costs (microseconds a row).
FORCED = {
    "walk": {"WALK_ROW_US": 0.0},
    "weeks": {"WALK_ROW_US": 1e9, "HEAP_ROW_US": 1e-9},
    "whole": {"WALK_ROW_US": 1e9, "MATCH_ENTRY_US": 0.0, "HEAP_ROW_US": 0.0},
}


@pytest.mark.parametrize("kind", sorted(FORCED))
def test_each_pass_gives_the_hits_of_ranking_the_whole_table(team_url, monkeypatch, kind):
    """However a window is read (walked down the day index, asked of the full-text index by
    its weeks, or the whole table), and however short it falls, the hits are the unbounded
    statement's, with ties on the boundary day and with the caller's own `since`."""
    from hipo_jupyter.team import ranking

    for name, value in FORCED[kind].items():
        monkeypatch.setattr(ranking, name, value)
    fill(team_url, 4000, distinct_days=False)  # many rows a day: ties on the boundary day
    with psycopg.connect(team_url) as conn:
        table = ranking.extent(conn)
        for text in queries():
            query = websearch_query(text)
            rows = ranked_rows(conn, Filters(query, 20), ranked=RANKED)
            assert [row[0] for row in rows] == unbounded(team_url, query), text
            since = ranked_rows(conn, Filters(query, 20, since="2026-01-01"), ranked=RANKED)
            expected = unbounded(team_url, query, "AND day >= %(since)s", since="2026-01-01")
            assert [row[0] for row in since] == expected, text
    chosen = ranking.choose_pass(table, 2000, RANKED)  # a common word: a window, read as forced
    assert (chosen.days is None) == (kind == "whole") and chosen.walk == (kind == "walk")


def test_the_weeks_pass_asks_the_full_text_index_alone(team_url):
    """The window of a mid-frequency word is one GIN scan of "these words in these weeks",
    not a bitmap of every match ANDed with months of the day index (60 to 100 ms at a
    million rows)."""
    from hipo_jupyter.team import ranking

    fill(team_url, 4000, distinct_days=False)
    with psycopg.connect(team_url) as conn, conn.transaction():
        ranking._plan(conn, walk=False)
        sql = ranking.search_sql(types=False, since=False, until=False, authors=False, weeks=True)
        weeks = ranking.weeks_query(NEWEST - timedelta(days=60), NEWEST)
        params = {"query": websearch_query("w5"), "limit": 20, "ranked": RANKED, "weeks": weeks}
        plan = "\n".join(row[0] for row in conn.execute("EXPLAIN " + sql, params, prepare=False))
    scans = [line for line in plan.splitlines() if "Index Scan" in line]
    assert any("team_checkpoints_search" in line for line in scans), plan
    assert not any("team_checkpoints_day" in line for line in scans), plan
    assert "array_to_tsvector" in plan.split("Index Cond", 1)[1].splitlines()[0], plan


def test_the_week_of_a_day_is_the_one_the_index_holds(team_url):
    from hipo_jupyter.team.ranking import week_of
    from hipo_jupyter.team.schema import WEEK

    days = [date(2000, 1, 3), date(2000, 1, 9), date(2000, 1, 10), NEWEST, date(2031, 12, 31)]
    with psycopg.connect(team_url) as conn:
        for day in days:
            sql = f"SELECT {WEEK.replace('day', '%(day)s::date')}::text"
            assert conn.execute(sql, {"day": day}).fetchone()[0] == f"'w{week_of(day)}'"


MILLION = Extent(NEWEST, NEWEST - timedelta(days=1095), 1_000_000.0)  # 913 rows a day


def test_the_first_pass_is_chosen_by_the_matches_the_planner_expects():
    from hipo_jupyter.team.ranking import MAX_WEEKS, choose_pass

    common = choose_pass(MILLION, 500_000, 2000)  # its newest 2,000 in a few days: walked
    assert common.walk and common.days is not None and common.days <= 7
    middle = choose_pass(MILLION, 13_700, 2000)  # about 160 days: the index's weeks
    assert not middle.walk and 150 <= middle.days <= 215
    assert choose_pass(MILLION, 2_500, 2000).days is None  # few matches: read them all
    assert choose_pass(MILLION, 1, 2000).days is None
    wide = choose_pass(MILLION, 2600 * 1095 / (7 * MAX_WEEKS + 14), 2000)  # too many weeks
    assert wide.days is None or wide.walk
    old = Extent(date(1999, 12, 31), date(1997, 1, 1), 1_000_000.0)  # before the weeks' epoch
    assert choose_pass(old, 13_700, 2000).days is None
    assert choose_pass(Extent(None, None, 0.0), 13_700, 2000).days is None


def test_a_short_window_is_widened_by_the_rate_it_saw():
    from hipo_jupyter.team.ranking import Pass, next_pass

    tried = Pass(160, rows=146_000.0)
    wider = next_pass(MILLION, tried, 1500, 2000)  # 1,500 where 2,600 were expected
    assert wider.days is not None and wider.days > 160
    assert next_pass(MILLION, tried, 0, 2000).days is None  # none at all: the whole table
    assert next_pass(MILLION, tried, 1990, 2000).days is None or wider.days > 160
    assert next_pass(MILLION, Pass(None), 10, 2000).days is None


def test_a_window_is_sized_by_the_day_histogram():
    """Rows are rarely spread evenly over the days (a team grows): the newest N rows are
    found from ANALYZE's histogram of `day` (buckets of as many rows each)."""
    days = ("2025-01-01", "2025-09-01", "2026-01-01", "2026-03-01")
    bounds = tuple(date.fromisoformat(d) for d in days)  # four buckets of 1,000 rows
    table = Extent(date(2026, 3, 12), date(2025, 1, 1), 4000.0, (*bounds, date(2026, 3, 12)))
    assert table.days_holding(1000) == 11  # the last quarter of the rows: since 2026-03-01
    assert table.days_holding(500) == 6  # half of that bucket's 11 days, rounded down
    assert table.days_holding(4000) is None
    even = Extent(date(2026, 3, 12), date(2025, 1, 1), 4000.0)  # never analysed: an average
    assert even.days_holding(1000) == math.ceil(1000 / even.per_day)


def test_the_rum_index_gives_the_same_hits(team_url):
    fill(team_url, 3000, distinct_days=True)  # one row a day: "the newest" has no ties
    database = TeamDatabase(team_url)
    expected = {text: unbounded(team_url, websearch_query(text)) for text in queries()}
    if not database.enable_rum():
        pytest.skip("the rum extension is not installed (Debian: postgresql-15-rum)")
    with psycopg.connect(team_url) as conn:
        plan = conn.execute(
            "EXPLAIN SELECT id FROM team_checkpoints WHERE search @@ to_tsquery('w0') "
            "ORDER BY rum_day <=> '2026-03-12'::timestamp LIMIT 150"
        ).fetchall()
        assert "team_checkpoints_rum" in " ".join(line[0] for line in plan)
        for text, ids in expected.items():
            rows = ranked_rows(conn, Filters(websearch_query(text), 20), ranked=RANKED, rum=True)
            assert [row[0] for row in rows] == ids, text
    hits = database.search(websearch_query("w3 w7"), limit=20)  # TeamDatabase takes rum
    assert [m.row.id for m in hits] == unbounded(team_url, websearch_query("w3 w7"), ranked=2000)


def test_the_search_statement_is_never_prepared(team_url):
    """psycopg prepares a statement run five times on one connection, and PostgreSQL's generic
    plan then ignores the window's day bound (ten times slower at a million rows): each pass
    is planned for its own window."""
    fill(team_url, 500, distinct_days=False)
    with psycopg.connect(team_url) as conn:
        for _ in range(8):
            ranked_rows(conn, Filters(websearch_query("churn pricing"), 20), ranked=RANKED)
        prepared = conn.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%ts_rank_cd%'"
        ).fetchone()[0]
    assert prepared == 0
