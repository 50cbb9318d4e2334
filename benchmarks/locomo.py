"""Recall on LoCoMo: is the evidence in the context when the context is a few thousand tokens?

    python benchmarks/locomo.py locomo-dev.json --json out.json --plot docs/locomo.png
    python benchmarks/locomo.py locomo-dev.json --semantic    # adds hipo_semantic to the run

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0, so never committed here: the path is an
argument) is long two-person conversations over many sessions, with questions whose evidence
turns are marked. For each conversation the benchmark imports it into a fresh memory folder with
`hipo import`'s engine call (`Memory.import_records`: one checkpoint per turn in the raw log of
its session's date, then the compaction chain), with "today" the day after the last session, and
for every question of categories 1-4 builds the context a model would be given within a token
budget (500, 1000, 2000, 4000 tokens, counted with `hipo_jupyter.memory.tree.tokens.count_tokens`):

- `hipo`: exactly what a user gets, `Memory.context(question, budget=...)` (the call behind
  `%%ask --recall`, `hipo recall --context` and the server's `budget=`): Layer 1 (at most an
  eighth of the budget), then the recalled memory fenced as data (Topics Index, the daily
  nodes' match, named periods and speakers, recency, the turns around each hit); its JSON says
  `"via": "Memory.context"`;
- `bm25`: plain BM25 over the turns (`SearchIndex.search` on the same index, raw checkpoints
  only: no tree, no topics, no recency, no Layer 1);
- `full_context`: every turn (evidence recall 1 by construction), to show what that costs;
- `hipo_whoosh`: `hipo` with the Whoosh search backend;
- `hipo_semantic` (`--semantic`, needs the `[semantic]` extra): `hipo` with semantic recall, its
  own memory whose turns are embedded at import (all-MiniLM-L6-v2), recalled in hybrid mode with
  the default score fusion (each turn's similarity added to its keyword relevance, then the same
  query handling and neighbours);
- `hipo_semantic_rrf` (with `--semantic`): the same memory and vectors, hybrid by reciprocal rank
  fusion of the keyword and vector rankings (`fusion="rrf"`).

`hipo`, `bm25` and `hipo_whoosh` run with semantic recall off, so they measure the same thing
whether the extra is installed or not.

`bm25` and `full_context` render the turns they picked in time order under one line per date
(`2023-05-08:` then `Caroline: ...`), packed best first while they fit (a part that does not fit is
skipped and the next tried); the hipo systems' text is `Memory.context`'s own, which packs the same
way and adds the fence and each piece's source. A question's evidence counts as found when the text
of the evidence turn appears in the context. Scores per category (1 multi-hop, 2 temporal, 3
open-domain, 4 single-hop) and overall: evidence recall (share of evidence turns found, averaged
over questions), all-evidence rate (share of questions with every evidence turn found) and the mean
tokens used. Category 5 (adversarial, unanswerable) is left out, as in LoCoMo's own recall
figures.

Data defects (PROVENANCE.md) are handled, and counted in the JSON under "defects": evidence
strings holding several ids ("D8:6; D9:17") are split; ids with a stray colon or zero padding
("D:11:26", "D30:05") are normalised; ids that name no turn ("D", a turn that does not exist)
are dropped; a question left with no evidence is not scored.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import recall_scoring as scoring  # noqa: E402
from recall_scoring import ContextOf, Turn, pack, remembered_turns, render  # noqa: E402

from hipo_jupyter.memory import DEFAULT_SETTINGS, Memory, MemoryConfig, RecallSettings  # noqa: E402
from hipo_jupyter.memory.intake.importers import ImportRecord, locomo_turns  # noqa: E402
from hipo_jupyter.memory.search.contract import SearchIndex  # noqa: E402
from hipo_jupyter.memory.search.indexing import open_index  # noqa: E402
from hipo_jupyter.memory.tree.tokens import count_tokens, truncate_to_tokens  # noqa: E402

BUDGETS = (500, 1000, 2000, 4000)  # `run(budgets=...)` takes others (crossval: one)
CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
SYSTEMS = ("hipo", "bm25", "full_context", "hipo_whoosh")
SEMANTIC_SYSTEM = "hipo_semantic"
SEMANTIC_SYSTEMS = (SEMANTIC_SYSTEM, "hipo_semantic_rrf")
KNOWN_SYSTEMS = (*SYSTEMS, *SEMANTIC_SYSTEMS)
TARGET_AT_2000 = 0.90  # issue 5: all-evidence rate of `hipo` at a 2,000-token budget
CANDIDATES = 150  # bm25: hits asked per question, more turns than the largest budget holds
VIA = {"bm25": "SearchIndex.search", "full_context": "every turn"}  # the rest: Memory.context

# "D8:6", "D:11:26" (stray colon), "D30:05" (zero padding) -> "D8:6", "D11:26", "D30:5"
_DIA_ID = re.compile(r"D:?0*(\d+):0*(\d+)\Z")


# ---------------------------------------------------------------------------------------------
# The data.


@dataclass(frozen=True)
class Question:
    text: str
    category: str  # "1".."4"
    evidence: tuple[str, ...]  # dia ids that name turns of the conversation


@dataclass
class Conversation:
    sample_id: str
    records: list[ImportRecord]
    turn_text: dict[str, str]  # dia id -> the turn's text
    questions: list[Question]
    defects: Counter = field(default_factory=Counter)


def normalize_dia_id(raw: str) -> str | None:
    """A LoCoMo dialogue id in its canonical form, or None when it is not one."""
    match = _DIA_ID.match(raw.strip())
    return f"D{int(match.group(1))}:{int(match.group(2))}" if match else None


def evidence_ids(evidence: Iterable[str], defects: Counter | None = None) -> list[str]:
    """The evidence list as canonical ids: "D8:6; D9:17" split, "D:11:26" and "D30:05" fixed,
    malformed ones ("D") dropped; the fixes are counted in `defects` when given."""
    defects = defects if defects is not None else Counter()
    ids: list[str] = []
    for item in evidence:
        parts = [p for p in re.split(r"[;,\s]+", str(item)) if p]
        if len(parts) > 1:
            defects["multi_id_evidence_strings"] += 1
        for part in parts:
            canonical = normalize_dia_id(part)
            if canonical is None:
                defects["malformed_ids_dropped"] += 1
                continue
            if canonical != part:
                defects["ids_normalised"] += 1
            if canonical not in ids:
                ids.append(canonical)
    return ids


def load_conversations(path: Path) -> list[Conversation]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    samples = data if isinstance(data, list) else [data]
    conversations = []
    for number, sample in enumerate(samples, start=1):
        sample_id = str(sample.get("sample_id") or f"locomo-{number}")
        records = locomo_turns(sample["conversation"], sample_id, sample_id)
        turn_text = {}
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    canonical = normalize_dia_id(turn.get("dia_id", ""))
                    if canonical and turn.get("text", "").strip():
                        turn_text[canonical] = turn["text"]
        defects: Counter = Counter()
        questions = []
        for qa in sample.get("qa", []):
            category = str(qa.get("category"))
            if category not in CATEGORIES:
                continue
            ids = evidence_ids(qa.get("evidence") or [], defects)
            known = [i for i in ids if i in turn_text]
            defects["missing_turn_ids_dropped"] += len(ids) - len(known)
            if not known:
                defects["questions_without_evidence"] += 1
                continue
            questions.append(Question(qa["question"], category, tuple(known)))
        conversations.append(Conversation(sample_id, records, turn_text, questions, defects))
    return conversations


# ---------------------------------------------------------------------------------------------
# Contexts: parts picked best first, packed into a budget, rendered in time order.


def normalize(text: str) -> str:
    return " ".join(text.split())


def evidence_found(context: str, texts: Sequence[str]) -> int:
    flat = normalize(context)
    return sum(1 for text in texts if normalize(text) in flat)


# ---------------------------------------------------------------------------------------------
# Systems: a memory per conversation and backend, and a ranking per question.


class ConversationMemory:
    """A conversation imported into a fresh memory folder, and its turns by location."""

    def __init__(
        self,
        conversation: Conversation,
        folder: Path,
        backend: str,
        semantic: bool = False,
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> None:
        """`settings`: what every `Memory.context` of it asks (the shipped ones: what users
        get, unless `run(settings=...)` passes others, as `crossval.py` does)."""
        self.settings = settings
        last = max(record.day for record in conversation.records)
        self.today = lambda: last + timedelta(days=1)
        self.memory = Memory(
            folder,
            config=MemoryConfig(search_backend=backend, semantic=semantic),
            today=self.today,
        )
        started = time.perf_counter()
        self.memory.import_records(conversation.records)
        self.setup_seconds = time.perf_counter() - started
        self.turns = remembered_turns(self.memory)
        self.layer1 = self.memory.layer1().text
        self.backend = backend
        self._index: SearchIndex | None = None
        self._rrf: Memory | None = None

    def all_turns(self) -> list[Turn]:
        return sorted(self.turns.values(), key=lambda t: t.order)

    def hipo(self, question: str, budget: int) -> tuple[str, int]:
        """What a user gets: `Memory.context`'s text and tokens, keyword recall."""
        context = self.memory.context(question, budget=budget, mode="keyword",
                                      settings=self.settings)  # fmt: skip
        return context.text, context.tokens

    def hipo_semantic(
        self, question: str, budget: int, memory: Memory | None = None
    ) -> tuple[str, int]:
        memory = memory or self.memory
        context = memory.context(question, budget=budget, mode="hybrid", settings=self.settings)
        if context.mode != "hybrid":
            raise SystemExit(f"locomo: semantic recall is off: {memory.semantic.status()[1]}")
        return context.text, context.tokens

    def hipo_semantic_rrf(self, question: str, budget: int) -> tuple[str, int]:
        """hipo_semantic with reciprocal rank fusion instead of score fusion: the same folder
        and vectors, opened a second time with `fusion="rrf"`."""
        if self._rrf is None:
            self._rrf = Memory(
                self.memory.root,
                config=replace(self.memory.config, fusion="rrf"),
                today=self.today,
            )
        return self.hipo_semantic(question, budget, self._rrf)

    def bm25(self, question: str) -> list[Turn]:
        if self._index is None:  # the same index, opened again and searched directly
            self._index = open_index(self.memory.store.index_dir, self.backend)
        hits = self._index.search(question, limit=CANDIDATES, kinds={"raw"})
        return [self.turns[(h.doc.path, h.doc.line)] for h in hits]

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        if self._rrf is not None:
            self._rrf.close()
        self.memory.close()


@dataclass
class Tally(scoring.Tally):
    """Scores of one system at one budget, per category: the share of a question's evidence
    turns found, and whether all were."""

    scores: tuple[str, ...] = ("evidence_recall", "all_evidence_rate")


Rank = Callable[[str], list[Turn]]


def score(
    conversation: Conversation,
    rank: Rank | None,
    tallies: dict[int, Tally],
    *,
    prefix: str = "",
    everything: list[Turn] | None = None,
    context_of: ContextOf | None = None,
    budgets: Sequence[int] = BUDGETS,
    layer1_share: float = DEFAULT_SETTINGS.layer1_share,
) -> None:
    """Build each question's context at every budget and add its scores to `tallies`:
    `context_of` (the hipo systems: `Memory.context`, what users get), else the turns `rank`
    gives packed by `pack`, else `everything`."""
    if context_of is None and everything is not None:
        whole = render(everything)
        context_of = lambda question, budget: (whole, count_tokens(whole))  # noqa: E731
    elif context_of is None:
        ranked = functools.lru_cache(maxsize=1)(rank or (lambda question: []))

        def context_of(question: str, budget: int) -> tuple[str, int]:
            cut = truncate_to_tokens(prefix, int(budget * layer1_share)) if prefix else ""
            return pack(ranked(question), budget, cut)

    def judge(question: Question, context: str) -> tuple[str, tuple[float, bool]]:
        texts = [conversation.turn_text[i] for i in question.evidence]
        found = evidence_found(context, texts)
        return question.category, (found / len(texts), found == len(texts))

    scoring.score_questions(conversation.questions, budgets, context_of, judge, tallies)


def run(
    path: Path,
    systems: Sequence[str] = SYSTEMS,
    workdir: Path | None = None,
    *,
    settings: RecallSettings = DEFAULT_SETTINGS,
    budgets: Sequence[int] = BUDGETS,
) -> dict:
    """Every system on every conversation of `path`, at `budgets`; the hipo systems' contexts
    ask `settings` (`RecallSettings`: the shipped ones unless `crossval.py` passes others)."""
    conversations = load_conversations(path)
    tallies = {name: {budget: Tally() for budget in budgets} for name in systems}
    seconds = Counter()
    setup = Counter()
    defects: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="hipo-locomo-") as temporary:
        base = Path(workdir or temporary)
        for conversation in conversations:
            defects.update(conversation.defects)
            memories: dict[str, ConversationMemory] = {}
            for backend in ("fts5", "whoosh", "semantic"):
                if backend == "whoosh" and "hipo_whoosh" not in systems:
                    continue
                if backend == "semantic" and not set(SEMANTIC_SYSTEMS) & set(systems):
                    continue
                folder = base / f"{conversation.sample_id}-{backend}"
                shutil.rmtree(folder, ignore_errors=True)
                memories[backend] = ConversationMemory(
                    conversation,
                    folder,
                    "fts5" if backend == "semantic" else backend,
                    semantic=backend == "semantic",
                    settings=settings,
                )
            fts5 = memories["fts5"]
            plans: dict[str, dict] = {
                "hipo": {"context_of": fts5.hipo},
                "bm25": {"rank": fts5.bm25},
                "full_context": {"everything": fts5.all_turns()},
            }
            if "whoosh" in memories:
                plans["hipo_whoosh"] = {"context_of": memories["whoosh"].hipo}
            if "semantic" in memories:
                semantic = memories["semantic"]
                plans[SEMANTIC_SYSTEM] = {"context_of": semantic.hipo_semantic}
                plans["hipo_semantic_rrf"] = {"context_of": semantic.hipo_semantic_rrf}
                for name in SEMANTIC_SYSTEMS:
                    setup[name] += semantic.setup_seconds
            setup["hipo"] += fts5.setup_seconds
            if "whoosh" in memories:
                setup["hipo_whoosh"] += memories["whoosh"].setup_seconds
            for name in systems:
                plan = plans[name]
                started = time.perf_counter()
                score(
                    conversation,
                    plan.get("rank"),
                    tallies[name],
                    budgets=budgets,
                    layer1_share=settings.layer1_share,
                    **{key: value for key, value in plan.items() if key != "rank"},
                )
                seconds[name] += time.perf_counter() - started
            for memory in memories.values():
                memory.close()
    return {
        "dataset": Path(path).name,
        "conversations": len(conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "defects": dict(sorted(defects.items())),
        "budgets": list(budgets),
        "layer1_share": settings.layer1_share,
        "machine": scoring.machine(),
        "systems": {
            name: {
                "via": VIA.get(name, "Memory.context"),
                "budgets": scoring.budgets_summary(tallies[name], "by_category", CATEGORIES),
                "seconds": round(seconds[name] + setup[name], 2),
                "setup_seconds": round(setup[name], 2),
                "query_seconds": round(seconds[name], 2),
            }
            for name in systems
        },
    }


# ---------------------------------------------------------------------------------------------
# Output.


def table(result: dict) -> str:
    """The README table: one row per system and budget."""
    head = (
        "| system | budget | all-evidence | evidence recall | tokens | "
        + " | ".join(f"{key} {CATEGORIES[key]}" for key in CATEGORIES)
        + " |"
    )
    lines = [head, "|" + "---|" * (5 + len(CATEGORIES))]
    for name, system in result["systems"].items():
        for budget, cell in system["budgets"].items():
            cats = " | ".join(
                f"{cell['by_category'][key]['all_evidence_rate']:.2f}" for key in CATEGORIES
            )
            lines.append(
                f"| {name} | {budget} | {cell['all_evidence_rate']:.3f} | "
                f"{cell['evidence_recall']:.3f} | {cell['mean_tokens']:,.0f} | {cats} |"
            )
    return "\n".join(lines)


def plot(result: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for name, system in result["systems"].items():
        budgets = [int(b) for b in system["budgets"]]
        for axis, metric in zip(axes, ("all_evidence_rate", "evidence_recall"), strict=True):
            values = [system["budgets"][str(b)][metric] for b in budgets]
            if name == "full_context":
                tokens = system["budgets"][str(budgets[0])]["mean_tokens"]
                axis.axhline(
                    values[0],
                    linestyle=":",
                    color="grey",
                    label=f"full_context ({tokens:,.0f} tokens)",
                )
                continue
            axis.plot(budgets, values, marker="o", label=name)
    axes[0].plot(
        [2000],
        [TARGET_AT_2000],
        marker="*",
        markersize=12,
        linestyle="none",
        color="black",
        label=f"target ({TARGET_AT_2000:.2f} at 2,000)",
    )
    for axis, title in zip(axes, ("all evidence in context", "evidence recall"), strict=True):
        axis.set_xscale("log", base=2)
        axis.set_xticks(list(BUDGETS), [str(b) for b in BUDGETS])
        axis.set_xlabel("context budget (tokens)")
        axis.set_title(title)
        axis.set_ylim(0, 1.02)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("share of questions / evidence turns")
    axes[0].legend(loc="lower right", fontsize=8)
    figure.suptitle(
        f"LoCoMo {result['dataset']}: {result['questions']} questions (categories 1-4), "
        f"{result['conversations']} conversations"
    )
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)
    plt.close(figure)


BENCH_INSTALL = "pip install 'hipo-jupyter[bench]' (or pip install matplotlib)"


def plotting_available() -> bool:
    """Is matplotlib importable? Asked before the run, so a missing plotter costs one line
    at the start instead of a traceback after minutes of work."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a LoCoMo JSON file (a list of conversations)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the results as JSON")
    parser.add_argument("--plot", type=Path, metavar="OUT.png", help="draw recall per budget")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"comma-separated subset of {KNOWN_SYSTEMS}"
    )
    parser.add_argument(
        "--semantic",
        action="store_true",
        help=f"also run {', '.join(SEMANTIC_SYSTEMS)} (needs the [semantic] extra), in one run",
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the memory folders here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.semantic:
        systems += [name for name in SEMANTIC_SYSTEMS if name not in systems]
    unknown = set(systems) - set(KNOWN_SYSTEMS)
    if unknown or not args.data.is_file():
        problem = f"unknown systems {sorted(unknown)}" if unknown else f"no file {args.data}"
        print(f"locomo: {problem}", file=sys.stderr)
        return 2
    if args.plot and not plotting_available():
        print(f"locomo: --plot needs matplotlib: {BENCH_INSTALL}", file=sys.stderr)
        return 2
    if set(SEMANTIC_SYSTEMS) & set(systems) and scoring.semantic_missing("locomo", SEMANTIC_SYSTEM):
        return 2
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    result = run(args.data, systems, args.keep)
    scoring.report(result, table(result), args.json)
    if args.plot:
        plot(result, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
