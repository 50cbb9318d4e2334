"""benchmarks/memaware.py: session parsing, the twelve-word score, and a smoke run on a tiny
hand-made data set in MemAware's layout (tests/data/memaware-tiny, ours). The real data stays
in ../shared and is only read by the one test that skips without it."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from benchmark_helpers import load_benchmark

TINY = Path(__file__).parent / "data" / "memaware-tiny"
REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks" / "memaware"


@pytest.fixture(scope="module")
def memaware():
    return load_benchmark("memaware.py", "memaware_benchmark")


def test_sessions_keep_only_user_turns_each_until_the_next_speaker(memaware) -> None:
    sessions = {s.id: s for s in memaware.load_sessions(TINY)}
    assert set(sessions) == {"4e1c09a7", "b52d7f10", "0c93e6d2"}
    degree = sessions["4e1c09a7"]
    assert str(degree.day) == "2023-04-01"
    assert len(degree.user_turns) == 2
    assert degree.user_turns[0].startswith("I finally framed my diploma")
    assert "Congratulations" not in " ".join(degree.user_turns)
    assert sessions["0c93e6d2"].user_turns[-1] == "ok"


def test_sessions_read_from_the_tarball_without_extracting(memaware, tmp_path: Path) -> None:
    with tarfile.open(tmp_path / "sessions.tar.gz", "w:gz") as tar:
        for path in sorted((TINY / "sessions").glob("*.md")):
            data = path.read_bytes()
            info = tarfile.TarInfo(f"sessions/{path.name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    from_tar = memaware.load_sessions(tmp_path)
    assert from_tar == memaware.load_sessions(TINY)
    assert not (tmp_path / "sessions").exists()


def test_a_session_counts_with_twelve_consecutive_words_or_a_whole_short_turn(memaware) -> None:
    spans = memaware.Spans(memaware.load_sessions(TINY))
    eleven = "I graduated in Business Administration from a state university back in"
    assert not spans.found(f"User: {eleven}", ["4e1c09a7"])
    assert spans.found(f"L3 User: ... {eleven} 2015, ...", ["4e1c09a7"])  # 12 words, any case
    assert spans.found("- OK -", ["0c93e6d2"])  # the whole of a short turn
    assert not spans.found("ok then", ["4e1c09a7"])  # not a turn of that session
    assert not spans.found("looked", ["0c93e6d2"])  # whole words only


def test_smoke_run_scores_the_systems_through_memory_context(memaware, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    questions = TINY / "questions.json"
    assert memaware.main([str(TINY), "--questions", str(questions), "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert (result["sessions"], result["user_turns"], result["questions"]) == (3, 5, 3)
    assert result["systems"]["hipo"]["via"] == "Memory.context"
    assert result["systems"]["bm25"]["via"] == "SearchIndex.search"
    assert "ask" in result["systems"]
    for name, system in result["systems"].items():
        if name == "ask":  # what %%ask sends by default: Layer 1, then recall at 2,000 tokens
            assert set(system["budgets"]) == {"2000"}
            assert system["via"] == "%%ask: Layer 1 + Memory.context"
            assert system["budgets"]["2000"]["by_difficulty"]["easy"]["score"] == 1.0
            continue
        assert set(system["budgets"]) == {"500", "1000", "2000", "4000"}
        for budget, cell in system["budgets"].items():
            assert set(cell["by_difficulty"]) == {"easy", "medium", "hard"}
            assert cell["mean_tokens"] <= int(budget)
    # The easy question shares words with its turn: found at any budget. The medium and hard
    # ones share none (session ids are opaque, as in MemAware, so no id leaks a word): keyword
    # recall cannot find them, and a context's Layer 1 holds only lines about the question
    # (ROOT's Active Context, which quotes the five turns, is left to recall).
    hipo = result["systems"]["hipo"]["budgets"]
    for cell in hipo.values():
        assert cell["by_difficulty"]["easy"]["score"] == 1.0
        assert cell["by_difficulty"]["medium"]["score"] == 0.0
        assert cell["by_difficulty"]["hard"]["score"] == 0.0


def test_bad_arguments_exit_2(memaware, tmp_path: Path, capsys) -> None:
    questions = str(TINY / "questions.json")
    assert memaware.main([str(tmp_path / "none"), "--questions", questions]) == 2
    assert memaware.main([str(TINY), "--questions", questions, "--systems", "gpt"]) == 2
    assert "unknown systems" in capsys.readouterr().err


@pytest.mark.skipif(not (REAL / "questions-dev.json").is_file(), reason="MemAware is not here")
def test_the_real_sessions_parse(memaware) -> None:
    sessions = memaware.load_sessions(REAL)
    assert len(sessions) == 1307
    questions = memaware.load_questions(REAL / "questions-dev.json")
    known = {s.id for s in sessions}
    assert len(questions) == 300 and all(set(q.sessions) <= known for q in questions)


def test_conversation_import_pairs_each_user_turn_with_its_reply(memaware, tmp_path) -> None:
    """Issue 25: the default import has both roles, as `hipo import` reads a chat: each user
    turn and the reply to it are one checkpoint; `--import user-turns` keeps the user alone."""
    from hipo_jupyter.memory.disk.checkpoint import parse_log

    sessions = memaware.load_sessions(TINY)
    memory = memaware.UserMemory(sessions, tmp_path / "conversation")
    found = [
        c
        for day in memory.memory.store.raw_days()
        for c in parse_log(memory.memory.read(f"memory/{day.isoformat()}.md"))
    ]
    memory.close()
    assert len(found) == 5  # the five user turns, each with its reply
    degree = next(c for c in found if (c.field("request") or "").startswith("I finally framed"))
    assert "Congratulations" in (degree.field("outcome") or "")
    turns = memaware.records(sessions, "user-turns")
    assert [r.title for r in turns] == ["User"] * 5


def test_the_run_reports_candidate_coverage_beside_the_score(memaware, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    args = [str(TINY), "--questions", str(TINY / "questions.json"), "--json", str(out)]
    assert memaware.main([*args, "--import", "user-turns"]) == 0
    result = json.loads(out.read_text())
    assert result["import"] == "user-turns" and result["peak_rss_mb"] > 0
    coverage = result["systems"]["hipo"]["coverage"]
    assert coverage["candidates"] == 166
    assert coverage["30"] == coverage["all"] == pytest.approx(1 / 3, abs=1e-3)  # the easy one
    assert len(result["systems"]["hipo"]["found"]["2000"]) == 3


def test_a_kept_memory_is_reused_by_the_next_run(memaware, tmp_path: Path) -> None:
    """`--keep DIR` twice: the second run reads the memory the first imported (the import adds
    nothing twice, so an embedded memory is not embedded again) and scores the same."""
    keep, first, second = tmp_path / "keep", tmp_path / "1.json", tmp_path / "2.json"
    args = [str(TINY), "--questions", str(TINY / "questions.json"), "--systems", "hipo"]
    assert memaware.main([*args, "--keep", str(keep), "--json", str(first)]) == 0
    logs = sorted((keep / "hipo" / "memory").glob("2023-*.md"))
    before = {path: path.read_text() for path in logs}
    assert memaware.main([*args, "--keep", str(keep), "--json", str(second)]) == 0
    assert {path: path.read_text() for path in logs} == before
    found = [json.loads(p.read_text())["systems"]["hipo"]["found"] for p in (first, second)]
    assert found[0] == found[1]


def test_crossval_reads_a_kept_memory_of_the_system_asked(tmp_path: Path) -> None:
    crossval = load_benchmark("crossval.py", "crossval_benchmark")
    keep = tmp_path / "keep"
    folds = crossval.memaware_folds(
        TINY, TINY / "questions.json", 2000, 3, (), system="hipo", keep=keep
    )
    assert (keep / "hipo" / "memory").is_dir()  # the memory a later sweep reuses
    assert sum(fold[1] for fold in folds.values()) == 3
    # each fold's questions by difficulty too, for the per-category cross-validated figures
    assert sum(n for fold in folds.values() for _, n in fold[2].values()) == 3
    args = crossval.parse_args(["memaware", str(TINY), "--system", "hipo_semantic"])
    assert args.system == "hipo_semantic" and args.keep is None
