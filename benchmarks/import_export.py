"""`hipo import` of a large ChatGPT export: time and peak memory (issue 52, item 3).

Writes a synthetic `conversations.json` in ChatGPT's shape (the fixture of
tests/test_import_exports.py, each turn ~11 kB, conversations numbered so no two are alike),
then measures:

- reading: `plan_import` (the checking pass) and `ImportPlan.batches` (the writing pass's
  reading), in this process, with the peak of Python's allocations (tracemalloc) and the
  process's peak RSS;
- the whole command: `hipo import` as a process on a smaller export into a fresh root, its
  wall time and the child's peak RSS (`ru_maxrss`), compaction and indexing included.

    python benchmarks/import_export.py --read-mb 200 --import-mb 20

Nothing is downloaded; everything is written under a temporary folder and deleted.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]

from test_import_exports import write_large_export  # noqa: E402

from hipo_jupyter.memory.intake import plan_import  # noqa: E402


def reading(path: Path) -> dict[str, float]:
    started = time.perf_counter()
    plan = plan_import(path)
    checked = time.perf_counter() - started
    started = time.perf_counter()
    turns = sum(len(batch) for batch in plan.batches())
    batched = time.perf_counter() - started
    tracemalloc.start()
    plan_import(path)
    check_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    sum(len(batch) for batch in plan.batches())
    batch_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "conversations": plan.conversations,
        "turns": turns,
        "check_s": checked,
        "batches_s": batched,
        "check_peak_mb": check_peak / 2**20,
        "batches_peak_mb": batch_peak / 2**20,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def whole_command(path: Path, root: Path) -> dict[str, float]:
    root.mkdir()
    command = [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), "import", str(path)]
    env = {**os.environ, "HIPO_TODAY": "2026-03-12", "PYTHONPATH": str(HERE.parent)}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr)
    print(done.stdout.strip())
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"import_s": seconds, "import_rss_mb": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--read-mb", type=int, default=200)
    parser.add_argument("--import-mb", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "conversations.json"
        write_large_export(big, args.read_mb)
        size = big.stat().st_size / 2**20
        print(f"reading a {size:.0f} MB export:", reading(big))
        big.unlink()
        small = Path(folder) / "small" / "conversations.json"
        small.parent.mkdir()
        write_large_export(small, args.import_mb)
        size = small.stat().st_size / 2**20
        figures = whole_command(small, Path(folder) / "root")
        print(f"hipo import of a {size:.0f} MB export:", figures)


if __name__ == "__main__":
    main()
