"""Team ranking at scale (issue 26): recent-day windows, and the rum index where installed,
give exactly the hits of ranking the newest matches of the whole table."""

from __future__ import annotations

import random
from datetime import date, timedelta

import pytest

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")

import psycopg  # noqa: E402

from hipo_jupyter.team import TeamDatabase, migrate, websearch_query  # noqa: E402
from hipo_jupyter.team.ranking import Extent, Filters, next_window, ranked_rows  # noqa: E402

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


def test_windows_give_the_hits_of_ranking_the_whole_table(team_url, monkeypatch):
    from hipo_jupyter.team import ranking

    monkeypatch.setattr(ranking, "FIRST_WINDOW_ROWS", 400)  # 4,000 rows: a tenth of them
    fill(team_url, 4000, distinct_days=False)  # many rows a day: ties on the boundary day
    with psycopg.connect(team_url) as conn:
        for text in queries():
            query = websearch_query(text)
            rows = ranked_rows(conn, Filters(query, 20), ranked=RANKED)
            assert [row[0] for row in rows] == unbounded(team_url, query), text
            since = ranked_rows(conn, Filters(query, 20, since="2026-01-01"), ranked=RANKED)
            expected = unbounded(team_url, query, "AND day >= %(since)s", since="2026-01-01")
            assert [row[0] for row in since] == expected, text
        windowed = next_window(ranking.extent(conn), None, 0, RANKED)
    assert windowed is not None and windowed < 500 // 8  # the first pass is a window


def test_next_window_sizes_the_second_pass_by_the_rate_seen():
    table = Extent(NEWEST, NEWEST - timedelta(days=999), 1_000_000.0)  # 1,000 rows a day
    first = next_window(table, None, 0, 2000)
    assert first == 6  # about FIRST_WINDOW_ROWS rows
    assert next_window(table, first, 500, 2000) == 32  # 2000 / (500/6) * 1.3
    assert next_window(table, first, 0, 2000) is None  # no match seen: the whole table
    assert next_window(table, first, 5, 2000) is None  # longer than the table: the whole of it
    assert next_window(Extent(None, None, 0.0), None, 0, 2000) is None


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
