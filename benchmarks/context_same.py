"""Do two checkouts give the same contexts and hits? The check behind a speed change.

    python benchmarks/context_same.py OUT [--memory DIR] [--code OTHER_CHECKOUT]
    diff OUT_main OUT_this   # nothing: the same answers

A change that only makes `Memory.context` cheaper (issue 49) must not change what it answers.
This records, as JSON lines, `Memory.context(q, budget=2000)`'s text and hits and
`Memory.recall(q)`'s hits (each hit's JSON, its checkpoint id left out: ids are drawn at
random when a memory is built; the fences' suffixes likewise, drawn per process) for

- with `--memory DIR` (`context_cpu.py build`'s memory, queries in `DIR-queries.json`): each
  query, keyword, in a copy of DIR (its index rebuilt by the code under test); with `--mode
  hybrid`, hybrid, the copy keeping DIR's index and vectors (embedded once);
- the notebook-memory set (`notebook_memory.py`: each scenario's memory built with that
  code), every question under every combination of stages `notebook_memory.grid()` scores, at
  500 and 2,000 tokens, then once more after a correction, a new note and a forget in that
  memory (a kept state must not outlive the write that changed it).

`--code` imports hipo_jupyter from another checkout (main, say), as `context_cpu.py` does.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
END = date(2026, 3, 12)  # context_cpu.py's memory's today
NONCE = re.compile(r"(</?hipo-[a-z0-9-]+?-)\d{12}(?=[ >])")  # a fence's suffix: new in each process


def _use(code: Path | None) -> None:
    """Import hipo_jupyter from `code` (another checkout) or this one."""
    for folder in (HERE, code or HERE.parent):
        sys.path.insert(0, str(folder))
    import hipo_jupyter  # now, before notebook_memory puts this checkout on the path

    print(f"hipo_jupyter from {Path(hipo_jupyter.__file__).parent}", file=sys.stderr)


def _hits(hits) -> list[dict]:
    return [{k: v for k, v in hit.to_json().items() if k != "id"} for hit in hits]


def _record(out, label: str, memory, query: str, budget: int, **kw) -> None:
    context = memory.context(query, budget=budget, **kw)
    keep = {key: value for key, value in kw.items() if key != "settings"}
    recall = memory.recall(query, **{k: v for k, v in keep.items() if k == "mode"})
    row = {"at": label, "q": query, "budget": budget, "mode": context.mode,
           "text": NONCE.sub(r"\1N", context.text),
           "context_hits": _hits(context.hits), "recall": _hits(recall.hits)}  # fmt: skip
    out.write(json.dumps(row, sort_keys=True) + "\n")


def scale(out, root: Path, mode: str = "keyword") -> None:
    from hipo_jupyter.memory import Memory, MemoryConfig

    queries = json.loads((root.parent / f"{root.name}-queries.json").read_text())
    hybrid = mode == "hybrid"  # DIR's index and vectors kept (`context_cpu.py --with-index`)
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "m"
        shutil.copytree(root, copy, ignore=None if hybrid else shutil.ignore_patterns(".index"))
        memory = Memory(copy, config=MemoryConfig(semantic=hybrid), today=lambda: END)
        try:
            for query in queries:
                _record(out, "scale", memory, query, 2000, mode=mode)
        finally:
            memory.close()


def notebook(out) -> None:
    import notebook_memory as nm

    data = json.loads(nm.DATA.read_text())
    today = date.fromisoformat(data["today"])
    grid = nm.grid()
    for scenario in data["scenarios"]:
        with tempfile.TemporaryDirectory() as folder:
            memory = nm.build(Path(folder), scenario, data["filler"], today, False)
            try:
                questions = [question["q"] for question in scenario["questions"]]
                for n, setting in enumerate(grid):
                    for query in questions:
                        for budget in (500, 2000):
                            _record(out, f"{scenario['name']}/{n}", memory, query, budget,
                                    layer1=False, mode="keyword", settings=setting)  # fmt: skip
                _writes(memory, questions[0], today)
                for query in questions:
                    _record(out, f"{scenario['name']}/written", memory, query, 2000,
                            layer1=True, mode="keyword")  # fmt: skip
            finally:
                memory.close()


def _writes(memory, query: str, today: date) -> None:
    """A new note on the question's words, a correction of the first hit, an agent's proposed
    correction of the third, a forget of the second: what every kept state must see."""
    from hipo_jupyter.memory.views.correcting import correct

    memory.remember("A note on " + query[:40], f"Newer: {query} (answered again)", on=today)
    hits = [hit for hit in memory.recall(query, k=5).hits if hit.kind == "raw"]
    ids = [hit.checkpoint_id for hit in hits if hit.checkpoint_id]
    if ids:
        correct(memory, ids[0], "", "Corrected: " + hits[0].snippet[:60], via="cli")
    if len(ids) > 2:
        correct(memory, ids[2], "", "Proposed: " + hits[2].snippet[:60], via="mcp")
    if len(ids) > 1:
        memory.forget(ids[1], via="cli")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--memory", type=Path, help="context_cpu.py's built memory")
    parser.add_argument("--code", type=Path, help="a checkout whose hipo_jupyter to run")
    parser.add_argument("--no-notebook", action="store_true", help="the scale memory only")
    parser.add_argument("--mode", choices=("keyword", "hybrid"), default="keyword",
                        help="the scale memory's mode (hybrid: its vectors kept)")  # fmt: skip
    args = parser.parse_args(argv)
    _use(args.code)
    with args.out.open("w") as out:
        if args.memory:
            scale(out, args.memory, args.mode)
        if not args.no_notebook:
            notebook(out)


if __name__ == "__main__":
    main()
