"""`%recall --mode` and `%hipo status` with and without semantic recall.

The tests without the extra run everywhere (onnxruntime is made unimportable when installed);
the one with the real model skips without the extra.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from claude_helpers import RaisingShell
from IPython.core.error import UsageError
from traitlets.config import Config

import hipo_jupyter.ipython as hipo_ipython
from hipo_jupyter.ipython.config import Hipo
from hipo_jupyter.memory.search.embed import INSTALL_HINT, missing_modules, semantic_available

TODAY = "2026-03-12"


@pytest.fixture(name="bare_shell")
def bare_shell_fixture(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, memory_root: Path):
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.delenv("HIPO_SEMANTIC", raising=False)
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=config)
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    yield shell
    hipo_ipython.unload_ipython_extension(shell)


def remember(shell: RaisingShell) -> None:
    shell.run_cell(
        "%%remember Heron plan #heron\n- decisions: the release of Heron moved to May\n",
        store_history=True,
    )


def test_without_the_extra_status_says_how_to_turn_it_on(
    bare_shell: RaisingShell, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    if not missing_modules():
        monkeypatch.setitem(sys.modules, "onnxruntime", None)
    bare_shell.run_cell("%load_ext hipo")
    remember(bare_shell)
    capsys.readouterr()
    bare_shell.run_cell("%hipo status")
    out = capsys.readouterr().out
    assert "semantic recall is off" in out and INSTALL_HINT in out
    view = bare_shell.run_line_magic("recall", "heron")  # hybrid by default: keyword here
    assert [hit.title for hit in view] == ["Heron plan"] and view.mode == "keyword"
    assert "(hybrid)" not in str(view)
    with pytest.raises(UsageError, match=r"hipo-jupyter\[semantic\]"):
        bare_shell.run_cell("%recall heron --mode semantic")


def test_turned_off_in_the_settings(bare_shell: RaisingShell, capsys) -> None:
    bare_shell.run_cell("%config Hipo.semantic = False")
    bare_shell.run_cell("%load_ext hipo")
    capsys.readouterr()
    bare_shell.run_cell("%hipo status")
    assert "c.Hipo.semantic = False" in capsys.readouterr().out
    with pytest.raises(UsageError, match="semantic recall is off"):
        bare_shell.run_cell("%recall heron --mode semantic")
    with pytest.raises(UsageError, match="mode must be one of .* not 'vectors'"):
        bare_shell.run_cell("%recall heron --mode vectors")


def test_the_traits_reach_the_engine_config() -> None:
    config = Config()
    config.Hipo.vector_weight = 0.8
    config.Hipo.rrf_k = 10.0
    config.Hipo.fusion = "rrf"
    config.Hipo.similarity_weight = 0.25
    config.Hipo.embedding_model = "/models/bge/model.onnx"
    memory_config = Hipo(config=config).memory_config()
    assert (memory_config.vector_weight, memory_config.rrf_k) == (0.8, 10.0)
    assert memory_config.fusion == "rrf" and Hipo().fusion == "score"
    assert memory_config.similarity_weight == 0.25
    assert memory_config.embedding_model == "/models/bge/model.onnx"
    assert Hipo().recall_mode == "auto" and Hipo().semantic is None
    with pytest.raises(Exception, match="recall_mode"):
        Hipo(recall_mode="vectors")
    with pytest.raises(Exception, match="fusion"):
        Hipo(fusion="borda")


def test_with_the_model_recall_is_hybrid_by_default(bare_shell: RaisingShell, capsys) -> None:
    on, message = semantic_available()
    if not on:
        pytest.skip(message)
    bare_shell.run_cell("%load_ext hipo")
    remember(bare_shell)
    bare_shell.run_cell(
        "%%remember Team lunch\n- outcome: pizza on Friday, everyone came\n", store_history=True
    )
    view = bare_shell.run_line_magic("recall", "what food did we eat")  # no word in common
    assert view.mode == "hybrid" and [hit.title for hit in view] == ["Team lunch"]
    assert "(hybrid)" in str(view)
    keyword = bare_shell.run_line_magic("recall", "what food did we eat --mode keyword")
    assert keyword.mode == "keyword" and len(keyword) == 0
    capsys.readouterr()
    bare_shell.run_cell("%hipo status")
    assert "semantic recall is on: all-MiniLM-L6-v2-int8" in capsys.readouterr().out
