"""CPU time of `Memory.context(question, budget=2000)` at 10,000 notes: before and after.

    python benchmarks/context_cpu.py build /tmp/ctx --notes 10000
    python benchmarks/context_cpu.py time /tmp/ctx [--code /tmp/main-src] [--mode keyword]
        [--with-index] [--queries FILE]
    python benchmarks/context_cpu.py length /tmp/len [--code /tmp/main-src]

Issue 49: the second hop made a context's cost grow with the length of every candidate's text,
and the three context stages doubled keyword's tail. `build` writes `scale_memory.py`'s
synthetic memory (20 notes a day, each day's in one `Memory.remember_all`, then one
compaction) and the queries it suggests; `time` opens a copy of it with the code of `--code`
(another checkout, for a before and after in one run: its index is rebuilt by that code) and
measures the CPU time (`time.process_time`) of `Memory.context` for each query, after one
warm-up pass, and prints p50 / p95 / max in ms.

`time --queries FILE` times another memory with its own questions: MemAware's dev memory
(`memaware.py --keep DIR`: 7,061 imported chat turns, 5,420 topics) with its 300 questions
(`../shared/benchmarks/memaware/questions-dev.json`), what a memory of real chats costs.

`length` asks whether the cost grows with the candidates' length (issue 49: at most 3x from
short to long): two memories of the same 300 runs of one experiment, each note 300 or 20,000
characters, every note a candidate of every query; one context reads the texts, then each of
LENGTH_QUERIES new questions is timed; it prints each p50 and long / short.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
END = date(2026, 3, 12)


def _use(code: Path | None) -> None:
    """Import hipo_jupyter from `code` (another checkout) or this one."""
    for folder in (HERE, code or HERE.parent):
        sys.path.insert(0, str(folder))


def build(root: Path, notes: int, seed: int) -> None:
    _use(None)
    from scale_memory import memory_config, synthetic_days

    from hipo_jupyter.memory import Memory

    days, pool = synthetic_days(END, notes // 20, 20, seed)
    memory = Memory(root, config=memory_config("fts5"), today=lambda: END)
    try:  # a day's notes in one append (`remember_all`): the same logs, built in minutes
        for day in days:
            pieces = [(f"{w.title} [{w.type}] {' '.join('#' + t for t in w.tags)}", w.body)
                      for w in day]  # fmt: skip
            memory.remember_all(pieces, on=day[0].day)
        memory.compact()
    finally:
        memory.close()
    queries = [text for _, text, _ in pool.draw(120, __import__("random").Random(seed))]
    (root.parent / f"{root.name}-queries.json").write_text(json.dumps(queries))


def questions(path: Path) -> list[str]:
    """The questions of a JSON file: a list of strings (`build`'s), or of objects with a
    "question" (MemAware's questions file: a memory of imported chats and its users' asks)."""
    items = json.loads(path.read_text())
    return [item["question"] if isinstance(item, dict) else item for item in items]


def measure(
    root: Path, code: Path | None, mode: str, with_index: bool = False, asked: Path | None = None
) -> None:
    _use(code)
    from hipo_jupyter.memory import Memory, MemoryConfig

    queries = questions(asked or root.parent / f"{root.name}-queries.json")
    copy = root.parent / f"{root.name}-copy"
    if copy.exists():
        shutil.rmtree(copy)
    # `with_index`: the copy keeps DIR's index (its vectors embedded once, for hybrid: two
    # checkouts whose index is the same, timed without embedding 10,000 notes each)
    shutil.copytree(root, copy, ignore=None if with_index else shutil.ignore_patterns(".index"))
    memory = Memory(copy, config=MemoryConfig(semantic=mode != "keyword"), today=lambda: END)
    try:
        for query in queries[:10]:  # warm: the index, caches
            memory.context(query, budget=2000, mode=mode)
        spent = []
        for query in queries:
            start = time.process_time()
            memory.context(query, budget=2000, mode=mode)
            spent.append((time.process_time() - start) * 1000)
    finally:
        memory.close()
        shutil.rmtree(copy)
    spent.sort()
    p95 = spent[int(0.95 * (len(spent) - 1))]
    print(f"{code or 'this checkout'}: {len(spent)} contexts, {mode}, CPU ms p50 "
          f"{statistics.median(spent):.1f} / p95 {p95:.1f} / max {spent[-1]:.1f}")  # fmt: skip


LENGTH_QUERIES = [
    "which churn run had the best auc", "churn retention model", "churn run data drift",
    "retention cohort churn", "best churn model window", "churn label schema",
    "churn runs report", "auc of the churn pipeline",
]  # fmt: skip
LENGTH_WORDS = ["model", "feature", "pipeline", "schema", "report", "cohort", "metric",
                "batch", "table", "window", "label", "drift"]  # fmt: skip


def length(root: Path, code: Path | None) -> None:
    _use(code)
    import random
    from datetime import timedelta

    from hipo_jupyter.memory import Memory, MemoryConfig

    medians = {}
    for chars in (300, 20_000):
        folder = root / str(chars)
        if folder.exists():
            shutil.rmtree(folder)
        rng = random.Random(1)
        memory = Memory(folder, config=MemoryConfig(semantic=False), today=lambda: END)
        try:
            for day in range(30):
                notes = []
                for n in range(day * 10, day * 10 + 10):
                    lines = [f"- auc: 0.{70 + n % 30}", f"Churn run {n} on the retention data."]
                    while sum(map(len, lines)) < chars:
                        lines.append(" ".join(rng.choice(LENGTH_WORDS) for _ in range(12)) + ".")
                    notes.append((f"churn run {n}", "\n".join(lines)))
                memory.remember_all(notes, on=END - timedelta(days=30 - day))
            memory.context("churn", budget=2000, mode="keyword")  # the texts read once
            spent = []
            for query in LENGTH_QUERIES:
                start = time.process_time()
                memory.context(query, budget=2000, mode="keyword")
                spent.append((time.process_time() - start) * 1000)
        finally:
            memory.close()
            shutil.rmtree(folder)
        medians[chars] = statistics.median(spent)
    print(f"{code or 'this checkout'}: 300 notes as candidates, CPU ms p50 {medians[300]:.1f} at "
          f"300 characters, {medians[20_000]:.1f} at 20,000: "
          f"{medians[20_000] / medians[300]:.1f}x")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("build", "time", "length"))
    parser.add_argument("root", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--code", type=Path, help="a checkout whose hipo_jupyter to time")
    parser.add_argument("--mode", choices=("keyword", "hybrid"), default="keyword")
    parser.add_argument("--with-index", action="store_true",
                        help="keep DIR's built index (and vectors) in the copy")  # fmt: skip
    parser.add_argument("--queries", type=Path,
                        help="the questions (default DIR-queries.json): a JSON list of strings "
                             "or of {question: ...}, as MemAware's questions file")  # fmt: skip
    args = parser.parse_args(argv)
    if args.step == "build":
        build(args.root, args.notes, args.seed)
    elif args.step == "length":
        length(args.root, args.code)
    else:
        measure(args.root, args.code, args.mode, args.with_index, args.queries)


if __name__ == "__main__":
    main()
