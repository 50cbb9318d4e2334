"""A benchmark of a real notebook week (issue 35, item 6): what users get from hipo's memory.

Three months of a data scientist's work (`week_content.py`: notebooks made from templates with a
seeded RNG) are executed with nbclient in real kernels: `%load_ext hipo`, `%%remember` cells,
and cells calling Claude through the real anthropic SDK (and `%%ask`), answered on 127.0.0.1 by
the Messages API stand-in of tests/claude_helpers.py with scripted replies. One notebook per
working day, run on its day (HIPO_TODAY, the clock the tests and `hipo demo` pin), then re-run
twice the same day, as users do. Then everyday questions are asked through `%%ask` (Layer 1 plus
the recall it injects), each in a fresh kernel on its own copy of the three months' memory (no
question sees another's write-back), once with the default install and once keyword only
(HIPO_SEMANTIC=0, the user's switch). The stand-in records
every request body; a question is reached when its note's key text is in what was sent.

Figures, for each mode side by side:
- reached: the share of questions whose note reaches what `%%ask` sends (target >= 0.9 default);
- write-back share: of the recalled tokens sent for these questions (each answered by a user's
  note), the share that are Claude calls' write-backs (target <= 0.25);
- first hits: the share of questions whose first recall hit (`Memory.recall`, as `%recall` and
  the kernel's mode rank) is a note of the user's in force: a raw checkpoint, not a write-back,
  not changed by a later note or superseded by a correction (target >= 0.9), and the share
  whose first hit is the question's own note;
- duplicates: checkpoints the two re-runs wrote, and identical checkpoints in a day's log
  (target 0);
- topics: whether the Topics Index's first ten are the user's topics (tags of `%%remember`
  cells; never `llm`, never a write-back's).

    python benchmarks/notebook_week.py --size small|full [--json OUT] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO, REPO / "tests", REPO / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import nbformat  # noqa: E402
from claude_helpers import SDK_CREDENTIAL_VARIABLES, FakeMessagesAPI, last_user_text, serve  # noqa: E402
from week_content import Fact, Week, make_week  # noqa: E402

from hipo_jupyter.cli.demo import execute_notebook  # noqa: E402
from hipo_jupyter.memory import Memory  # noqa: E402
from hipo_jupyter.memory.disk import VIA_WRITE_BACK  # noqa: E402
from hipo_jupyter.memory.disk.checkpoint import Checkpoint, parse_log  # noqa: E402
from hipo_jupyter.memory.recall.passages import query_stems  # noqa: E402
from hipo_jupyter.memory.tree import count_tokens  # noqa: E402

START = date(2026, 1, 5)  # a Monday: three months of work end early in April
SIZES = {
    # days x notes a day + planted notes >= 300 user checkpoints; days x calls >= 100 calls
    "full": {"days": 52, "notes_per_day": 5, "calls_per_day": 2, "questions": 42},
    "small": {"days": 4, "notes_per_day": 3, "calls_per_day": 1, "questions": 6},
}
RUNS = 3  # every notebook run once, then re-run twice the same day
# Only the user's switches choose the mode: the default install is no switch at all
MODES: dict[str, dict[str, str | None]] = {
    "default": {"HIPO_SEMANTIC": None},
    "keyword": {"HIPO_SEMANTIC": "0"},
}
TARGETS = {"reached": 0.9, "write_back_share": 0.25, "duplicates": 0, "first_hit_users": 0.9}
RANK_DEPTH = 200  # how deep a missed note is looked for in recall's list (the diagnosis)
PIECE = re.compile(r"^L(\d+) ")
RECALL_OPEN = "<hipo-recalled-memory-"


class ScriptedAPI(FakeMessagesAPI):
    """The stand-in, answering each prompt with its scripted reply (the same call gets the same
    reply, as a deterministic model would give), and `%%ask`'s questions with a short answer."""

    def __init__(self, replies: dict[str, str]) -> None:
        super().__init__()
        self.script = replies

    def default_reply(self, number: int, body: dict[str, Any]) -> str:  # type: ignore[override]
        prompt = last_user_text(body).strip()
        if prompt in self.script:
            return self.script[prompt]
        return ("From your notes I can only partly answer that; check the linked checkpoints "
                "and tell me which project you mean.")  # fmt: skip


@contextmanager
def environment(values: dict[str, str | None]) -> Iterator[None]:
    """Set `values` in os.environ (the kernels inherit it; None: unset), restored afterwards."""
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def claude_on_loopback(api: FakeMessagesAPI) -> Iterator[None]:
    """The stand-in served on 127.0.0.1, selected as a user selects a proxy; no real key."""
    saved = {name: os.environ.pop(name, None) for name in SDK_CREDENTIAL_VARIABLES}
    try:
        with serve(api) as url, environment({"ANTHROPIC_BASE_URL": url,
                                             "ANTHROPIC_API_KEY": "benchmark-key"}):  # fmt: skip
            yield
    finally:
        os.environ.update({k: v for k, v in saved.items() if v is not None})


def write_notebook(path: Path, cells: list[str]) -> None:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]),
                   path)  # fmt: skip


def run_notebook(path: Path, today: date) -> None:
    """One headless run in a fresh kernel, as JupyterLab's "Restart and run all"."""
    with environment({"JPY_SESSION_NAME": str(path)}):
        execute_notebook(path, timeout=600, today=today.isoformat())


def checkpoints(folder: Path) -> list[Checkpoint]:
    found = []
    for log in sorted((folder / "memory").glob("????-??-??.md")):
        found += parse_log(log.read_text("utf-8"), date=log.stem)
    return found


def identical_pairs(found: list[Checkpoint]) -> int:
    """Checkpoints equal to an earlier one of their day's log (title, type, fields, text, tags,
    source): what "nothing twice" forbids."""
    seen: set[tuple] = set()
    extra = 0
    for c in found:
        key = (c.date, c.title, c.type, c.fields, c.text, c.tags, c.via, c.notebook)
        extra += key in seen
        seen.add(key)
    return extra


# --- the three months --------------------------------------------------------------------------
@dataclass
class WeekRun:
    checkpoints: int = 0
    user_checkpoints: int = 0
    write_backs: int = 0
    claude_calls: int = 0  # calls of the first runs (the re-runs call again)
    written_by_reruns: int = 0
    identical: int = 0
    first_day: str = ""
    last_day: str = ""
    seconds: float = 0.0
    topics_first_ten: list[str] = field(default_factory=list)
    topics_are_users: bool = False


def live_the_months(week: Week, folder: Path, api: ScriptedAPI) -> WeekRun:
    """Every day's notebook run, then re-run twice the same day; what the re-runs wrote."""
    started = time.perf_counter()
    report = WeekRun()
    for entry in week.days:
        notebook = folder / f"{entry.day.isoformat()}-{entry.project.tag}.ipynb"
        write_notebook(notebook, entry.cells)
        log = folder / "memory" / f"{entry.day.isoformat()}.md"
        for run in range(RUNS):
            run_notebook(notebook, entry.day)
            if run == 0:
                first = len(parse_log(log.read_text("utf-8"), date=entry.day.isoformat()))
        report.written_by_reruns += len(parse_log(log.read_text("utf-8"))) - first
        report.claude_calls += entry.calls
    found = checkpoints(folder)
    report.checkpoints = len(found)
    report.write_backs = sum(c.via == VIA_WRITE_BACK for c in found)
    report.user_checkpoints = report.checkpoints - report.write_backs
    report.identical = identical_pairs(found)
    report.first_day, report.last_day = found[0].date or "", found[-1].date or ""
    report.topics_first_ten = first_topics(folder, 10)
    report.topics_are_users = bool(report.topics_first_ten) and all(
        name in week.user_tags and name != "llm" for name in report.topics_first_ten
    )
    report.seconds = round(time.perf_counter() - started, 1)
    return report


def first_topics(folder: Path, count: int) -> list[str]:
    """The first `count` topic names of ROOT.md's Topics Index, as Layer 1 shows them."""
    root = (folder / "memory" / "ROOT.md").read_text("utf-8")
    section = root.split("## Topics Index\n", 1)[-1].split("\n## ", 1)[0]
    names = []
    for line in section.splitlines():
        if line.startswith("- ") and not line.startswith("- earlier topics"):
            names.append(line[2:].split(" [", 1)[0].split(":", 1)[0].strip())
    return names[:count]


# --- the questions -----------------------------------------------------------------------------
@dataclass
class Answer:
    question: str
    shares_words: bool
    reached: bool
    via: str  # "recall", "layer1", "both" or "" (not sent)
    recalled_tokens: int
    write_back_tokens: int
    # the note's own checkpoint's rank in recall's list for the question (1 = first), None: not
    # in the first RANK_DEPTH (a node or a neighbour may still carry its text into the context)
    rank: int | None
    write_back_titles: list[str] = field(default_factory=list)  # the recalled write-backs
    first_hit_users: bool = False  # recall's first hit is a note of the user's in force


def check_facts(week: Week, found: list[Checkpoint]) -> dict[str, Checkpoint]:
    """Each fact's note, found by its key text, which no other checkpoint may hold."""
    notes = {}
    for fact in week.facts:
        holders = [c for c in found if fact.key in checkpoint_text(c)]
        if len(holders) != 1 or holders[0].via == VIA_WRITE_BACK:
            raise SystemExit(f"the key {fact.key!r} is in {len(holders)} checkpoints, not 1 note")
        notes[fact.question] = holders[0]
    return notes


def checkpoint_text(c: Checkpoint) -> str:
    return "\n".join([c.title, c.text, *(f"{k}: {v}" for k, v in c.fields)])


def shares_words(fact: Fact) -> bool:
    """Whether the question and its note share a content word (the engine's stems, its
    stopwords dropped): half the questions must not."""
    return bool(query_stems(fact.question) & query_stems(f"{fact.title}\n{fact.body}"))


def recalled_pieces(system_text: str) -> list[tuple[str, int, str]]:
    """(file, line, text) of each piece in the recall fence of what was sent."""
    start = system_text.find(RECALL_OPEN)
    if start < 0:
        return []
    pieces: list[tuple[str, int, str]] = []
    source = ""
    for line in system_text[start:].splitlines()[1:]:
        if line.startswith("</hipo-recalled-memory-"):
            break
        match = PIECE.match(line)
        if match:
            pieces.append((source, int(match.group(1)), line))
        elif line.startswith("  ") and pieces:
            file, number, text = pieces[-1]
            pieces[-1] = (file, number, f"{text}\n{line}")
        elif line.startswith("memory/") or line.startswith("knowledge/"):
            source = line.split(" (", 1)[0].strip()
    return pieces


def ask_one(months: Path, workdir: Path, fact: Fact, mode: str, today: date,
            api: ScriptedAPI) -> dict[str, Any]:  # fmt: skip
    """`fact`'s question through `%%ask` in a fresh kernel of `mode`, on a copy of the three
    months' memory (so no question sees another's write-back); the request body it sent."""
    copy = workdir / f"ask-{mode}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(months, copy)
    notebook = copy / "question.ipynb"
    write_notebook(notebook, ["%load_ext hipo", f"%%ask\n{fact.question}"])
    before = len(api.message_requests())
    with environment(MODES[mode]):
        run_notebook(notebook, today)
    sent = [b for b in api.message_requests()[before:]
            if last_user_text(b).strip() == fact.question]  # fmt: skip
    if len(sent) != 1:
        raise SystemExit(f"{mode}: %%ask sent {len(sent)} requests for {fact.question!r}")
    return sent[0]


def ask_questions(week: Week, months: Path, workdir: Path, mode: str,
                  api: ScriptedAPI) -> list[Answer]:  # fmt: skip
    """Every question through `%%ask` in `mode`; what each request carried, and why a miss."""
    today = week.days[-1].day + timedelta(days=1)
    found = checkpoints(months)
    notes = check_facts(week, found)
    via = {(f"memory/{c.date}.md", c.line): c.via for c in found}
    answers = []
    for fact in week.facts:
        body = ask_one(months, workdir, fact, mode, today, api)
        blocks = [b.get("text", "") for b in body.get("system", [])]
        recall_text = next((t for t in blocks if t.startswith(RECALL_OPEN)), "")
        layer1_text = "\n".join(t for t in blocks if not t.startswith(RECALL_OPEN))
        key = " ".join(fact.key.split())
        where = [name for name, text in (("recall", recall_text), ("layer1", layer1_text))
                 if key in " ".join(text.split())]  # fmt: skip
        pieces = recalled_pieces(recall_text)
        tokens = [count_tokens(text) for _, _, text in pieces]
        backs = [(text, t) for (f, n, text), t in zip(pieces, tokens, strict=True)
                 if via.get((f, n)) == VIA_WRITE_BACK]  # fmt: skip
        answers.append(Answer(
            question=fact.question, shares_words=shares_words(fact), reached=bool(where),
            via="both" if len(where) == 2 else (where[0] if where else ""),
            recalled_tokens=sum(tokens), write_back_tokens=sum(t for _, t in backs), rank=None,
            write_back_titles=[text.split(": ", 1)[0].split(" ", 1)[-1] for text, _ in backs],
        ))  # fmt: skip
    # the copy of the last question: the months' memory and one write-back of today
    ranks = recall_ranks(week, workdir / f"ask-{mode}", notes, mode, today)
    for answer in answers:
        answer.rank, answer.first_hit_users = ranks[answer.question]
    return answers


def recall_ranks(week: Week, folder: Path, notes: dict[str, Checkpoint], mode: str,
                 today: date) -> dict[str, tuple[int | None, bool]]:  # fmt: skip
    """Where each question's note ranks in recall (the diagnosis of a miss), and whether the
    first hit is a note of the user's in force (`users_note_in_force`), asked in this process
    with the same switch, clock and mode ("auto", as `%%ask` asks) as the kernel."""
    ranks: dict[str, tuple[int | None, bool]] = {}
    with environment({**MODES[mode], "HIPO_TODAY": today.isoformat()}):
        memory = Memory(folder, today=lambda: today)
        try:
            for fact in week.facts:
                note = notes[fact.question]
                hits = memory.recall(fact.question, k=RANK_DEPTH, mode="auto").hits
                where = [i for i, h in enumerate(hits, 1)
                         if h.file == f"memory/{note.date}.md" and h.line == note.line]  # fmt: skip
                first = users_note_in_force(hits[0]) if hits else False
                ranks[fact.question] = (where[0] if where else None, first)
        finally:
            memory.close()
    return ranks


def users_note_in_force(hit: Any) -> bool:
    """A hit (`ranking.Hit`) that is a note of the user's in force: a raw checkpoint, not a
    model call's write-back, not changed later by another note, not superseded."""
    return (hit.kind == "raw" and hit.via != VIA_WRITE_BACK
            and not hit.changed_later and not hit.superseded)  # fmt: skip


def mode_label(folder: Path, mode: str) -> str:
    """What recall the kernel of `mode` ran: the engine says whether semantic recall is on."""
    with environment(MODES[mode]):
        memory = Memory(folder)
        try:
            on, _ = memory.semantic.status()
        finally:
            memory.close()
    if mode == "default":
        return "default (hybrid)" if on else "default (keyword: semantic packages not installed)"
    return "keyword (HIPO_SEMANTIC=0)"


@dataclass
class ModeResult:
    label: str
    reached: float
    reached_no_shared_words: float
    reached_shared_words: float
    write_back_share: float
    first_hit_users: float
    first_hit_note: float
    answers: list[Answer]


def summarize(label: str, answers: list[Answer]) -> ModeResult:
    def share(items: list[Answer]) -> float:
        return round(sum(a.reached for a in items) / len(items), 3) if items else 0.0

    recalled = sum(a.recalled_tokens for a in answers)
    back = sum(a.write_back_tokens for a in answers)
    return ModeResult(
        label=label, reached=share(answers),
        reached_no_shared_words=share([a for a in answers if not a.shares_words]),
        reached_shared_words=share([a for a in answers if a.shares_words]),
        write_back_share=round(back / recalled, 3) if recalled else 0.0,
        first_hit_users=round(sum(a.first_hit_users for a in answers) / len(answers), 3),
        first_hit_note=round(sum(a.rank == 1 for a in answers) / len(answers), 3),
        answers=answers,
    )  # fmt: skip


# --- the whole run -----------------------------------------------------------------------------
def run_benchmark(*, size: dict[str, int], seed: int, workdir: Path) -> dict[str, Any]:
    week = make_week(seed=seed, start=START, **size)
    no_shared = sum(not shares_words(f) for f in week.facts)
    if no_shared * 2 < len(week.facts):
        raise SystemExit(f"only {no_shared} of {len(week.facts)} questions share no word")
    months = workdir / "work"
    months.mkdir(parents=True)
    api = ScriptedAPI(week.replies)
    with claude_on_loopback(api), environment(MODES["default"]):
        lived = live_the_months(week, months, api)
        results = {}
        for mode in MODES:
            answers = ask_questions(week, months, workdir, mode, api)
            results[mode] = summarize(mode_label(workdir / f"ask-{mode}", mode), answers)
    return {
        "date": date.today().isoformat(),
        "size": size,
        "seed": seed,
        "questions": len(week.facts),
        "questions_sharing_no_word": no_shared,
        "week": asdict(lived),
        "modes": {mode: asdict(result) for mode, result in results.items()},
        "targets": TARGETS,
    }


def table(report: dict[str, Any]) -> str:
    week, modes = report["week"], report["modes"]
    default, keyword = modes["default"], modes["keyword"]
    rows = [
        ("recall", default["label"], keyword["label"], ""),
        ("questions whose note reaches what %%ask sends", default["reached"], keyword["reached"],
         ">= 0.9 (default)"),
        ("  of them sharing no content word with the note", default["reached_no_shared_words"],
         keyword["reached_no_shared_words"], ""),
        ("  of them sharing words", default["reached_shared_words"],
         keyword["reached_shared_words"], ""),
        ("share of recalled tokens that are write-backs", default["write_back_share"],
         keyword["write_back_share"], "<= 0.25"),
        ("first hits that are the user's note in force", default["first_hit_users"],
         keyword["first_hit_users"], ">= 0.9"),
        ("  of them the question's own note", default["first_hit_note"],
         keyword["first_hit_note"], ""),
    ]  # fmt: skip
    lines = [f"| {'':48} | {'default':>24} | {'keyword only':>24} | target |",
             f"|{'-' * 50}|{'-' * 26}|{'-' * 26}|---|"]  # fmt: skip
    lines += [f"| {a:48} | {b!s:>24} | {c!s:>24} | {d} |" for a, b, c, d in rows]
    lines += [
        "",
        f"memory: {week['checkpoints']} checkpoints ({week['user_checkpoints']} the user's, "
        f"{week['write_backs']} write-backs) from {week['first_day']} to {week['last_day']}, "
        f"{week['claude_calls']} Claude calls; every notebook run {RUNS} times "
        f"({week['seconds']} s)",
        f"duplicates: {week['written_by_reruns']} written by the re-runs, {week['identical']} "
        "identical checkpoints in a day's log (target 0)",
        f"Topics Index, first ten: {', '.join(week['topics_first_ten'])} -> "
        + ("all the user's" if week["topics_are_users"] else "NOT all the user's"),
        f"questions: {report['questions']}, {report['questions_sharing_no_word']} sharing no "
        "content word with their note",
    ]  # fmt: skip
    for mode, result in modes.items():
        missed = [a for a in result["answers"] if not a["reached"]]
        for a in missed:
            lines.append(f"  missed ({mode}): {a['question']!r} rank {a['rank'] or '>200'}"
                         f"{'' if a['shares_words'] else ', no shared word'}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--days", type=int, help="working days (overrides the size's)")
    parser.add_argument("--questions", type=int, help="questions asked (at most 44)")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--json", metavar="OUT", help="write the figures as JSON to OUT")
    parser.add_argument("--keep", metavar="DIR", help="keep the notebooks and memories in DIR")
    args = parser.parse_args(argv)
    size = dict(SIZES[args.size])
    if args.days:
        size["days"] = args.days
    if args.questions:
        size["questions"] = args.questions
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="hipo-week-"))
    try:
        report = run_benchmark(size=size, seed=args.seed, workdir=workdir)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
