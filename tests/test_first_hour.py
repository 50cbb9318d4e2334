"""A notebook user's first hour (issue 53): `%load_ext hipo` leaves the notebook's folder as
it was but for memory/ (no template working files, no empty knowledge/ or plans/), a folder
Hipocampus set up opens as it is and passes `hipo check`, and the untouched templates such a
folder holds cost the prompt nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claude_helpers import new_shell

from hipo_jupyter.cli import commands as cli
from hipo_jupyter.ipython import current, unload_ipython_extension
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.tree.layer1 import TEMPLATES

TODAY = "2026-03-12"


@pytest.fixture
def load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture):
    """load(root) -> a shell with hipo loaded on `root`, as a user does it."""
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    shells = []

    def loaded(root: Path):
        shell = new_shell()
        shell.run_cell(f"%config Hipo.root = {str(root)!r}")
        shell.run_cell("%load_ext hipo")
        capsys.readouterr()
        shells.append(shell)
        return shell

    yield loaded
    for shell in shells:
        unload_ipython_extension(shell)


def test_load_ext_writes_only_memory_into_the_notebooks_folder(load, memory_root: Path) -> None:
    (memory_root / "analysis.ipynb").write_text("{}", encoding="utf-8")
    shell = load(memory_root)
    assert sorted(os.listdir(memory_root)) == ["analysis.ipynb", "memory"]
    layer1 = current(shell).memory.layer1()
    assert [part.tokens for part in layer1.parts if part.name != "ROOT"] == [0, 0, 0]
    shell.run_cell("%%remember Pricing review #pricing\n- decisions: cut the starter tier\n")
    assert sorted(os.listdir(memory_root)) == ["analysis.ipynb", "memory"]
    # knowledge/ is made when something is first kept there
    path = current(shell).memory.save_knowledge("Long reply", "a long reply\n" * 20)
    assert (memory_root / path).is_file() and path.startswith("knowledge/")
    assert not (memory_root / "plans").exists()


def test_a_hipocampus_folder_opens_as_it_is_and_passes_check(
    load, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    for name in TEMPLATES:  # what `npx hipocampus init` (and `hipo init`) leave
        (memory_root / f"{name}.md").write_text(TEMPLATES[name], encoding="utf-8")
    for folder in ("knowledge", "plans", "memory"):
        (memory_root / folder).mkdir()
    (memory_root / "memory" / f"{TODAY}.md").write_text(
        "## Pricing review [project]\n- decisions: cut the starter tier by 15%\n",
        encoding="utf-8",
    )
    before = {name: (memory_root / f"{name}.md").read_bytes() for name in TEMPLATES}
    shell = load(memory_root)
    assert {name: (memory_root / f"{name}.md").read_bytes() for name in TEMPLATES} == before
    layer1 = current(shell).memory.layer1()
    assert "starter tier" in layer1.text and "SCRATCHPAD" not in layer1.text
    assert cli.main(["--root", str(memory_root), "check"]) == 0, capsys.readouterr().out


def test_hipo_init_still_makes_the_whole_layout(memory_root: Path) -> None:
    memory = Memory(memory_root)
    assert memory.init() == ["SCRATCHPAD.md", "WORKING.md", "TASK-QUEUE.md"]
    assert sorted(os.listdir(memory_root)) == [
        "SCRATCHPAD.md", "TASK-QUEUE.md", "WORKING.md", "knowledge", "memory", "plans",
    ]  # fmt: skip
    memory.close()
