"""benchmarks/scale.py's measurements: `%load_ext hipo` in fresh processes, `%recall`,
`%%remember` and the next-cell recall on a warm memory, sizes on disk, and cProfile of the hot
paths. Wall-clock on a shared machine: compare the columns of one run.
"""

from __future__ import annotations

import cProfile
import io
import json
import math
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from scale_memory import memory_config, synthetic_days  # noqa: E402

from hipo_jupyter.memory import Memory  # noqa: E402
from hipo_jupyter.memory.search.indexing import open_index  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Measurements.

LOAD_SCRIPT = r"""
import contextlib, io, json, os, sys, time
started = time.perf_counter()
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config
ipython_imported = time.perf_counter() - started
mode = sys.argv[2]
started = time.perf_counter()
if mode == "ipython":
    import hipo  # noqa: F401  (the %load_ext entry, and the engine under it)
else:
    from hipo_jupyter.memory import Memory, MemoryConfig
imported = time.perf_counter() - started
profile = None
if sys.argv[3]:
    import cProfile
    profile = cProfile.Profile()
backend, _, extra = sys.argv[1].partition("+")
if mode == "ipython":
    config = Config()
    config.Hipo.search_backend = backend
    config.Hipo.semantic = extra == "semantic"
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    started, cpu_started = time.perf_counter(), time.process_time()
    if profile:
        profile.enable()
    with contextlib.redirect_stdout(io.StringIO()) as screen:
        shell.run_line_magic("load_ext", "hipo")
    if profile:
        profile.disable()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    from hipo_jupyter.ipython.session import current
    startup = current(shell).startup
    built = len(startup.report.built) if startup.report else -1
    error = startup.error
else:
    started, cpu_started = time.perf_counter(), time.process_time()
    if profile:
        profile.enable()
    memory = Memory(
        os.environ["HIPO_ROOT"],
        config=MemoryConfig(search_backend=backend, semantic=extra == "semantic"),
    )
    report = memory.compact()
    memory.layer1()
    memory.status()
    if profile:
        profile.disable()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    built, error = len(report.built), None
if profile:
    profile.dump_stats(sys.argv[3])
print(json.dumps({"ipython_import_s": ipython_imported, "import_s": imported, "load_s": seconds,
                  "cpu_s": cpu, "built": built, "error": error}))
"""


# The memory the embedding model adds to a kernel (issue 35: at most 250 MB): a fresh interpreter
# loads the extension, recalls the query by keyword (what recall itself holds: the text index's
# pages, the documents read), then by meaning (the default, hybrid); resident set size after each.
RSS_SCRIPT = r"""
import contextlib, io, json, sys
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
config = Config()
config.HistoryManager.enabled = False
shell = InteractiveShell.instance(config=config)
with contextlib.redirect_stdout(io.StringIO()):
    shell.run_line_magic("load_ext", "hipo")
    before = rss_mb()
    shell.run_line_magic("recall", sys.argv[1] + " --mode keyword")
    keyword = rss_mb()
    view = shell.run_line_magic("recall", sys.argv[1])
    after = rss_mb()
print(json.dumps({"rss_before_mb": before, "rss_keyword_mb": keyword, "rss_after_mb": after,
                  "mode": view.mode}))
"""


def measure_model_rss(root: Path, end: date, query: str) -> dict:
    """RSS of a kernel after `%load_ext hipo`, after a keyword recall and after the same recall
    by meaning (the default settings), in a real subprocess; Linux only (/proc). The model's
    share is the last step; `first_recall_rss_mb` is both recalls."""
    with tempfile.TemporaryDirectory(prefix="hipo-ipython-") as ipython_dir:
        env = {key: value for key, value in os.environ.items() if key != "HIPO_SEMANTIC"}
        env.update(HIPO_ROOT=str(root), HIPO_TODAY=end.isoformat(), IPYTHONDIR=ipython_dir)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        done = subprocess.run(
            [sys.executable, "-c", RSS_SCRIPT, query],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"rss subprocess failed:\n{done.stderr[-2000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["model_rss_mb"] = found["rss_after_mb"] - found["rss_keyword_mb"]
    found["first_recall_rss_mb"] = found["rss_after_mb"] - found["rss_before_mb"]
    return found


def load_mode() -> str:
    """'ipython' when the extension imports, else 'engine' (the equivalent engine calls)."""
    try:
        import hipo  # noqa: F401
    except ImportError:
        return "engine"
    return "ipython"


def measure_load(root: Path, backend: str, end: date, runs: int, profile_to: str = "") -> dict:
    """`%load_ext hipo` in `runs` fresh interpreters; medians of import and load wall time."""
    mode = load_mode()
    samples = []
    with tempfile.TemporaryDirectory(prefix="hipo-ipython-") as ipython_dir:
        env = {
            **os.environ,
            "HIPO_ROOT": str(root),
            "HIPO_TODAY": end.isoformat(),
            "IPYTHONDIR": ipython_dir,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        for run in range(runs):
            target = profile_to if run == runs - 1 else ""
            done = subprocess.run(
                [sys.executable, "-c", LOAD_SCRIPT, backend, mode, target],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"load subprocess failed:\n{done.stderr[-2000:]}")
            samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {
        "load_mode": mode,
        "ipython_import_s": statistics.median(s["ipython_import_s"] for s in samples),
        "import_s": statistics.median(s["import_s"] for s in samples),
        "load_ext_s": statistics.median(s["load_s"] for s in samples),
        "load_ext_with_import_s": statistics.median(s["import_s"] + s["load_s"] for s in samples),
        "load_ext_cpu_s": statistics.median(s["cpu_s"] for s in samples),
        "load_ext_runs_s": [round(s["load_s"], 4) for s in samples],
        "load_nodes_built": max(s["built"] for s in samples),
        "load_error": next((s["error"] for s in samples if s["error"]), None),
    }


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


@dataclass
class Timings:
    """Milliseconds per call: wall clock (what a user waits) and this process's CPU time (what
    the work costs, less sensitive to other load on a shared machine)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def timed(calls: Iterator[Callable[[], object]], into: Timings | None = None) -> Timings:
    into = into or Timings()
    for call in calls:
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        into.cpu.append((time.process_time() - cpu_started) * 1000)
        into.wall.append((time.perf_counter() - started) * 1000)
    return into


def open_warm(root: Path, backend: str, end: date) -> Memory:
    """A Memory as a kernel holds it after `%load_ext hipo`: compacted, index synced, topics
    cached."""
    memory = Memory(root, config=memory_config(backend), today=lambda: end)
    memory.compact()
    memory.topics()
    return memory


def measure_session(
    root: Path,
    backend: str,
    end: date,
    queries: list[tuple[str, str, str]],
    samples: int,
    seed: int,
) -> dict:
    memory = open_warm(root, backend, end)
    layer1_tokens = memory.layer1().total_tokens
    found = checked = 0
    # The first recall of a session loads the embedding model (semantic recall only): timed
    # apart, so the percentiles are those of a kernel in use.
    first = timed(iter([lambda: memory.recall(queries[0][1], k=5, mode="auto")])).wall[0]

    def recall_one(query: tuple[str, str, str]) -> Callable[[], object]:
        def call() -> None:
            nonlocal found, checked
            result = memory.recall(query[1], k=5, mode="auto")
            if query[0] == "identifier":
                checked += 1
                found += any(hit.date == query[2] for hit in result.hits)

        return call

    recall = timed(recall_one(q) for q in queries)
    # Side by side on the same index, in turn per query so the machine's load weighs on each
    # alike: a bare index query (SearchIndex.search, limit 5: the FTS5 MATCH hipo builds, its
    # rows read, nothing else), %recall again, and the context a model is sent
    # (Memory.context, budget 2,000, keyword recall as the target asks).
    bare_index = open_index(memory.store.index_dir, memory.config.search_backend)
    bare, again, context = Timings(), Timings(), Timings()
    for query in queries:
        timed(iter([lambda q=query: bare_index.search(q[1], limit=5)]), bare)
        timed(iter([recall_one(query)]), again)
        timed(iter([lambda q=query: memory.context(q[1], budget=2000, mode="keyword")]), context)
    bare_index.close()
    rng = random.Random(seed + 1)
    fresh, _ = synthetic_days(end, 1, samples + 40, seed + 2)
    remember = timed(
        (lambda w=w: memory.remember(w.title, w.body, type=w.type, tags=w.tags))
        for w in fresh[0][:samples]
    )
    # The notebook's next cell: a recall, then a context, right after a %%remember.
    after, context_after = Timings(), Timings()
    picked = rng.sample(queries, min(20, len(queries)))
    for w, query in zip(fresh[0][samples : samples + 20], picked, strict=False):
        memory.remember(w.title, w.body, type=w.type, tags=w.tags)
        timed(iter([recall_one(query)]), after)
    for w, query in zip(fresh[0][samples + 20 :], picked, strict=False):
        memory.remember(w.title, w.body, type=w.type, tags=w.tags)
        context_one = [lambda q=query: memory.context(q[1], budget=2000, mode="keyword")]
        timed(iter(context_one), context_after)
    semantic = memory.semantic.status()[1] if memory.config.semantic else ""
    memory.close()
    return {
        "first_recall_ms": first,
        "semantic": semantic,
        "recall_p50_ms": statistics.median(recall.wall),
        "recall_p95_ms": percentile(recall.wall, 95),
        "recall_p95_cpu_ms": percentile(recall.cpu, 95),
        "remember_p50_ms": statistics.median(remember.wall),
        "remember_p95_ms": percentile(remember.wall, 95),
        "remember_p95_cpu_ms": percentile(remember.cpu, 95),
        "recall_after_remember_p50_ms": statistics.median(after.wall) if after.wall else None,
        "context_after_remember_p50_ms": (
            statistics.median(context_after.wall) if context_after.wall else None
        ),
        "context_after_remember_p50_cpu_ms": (
            statistics.median(context_after.cpu) if context_after.cpu else None
        ),
        "bare_p50_ms": statistics.median(bare.wall),
        "bare_p95_ms": percentile(bare.wall, 95),
        "bare_p95_cpu_ms": percentile(bare.cpu, 95),
        "recall_over_bare_p95_cpu": percentile(again.cpu, 95) / max(percentile(bare.cpu, 95), 1e-6),
        "recall_interleaved_p95_ms": percentile(again.wall, 95),
        "recall_over_bare_p95": percentile(again.wall, 95) / max(percentile(bare.wall, 95), 1e-6),
        "context_p50_ms": statistics.median(context.wall),
        "context_p95_ms": percentile(context.wall, 95),
        "context_p50_cpu_ms": statistics.median(context.cpu),
        "context_p95_cpu_ms": percentile(context.cpu, 95),
        "context_over_bare_p95_cpu": percentile(context.cpu, 95)
        / max(percentile(bare.cpu, 95), 1e-6),
        "identifier_found_at_5": round(found / checked, 3) if checked else None,
        "layer1_tokens": layer1_tokens,
    }


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------
# Profiles of the hot paths (load, recall, context, remember) at the largest size.


def top_functions(stats_path: str, limit: int = 15) -> str:
    buffer = io.StringIO()
    stats = pstats.Stats(stats_path, stream=buffer)
    stats.strip_dirs().sort_stats("cumulative").print_stats(limit)
    return buffer.getvalue()


def profile_hot_paths(
    root: Path, backend: str, end: date, queries: list[tuple[str, str, str]], out: Path, seed: int
) -> dict[str, str]:
    """cProfile of 200 recalls, 200 contexts (budget 2,000, keyword), 200 remembers and 20
    remember+recall pairs on a copy of `root`."""
    out.mkdir(parents=True, exist_ok=True)
    work = out / "memory-copy"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(root, work)
    paths = {"load": str(out / "load.prof")}
    measure_load(work, backend, end, 1, profile_to=paths["load"])
    memory = open_warm(work, backend, end)
    fresh, _ = synthetic_days(end, 1, 220, seed + 3)
    jobs = {
        "recall": lambda: [memory.recall(q[1], k=5) for q in queries],
        "context": lambda: [memory.context(q[1], budget=2000, mode="keyword") for q in queries],
        "remember": lambda: [
            memory.remember(w.title, w.body, type=w.type, tags=w.tags) for w in fresh[0][:200]
        ],
        "recall_after_remember": lambda: [
            (memory.remember(w.title, w.body, tags=w.tags), memory.recall(q[1], k=5))
            for w, q in zip(fresh[0][200:], queries, strict=False)
        ],
    }
    for name, job in jobs.items():
        profiler = cProfile.Profile()
        profiler.runcall(job)
        paths[name] = str(out / f"{name}.prof")
        profiler.dump_stats(paths[name])
    memory.close()
    shutil.rmtree(work)
    return {name: top_functions(path) for name, path in paths.items()}
