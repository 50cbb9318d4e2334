"""What a context costs (issue 49, item 3), and the kept state that makes it cheap.

- A context's cost does not grow with the length of its candidates' text beyond what packing
  needs: over the same notes, 300 characters or 20,000 each, a context for a new question
  runs at most 3x the lines of Python and tokenizes at most 3x the characters (work, counted,
  never wall time: benchmarks/context_cpu.py times it). Today's main ran 5x the lines.
- Whatever is kept between calls (each text's stems, passages and fingerprints, corrections
  and proposals per raw log, a log's authors, the documents a search read) never outlives a
  write: after a note, a correction, an agent's proposal and a forget, a Memory that answered
  before answers exactly what a Memory opened afresh on the same folder answers.
- A long piece's passage is the window the plain scan of every window finds (hypothesis).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from work_helpers import lines_run

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.disk import VIA_CLI, VIA_MCP
from hipo_jupyter.memory.recall import passages
from hipo_jupyter.memory.views.correcting import correct
from hipo_jupyter.memory.words import stem
from hipo_jupyter.memory.words import words as words_of

TODAY = date(2026, 3, 12)
WORDS = ["model", "feature", "pipeline", "schema", "report", "cohort", "metric", "batch", "table",
         "window", "label", "drift"]  # fmt: skip
NONCE = re.compile(r"(</?hipo-[a-z0-9-]+?-)\d{12}(?=[ >])")  # a fence's suffix, per process


def _body(n: int, chars: int, rng: random.Random) -> str:
    lines = [f"- auc: 0.{70 + n % 30}", f"Churn run {n} on the retention data."]
    while sum(map(len, lines)) < chars:
        lines.append(" ".join(rng.choice(WORDS) for _ in range(12)) + ".")
    return "\n".join(lines)


def _memory(root: Path, chars: int) -> Memory:
    """100 runs of one experiment, ten a day, each `chars` long: all candidates of a question."""
    memory = Memory(root, config=MemoryConfig(semantic=False), today=lambda: TODAY)
    rng = random.Random(1)
    for day in range(10):
        notes = [(f"churn run {day * 10 + i}", _body(day * 10 + i, chars, rng)) for i in range(10)]
        memory.remember_all(notes, on=TODAY - timedelta(days=10 - day))
    return memory


class _Counted:
    """The characters handed to the tokenizer (tiktoken's, not ours) while counting."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.chars = 0
        encode = tiktoken.Encoding.encode_ordinary

        def counted(encoding: tiktoken.Encoding, text: str) -> list[int]:
            self.chars += len(text)
            return encode(encoding, text)

        monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", counted)


def _work(memory: Memory, counted: _Counted) -> tuple[int, int]:
    """(Python lines run, characters tokenized) of one context for a question not asked
    before, after one that read the same notes (their texts read once, as in a session)."""
    memory.context("churn retention model", budget=2000, mode="keyword")
    before = counted.chars
    lines, context = lines_run(
        lambda: memory.context("which churn run had the best auc", budget=2000, mode="keyword")
    )
    assert "Churn run" in context.text
    return lines, counted.chars - before


def test_a_long_checkpoint_costs_at_most_three_times_a_short_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = _Counted(monkeypatch)
    work = {}
    for chars in (300, 20_000):
        memory = _memory(tmp_path / str(chars), chars)
        try:
            work[chars] = _work(memory, counted)
        finally:
            memory.close()
    (short_lines, short_chars), (long_lines, long_chars) = work[300], work[20_000]
    assert long_lines <= 3 * short_lines, work
    assert long_chars <= 3 * max(short_chars, 2000), work  # 2,000: a context's own length


def _answers(memory: Memory, queries: list[str]) -> list[tuple[str, list[dict]]]:
    out = []
    for query in queries:
        text = memory.context(query, budget=1200, mode="keyword").text
        hits = [hit.to_json() for hit in memory.recall(query, k=8, mode="keyword").hits]
        out.append((NONCE.sub(r"\1N", text), hits))
    return out


def _fresh(root: Path, queries: list[str]) -> list[tuple[str, list[dict]]]:
    memory = Memory(root, config=MemoryConfig(semantic=False), today=lambda: TODAY)
    try:
        return _answers(memory, queries)
    finally:
        memory.close()


@pytest.fixture
def experiment_log(tmp_path: Path) -> Iterator[tuple[Memory, Path]]:
    memory = Memory(tmp_path, config=MemoryConfig(semantic=False), today=lambda: TODAY)
    start = TODAY - timedelta(days=6)
    for n, auc in enumerate(("0.81", "0.84", "0.83")):
        memory.remember(f"churn model v{n + 1}", f"- auc: {auc}\nTrained churn v{n + 1}.",
                        on=start + timedelta(days=n), via=VIA_CLI)  # fmt: skip
    memory.remember("Launch date", "- launch: April\nThe churn dashboard launches in April.",
                    on=start, via=VIA_CLI)  # fmt: skip
    memory.remember("Billing export", "We never got the billing export for February.",
                    on=start + timedelta(days=1), via=VIA_CLI)  # fmt: skip
    try:
        yield memory, tmp_path
    finally:
        memory.close()


def test_kept_state_never_outlives_a_write(experiment_log: tuple[Memory, Path]) -> None:
    memory, root = experiment_log
    queries = ["which churn model has the best auc", "when does the churn dashboard launch",
               "billing export"]  # fmt: skip
    assert _answers(memory, queries) == _fresh(root, queries)  # warm: every kept state filled

    memory.remember("Launch moved", "- launch: May\nWe moved the churn dashboard launch to May.",
                    on=TODAY, via=VIA_CLI)  # fmt: skip
    assert _answers(memory, queries) == _fresh(root, queries)
    assert "changed later" in _answers(memory, queries[1:2])[0][0]

    v1 = memory.recall("churn model v1", k=1, mode="keyword").hits[0]
    correct(memory, v1.checkpoint_id, "", "- auc: 0.79\nTrained churn v1 (re-scored).", via=VIA_CLI)
    v2 = next(h for h in memory.recall("churn model v2", k=3).hits if h.title == "churn model v2")
    correct(memory, v2.checkpoint_id, "", "- auc: 0.90\nAn agent's re-score.", via=VIA_MCP)
    answers = _answers(memory, queries)
    assert answers == _fresh(root, queries)
    assert "0.79" in answers[0][0] and "0.81" not in answers[0][0]  # the correction in force
    assert any(hit.get("proposal") for hit in answers[0][1])  # the agent's, a proposal

    billing = memory.recall("billing export", k=1, mode="keyword").hits[0]
    memory.forget(billing.checkpoint_id, via=VIA_CLI)
    answers = _answers(memory, queries)
    assert answers == _fresh(root, queries)
    assert "February" not in answers[2][0] and not answers[2][1]


def _every_window(text: str, wanted: frozenset[str], cap: int) -> tuple[int, int]:
    """The plain scan `passages._best_window` must agree with: every start's window, each
    sentence's stems worked out from its words."""
    sentences = [sentence for sentence, _ in passages.units(text)]
    sizes = [len(sentence) // passages.CHARS_PER_TOKEN + 2 for sentence in sentences]
    words = [frozenset(map(stem, words_of(sentence))) for sentence in sentences]
    best, best_score = (0, 1), -1
    for start in range(len(sizes)):
        end, size, found = start, 0, set()
        while end < len(sizes) and (end == start or size + sizes[end] <= cap):
            size += sizes[end]
            found |= words[end] & wanted
            end += 1
        if len(found) > best_score:
            best, best_score = (start, end), len(found)
    return best


SENTENCE = st.lists(st.sampled_from(["churn", "model", "auc", "runs", "loss", "a" * 30, "ＡＵＣ",
                                     "Models", "ﬁne", "fines", "churned", "İ", "ß", "mod"]),
                    min_size=1, max_size=12).map(" ".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    sentences=st.lists(st.tuples(SENTENCE, st.sampled_from([". ", "! ", "\n"])), max_size=30),
    wanted=st.frozensets(st.sampled_from(["churn", "model", "auc", "run", "loss", "x", "fine",
                                          "ss", "mod", "i"])),
    cap=st.sampled_from([3, 10, 40, 100]),
)
def test_the_passage_is_the_window_every_window_scanned_finds(
    sentences: list[tuple[str, str]], wanted: frozenset[str], cap: int
) -> None:
    text = "".join(sentence + end for sentence, end in sentences)
    if not passages.units(text):
        return
    assert passages._best_window(text, wanted, cap) == _every_window(text, wanted, cap)
