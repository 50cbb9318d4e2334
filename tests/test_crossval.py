"""benchmarks/crossval.py: the fold-by-fold choice, and a run on the tiny LoCoMo conversation
that sets an engine constant for the run and puts it back."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_helpers import load_benchmark

from hipo_jupyter.memory.recall import ranking

TINY = Path(__file__).parent / "data" / "tiny-conversation.json"
crossval = load_benchmark("crossval.py", "crossval_benchmark")


def test_each_fold_is_scored_with_the_setting_best_on_the_others() -> None:
    a, b = (("m.X", 1),), (("m.X", 2),)
    results = {
        a: {"f0": (1.0, 10), "f1": (9.0, 10), "f2": (9.0, 10)},  # best on f1 and f2
        b: {"f0": (8.0, 10), "f1": (5.0, 10), "f2": (5.0, 10)},  # best on f0 alone
    }
    done = crossval.cross_validate(results)
    # f0 held out: on f1+f2 a has 18 and b 10, so a, which scores 1 on f0; f1 held out: on
    # f0+f2 a has 10 and b 13, so b, which scores 5; f2 held out: likewise b, 5.
    assert done["chosen"] == {"f0": a, "f1": b, "f2": b}
    assert done["cross_validated"] == (1.0 + 5.0 + 5.0) / 30
    report = crossval.report(results, a, 2000)
    assert report["default_dev"] == round(19 / 30, 4) and report["best_dev"]["score"] == 0.6333


def test_each_category_is_scored_dev_and_cross_validated_side_by_side() -> None:
    a, b = (("m.X", 1),), (("m.X", 2),)
    results = {  # a fold's (sum, items) split in two categories, "1" and "2"
        a: {"f0": (1.0, 10, {"1": (0.0, 5), "2": (1.0, 5)}),
            "f1": (9.0, 10, {"1": (4.0, 5), "2": (5.0, 5)}),
            "f2": (9.0, 10, {"1": (4.0, 5), "2": (5.0, 5)})},
        b: {"f0": (8.0, 10, {"1": (3.0, 5), "2": (5.0, 5)}),
            "f1": (5.0, 10, {"1": (1.0, 5), "2": (4.0, 5)}),
            "f2": (5.0, 10, {"1": (2.0, 5), "2": (3.0, 5)})},
    }  # fmt: skip
    report = crossval.report(results, a, 2000)
    # a's dev figures per category; held out: a on f0, b on f1 and f2 (as above)
    assert report["by_category"]["default_dev"] == {"1": round(8 / 15, 4), "2": round(11 / 15, 4)}
    assert report["by_category"]["cross_validated"] == {"1": 0.2, "2": round(8 / 15, 4)}


def test_a_locomo_sweep_sets_the_constant_and_puts_it_back(tmp_path: Path) -> None:
    shipped = ranking.DAY_WEIGHT
    out = tmp_path / "cv.json"
    name = "hipo_jupyter.memory.recall.ranking.DAY_WEIGHT"
    args = ["locomo", str(TINY), "--set", f"{name}={shipped},0.3", "--json", str(out)]
    assert crossval.main(args) == 0
    restored = ranking.DAY_WEIGHT
    assert restored == shipped
    report = json.loads(out.read_text())
    assert list(report["dev"]) == [f"DAY_WEIGHT={shipped}", "DAY_WEIGHT=0.3"]
    assert report["default"] == f"DAY_WEIGHT={shipped}" and len(report["folds"]) == 1
    assert 0.0 <= report["cross_validated"] <= 1.0
    per = report["by_category"]  # the categories it asks (no open-domain one), both ways
    assert set(per["cross_validated"]) == set(per["default_dev"]) == {"1", "2", "4"}


def test_a_setting_the_engine_lacks_is_one_line(capsys) -> None:
    try:
        crossval.main(["locomo", str(TINY), "--set", "hipo_jupyter.memory.recall.ranking.NOPE=1"])
    except SystemExit as stop:
        assert "has no NOPE" in str(stop)
    else:
        raise AssertionError("an unknown constant was accepted")
