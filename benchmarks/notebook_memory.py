"""Notebook memory: is the answer's text in the context, and are the negatives kept?

    python benchmarks/notebook_memory.py [benchmarks/data/notebook-memory.json] \\
        [--budget 500] [--mode keyword|auto] [--json OUT]

Issue 49: recall's stages were judged on conversations (LoCoMo, MemAware) and on whether the
evidence's conversation was present, not its answer. This set is what a notebook holds (runs
of one experiment on several days, pasted tracebacks and DataFrame dumps, debugging questions,
imported chats, plans and their reversals, standups, an agent's notes), each scenario in its
own memory among the same filler notes. Each question is asked with `Memory.context` (what
`%%ask` and `hipo recall --context` send) and scored on:

- answer: every `expect` text is in the context's text;
- negatives: no `absent` text was brought in, no `not_marked` text is on a piece that says
  "changed later", and every `marked` text is (a reversal must still be marked).

Every combination of `RecallSettings` stages (second hop, implicit needs, time span, and the
imported reply's passage: 0 or 30 tokens) is scored on the same memories (the settings are
passed per call, nothing is patched), then leave one scenario out: each scenario is answered
with the combination best on the others (answer + negatives, the shipped default first on a
tie). It prints the dev figure of every combination, the shipped default's, and the
cross-validated one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from dataclasses import asdict
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from hipo_jupyter.memory import Memory, MemoryConfig, RecallSettings  # noqa: E402
from hipo_jupyter.memory.intake.importers import ImportRecord  # noqa: E402
from hipo_jupyter.memory.recall.supersession import CHANGED_LATER  # noqa: E402

DATA = HERE / "data" / "notebook-memory.json"
FILLER_DAYS = 60


def filler(spec: dict, today: date) -> list[tuple[str, str, date]]:
    """(title, body, day) of the notes every scenario's memory holds beside its own: runs of
    other experiments, other tracebacks, syncs; one to three a day over FILLER_DAYS."""
    notes = []
    for n in range(FILLER_DAYS):
        day = today - timedelta(days=FILLER_DAYS - n)
        experiment = spec["experiments"][n % len(spec["experiments"])]
        notes.append((f"{experiment} run {n}", f"Trained the {experiment} (seed {n}): "
                      f"F1 0.{60 + n % 30}, recall 0.{50 + n % 40}.", day))  # fmt: skip
        if n % 2 == 0:
            error = spec["errors"][n % len(spec["errors"])]
            notes.append((f"{experiment} error", f"Traceback in the {experiment} job:\n{error}",
                          day))  # fmt: skip
        if n % 3 == 0:
            notes.append((f"Weekly sync {n}", spec["syncs"][n % len(spec["syncs"])], day))
    return notes


def build(root: Path, scenario: dict, spec: dict, today: date, semantic: bool) -> Memory:
    """One scenario's memory: the filler, its imported chats, then its own notes."""
    memory = Memory(root, config=MemoryConfig(semantic=semantic), today=lambda: today)
    for title, body, day in filler(spec, today):
        memory.remember(title, body, on=day, via="magic")
    records = [
        ImportRecord(date.fromisoformat(chat["day"]), "user", chat["body"], chat["source"],
                     reply=chat["reply"])  # fmt: skip
        for chat in scenario.get("imports", [])
    ]
    if records:
        memory.import_records(records)
    for note in scenario["notes"]:
        memory.remember(note["title"], note["body"], on=note["day"], type=note.get("type"),
                        via=note.get("via", "magic"))  # fmt: skip
    if semantic:
        memory.semantic.wait_idle()
    return memory


def judge(text: str, question: dict) -> tuple[int, int, int]:
    """(answered, negatives kept, negatives asked) for one context's text."""
    answered = int(all(expected in text for expected in question.get("expect", [])))
    pieces = _pieces(text)
    kept = asked = 0
    for absent in question.get("absent", []):
        asked += 1
        kept += absent not in text
    for name, want in (("not_marked", False), ("marked", True)):
        for needle in question.get(name, []):
            holding = [piece for piece in pieces if needle in piece]
            if not holding and want:
                asked += 1  # a reversal that is not even there is not marked
                continue
            asked += len(holding)
            kept += sum((CHANGED_LATER in piece) == want for piece in holding)
    return answered, kept, asked


def _pieces(text: str) -> list[str]:
    """The context's pieces, each with its indented continuation lines."""
    pieces: list[str] = []
    for line in text.splitlines():
        if line.startswith("  ") and pieces:
            pieces[-1] += "\n" + line
        else:
            pieces.append(line)
    return pieces


def grid() -> list[RecallSettings]:
    """Every combination of the stages, the shipped default first."""
    shipped = RecallSettings()
    combos = [
        RecallSettings(second_hop=hop, implicit_needs=need, time_span=span,
                       reply_passage_tokens=reply)  # fmt: skip
        for hop, need, span, reply in itertools.product(
            (False, True), (False, True), (False, True), (30, 0)
        )
    ]
    return [shipped, *[combo for combo in combos if combo != shipped]]


def name(settings: RecallSettings) -> str:
    on = [key for key, value in asdict(settings).items() if value is True]
    return f"{'+'.join(on) or 'no stage'}, reply {settings.reply_passage_tokens}"


def run(data: dict, budget: int, mode: str) -> dict:
    """scenario -> settings index -> (answered, questions, kept, asked)."""
    today = date.fromisoformat(data["today"])
    settings = grid()
    results: dict[str, list[tuple[int, int, int, int]]] = {}
    for scenario in data["scenarios"]:
        with tempfile.TemporaryDirectory() as folder:
            memory = build(Path(folder), scenario, data["filler"], today, mode != "keyword")
            try:
                row = []
                for setting in settings:
                    totals = [0, 0, 0, 0]
                    for question in scenario["questions"]:
                        text = memory.context(question["q"], budget=budget, layer1=False,
                                              mode=mode, settings=setting).text  # fmt: skip
                        answered, kept, asked = judge(text, question)
                        totals = [totals[0] + answered, totals[1] + 1, totals[2] + kept,
                                  totals[3] + asked]  # fmt: skip
                    row.append(tuple(totals))
                results[scenario["name"]] = row
            finally:
                memory.close()
    return {"settings": [name(s) for s in settings], "results": results}


def score(rows: list[tuple[int, int, int, int]]) -> tuple[float, float]:
    answered = sum(r[0] for r in rows) / max(1, sum(r[1] for r in rows))
    kept = sum(r[2] for r in rows) / max(1, sum(r[3] for r in rows))
    return answered, kept


def report(found: dict) -> str:
    names, results = found["settings"], found["results"]
    scenarios = list(results)
    lines = ["| settings | answer (dev) | negatives kept (dev) |", "|---|---|---|"]
    dev = []
    for index, label in enumerate(names):
        answered, kept = score([results[s][index] for s in scenarios])
        dev.append(answered + kept)
        lines.append(f"| {label}{' (shipped)' if index == 0 else ''} | {answered:.3f} | "
                     f"{kept:.3f} |")  # fmt: skip
    held: list[tuple[int, int, int, int]] = []
    chosen = []
    for out in scenarios:
        rest = [s for s in scenarios if s != out]

        def merit(index: int, rest: list[str] = rest) -> float:
            return sum(score([results[s][index] for s in rest]))

        best = max(range(len(names)), key=lambda i: (merit(i), -i))
        chosen.append(names[best])
        held.append(results[out][best])
    answered, kept = score(held)
    lines.append(f"\nleave one scenario out: answer {answered:.3f}, negatives kept {kept:.3f}")
    lines.append("chosen per fold: " + "; ".join(dict.fromkeys(chosen)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--mode", choices=("keyword", "auto"), default="keyword")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    found = run(json.loads(args.data.read_text()), args.budget, args.mode)
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))
    print(f"notebook memory, {args.mode}, {args.budget} tokens")
    print(report(found))


if __name__ == "__main__":
    main()
