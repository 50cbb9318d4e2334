"""benchmarks/graph.py runs end to end at a tiny size, and both stores count the same memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "graph.py"


def test_graph_benchmark_runs_and_the_stores_agree(tmp_path: Path) -> None:
    out = tmp_path / "graph.json"
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--days", "3", "--per-day", "2", "--runs", "1",
         "--json", str(out)],
        capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    result = json.loads(out.read_text())
    assert result["checkpoints"] == 6
    assert result["rdflib_answer"] == 8  # the same store, after the benchmark's two remembers
    assert set(result["exports"]) == {"csv", "parquet", "jsonl", "turtle"}
    assert all("after_one_remember_s" in e for e in result["exports"].values())
    assert result["rules"] == 0 and result["rules_s"] >= 0
    assert "| SPARQL count, fresh process, after the first build |" in done.stdout
    assert "| target (issue 15): SPARQL count and exports after the first build" in done.stdout
