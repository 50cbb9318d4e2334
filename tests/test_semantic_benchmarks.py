"""The benchmarks' semantic columns: `hipo_semantic` in the LoCoMo run, `fts5+semantic` in the
scale run. The runs with the model skip without the extra."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchmark_helpers import load_benchmark

from hipo_jupyter.memory.search.embed import missing_modules, semantic_available

TINY = Path(__file__).parent / "data" / "tiny-conversation.json"


def _load(name: str):
    return load_benchmark(name, f"{name}_semantic_benchmark")


@pytest.fixture(autouse=True)
def _semantic_not_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIPO_SEMANTIC", raising=False)


def test_scale_columns_name_the_backend_and_semantic_recall() -> None:
    scale = _load("scale.py")
    assert (scale.memory_config("fts5").search_backend, scale.memory_config("fts5").semantic) == (
        "fts5",
        False,
    )
    both = scale.memory_config("whoosh+semantic")
    assert (both.search_backend, both.semantic) == ("whoosh", True)


def test_locomo_refuses_hipo_semantic_without_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    locomo = _load("locomo.py")
    if not missing_modules():
        monkeypatch.setitem(sys.modules, "onnxruntime", None)
    assert locomo.main([str(TINY), "--systems", "bm25", "--semantic"]) == 2
    assert "hipo-jupyter[semantic]" in capsys.readouterr().err


def test_locomo_runs_hipo_semantic_beside_the_others(tmp_path: Path) -> None:
    on, message = semantic_available()
    if not on:
        pytest.skip(message)
    locomo = _load("locomo.py")
    systems = ["hipo", "bm25", "hipo_semantic", "hipo_semantic_rrf"]
    result = locomo.run(TINY, systems, tmp_path)
    assert set(result["systems"]) == set(systems)
    for name in ("hipo_semantic", "hipo_semantic_rrf"):
        semantic = result["systems"][name]
        assert semantic["setup_seconds"] > 0
        # the tiny conversation fits every budget: semantic recall finds everything too
        assert semantic["budgets"]["4000"]["evidence_recall"] == 1.0
    assert [p.name.rsplit("-", 1)[1] for p in tmp_path.iterdir()].count("semantic") == 1


def test_memaware_reindex_rss_measures_the_hipo_command(tmp_path: Path, capsys) -> None:
    """`memaware.py DIR --reindex-rss`: the sessions imported without vectors, then `hipo
    reindex` in a process of its own embeds them all; its peak RSS and time are reported."""
    on, message = semantic_available()
    if not on:
        pytest.skip(message)
    memaware = _load("memaware.py")
    tiny = Path(__file__).parent / "data" / "memaware-tiny"
    out = tmp_path / "rss.json"
    assert (
        memaware.main([str(tiny), "--reindex-rss", "--json", str(out), "--keep", str(tmp_path)])
        == 0
    )
    assert "peak RSS" in capsys.readouterr().out
    reindex = json.loads(out.read_text())["reindex"]
    assert reindex["vectors"] > 0 and reindex["output"][0].startswith("Indexed ")
    assert reindex["peak_rss_mb"] > 50 and reindex["seconds"] > 0
    assert memaware.main([str(tiny)]) == 2  # without --reindex-rss the questions are needed
    assert "--questions" in capsys.readouterr().err
