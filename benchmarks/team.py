"""Team recall latency on PostgreSQL at 100k and 1M checkpoints, beside local FTS5 recall on one
person's year, in one run.

    python benchmarks/team.py --sizes 100000,1000000 --authors 100 --json out.json
    python benchmarks/team.py --url postgresql://localhost/teambench   # an existing server

Without `--url` a throwaway cluster of the machine's PostgreSQL is started in a temp folder (the
tests' helper, `tests/postgres_helpers.py`) and stopped at the end.

The team table is filled with synthetic checkpoints (100 authors, 5 notebooks each, dates over
three years, words drawn from a 5,000-word vocabulary with Zipf weights, so the commonest words
are in a large share of the rows and most words in few) by COPY, growing from one size to the
next, then analysed. Local recall runs on one person's year (365 days x 20 checkpoints, written
as raw logs and indexed by the engine). The same queries (one to three words drawn as the
text's words are) go to both:

- `team`: `Memory.recall(q, team=True)` end to end (query building, PostgreSQL's
  `websearch_to_tsquery` over the GIN index in recent-day windows, `ts_rank_cd` over the newest
  2,000 matches, then local recall's recency and date ranking in Python);
- `team_sql`: the SQL statement alone, for where the time goes;
- `rum`: both again once the `rum` index is built, where the extension is installed
  (`--no-rum` skips it); its build time is reported apart from the fill;
- `before`: the statement of before issue 26 (every match sorted by day), timed, and the
  share of queries whose 30 best ids and first id the new statements give too (`same`);
- `local`: `Memory.recall(q, mode="keyword")` on FTS5;
- `teammate`: `team` and `team_sql` again as a login role that is not a superuser (the temp
  cluster only), so the row-level security of migration 0009 applies, as it does to every
  teammate (a superuser, as the other columns run, bypasses it): the same table, in one run.

Timings are wall-clock on a shared machine: compare the columns of one run, not runs of
different days. Nothing here is asserted; `tests/test_team_benchmark.py` runs it at a tiny size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from hipo_jupyter.memory import Memory, MemoryConfig  # noqa: E402
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, render  # noqa: E402
from hipo_jupyter.team.link import TeamLink  # noqa: E402

TODAY = date(2026, 3, 12)
_VOCABULARY_TEXT = (
    "churn pricing onboarding forecast retention cohort dashboard funnel revenue margin "
    "latency outage migration schema backfill experiment uplift variance anomaly seasonality "
    "segment campaign signup trial upgrade downgrade refund invoice quota capacity pipeline "
    "feature model drift recall precision label dataset warehouse partition index query "
    "budget roadmap hiring vendor contract renewal discount tier starter enterprise region "
    "europe asia payments fraud chargeback webhook sdk api mobile desktop cache queue"
)
VOCABULARY = tuple(_VOCABULARY_TEXT.split())
_FILLER_TEXT = "the and with for from into over after before while then also"
FILLER = tuple(_FILLER_TEXT.split())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    at = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[at]


def timed(call: Callable[[], object], queries: list[str]) -> dict[str, float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        call(query)
        times.append((time.perf_counter() - start) * 1000)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
    }


def _vocabulary(size: int = 5000) -> tuple[list[str], list[float]]:
    """The themed words first, then made-up words of two or three syllables, with Zipf weights
    (the word of rank r is drawn in proportion to 1/r), as words are in real notes: a few in
    most checkpoints, most in very few."""
    rng = random.Random(0)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    vocabulary = list(VOCABULARY)
    seen = set(vocabulary)
    while len(vocabulary) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3)))
        if word not in seen:
            seen.add(word)
            vocabulary.append(word)
    rng.shuffle(vocabulary)
    cumulative, total = [], 0.0
    for rank in range(1, len(vocabulary) + 1):
        total += 1.0 / rank
        cumulative.append(total)
    return vocabulary, cumulative


_WORDS, _CUMULATIVE = _vocabulary()


def words(rng: random.Random, n: int) -> list[str]:
    return rng.choices(_WORDS, cum_weights=_CUMULATIVE, k=n)


def text(rng: random.Random, n: int) -> str:
    out = []
    for word in words(rng, n):
        out.append(word)
        if rng.random() < 0.3:
            out.append(rng.choice(FILLER))
    return " ".join(out)


def fill_team(url: str, start: int, stop: int, authors: int, rng: random.Random) -> float:
    """Rows start..stop-1 into team_checkpoints by binary COPY (from the rows already there, so
    a database filled by an earlier run grows on); seconds taken (with ANALYZE). When more rows
    come than are there, the secondary indexes are dropped and built again after the load
    (one sorted build, not a million inserts into a GIN index)."""
    import psycopg

    from hipo_jupyter.team import migrate

    began = time.perf_counter()
    with psycopg.connect(url) as conn:
        migrate(conn)
        start = max(start, conn.execute("SELECT count(*) FROM team_checkpoints").fetchone()[0])
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'team_checkpoints' "
            "AND indexname <> 'team_checkpoints_pkey'"
        ).fetchall()
        rebuild = stop - start > start
        for name, _ in indexes if rebuild else ():
            conn.execute(f'DROP INDEX "{name}"')
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY team_checkpoints (id, author, notebook, day, type, title, body, tags, "
                "source_file, source_line, content_hash) FROM STDIN (FORMAT BINARY)"
            ) as copy,
        ):
            copy.set_types(["text"] * 3 + ["date"] + ["text"] * 5 + ["int4", "text"])
            for n in range(start, stop):
                copy.write_row(_bench_row(n, authors, rng))
        if rebuild:
            conn.execute("SET maintenance_work_mem = '256MB'")
            for _, ddl in indexes:
                conn.execute(ddl)
        conn.commit()
        conn.execute("ANALYZE team_checkpoints")
        conn.commit()
    return round(time.perf_counter() - began, 1)


def _bench_row(n: int, authors: int, rng: random.Random) -> tuple:
    day = TODAY - timedelta(days=rng.randrange(3 * 365))
    return (
        f"bench-{n:08d}",
        f"person{n % authors:03d}",
        f"notebook{rng.randrange(5)}",
        day,
        "project",
        text(rng, 4),
        f"analysis: {text(rng, 14)}\ndecisions: {text(rng, 8)}",
        ",".join(words(rng, 2)),
        f"memory/{day.isoformat()}.md",
        1 + 7 * rng.randrange(20),
        f"{n:064x}",
    )


# Today's (main's) statement before issue 26: every match sorted by day, the newest 2,000
# ranked. The new statements' top hits are compared with its own on the timed queries.
UNBOUNDED_SQL = """
SELECT id FROM (
  SELECT id, day, ts_rank_cd(search, q) AS rank FROM (
    SELECT id, day, search, q FROM team_checkpoints,
      websearch_to_tsquery('english', %(query)s) AS q
    WHERE search @@ q ORDER BY day DESC, id LIMIT 2000) AS recent
  ORDER BY rank DESC, day DESC, id LIMIT 30) AS best
"""


def same_hits(url: str, queries: list[str]) -> tuple[dict[str, float], dict[str, float]]:
    """The unbounded statement's timing, and the share of queries whose 30 best ids (as a
    set) and whose first id are its own. Ties on the 2,000th match's day may differ (either
    order is today's)."""
    import psycopg

    from hipo_jupyter.team import TeamDatabase, websearch_query

    database = TeamDatabase(url)
    same_set = same_first = 0
    times = []
    with psycopg.connect(url) as conn:
        for query in queries:
            text_query = websearch_query(query)
            start = time.perf_counter()
            old = [row[0] for row in conn.execute(UNBOUNDED_SQL, {"query": text_query})]
            times.append((time.perf_counter() - start) * 1000)
            new = [match.row.id for match in database.search(text_query, limit=30)]
            same_set += set(old) == set(new)
            same_first += old[:1] == new[:1]
    before = {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(percentile(times, 0.95), 2),
    }
    return before, {
        "same_top30": round(same_set / len(queries), 3),
        "same_first": round(same_first / len(queries), 3),
    }


def write_logs(root: Path, days: int, per_day: int, rng: random.Random, second: int = 0) -> None:
    """`days` raw logs ending today with `per_day` checkpoints each, written as files (their
    ids made at 09:00:0`second`, so two roots of other seconds share no id)."""
    folder = root / "memory"
    folder.mkdir(parents=True)
    for d in range(days):
        day = TODAY - timedelta(days=d)
        blocks = [
            render(
                Checkpoint(
                    title=text(rng, 4),
                    fields=(("analysis", text(rng, 14)), ("decisions", text(rng, 8))),
                    id=f"{day.isoformat()}T09:00:0{second}Z-{d:04x}{n:04x}",
                    tags=tuple(words(rng, 2)),
                )
            )
            for n in range(per_day)
        ]
        (folder / f"{day.isoformat()}.md").write_text("\n".join(blocks), encoding="utf-8")


def local_year(root: Path, days: int, per_day: int, rng: random.Random) -> Memory:
    """One person's year as raw logs, indexed by the engine (FTS5), keyword recall."""
    write_logs(root, days, per_day, rng)
    memory = Memory(root, config=MemoryConfig(semantic=False), today=lambda: TODAY)
    memory.reindex()
    return memory


def sql_search(url: str) -> Callable[[str], object]:
    from hipo_jupyter.team import TeamDatabase, websearch_query

    database = TeamDatabase(url)
    return lambda query: database.search(websearch_query(query), limit=30)


def table_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT pg_total_relation_size('team_checkpoints')").fetchone()[0])


def run(args: argparse.Namespace, url: str, workdir: Path) -> dict:
    rng = random.Random(args.seed)
    queries = [" ".join(words(rng, rng.randint(1, 3))) for _ in range(args.samples)]
    began = time.perf_counter()
    local = local_year(workdir / "me", args.year_days, args.per_day, random.Random(args.seed))
    local_build = round(time.perf_counter() - began, 1)
    local.recall(queries[0], mode="keyword")  # warm
    result: dict = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "queries": args.samples,
        "local": {
            "checkpoints": args.year_days * args.per_day,
            "build_s": local_build,
            **timed(lambda q: local.recall(q, mode="keyword"), queries),
        },
        "team": [],
    }
    loaded = 0
    fill_rng = random.Random(args.seed + 1)
    for size in args.sizes:
        drop_rum(url)  # the rum index is built again after the fill, and timed apart
        fill_s = fill_team(url, loaded, size, args.authors, fill_rng)
        loaded = size
        row = {
            "checkpoints": size,
            "authors": args.authors,
            "fill_s": fill_s,
            "table_mb": round(table_bytes(url) / 2**20, 1),
            **measure(url, workdir, queries),
        }
        row["before"], row["same"] = same_hits(url, queries)
        if args.teammate_url:
            row["teammate"] = measure(args.teammate_url, workdir, queries)
        result["team"].append(row)
        print(markdown(result), file=sys.stderr)  # the plain figures, before the rum pass
        began = time.perf_counter()
        if not args.no_rum and enable_rum(url):
            row["rum_index_s"] = round(time.perf_counter() - began, 1)
            rum = measure(url, workdir, queries)
            row["rum"] = {"team": rum["team"], "team_sql": rum["team_sql"]}
            row["rum"]["same"] = same_hits(url, queries)[1]
            print(markdown(result), file=sys.stderr)
    if args.sync_rows:
        drop_rum(url)  # a team's table as migrations make it
        result["full_sync"] = full_sync(url, workdir, args.sync_rows, args.sync_per_day, args.seed)
        if args.teammate_url:  # a teammate's role: each row written checked by the policies
            result["full_sync_teammate"] = full_sync(
                args.teammate_url, workdir, args.sync_rows, args.sync_per_day, args.seed, second=1
            )
    local.close()
    return result


def full_sync(url: str, workdir: Path, rows: int, per_day: int, seed: int, second: int = 0) -> dict:
    """`hipo team sync --full` (`Memory.team_sync(full=True)`) of one root holding `rows`
    checkpoints, `per_day` a day, into the filled team table: read, redacted, pushed by COPY."""
    root = workdir / f"bulk{second}"
    write_logs(root, max(1, rows // per_day), per_day, random.Random(seed), second)
    config = MemoryConfig(semantic=False, team_url=url, team_author="bulk")
    memory = Memory(root, config=config, today=lambda: TODAY, team=TeamLink)
    try:
        began = time.perf_counter()
        report = memory.team_sync(full=True)
        seconds = time.perf_counter() - began
    finally:
        memory.close()
    return {
        "checkpoints": report.rows,
        "written": report.written,
        "logs": report.sent_files,
        "seconds": round(seconds, 1),
        "rows_per_s": round(report.rows / seconds) if seconds else None,
    }


def measure(url: str, workdir: Path, queries: list[str]) -> dict:
    """`Memory.recall(team=True)` end to end and the SQL alone, on a fresh Memory (so it sees
    whether the rum index is there)."""
    from hipo_jupyter.team.database import close_pools

    close_pools()
    config = MemoryConfig(semantic=False, team_url=url)
    team = Memory(workdir / "me", config=config, today=lambda: TODAY, team=TeamLink)
    try:
        team.recall(queries[0], team=True)  # warm the pool and the cache
        search = sql_search(url)
        return {
            "team": timed(lambda q: team.recall(q, team=True), queries),
            "team_sql": timed(search, queries),
        }
    finally:
        team.close()


def enable_rum(url: str) -> bool:
    from hipo_jupyter.team import TeamDatabase

    return TeamDatabase(url).enable_rum()


def drop_rum(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS team_checkpoints_rum")


def markdown(result: dict) -> str:
    local = result["local"]
    lines = [
        "| memory | checkpoints | recall p50 ms | recall p95 ms | SQL alone p50 / p95 ms "
        "| same top 30 / same first as before | fill s |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| local FTS5, one person's year | {local['checkpoints']:,} | {local['p50_ms']} | "
        f"{local['p95_ms']} | | | {local['build_s']} |",
    ]
    for row in result["team"]:
        size = f"{row['checkpoints']:,}"
        same = row.get("same") or {}
        lines.append(
            f"| team PostgreSQL, {row['authors']} authors | {size} | "
            f"{row['team']['p50_ms']} | {row['team']['p95_ms']} | "
            f"{row['team_sql']['p50_ms']} / {row['team_sql']['p95_ms']} | "
            f"{same.get('same_top30')} / {same.get('same_first')} | {row['fill_s']} |"
        )
        if row.get("rum"):
            rum = row["rum"]
            lines.append(
                f"| team PostgreSQL + rum index | {size} | {rum['team']['p50_ms']} | "
                f"{rum['team']['p95_ms']} | {rum['team_sql']['p50_ms']} / "
                f"{rum['team_sql']['p95_ms']} | {rum['same']['same_top30']} / "
                f"{rum['same']['same_first']} | +{row['rum_index_s']} (index) |"
            )
        if row.get("teammate"):
            mate = row["teammate"]
            lines.append(
                f"| team, as a teammate's role (row-level security) | {size} | "
                f"{mate['team']['p50_ms']} | {mate['team']['p95_ms']} | "
                f"{mate['team_sql']['p50_ms']} / {mate['team_sql']['p95_ms']} | | |"
            )
        if row.get("before"):
            lines.append(
                f"| before: every match sorted (SQL) | {size} | | | "
                f"{row['before']['p50_ms']} / {row['before']['p95_ms']} | 1 / 1 | |"
            )
    for key, who in (("full_sync", ""), ("full_sync_teammate", " as a teammate's role")):
        bulk = result.get(key)
        if bulk:
            lines += [
                "",
                f"`hipo team sync --full` of one root with {bulk['checkpoints']:,} checkpoints "
                f"({bulk['logs']:,} logs) into the table above{who}: {bulk['seconds']} s "
                f"({bulk['rows_per_s']:,} rows/s)",
            ]
    return "\n".join(lines)


TEAMMATE = "hipo_teammate"


def teammate(url: str, teammate_url: str) -> str:
    """The role of `teammate_url` made a login role (not a superuser) if it is not one yet and
    granted what a teammate's syncs need, on the tables the migrations make (run here with
    `url`, the DBA's, who then owns them): `teammate_url`."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict

    from hipo_jupyter.team import migrate

    name = str(conninfo_to_dict(teammate_url)["user"])
    role = sql.Identifier(name)
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone():
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
        conn.execute(
            sql.SQL(
                "GRANT SELECT, INSERT, UPDATE, DELETE ON team_checkpoints, team_migrations TO {}"
            ).format(role)
        )
    return teammate_url


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="an existing PostgreSQL database (default: a temp cluster)")
    parser.add_argument("--sizes", default="100000,1000000", help="team sizes, ascending")
    parser.add_argument("--authors", type=int, default=100)
    parser.add_argument("--year-days", type=int, default=365, help="days of local memory")
    parser.add_argument("--per-day", type=int, default=20, help="local checkpoints a day")
    parser.add_argument("--samples", type=int, default=200, help="queries timed per column")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--no-rum", action="store_true", help="skip the rum index pass")
    parser.add_argument(
        "--sync-rows", type=int, default=100_000, help="checkpoints of the full sync (0: none)"
    )
    parser.add_argument("--sync-per-day", type=int, default=200, help="of the full sync's root")
    parser.add_argument("--json", dest="json_out", help="also write the results as JSON here")
    parser.add_argument(
        "--teammate-url",
        help="with --url: a teammate's login (not a superuser), made and granted with --url's "
        "role, to time recall and the sync under row-level security (the temp cluster: its own)",
    )
    args = parser.parse_args(argv)
    args.sizes = sorted(int(size) for size in args.sizes.split(","))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hipo-team-bench-") as work:
        cluster = None
        url = args.url
        if not url:
            from postgres_helpers import Cluster, postgres_bin

            bin_dir = postgres_bin()
            if bin_dir is None:
                print("no PostgreSQL binaries found: pass --url", file=sys.stderr)
                return 2
            cluster = Cluster(bin_dir)
            cluster.start()
            url = cluster.url()
            args.teammate_url = cluster.url(user=TEAMMATE)
        try:
            if args.teammate_url:
                args.teammate_url = teammate(url, args.teammate_url)
            result = run(args, url, Path(work))
        finally:
            from hipo_jupyter.team.database import close_pools

            close_pools()
            if cluster is not None:
                cluster.stop()
    print(markdown(result))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
