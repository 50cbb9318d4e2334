"""benchmarks/team.py runs end to end at a tiny size on a real PostgreSQL. No timing asserted:
only the shape of the table and the JSON, so the benchmark cannot rot between quoted runs."""

from __future__ import annotations

import json

import pytest
from benchmark_helpers import load_benchmark

pytest.importorskip("psycopg", reason="the team extra is not installed: pip install .[team]")


def test_team_benchmark_reports_each_size_beside_local_recall(team_url, tmp_path, capsys):
    bench = load_benchmark("team.py", "team_benchmark")
    out = tmp_path / "team.json"
    args = ["--url", team_url, "--sizes", "300,600", "--year-days", "3", "--per-day", "4"]
    args += ["--sync-rows", "40", "--sync-per-day", "10"]
    # a teammate's role: recall and the sync timed again under row-level security
    args += ["--teammate-url", team_url.replace("://postgres@", "://hipo_bench_mate@")]
    assert bench.main([*args, "--samples", "5", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["local"]["checkpoints"] == 12
    assert [row["checkpoints"] for row in result["team"]] == [300, 600]
    for row in result["team"]:
        assert row["team"]["p50_ms"] > 0 and row["team"]["p95_ms"] >= row["team"]["p50_ms"]
        assert row["team_sql"]["p50_ms"] > 0 and row["table_mb"] > 0
        assert row["teammate"]["team"]["p50_ms"] > 0
    assert result["full_sync"]["checkpoints"] == result["full_sync"]["written"] == 40
    assert result["full_sync"]["logs"] == 4
    assert result["full_sync_teammate"]["written"] == 40  # its own ids: none refused
    table = capsys.readouterr().out
    assert "local FTS5" in table and "| team PostgreSQL, 100 authors | 600 |" in table
    assert "`hipo team sync --full` of one root with 40 checkpoints (4 logs)" in table
    assert "| team, as a teammate's role (row-level security) | 600 |" in table
    assert "(4 logs) into the table above as a teammate's role" in table
