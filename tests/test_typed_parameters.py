"""Memory's write doors take typed keyword parameters, never `**where: Any` (issue 54, item 1).

`write_checkpoint` and `remember_all` had traded their keywords for `**where: Any` to save
lines; then `remember` lost `provider=` and only a clean-clone CI run caught it. With typed
keywords a misspelt or dropped one fails where it is called, and every provenance keyword the
write path knows (`new_checkpoint`, `Writer.many`) is one the facade names too. The same for
a correction (`views.correct`, `accept_correction`) and the team contract's `hidden=`.
"""

from __future__ import annotations

import inspect
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import CheckpointDraft, Memory, TeamBackend
from hipo_jupyter.memory.backends import NoTeam
from hipo_jupyter.memory.disk.checkpoint import parse_log
from hipo_jupyter.memory.intake.writing import Writer, new_checkpoint
from hipo_jupyter.memory.views import accept_correction, correct
from hipo_jupyter.team.link import TeamLink

DAY = date(2026, 3, 12)


def keywords(function: object, *, leave_out: tuple[str, ...] = ()) -> dict[str, object]:
    """A function's keyword-only parameters: name -> (default, annotation)."""
    parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    return {
        p.name: (p.default, p.annotation)
        for p in parameters
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in leave_out
    }


@pytest.mark.parametrize("method", ["write_checkpoint", "remember_all", "remember", "forget"])
def test_no_write_door_takes_untyped_keywords(method: str) -> None:
    parameters = inspect.signature(getattr(Memory, method)).parameters.values()
    assert not [p.name for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]


@pytest.mark.parametrize("door", [correct, accept_correction])
def test_a_correction_takes_no_untyped_keywords(door: object) -> None:
    parameters = inspect.signature(door).parameters.values()  # type: ignore[arg-type]
    assert not [p.name for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
    if door is correct:  # as `remember` reads them, and where a magic wrote it
        drafted = keywords(CheckpointDraft.parse, leave_out=("trigger", "rule"))
        assert {k: v for k, v in keywords(correct).items() if k in drafted} == drafted
        assert {"notebook", "cell", "via"} <= set(keywords(correct))


def test_the_doors_name_every_keyword_the_write_path_takes() -> None:
    """A keyword `new_checkpoint` or `Writer.many` takes and the door does not name could not
    be passed at all; one named with another default or type would mean another thing."""
    assert keywords(Memory.write_checkpoint) == keywords(new_checkpoint)
    assert keywords(Memory.remember_all) == keywords(Writer.many, leave_out=("today",))
    remembered = keywords(Memory.remember)
    for name in ("notebook", "cell", "via", "model", "provider"):
        assert remembered[name] == keywords(new_checkpoint)[name], name


def test_each_keyword_reaches_the_raw_log(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: DAY)
    source = memory.remember("Pricing [project]", "- decisions: cut the starter tier", via="cli")
    written = memory.write_checkpoint(
        CheckpointDraft.parse("Reply", "- outcome: the tier is cut"),
        notebook="analysis.ipynb",
        cell="7",
        via="write-back",
        model="claude-x",
        provider="anthropic",
        conversation="c0ffee",
        sources=[source.id or ""],
    )
    remembered = memory.remember("Call", "- outcome: renewed", via="magic", provider="openai")
    both = memory.remember_all([("One", "- outcome: a"), ("Two", "- outcome: b")],
                               on=DAY.isoformat(), notebook="n.ipynb", via="cli")  # fmt: skip
    memory.close()

    logged = {cp.id: cp for cp in parse_log((memory_root / "memory" / "2026-03-12.md").read_text())}
    back = logged[written.id]
    assert (back.notebook, back.cell, back.via, back.model) == (
        "analysis.ipynb", "7", "write-back", "claude-x")  # fmt: skip
    assert (back.provider, back.conversation, back.sources) == ("anthropic", "c0ffee", (source.id,))
    assert logged[remembered.id].provider == "openai"  # what `remember` once dropped
    assert [(logged[cp.id].notebook, logged[cp.id].via) for cp in both] == [("n.ipynb", "cli")] * 2


def test_a_misspelt_keyword_fails_before_anything_is_written(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: DAY)
    with pytest.raises(TypeError):
        memory.write_checkpoint(CheckpointDraft.parse("Reply", "- outcome: x"), provenance="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        memory.remember_all([("One", "- outcome: a")], day=DAY)  # type: ignore[call-arg]
    memory.close()
    assert not (memory_root / "memory" / "2026-03-12.md").exists()


def test_the_team_contract_names_the_forget_filter_it_is_handed() -> None:
    """`hidden=` (a teammate's copy of forgotten content, left out) is a typed parameter of
    the contract, of the backend of no team and of the PostgreSQL one alike."""
    contract = keywords(TeamBackend.recall)
    assert "hidden" in contract
    assert keywords(NoTeam.recall) == contract == keywords(TeamLink.recall)
