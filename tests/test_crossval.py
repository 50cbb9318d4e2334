"""benchmarks/crossval.py: the fold-by-fold choice, and a run on the tiny LoCoMo conversation
that passes a `RecallSettings` per combination (nothing of the engine patched)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_helpers import load_benchmark

from hipo_jupyter.memory import DEFAULT_SETTINGS, RecallSettings

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


def test_a_locomo_sweep_passes_each_settings_object_and_patches_nothing(tmp_path: Path) -> None:
    shipped = DEFAULT_SETTINGS.day_weight
    out = tmp_path / "cv.json"
    args = ["locomo", str(TINY), "--set", f"settings.day_weight={shipped},0.3", "--json", str(out)]
    assert crossval.main(args) == 0
    assert RecallSettings() == DEFAULT_SETTINGS and DEFAULT_SETTINGS.day_weight == shipped
    report = json.loads(out.read_text())
    assert list(report["dev"]) == [f"day_weight={shipped}", "day_weight=0.3"]
    assert report["default"] == f"day_weight={shipped}" and len(report["folds"]) == 1
    assert 0.0 <= report["cross_validated"] <= 1.0
    per = report["by_category"]  # the categories it asks (no open-domain one), both ways
    assert set(per["cross_validated"]) == set(per["default_dev"]) == {"1", "2", "4"}


def test_a_setting_recall_lacks_is_one_line() -> None:
    try:
        crossval.main(["locomo", str(TINY), "--set", "settings.nope=1"])
    except SystemExit as stop:
        assert "RecallSettings has no nope" in str(stop)
    else:
        raise AssertionError("an unknown setting was accepted")


def test_an_old_module_constant_names_the_field_to_use() -> None:
    try:
        old = "hipo_jupyter.memory.recall.ranking.DAY_WEIGHT=1"
        crossval.main(["locomo", str(TINY), "--set", old])
    except SystemExit as stop:
        assert str(stop).count("\n") == 0 and "settings.day_weight" in str(stop)
    else:
        raise AssertionError("a module constant was patched")
