"""Implicit recall on MemAware: is a turn of the right session in the context at a token budget?

    python benchmarks/memaware.py DIR --questions DIR/questions-dev.json --json out.json
    python benchmarks/memaware.py DIR --questions FILE --semantic   # adds hipo_semantic
    python benchmarks/memaware.py DIR --reindex-rss   # peak RSS and time of `hipo reindex`

MemAware (kevin-hs-sohn/memaware, MIT; the benchmark Hipocampus reports on) is 92 days of one
user's sessions with an assistant and questions whose useful memory shares few words with them
("help me position my formal training in my cover letter" needs "I graduated in Business
Administration"). DIR holds `sessions/YYYY-MM-DD.md` or `sessions.tar.gz` (read in memory,
never extracted); the data is never committed here, so its path is an argument.

The sessions are imported through the engine call `hipo import` makes (`Memory.import_records`,
then the compaction chain), with "today" the day after the last session. `--import conversation`
(the default) imports both roles, as a user importing these chats gets them: each user turn and
the assistant's reply become one checkpoint (an exchange, `hipo_jupyter/memory/disk/exchanges.py`);
`--import user-turns` imports the user's turns alone. For each question and budget (500, 1,000,
2,000, 4,000 o200k tokens, Layer 1 included) the benchmark builds the context a model would get:

- `ask`: what `%%ask` sends by default for the question, at its default recall budget only
  (`Hipo.recall_budget`, 2,000): the whole Layer 1 (its own system block) and
  `Memory.context(question, budget=2000, layer1=False, mode="auto")`, the same call with the
  same defaults (JSON: `"via": "%%ask: Layer 1 + Memory.context"`; tokens count both);
- `hipo`: exactly what a user gets, `Memory.context(question, budget=...)` with keyword recall
  (JSON: `"via": "Memory.context"`);
- `bm25`: plain BM25 over the user turns (`SearchIndex.search` on an index of the user turns
  alone, raw checkpoints only), packed best first in time order under one line per date, as
  `benchmarks/locomo.py` packs it;
- `hipo_semantic` (`--semantic`, the `[semantic]` extra): `Memory.context` in hybrid mode on a
  memory whose turns were embedded at import.

A question counts when a user turn of one of its answer sessions is in the context: twelve
consecutive words of it (all of it when shorter; words are runs of letters and digits, compared
in lower case), so a context may show just the relevant part of a long turn (PROVENANCE.md of the
data). Scores per difficulty (easy, medium, hard) and overall, and mean tokens. Beside the
score, the candidate coverage of the hipo systems: the share of questions with an answer-session
checkpoint among the first 30, 60 and all of the candidates a 2,000-token context packs from
(the ceiling reordering could reach), and the process's peak RSS (embedding, with --semantic).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import recall_scoring as scoring  # noqa: E402
from recall_scoring import pack, remembered_turns  # noqa: E402

from hipo_jupyter.memory import DEFAULT_SETTINGS, Memory, MemoryConfig, RecallSettings  # noqa: E402
from hipo_jupyter.memory.intake.importers import ImportRecord  # noqa: E402
from hipo_jupyter.memory.recall.context import candidates  # noqa: E402
from hipo_jupyter.memory.requests import DEFAULT_BUDGET, RecallQuery  # noqa: E402
from hipo_jupyter.memory.search.contract import SearchIndex  # noqa: E402
from hipo_jupyter.memory.search.indexing import open_index  # noqa: E402

BUDGETS = (500, 1000, 2000, 4000)  # `run(budgets=...)` takes others (crossval: one)
DIFFICULTIES = ("easy", "medium", "hard")
SYSTEMS = ("ask", "hipo", "bm25")
ASK_BUDGET = DEFAULT_BUDGET  # Hipo.recall_budget's default: what %%ask recalls with
SEMANTIC_SYSTEM = "hipo_semantic"
KNOWN_SYSTEMS = (*SYSTEMS, SEMANTIC_SYSTEM)
VIA = {"bm25": "SearchIndex.search", "ask": "%%ask: Layer 1 + Memory.context"}
SPAN = 12  # consecutive words of a user turn that count as the turn being in the context
CANDIDATES = 150  # bm25: hits asked per question, more turns than the largest budget holds
TARGET_AT_2000 = 0.60  # issue 13: hipo over all questions at a 2,000-token budget
IMPORTS = ("conversation", "user-turns")  # both roles as `hipo import` reads them, or users'
COVERAGE_BUDGET = 2000  # candidate coverage: the candidates a context at this budget packs
COVERAGE_AT = (30, 60)  # ... an answer among the first 30, 60, and all of them
MODE = {"hipo": "keyword", SEMANTIC_SYSTEM: "hybrid"}

_TURN = re.compile(r"^(User|Assistant):[ \t]?", re.MULTILINE)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


# ---------------------------------------------------------------------------------------------
# The data.


@dataclass(frozen=True)
class Session:
    id: str
    day: date
    turns: tuple[tuple[str, str], ...]  # (role: "User" | "Assistant", text), in order

    @property
    def user_turns(self) -> tuple[str, ...]:
        return tuple(text for role, text in self.turns if role == "User")


@dataclass(frozen=True)
class Question:
    id: str
    difficulty: str
    text: str
    sessions: tuple[str, ...]  # answer_session_ids


def session_files(folder: Path) -> Iterator[tuple[str, str]]:
    """(name, text) of each `sessions/YYYY-MM-DD.md`, from the folder or from the tarball."""
    plain = folder / "sessions"
    if plain.is_dir():
        for path in sorted(plain.glob("*.md")):
            yield path.name, path.read_text(encoding="utf-8")
        return
    archive = folder / "sessions.tar.gz"
    if not archive.is_file():
        raise SystemExit(f"memaware: no sessions/ or sessions.tar.gz in {folder}")
    with tarfile.open(archive) as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and m.name.endswith(".md")),
            key=lambda m: m.name,
        )
        for member in members:
            handle = tar.extractfile(member)
            if handle is not None:
                yield Path(member.name).name, io.TextIOWrapper(handle, encoding="utf-8").read()


def parse_sessions(name: str, text: str) -> list[Session]:
    """The sessions of one day's file: `## Session <id>`, `Session Date:`, then turns that
    start with `User:` or `Assistant:` and run until the next such line."""
    sessions = []
    for block in re.split(r"^## Session[ \t]+", text, flags=re.MULTILINE)[1:]:
        head, _, body = block.partition("\n")
        when = re.search(r"^Session Date:\s*(\d{4}-\d{2}-\d{2})", body, re.MULTILINE)
        day = date.fromisoformat(when.group(1) if when else Path(name).stem)
        pieces = _TURN.split(body)
        turns = [
            (pieces[i], pieces[i + 1].strip())
            for i in range(1, len(pieces) - 1, 2)
            if pieces[i + 1].strip()
        ]
        sessions.append(Session(head.strip(), day, tuple(turns)))
    return sessions


def load_sessions(folder: Path) -> list[Session]:
    return [s for name, text in session_files(folder) for s in parse_sessions(name, text)]


def load_questions(path: Path) -> list[Question]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [
        Question(
            str(q["question_id"]),
            str(q["difficulty"]),
            str(q["question"]),
            tuple(q["answer_session_ids"]),
        )
        for q in data
    ]


def records(sessions: Sequence[Session], imported: str = "conversation") -> list[ImportRecord]:
    """The turns as `hipo import` reads them, on their session's date, ids naming the session:
    both roles ("conversation": `Memory.import_records` pairs each user turn with its reply,
    as for a json or Claude Code import), or the user turns alone ("user-turns")."""
    return [
        ImportRecord(session.day, role, text, f"{session.id}:{number}")
        for session in sessions
        for number, (role, text) in enumerate(session.turns, start=1)
        if imported == "conversation" or role == "User"
    ]


# ---------------------------------------------------------------------------------------------
# The score.


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


class Spans:
    """The user turns of each session as the word runs that count as "in the context"."""

    def __init__(self, sessions: Sequence[Session]) -> None:
        self.by_session: dict[str, list[tuple[str, ...]]] = {}
        for session in sessions:
            runs = self.by_session.setdefault(session.id, [])
            for turn in session.user_turns:
                w = words(turn)
                if len(w) <= SPAN:
                    runs.append(tuple(w))
                else:
                    runs.extend(tuple(w[i : i + SPAN]) for i in range(len(w) - SPAN + 1))

    def found(self, context: str, session_ids: Sequence[str]) -> bool:
        flat = words(context)
        grams = {tuple(flat[i : i + SPAN]) for i in range(max(0, len(flat) - SPAN + 1))}
        joined = f" {' '.join(flat)} "
        for session in session_ids:
            for run in self.by_session.get(session, ()):
                if len(run) == SPAN and run in grams:
                    return True
                if len(run) < SPAN and run and f" {' '.join(run)} " in joined:
                    return True
        return False


@dataclass
class Tally(scoring.Tally):
    """Scores of one system at one budget, per difficulty: whether an answer session's turn
    was in the context."""

    scores: tuple[str, ...] = ("score",)


# ---------------------------------------------------------------------------------------------
# Systems.


class UserMemory:
    """The user's sessions imported into a fresh memory folder."""

    def __init__(
        self,
        sessions: Sequence[Session],
        folder: Path,
        semantic: bool = False,
        imported: str = "conversation",
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> None:
        """`settings`: what every recall of it asks (the shipped ones: what users get, unless
        `run(settings=...)` passes others, as `crossval.py` does)."""
        self.settings = settings
        last = max(session.day for session in sessions)
        self.memory = Memory(
            folder,
            config=MemoryConfig(semantic=semantic),
            today=lambda: last + timedelta(days=1),
        )
        started = time.perf_counter()
        self.memory.import_records(records(sessions, imported))
        self.setup_seconds = time.perf_counter() - started
        self.turns = remembered_turns(self.memory)
        self.session_of = {key: turn.source.rpartition(":")[0] for key, turn in self.turns.items()}
        self._index: SearchIndex | None = None

    def ask(self, question: str, budget: int) -> tuple[str, int]:
        """What %%ask sends by default (`ipython/ask.py`): Layer 1, then the recalled memory
        for the question itself; `budget` is ASK_BUDGET (the only one this system runs)."""
        layer1 = self.memory.layer1()
        context = self.memory.context(question, budget=budget, layer1=False, mode="auto",
                                      settings=self.settings)  # fmt: skip
        return f"{layer1.text}\n{context.text}", layer1.total_tokens + context.tokens

    def hipo(self, question: str, budget: int) -> tuple[str, int]:
        context = self.memory.context(question, budget=budget, mode="keyword",
                                      settings=self.settings)  # fmt: skip
        return context.text, context.tokens

    def hipo_semantic(self, question: str, budget: int) -> tuple[str, int]:
        context = self.memory.context(question, budget=budget, mode="hybrid",
                                      settings=self.settings)  # fmt: skip
        if context.mode != "hybrid":
            raise SystemExit(f"memaware: semantic recall is off: {self.memory.semantic.status()}")
        return context.text, context.tokens

    def first_answer(self, question: Question, mode: str) -> int | None:
        """The rank (from 1) of the first checkpoint of an answer session among the candidates
        `Memory.context` packs from at 2,000 tokens, or None: the ceiling beside the score."""
        request = RecallQuery.parse(question.text, k=candidates(COVERAGE_BUDGET), mode=mode)
        stamps = self.memory.store.raw_stamps()  # the recall `Memory.context` runs, as it runs it
        hits = self.memory._recall.ranked(
            request, stamps, neighbours=True, snippets=False, both_lists=True,
            settings=self.settings,
        ).hits
        wanted = set(question.sessions)
        for rank, hit in enumerate(hits, start=1):
            if self.session_of.get((hit.file, hit.line)) in wanted:
                return rank
        return None

    def bm25(self, question: str, budget: int) -> tuple[str, int]:
        if self._index is None:  # the same index, opened again and searched directly
            self._index = open_index(self.memory.store.index_dir, "fts5")
        hits = self._index.search(question, limit=CANDIDATES, kinds={"raw"})
        ranked = [self.turns[(h.doc.path, h.doc.line)] for h in hits]
        return pack(ranked, budget)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        self.memory.close()


def open_memories(
    sessions: Sequence[Session],
    systems: Sequence[str],
    base: Path,
    imported: str,
    settings: RecallSettings = DEFAULT_SETTINGS,
) -> dict[str, UserMemory]:
    """The memories the systems read: hipo's import, the user turns alone for bm25 (the same
    memory when the import is of user turns), and the embedded one for hipo_semantic."""
    memories: dict[str, UserMemory] = {}
    if {"hipo", "ask"} & set(systems):
        memories["hipo"] = UserMemory(sessions, base / "hipo", imported=imported,
                                      settings=settings)  # fmt: skip
        memories["ask"] = memories["hipo"]  # the same memory, read the way %%ask reads it
    if "bm25" in systems:
        if imported == "user-turns" and "hipo" in memories:
            memories["bm25"] = memories["hipo"]
        else:
            memories["bm25"] = UserMemory(sessions, base / "turns", imported="user-turns",
                                          settings=settings)  # fmt: skip
    if SEMANTIC_SYSTEM in systems:
        memories[SEMANTIC_SYSTEM] = UserMemory(
            sessions, base / "semantic", semantic=True, imported=imported, settings=settings
        )
    return memories


def coverage_summary(ranks: Sequence[int | None], questions: Sequence[Question]) -> dict:
    """The share of questions with an answer among the first 30, 60 and all candidates."""

    def share(at: int | None, difficulty: str | None = None) -> float:
        picked = [
            rank
            for rank, question in zip(ranks, questions, strict=True)
            if difficulty is None or question.difficulty == difficulty
        ]
        inside = [rank is not None and (at is None or rank <= at) for rank in picked]
        return round(statistics.fmean(inside), 4) if inside else 0.0

    return {
        "candidates": candidates(COVERAGE_BUDGET),
        **{str(at): share(at) for at in COVERAGE_AT},
        "all": share(None),
        "by_difficulty": {d: share(None, d) for d in DIFFICULTIES},
    }


def budgets_of(system: str, budgets: Sequence[int] = BUDGETS) -> tuple[int, ...]:
    """`ask` runs at %%ask's default budget only; the others at every budget."""
    return (ASK_BUDGET,) if system == "ask" else tuple(budgets)


def run(
    folder: Path,
    questions_file: Path,
    systems: Sequence[str] = SYSTEMS,
    workdir: Path | None = None,
    limit: int | None = None,
    imported: str = "conversation",
    *,
    settings: RecallSettings = DEFAULT_SETTINGS,
    budgets: Sequence[int] = BUDGETS,
) -> dict:
    """Every system on the questions, at `budgets`; each recall asks `settings`
    (`RecallSettings`: the shipped ones unless `crossval.py` passes others)."""
    sessions = load_sessions(folder)
    questions = load_questions(questions_file)[:limit]
    spans = Spans(sessions)

    def judge(question: Question, context: str) -> tuple[str, tuple[bool]]:
        return question.difficulty, (spans.found(context, question.sessions),)

    tallies = {name: {budget: Tally() for budget in budgets_of(name, budgets)} for name in systems}
    seconds: dict[str, float] = {}
    setup: dict[str, float] = {}
    coverage: dict[str, dict] = {}
    found_at: dict[str, dict[str, list[int]]] = {}
    with tempfile.TemporaryDirectory(prefix="hipo-memaware-") as temporary:
        memories = open_memories(
            sessions, systems, Path(workdir or temporary), imported, settings
        )
        for name in systems:
            memory = memories[name]
            context_of: Callable[[str, int], tuple[str, int]] = getattr(memory, name)
            setup[name] = memory.setup_seconds
            started = time.perf_counter()
            firsts = scoring.score_questions(
                questions, budgets_of(name, budgets), context_of, judge, tallies[name]
            )
            found_at[name] = {str(b): [int(found) for found in f] for b, f in firsts.items()}
            seconds[name] = time.perf_counter() - started
            if name in MODE:
                ranks = [memory.first_answer(q, MODE[name]) for q in questions]
                coverage[name] = coverage_summary(ranks, questions)
        for memory in {id(m): m for m in memories.values()}.values():
            memory.close()
    return {
        "dataset": Path(questions_file).name,
        "import": imported,
        "sessions": len(sessions),
        "user_turns": sum(len(s.user_turns) for s in sessions),
        "questions": len(questions),
        "budgets": list(budgets),
        "machine": scoring.machine(),
        # the process's peak RSS: with --semantic, embedding every turn at import (issue 25:
        # at most 400 MB) is the largest part of it
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "systems": {
            name: {
                "via": VIA.get(name, "Memory.context"),
                "budgets": scoring.budgets_summary(tallies[name], "by_difficulty", DIFFICULTIES),
                "coverage": coverage.get(name),
                "found": found_at[name],  # per question and budget (cross-validation reads it)
                "setup_seconds": round(setup[name], 2),
                "query_seconds": round(seconds[name], 2),
            }
            for name in systems
        },
    }


def reindex_rss(folder: Path, workdir: Path | None = None, imported: str = "conversation") -> dict:
    """`hipo reindex` on its own, as a user runs it, on the sessions imported without vectors
    (keyword only): every text is embedded by the `hipo` command beside this interpreter, in a
    process of its own, so its peak RSS (issue 25: at most 400 MB) and time are the command's."""
    sessions = load_sessions(folder)
    hipo = Path(sys.executable).with_name("hipo")
    if not hipo.is_file():
        raise SystemExit(f"memaware: no `hipo` command beside {sys.executable}")
    with tempfile.TemporaryDirectory(prefix="hipo-memaware-") as temporary:
        root = Path(workdir or temporary) / "reindex"
        memory = UserMemory(sessions, root, semantic=False, imported=imported)
        memory.close()
        last = max(session.day for session in sessions)
        env = {**os.environ, "HIPO_TODAY": (last + timedelta(days=1)).isoformat()}
        env.pop("HIPO_SEMANTIC", None)
        started = time.perf_counter()
        done = subprocess.run(
            [str(hipo), "--root", str(root), "reindex"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            check=True,
        )
        seconds = time.perf_counter() - started
        # the largest waited-for child: the one `hipo reindex`
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        with sqlite3.connect(root / "memory" / ".index" / "fts5.sqlite3") as db:
            vectors = db.execute("select count(*) from vectors").fetchone()[0]
    if not vectors:
        raise SystemExit("memaware: `hipo reindex` embedded nothing: is the semantic extra on?")
    return {
        "dataset": Path(folder).name,
        "import": imported,
        "sessions": len(sessions),
        "machine": scoring.machine(),
        "reindex": {
            "command": "hipo --root DIR reindex",
            "output": done.stdout.strip().splitlines()[-1:],
            "vectors": vectors,
            "seconds": round(seconds, 1),
            "peak_rss_mb": round(peak, 1),
        },
    }


def table(result: dict) -> str:
    """The README table: one row per system and budget."""
    head = "| system | budget | score | tokens | " + " | ".join(DIFFICULTIES) + " |"
    lines = [head, "|" + "---|" * (4 + len(DIFFICULTIES))]
    for name, system in result["systems"].items():
        for budget, cell in system["budgets"].items():
            parts = " | ".join(f"{cell['by_difficulty'][d]['score']:.2f}" for d in DIFFICULTIES)
            lines.append(
                f"| {name} | {budget} | {cell['score']:.3f} | {cell['mean_tokens']:,.0f} | "
                f"{parts} |"
            )
    covered = {n: s["coverage"] for n, s in result["systems"].items() if s.get("coverage")}
    if covered:
        lines += ["", "| system | candidates | " + " | ".join(f"first {a}" for a in COVERAGE_AT)]
        lines[-1] += " | all | " + " | ".join(DIFFICULTIES) + " |"
        lines.append("|" + "---|" * (3 + len(COVERAGE_AT) + len(DIFFICULTIES)))
        for name, cell in covered.items():
            firsts = " | ".join(f"{cell[str(at)]:.3f}" for at in COVERAGE_AT)
            parts = " | ".join(f"{cell['by_difficulty'][d]:.2f}" for d in DIFFICULTIES)
            lines.append(
                f"| {name} | {cell['candidates']} | {firsts} | {cell['all']:.3f} | {parts} |"
            )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "data", type=Path, help="the MemAware folder (sessions/ or sessions.tar.gz)"
    )
    parser.add_argument(
        "--questions", type=Path, metavar="FILE", help="required but with --reindex-rss"
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the results as JSON")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"comma-separated subset of {KNOWN_SYSTEMS}"
    )
    parser.add_argument(
        "--semantic", action="store_true", help=f"also run {SEMANTIC_SYSTEM} (the extra)"
    )
    parser.add_argument(
        "--import",
        dest="imported",
        choices=IMPORTS,
        default=IMPORTS[0],
        help="conversation: both roles, as `hipo import` reads them (default); user-turns",
    )
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the memory folders here; folders an earlier run of the same import kept"
        " there are reused (the import adds nothing twice: nothing is embedded again)",
    )
    parser.add_argument(
        "--reindex-rss",
        action="store_true",
        help="only time `hipo reindex` (the extra embedding every text) on the imported memory "
        "and report its peak RSS",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.semantic and SEMANTIC_SYSTEM not in systems:
        systems.append(SEMANTIC_SYSTEM)
    unknown = set(systems) - set(KNOWN_SYSTEMS)
    problem = None
    if unknown:
        problem = f"unknown systems {sorted(unknown)}"
    elif not args.data.is_dir():
        problem = f"no folder {args.data}"
    elif args.reindex_rss:
        if scoring.semantic_missing("memaware", "--reindex-rss"):
            return 2
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
        result = reindex_rss(args.data, args.keep, args.imported)
        cell = result["reindex"]
        line = f"hipo reindex: {cell['vectors']:,} vectors in {cell['seconds']:,.0f} s"
        scoring.report(result, f"{line}, peak RSS {cell['peak_rss_mb']:.0f} MB", args.json)
        return 0
    elif args.questions is None or not args.questions.is_file():
        problem = f"no file {args.questions}" if args.questions else "--questions FILE is needed"
    if problem:
        print(f"memaware: {problem}", file=sys.stderr)
        return 2
    if SEMANTIC_SYSTEM in systems and scoring.semantic_missing("memaware", SEMANTIC_SYSTEM):
        return 2
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    result = run(args.data, args.questions, systems, args.keep, args.limit, args.imported)
    scoring.report(result, table(result), args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
