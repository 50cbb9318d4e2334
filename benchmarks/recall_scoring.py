"""What the recall benchmarks share (`locomo.py`, `memaware.py`): one way to score a context.

Both import a conversation into a fresh memory, build for every question and budget the context
a system would send, judge whether the answer is in it, and tally the judgements per group (a
LoCoMo category, a MemAware difficulty) and overall. What differs is the data, the judge and the
systems; this module is the rest:

- `remembered_turns` the checkpoints an import wrote, as `Turn`s by (raw log, line);
- `pack` and `render`: the turns a plain ranking (BM25) picked, best first into a budget, shown
  in time order under one line per date, as `Memory.context` packs its own;
- `score_questions`, the scoring loop, and `Tally`, the scores of one system at one budget;
- `budgets_summary` and `machine`: the JSON around the scores; `semantic_missing` and
  `report`: the command line's end.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from hipo_jupyter.memory import Memory  # noqa: E402
from hipo_jupyter.memory.disk import parse_log  # noqa: E402
from hipo_jupyter.memory.tree import count_tokens  # noqa: E402

Q = TypeVar("Q")


@dataclass(frozen=True)
class Turn:
    """One remembered turn as a context shows it."""

    day: str
    order: int  # position in the conversation, for time order within a day
    speaker: str
    text: str
    source: str = ""  # the checkpoint id: "<sample_id>:<dia_id>", "<session>:<number>"

    def line(self) -> str:
        return f"{self.speaker}: {' '.join(self.text.split())}"


def remembered_turns(memory: Memory) -> dict[tuple[str, int], Turn]:
    """Every checkpoint of `memory`'s raw logs as a `Turn`, keyed by (raw log, line), in time
    order: what a search hit (`hit.doc.path`, `hit.doc.line`) points at."""
    turns: dict[tuple[str, int], Turn] = {}
    order = 0
    for day in memory.store.raw_days():
        relative = f"memory/{day.isoformat()}.md"
        for checkpoint in parse_log(memory.read(relative), date=day.isoformat()):
            order += 1
            turns[(relative, checkpoint.line)] = Turn(
                day.isoformat(), order, checkpoint.title, checkpoint.text, checkpoint.id or ""
            )
    return turns


def header(day: str) -> str:
    return f"{day}:"


def render(turns: Iterable[Turn], prefix: str = "") -> str:
    lines = [prefix.rstrip()] if prefix.strip() else []
    day = None
    for turn in sorted(turns, key=lambda t: (t.day, t.order)):
        if turn.day != day:
            day = turn.day
            lines.append(header(day))
        lines.append(turn.line())
    return "\n".join(lines)


def pack(ranked: Sequence[Turn], budget: int, prefix: str = "") -> tuple[str, int]:
    """The best-first turns that fit `budget` tokens after `prefix`, rendered; and its tokens."""
    used = count_tokens(prefix) + 1 if prefix.strip() else 0
    days: set[str] = set()
    chosen: list[Turn] = []
    for turn in ranked:
        cost = count_tokens(turn.line()) + 1
        if turn.day not in days:
            cost += count_tokens(header(turn.day)) + 1
        if used + cost > budget:
            continue
        used += cost
        days.add(turn.day)
        chosen.append(turn)
    text = render(chosen, prefix)
    tokens = count_tokens(text)
    while tokens > budget and chosen:  # token counts of joined lines are not quite additive
        chosen.pop()
        text = render(chosen, prefix)
        tokens = count_tokens(text)
    return text, tokens


@dataclass
class Tally:
    """The scores of one system at one budget, per group and "all": each question adds one
    value of each of `scores` (named as the summary names them) and its tokens."""

    scores: tuple[str, ...]
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # group -> name ->

    def add(self, group: str, tokens: int, *scores: float) -> None:
        for key in (group, "all"):
            row = self.values.setdefault(key, {})
            for name, value in zip((*self.scores, "mean_tokens"), (*scores, tokens), strict=True):
                row.setdefault(name, []).append(value)

    def summary(self, key: str = "all") -> dict:
        row = self.values.get(key)
        if row is None:
            return {"questions": 0, **dict.fromkeys(self.scores, 0.0), "mean_tokens": 0}
        return {
            "questions": len(row["mean_tokens"]),
            **{name: round(statistics.fmean(row[name]), 4) for name in self.scores},
            "mean_tokens": round(statistics.fmean(row["mean_tokens"]), 1),
        }


ContextOf = Callable[[str, int], tuple[str, int]]  # (question, budget) -> (text, tokens)
Judge = Callable[[Q, str], tuple[str, tuple[float, ...]]]  # -> (group, scores)


def score_questions(
    questions: Sequence[Q],
    budgets: Sequence[int],
    context_of: ContextOf,
    judge: Judge,
    tallies: dict[int, Tally],
) -> dict[int, list[float]]:
    """The scoring loop: each question's context at every budget (`context_of` its text),
    judged and added to the budget's tally. Returns each budget's first score per question,
    in order (what cross-validation reads)."""
    firsts: dict[int, list[float]] = {budget: [] for budget in budgets}
    for question in questions:
        for budget in budgets:
            text, tokens = context_of(question.text, budget)  # type: ignore[attr-defined]
            group, scores = judge(question, text)
            tallies[budget].add(group, tokens, *scores)
            firsts[budget].append(scores[0])
    return firsts


def budgets_summary(tallies: dict[int, Tally], by: str, groups: Iterable[str]) -> dict[str, Any]:
    """A system's scores in the JSON: per budget, overall and `by` group."""
    return {
        str(budget): {**tally.summary(), by: {key: tally.summary(key) for key in groups}}
        for budget, tally in tallies.items()
    }


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }


def semantic_missing(script: str, system: str) -> bool:
    """Whether `system` asks for the `[semantic]` extra and it is missing: then said on stderr
    in one line before any work, not as a traceback after minutes of it."""
    from hipo_jupyter.memory.search.embed import semantic_available

    on, message = semantic_available()
    if not on:
        print(f"{script}: {system} needs the extra: {message}", file=sys.stderr)
    return not on


def report(result: dict, table: str, json_path: Path | None) -> None:
    """The table on stdout and, when asked, the whole result as JSON."""
    print(table)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
