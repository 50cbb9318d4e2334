"""benchmarks/scale.py's report: the machine, the Markdown table and the targets of issues 2, 7
and 13 checked against the figures.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sqlite3
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


# Targets from issue 7, at one year on FTS5 with semantic recall on.
SEMANTIC_TARGETS = {"remember_p95_ms": 60.0, "recall_p95_ms": 30.0}

# Targets from issue 13, at one year on FTS5: %recall within this many times a bare index query
# on the same index in the same run, and the context of a question within this many ms.
RECALL_OVER_BARE = 5.0
CONTEXT_P95_MS = 25.0

# Targets from issue 2, at one year on FTS5.
TARGETS = {
    "remember_p95_ms": 50.0,
    "recall_p95_ms": 20.0,
    "load_ext_s": 0.5,
    "layer1_growth": 0.10,  # |tokens(1 year) / tokens(30 days) - 1|
}


# ---------------------------------------------------------------------------------------------
# Report.


def machine() -> dict:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        import whoosh

        whoosh_version = whoosh.versionstring()
    except ImportError:
        whoosh_version = None
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "whoosh": whoosh_version,
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


ROWS = (
    # (key, label, format)
    ("checkpoints", "checkpoints", "{:,}"),
    ("reindex_s", "index rebuild (s)", "{:.2f}"),
    ("ipython_import_s", "import IPython (s)", "{:.3f}"),
    ("import_s", "import hipo (s)", "{:.3f}"),
    ("load_ext_s", "`%load_ext hipo`, nothing dirty, after import (s)", "{:.3f}"),
    ("load_ext_cpu_s", "`%load_ext hipo` CPU time, after import (s)", "{:.3f}"),
    ("load_ext_with_import_s", "`%load_ext hipo` incl. import hipo (s)", "{:.3f}"),
    ("remember_p50_ms", "`%%remember` p50 (ms)", "{:.1f}"),
    ("remember_p95_ms", "`%%remember` p95 (ms)", "{:.1f}"),
    ("remember_p95_cpu_ms", "`%%remember` p95, CPU time (ms)", "{:.1f}"),
    ("first_recall_ms", "first `%recall` of a session (ms)", "{:.1f}"),
    ("rss_before_mb", "kernel RSS after `%load_ext hipo` (MB)", "{:.0f}"),
    ("model_rss_mb", "RSS the first recall by meaning adds after a keyword one (MB)", "{:.0f}"),
    ("first_recall_rss_mb", "RSS both first recalls add (MB)", "{:.0f}"),
    ("recall_p50_ms", "`%recall` p50 (ms)", "{:.1f}"),
    ("recall_p95_ms", "`%recall` p95 (ms)", "{:.1f}"),
    ("recall_p95_cpu_ms", "`%recall` p95, CPU time (ms)", "{:.1f}"),
    ("recall_after_remember_p50_ms", "`%recall` after a `%%remember`, p50 (ms)", "{:.1f}"),
    ("bare_p50_ms", "bare index query (FTS5 MATCH, limit 5) p50 (ms)", "{:.1f}"),
    ("bare_p95_ms", "bare index query p95 (ms)", "{:.1f}"),
    ("recall_interleaved_p95_ms", "`%recall` p95, in turn with the bare query (ms)", "{:.1f}"),
    ("recall_over_bare_p95", "`%recall` p95 / bare query p95", "{:.1f}x"),
    ("bare_p95_cpu_ms", "bare index query p95, CPU time (ms)", "{:.1f}"),
    ("recall_over_bare_p95_cpu", "`%recall` p95 / bare query p95, CPU time", "{:.1f}x"),
    ("context_p50_ms", "`Memory.context(budget=2000)` p50, keyword (ms)", "{:.1f}"),
    ("context_p95_ms", "`Memory.context(budget=2000)` p95, keyword (ms)", "{:.1f}"),
    ("context_p50_cpu_ms", "`Memory.context` p50, CPU time (ms)", "{:.1f}"),
    ("context_p95_cpu_ms", "`Memory.context` p95, CPU time (ms)", "{:.1f}"),
    ("context_over_bare_p95_cpu", "`Memory.context` p95 / bare query p95, CPU time", "{:.1f}x"),
    ("context_after_remember_p50_ms", "`Memory.context` after a `%%remember`, p50 (ms)", "{:.1f}"),
    ("context_after_remember_p50_cpu_ms", "... the same, CPU time (ms)", "{:.1f}"),
    ("identifier_found_at_5", "identifier queries found in top 5", "{:.0%}"),
    ("layer1_tokens", "Layer 1 tokens", "{:,}"),
    ("index_bytes", "index on disk (MB)", "{:.2f}"),
)


def _cell(value: object, fmt: str, key: str) -> str:
    if value is None:
        return "-"
    if key == "index_bytes":
        value = value / 1_000_000
    return fmt.format(value)


def _build_line(days: int, per_day: int, build: dict) -> str:
    return (
        f"- {days} days x {per_day}/day: {build['checkpoints']:,} checkpoints written in "
        f"{build['remember_all_s']:.1f} s through `Memory.remember` (FTS5), compacted in "
        f"{build['compact_s']:.1f} s ({build['nodes_built']} nodes, "
        f"{build['nodes_summarized']} summarized); raw logs {build['raw_bytes'] / 1e6:.1f} MB"
    )


def markdown(result: dict) -> str:
    sizes = result["sizes"]
    columns = [(s, b) for s in sizes for b in s["backends"]]
    head = "| metric | " + " | ".join(f"{s['days']} d, {b}" for s, b in columns) + " |"
    lines = [head, "|---" * (len(columns) + 1) + "|"]
    for key, label, fmt in ROWS:
        cells = []
        for size, backend in columns:
            value = (
                size["build"].get(key)
                if key == "checkpoints"
                else size["backends"][backend].get(key)
            )
            cells.append(_cell(value, fmt, key))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    builds = "\n".join(_build_line(s["days"], s["per_day"], s["build"]) for s in sizes)
    m = result["machine"]
    about = (
        f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']}, SQLite {m['sqlite']}, "
        f"Whoosh {m['whoosh']}, load average at start {m['load_average']}."
    )
    params = result["params"]
    about += (
        f" Synthetic memory: seed {params['seed']}, {params['topics']} topics, ending "
        f"{params['end']}; {params['samples']} recall and remember calls, load median of "
        f"{params['load_runs']} fresh processes ({_load_mode(result)})."
    )
    parts = [text, "", builds, "", about]
    if result.get("layer1_ratio") is not None:
        parts.append(
            f"Layer 1 tokens, {result['layer1_ratio']['days']} / {result['layer1_ratio']['base']} "
            f"days: {result['layer1_ratio']['ratio']:.3f}"
        )
    if result["targets"]:
        parts.append("")
        parts.append("Targets (largest size, FTS5):")
        for t in result["targets"]:
            verdict = "met" if t["met"] else f"MISSED by {t['value'] - t['limit']:.3g}"
            parts.append(f"- {t['name']}: {t['value']:.3g} (limit {t['limit']:.3g}) {verdict}")
    return "\n".join(parts)


def _load_mode(result: dict) -> str:
    modes = {b["load_mode"] for size in result["sizes"] for b in size["backends"].values()}
    if modes == {"ipython"}:
        return "`%load_ext hipo` in an IPython InteractiveShell"
    return "engine calls compact + layer1 + status: the IPython extension did not import"


def check_targets(result: dict) -> list[dict]:
    largest = max(result["sizes"], key=lambda s: s["days"])
    fts5 = largest["backends"].get("fts5")
    semantic = largest["backends"].get("fts5+semantic")
    targets = []
    if fts5 is not None:
        targets += [
            {"name": name, "value": fts5[name], "limit": limit, "met": fts5[name] < limit}
            for name, limit in TARGETS.items()
            if name in fts5
        ]
    if fts5 is not None and "recall_over_bare_p95" in fts5:
        targets += [
            {
                "name": "recall_p95 / bare FTS5 p95",
                "value": fts5["recall_over_bare_p95"],
                "limit": RECALL_OVER_BARE,
                "met": fts5["recall_over_bare_p95"] <= RECALL_OVER_BARE,
            },
            {
                "name": "context_p95_ms",
                "value": fts5["context_p95_ms"],
                "limit": CONTEXT_P95_MS,
                "met": fts5["context_p95_ms"] < CONTEXT_P95_MS,
            },
        ]
    if semantic is not None:
        targets += [
            {
                "name": f"{name} (fts5+semantic)",
                "value": semantic[name],
                "limit": limit,
                "met": semantic[name] < limit,
            }
            for name, limit in SEMANTIC_TARGETS.items()
        ]
    ratio = result.get("layer1_ratio")
    if ratio:
        growth = abs(ratio["ratio"] - 1)
        targets.append(
            {
                "name": "layer1_growth",
                "value": growth,
                "limit": TARGETS["layer1_growth"],
                "met": growth <= TARGETS["layer1_growth"],
            }
        )
    return targets
