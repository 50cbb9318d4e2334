"""benchmarks/scale.py: it runs end to end at a tiny size, and its synthetic memory is sound.

No timing is asserted anywhere: only the shape of the table and the JSON, and the generator's
determinism, so the benchmark cannot rot unnoticed between the runs that quote its figures.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from benchmark_helpers import load_benchmark

SCALE = Path(__file__).resolve().parent.parent / "benchmarks" / "scale.py"

METRICS = (
    "reindex_s",
    "index_bytes",
    "ipython_import_s",
    "import_s",
    "load_ext_s",
    "load_ext_with_import_s",
    "load_ext_cpu_s",
    "recall_p95_cpu_ms",
    "remember_p95_cpu_ms",
    "load_mode",
    "load_nodes_built",
    "remember_p50_ms",
    "remember_p95_ms",
    "recall_p50_ms",
    "recall_p95_ms",
    "recall_after_remember_p50_ms",
    "identifier_found_at_5",
    "layer1_tokens",
    "bare_p50_ms",
    "bare_p95_ms",
    "recall_interleaved_p95_ms",
    "recall_over_bare_p95",
    "context_p50_ms",
    "context_p95_ms",
    "context_p50_cpu_ms",
    "context_p95_cpu_ms",
    "context_after_remember_p50_ms",
    "context_after_remember_p50_cpu_ms",
)


def _load_scale():
    return load_benchmark("scale.py", "scale_benchmark")


@pytest.fixture(scope="module")
def scale():
    return _load_scale()


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, Path]:
    folder = tmp_path_factory.mktemp("scale")
    out = folder / "out.json"
    keep = folder / "kept"
    done = subprocess.run(
        [
            sys.executable,
            str(SCALE),
            "--days",
            "3",
            "--per-day",
            "3",
            "--backends",
            "fts5",
            "--samples",
            "12",
            "--load-runs",
            "1",
            "--json",
            str(out),
            "--keep",
            str(keep),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, json.loads(out.read_text()), keep


def test_prints_a_markdown_table_with_one_column_per_size_and_backend(tiny_run) -> None:
    stdout, _, _ = tiny_run
    lines = stdout.splitlines()
    assert lines[0] == "| metric | 3 d, fts5 |"
    assert lines[1] == "|---|---|"
    labels = [line.split("|")[1].strip() for line in lines[2:] if line.startswith("| ")]
    for label in (
        "`%load_ext hipo`, nothing dirty, after import (s)",
        "`%%remember` p95 (ms)",
        "`%recall` p50 (ms)",
        "`%recall` p95 (ms)",
        "Layer 1 tokens",
        "index on disk (MB)",
    ):
        assert label in labels
    assert "Machine: " in stdout and "Python " in stdout
    assert "Targets (largest size, FTS5):" in stdout


def test_json_holds_every_metric_the_machine_and_the_targets(tiny_run) -> None:
    _, result, _ = tiny_run
    assert result["params"]["days"] == [3] and result["params"]["backends"] == ["fts5"]
    assert {"nproc", "cpu", "python", "sqlite"} <= set(result["machine"])
    (size,) = result["sizes"]
    assert size["days"] == 3 and size["build"]["checkpoints"] == 9
    fts5 = size["backends"]["fts5"]
    assert set(METRICS) <= set(fts5)
    assert fts5["load_mode"] in ("ipython", "engine")
    assert fts5["load_nodes_built"] == 0, "load was measured on a memory that was still dirty"
    assert fts5["layer1_tokens"] > 0 and fts5["index_bytes"] > 0
    assert fts5["identifier_found_at_5"] == 1.0
    names = {t["name"] for t in result["targets"]}
    assert {"remember_p95_ms", "recall_p95_ms", "load_ext_s"} <= names
    assert {"recall_p95 / bare FTS5 p95", "context_p95_ms"} <= names  # issue 13
    assert all(isinstance(t["met"], bool) for t in result["targets"])


def test_keep_leaves_the_measured_memory_on_disk(tiny_run) -> None:
    _, _, keep = tiny_run
    memory = keep / "days-3" / "fts5" / "memory"
    assert (memory / "ROOT.md").is_file()
    assert (memory / ".index" / "fts5.sqlite3").is_file()
    assert sorted(p.name for p in memory.glob("2026-*.md")) == [
        "2026-03-10.md",
        "2026-03-11.md",
        "2026-03-12.md",
    ]


def test_synthetic_memory_is_deterministic_for_a_seed(scale) -> None:
    end = date(2026, 3, 12)
    first, pool = scale.synthetic_days(end, 5, 20, seed=3)
    again, pool_again = scale.synthetic_days(end, 5, 20, seed=3)
    other, _ = scale.synthetic_days(end, 5, 20, seed=4)
    assert first == again and pool == pool_again
    assert first != other
    assert [len(day) for day in first] == [20] * 5
    assert first[-1][0].day == end and first[0][0].day == date(2026, 3, 8)


def test_synthetic_checkpoints_look_like_real_work(scale) -> None:
    days, pool = scale.synthetic_days(date(2026, 3, 12), 30, 20, seed=7)
    checkpoints = [c for day in days for c in day]
    tags = {c.tags[0] for c in checkpoints}
    assert 8 <= len(tags) <= 12, "about ten topics in play"
    project = [c for c in checkpoints if c.type == "project"]
    for field in ("request", "analysis", "decisions", "outcome", "references"):
        assert all(f"- {field}: " in c.body for c in project)
    assert any(c.type == "feedback" for c in checkpoints)
    assert all("data/" in c.body or c.type == "feedback" for c in checkpoints)
    kinds = {kind for kind, _, _ in pool.items}
    assert kinds == {"topic", "phrase", "title", "identifier"}
    drawn = pool.draw(40, random.Random(1))
    assert [kind for kind, _, _ in drawn].count("identifier") == 10, "the kinds take turns"


def test_ten_topics_cycle_all_year_by_default(scale) -> None:
    days, _ = scale.synthetic_days(date(2026, 3, 12), 365, 20, seed=7)
    first_month = {c.tags[0] for day in days[:30] for c in day}
    whole_year = {c.tags[0] for day in days for c in day}
    assert len(first_month) == 10 and whole_year == first_month


def test_a_larger_pool_rotates_over_a_year(scale) -> None:
    pool = len(scale.THEMES)
    assert scale.active_themes(0, pool) != scale.active_themes(scale.ROTATE_EVERY_DAYS, pool)
    assert len(scale.active_themes(0, pool)) == scale.ACTIVE_THEMES
    seen = {t.tag for n in range(0, 365, 7) for t in scale.active_themes(n, pool)}
    assert seen == {t.tag for t in scale.THEMES}


def test_percentile_is_nearest_rank(scale) -> None:
    values = [float(v) for v in range(1, 101)]
    assert scale.percentile(values, 95) == 95.0
    assert scale.percentile(values, 50) == 50.0
    assert scale.percentile([7.0], 95) == 7.0


def test_the_hooks_benchmark_runs_end_to_end_at_a_tiny_size(tmp_path: Path) -> None:
    """benchmarks/hook_prompt.py (issue 52): real `hipo hook` processes on a small memory; the
    figures' shape only, and that the prompts found what was written."""
    out = tmp_path / "hooks.json"
    script = SCALE.with_name("hook_prompt.py")
    args = ["--days", "3", "--per-day", "4", "--runs", "3", "--keep", str(tmp_path / "m")]
    done = subprocess.run([sys.executable, str(script), *args, "--json", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text("utf-8"))
    assert figures["prompt"]["runs"] == 3 and figures["prompt"]["answered"] >= 1
    assert {"median_ms", "p95_ms", "cpu_p95_ms"} <= set(figures["prompt"])
    assert 0 < figures["session_start"]["context_chars"] < 10_000
    assert figures["session_end"]["runs"] >= 3
