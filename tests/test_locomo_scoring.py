"""benchmarks/locomo.py: its scoring on a tiny hand-made conversation whose right answers are
known, the data defects LoCoMo has, and a smoke run of the whole benchmark.

The tiny conversation (tests/data/tiny-conversation.json) is ours, in LoCoMo's schema. The real
LoCoMo file is CC BY-NC and never committed: the one test that reads it skips when it is absent.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from benchmark_helpers import load_benchmark

from hipo_jupyter.memory.tree.tokens import count_tokens

REPO = Path(__file__).resolve().parent.parent
LOCOMO = REPO / "benchmarks" / "locomo.py"
TINY = Path(__file__).parent / "data" / "tiny-conversation.json"
DEV = REPO.parent / "shared" / "benchmarks" / "locomo" / "locomo-dev.json"


def _load():
    return load_benchmark("locomo.py", "locomo_benchmark")


@pytest.fixture(scope="module")
def locomo():
    return _load()


@pytest.fixture(scope="module")
def tiny(locomo):
    (conversation,) = locomo.load_conversations(TINY)
    return conversation


# --- the data and its defects -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("D1:3", "D1:3"),
        ("D:11:26", "D11:26"),
        ("D30:05", "D30:5"),
        (" D2:1 ", "D2:1"),
        ("D", None),
        ("D1", None),
        ("1:3", None),
    ],
)
def test_dialogue_ids_are_normalised(locomo, raw, canonical) -> None:
    assert locomo.normalize_dia_id(raw) == canonical


def test_evidence_strings_are_split_fixed_and_counted(locomo) -> None:
    defects = Counter()
    ids = locomo.evidence_ids(["D8:6; D9:17", "D:1:3", "D2:04", "D", "D8:6"], defects)
    assert ids == ["D8:6", "D9:17", "D1:3", "D2:4"]
    assert defects == Counter(
        multi_id_evidence_strings=1, ids_normalised=2, malformed_ids_dropped=1
    )


def test_the_tiny_conversation_loads_with_its_defects_handled(tiny) -> None:
    assert tiny.sample_id == "tiny-1"
    assert len(tiny.records) == 8
    assert [(q.category, q.evidence) for q in tiny.questions] == [
        ("4", ("D1:1",)),
        ("2", ("D2:2",)),
        ("1", ("D1:4", "D2:1")),  # "D1:4; D2:1"
        ("4", ("D1:3",)),  # "D:1:3"
        ("1", ("D2:4",)),  # "D2:04"
    ]  # no evidence, a missing turn, only "D", and category 5: not scored
    assert tiny.defects == Counter(
        multi_id_evidence_strings=1,
        ids_normalised=2,
        malformed_ids_dropped=1,
        missing_turn_ids_dropped=1,
        questions_without_evidence=3,
    )
    assert tiny.turn_text["D2:4"] == "Two hours and five minutes."


# --- contexts and scores ------------------------------------------------------------------------


def turns(locomo, conversation):
    """The conversation's turns as the benchmark renders them, by dia id."""
    out = {}
    for order, record in enumerate(conversation.records, start=1):
        dia = record.source.split(":", 1)[1]
        out[dia] = locomo.Turn(record.day.isoformat(), order, record.title, record.body)
    return out


def test_render_groups_turns_by_day_in_time_order(locomo, tiny) -> None:
    by_id = turns(locomo, tiny)
    text = locomo.render([by_id["D2:2"], by_id["D1:3"], by_id["D2:1"]], prefix="LAYER ONE")
    assert text == (
        "LAYER ONE\n"
        "2023-05-08:\n"
        "Ana: She sleeps on my keyboard all day.\n"
        "2023-06-27:\n"
        "Ben: I finished my first vase in pottery class.\n"
        "Ana: Lovely! I ran the Lisbon half marathon on Sunday."
    )


def test_pack_keeps_the_budget_best_first_and_skips_what_does_not_fit(locomo, tiny) -> None:
    by_id = turns(locomo, tiny)
    ranked = [by_id["D1:4"], by_id["D2:4"], by_id["D1:1"]]
    one_day = count_tokens(locomo.render([by_id["D2:4"]]))
    text, tokens = locomo.pack(ranked, one_day + 2)
    # D1:4 (long, with its image caption) does not fit; D2:4 does; then nothing else
    assert text == locomo.render([by_id["D2:4"]]) and tokens == one_day
    everything, total = locomo.pack(list(by_id.values()), 10_000)
    assert total == count_tokens(everything) and all(t.line() in everything for t in by_id.values())
    for budget in (5, 20, 40, 80):
        text, tokens = locomo.pack(list(by_id.values()), budget, prefix="")
        assert tokens == count_tokens(text) <= budget
    # the prefix (Layer 1) is counted inside the budget
    text, tokens = locomo.pack(ranked, 30, prefix="word " * 20)
    assert tokens <= 30 and text.startswith("word")


def test_evidence_is_found_by_its_text_whatever_the_spacing(locomo) -> None:
    context = "2023-05-08:\nAna: She sleeps   on my\nkeyboard all day."
    texts = ["She sleeps on my keyboard all day.", "Two hours and five minutes."]
    assert locomo.evidence_found(context, texts) == 1


def test_scores_of_known_contexts(locomo, tiny) -> None:
    """A ranking that puts the right turn first at every question scores 1 everywhere; one that
    never finds D2:1 misses half of the multi-hop evidence and that question's all-evidence."""
    by_id = turns(locomo, tiny)
    by_text = {q.text: q for q in tiny.questions}

    def oracle(question: str):
        return [by_id[i] for i in by_text[question].evidence]

    tallies = {budget: locomo.Tally() for budget in locomo.BUDGETS}
    locomo.score(tiny, oracle, tallies)
    for budget in locomo.BUDGETS:
        summary = tallies[budget].summary()
        assert (summary["questions"], summary["evidence_recall"]) == (5, 1.0)
        assert summary["all_evidence_rate"] == 1.0

    def blind_to_vases(question: str):
        return [t for t in oracle(question) if "vase" not in t.text]

    tallies = {budget: locomo.Tally() for budget in locomo.BUDGETS}
    locomo.score(tiny, blind_to_vases, tallies)
    summary = tallies[2000].summary()
    assert summary["evidence_recall"] == pytest.approx((4 + 0.5) / 5)
    assert summary["all_evidence_rate"] == pytest.approx(4 / 5)
    multi_hop = tallies[2000].summary("1")
    assert (multi_hop["questions"], multi_hop["all_evidence_rate"]) == (2, 0.5)
    assert multi_hop["evidence_recall"] == pytest.approx(0.75)
    assert tallies[2000].summary("3")["questions"] == 0

    tallies = {budget: locomo.Tally() for budget in locomo.BUDGETS}
    locomo.score(tiny, lambda q: [], tallies)  # an empty context finds nothing
    assert tallies[500].summary()["all_evidence_rate"] == 0.0
    assert tallies[500].summary()["mean_tokens"] == 0


def test_layer1_takes_at_most_its_share_of_the_budget(locomo, tiny) -> None:
    by_id = turns(locomo, tiny)
    tallies = {budget: locomo.Tally() for budget in locomo.BUDGETS}
    huge_layer1 = "memory index line\n" * 2000
    locomo.score(tiny, lambda q: list(by_id.values()), tallies, prefix=huge_layer1)
    for budget in locomo.BUDGETS:
        summary = tallies[budget].summary()
        assert summary["mean_tokens"] <= budget
        assert summary["all_evidence_rate"] == 1.0  # the 8 turns fit in what is left


# --- the whole benchmark ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, str]:
    folder = tmp_path_factory.mktemp("locomo")
    out, png = folder / "out.json", folder / "plot.png"
    args = [sys.executable, str(LOCOMO), str(TINY), "--json", str(out)]
    if importlib.util.find_spec("matplotlib"):
        args += ["--plot", str(png)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), png, done.stdout


def test_smoke_run_writes_the_documented_json(tiny_run, locomo) -> None:
    result, _, _ = tiny_run
    assert (result["dataset"], result["conversations"], result["questions"]) == (
        "tiny-conversation.json",
        1,
        5,
    )
    assert result["defects"]["questions_without_evidence"] == 3
    assert set(result["systems"]) == {"hipo", "bm25", "full_context", "hipo_whoosh"}
    # the hipo systems score what users get: the text of Memory.context
    assert result["systems"]["hipo"]["via"] == result["systems"]["hipo_whoosh"]["via"]
    assert result["systems"]["hipo"]["via"] == "Memory.context"
    assert result["systems"]["bm25"]["via"] == "SearchIndex.search"
    for system in result["systems"].values():
        assert set(system["budgets"]) == {"500", "1000", "2000", "4000"}
        assert system["seconds"] >= 0
        for cell in system["budgets"].values():
            assert {"evidence_recall", "all_evidence_rate", "mean_tokens"} <= set(cell)
            assert set(cell["by_category"]) == {"1", "2", "3", "4"}
            assert cell["by_category"]["1"]["questions"] == 2
    full = result["systems"]["full_context"]["budgets"]["500"]
    assert full["evidence_recall"] == full["all_evidence_rate"] == 1.0
    tokens = full["mean_tokens"]
    assert tokens > 100  # every turn, whatever the budget
    # the tiny conversation fits every budget: the memory systems find everything too
    for name in ("hipo", "bm25", "hipo_whoosh"):
        cell = result["systems"][name]["budgets"]["4000"]
        assert cell["all_evidence_rate"] == 1.0 and cell["mean_tokens"] <= 4000


def test_smoke_run_prints_the_table_and_draws_the_plot(tiny_run) -> None:
    _, png, stdout = tiny_run
    assert stdout.splitlines()[0].startswith("| system | budget | all-evidence |")
    assert "| full_context | 2000 | 1.000 |" in stdout
    if importlib.util.find_spec("matplotlib"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_arguments_exit_2(locomo, tmp_path: Path, capsys) -> None:
    assert locomo.main([str(tmp_path / "missing.json")]) == 2
    assert locomo.main([str(TINY), "--systems", "hipo,gpt"]) == 2
    assert "unknown systems" in capsys.readouterr().err


def test_plot_without_matplotlib_says_how_to_get_it_in_one_line(
    locomo, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    assert locomo.main([str(TINY), "--plot", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "hipo-jupyter[bench]" in err
    assert "Traceback" not in err and not (tmp_path / "p.png").exists()


def test_a_subset_of_systems_in_process(locomo, tmp_path: Path) -> None:
    result = locomo.run(TINY, ["bm25", "full_context"], tmp_path)
    assert set(result["systems"]) == {"bm25", "full_context"}
    assert not any(path.name.endswith("whoosh") for path in tmp_path.iterdir())


@pytest.mark.skipif(not DEV.is_file(), reason="the LoCoMo dev file is not here (CC BY-NC)")
def test_the_real_file_defects_and_full_context_cost(locomo, tmp_path: Path) -> None:
    conversations = locomo.load_conversations(DEV)
    defects = sum((c.defects for c in conversations), Counter())
    assert defects == Counter(
        multi_id_evidence_strings=1,  # "D8:6; D9:17"
        ids_normalised=1,  # "D:11:26"
        malformed_ids_dropped=1,  # "D"
        missing_turn_ids_dropped=1,  # "D10:19" in conv-42
        questions_without_evidence=2,  # two category-3 questions
    )
    first = conversations[0]
    memory = locomo.ConversationMemory(first, tmp_path / "m", "fts5")
    try:
        everything = locomo.render(memory.all_turns())
        assert all(
            locomo.normalize(t) in locomo.normalize(everything) for t in first.turn_text.values()
        )
        assert count_tokens(everything) > 15_000
    finally:
        memory.close()
        shutil.rmtree(tmp_path / "m", ignore_errors=True)
