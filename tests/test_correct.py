"""Correcting, by the user (issue 35, item 4): `%%remember --replaces ID`, `hipo remember
--replaces ID` and the MCP remember tool's `replaces` write a correction that supersedes the
checkpoint it names: recall, contexts and `%recall` show the correction, the old one only with
`--all`. Who may is `disk/trust.correction`: an agent's correction of the user's words is a
proposal the user accepts (`hipo corrections accept ID`)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from claude_helpers import RaisingShell, run
from IPython.core.error import UsageError
from test_cli import run_hipo
from test_forget import shell_fixture  # noqa: F401  (`shell`: a real shell with hipo loaded)

from hipo_jupyter.memory import HipoError, Memory
from hipo_jupyter.memory.disk.trust import (
    AGENT,
    CLAUDE,
    IMPORT,
    PROPOSES,
    REPLACES,
    USER,
    correction,
)
from hipo_jupyter.memory.views import correct

WRONG = "the renewal price is 9999 EUR a seat"
RIGHT = "the renewal price is 99 EUR a seat"


def the_id(text: str) -> str:
    words = (word.strip("(),") for word in text.split())
    return next(word for word in words if word[:4].isdigit() and "T" in word)


def test_a_wrong_fact_corrected_in_the_notebook_is_recalled_corrected(
    shell: RaisingShell, memory_root: Path, capsys: pytest.CaptureFixture
) -> None:
    run(shell, f"%%remember Renewal price [project] #pricing\n- outcome: {WRONG}")
    wrong_id = the_id(capsys.readouterr().out)
    run(shell, "%%remember Office lease [project]\n- outcome: the lease renewal is in June")
    run(shell, f"%%remember --replaces {wrong_id[-8:]}\n- outcome: {RIGHT}")
    out = capsys.readouterr().out
    assert f"replacing {wrong_id}" in out
    layer1 = Memory(memory_root).layer1().text  # ROOT.md as the write left it
    assert RIGHT in layer1 and WRONG not in layer1
    run(shell, "%hipo compact")
    layer1 = Memory(memory_root).layer1().text  # and as a compaction pass builds it
    assert RIGHT in layer1 and WRONG not in layer1

    snippets = [hit.snippet for hit in run(shell, "%recall renewal price").result.hits]
    assert any(RIGHT in s for s in snippets) and not any(WRONG in s for s in snippets)
    everything = [hit.snippet for hit in run(shell, "%recall renewal price --all").result.hits]
    assert any(WRONG in s for s in everything) and any(RIGHT in s for s in everything)
    memory = Memory(memory_root)
    sent = memory.context("what is the renewal price?").text
    assert RIGHT in sent and WRONG not in sent.split("hipo-recalled-memory", 1)[1]
    raw = (memory_root / "memory" / "2026-03-12.md").read_text()
    assert WRONG in raw and f"replaces={wrong_id}" in raw  # nothing rewritten
    recent = memory.recent_checkpoints(5, grouped=True)  # the sidebar's list
    assert wrong_id not in [c.id for c in recent] and [c.title for c in recent].count(
        "Renewal price") == 1


def test_bad_ids_are_one_line_and_write_nothing(
    shell: RaisingShell, memory_root: Path
) -> None:
    run(shell, f"%%remember Renewal price [project]\n- outcome: {WRONG}")
    raw = memory_root / "memory" / "2026-03-12.md"
    before = raw.read_bytes()
    for bad in ("2026-01-01T00:00:00Z-deadbeef", "zz"):
        with pytest.raises(UsageError, match="no checkpoint has the ID"):
            run(shell, f"%%remember --replaces {bad}\n- outcome: {RIGHT}")
    assert raw.read_bytes() == before
    done = run_hipo(memory_root, "remember", "--replaces", "nope", stdin="- outcome: x\n")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert raw.read_bytes() == before


def test_hipo_remember_replaces_in_a_real_process(memory_root: Path) -> None:
    first = run_hipo(memory_root, "remember", "Renewal price", stdin=f"- outcome: {WRONG}\n")
    assert first.returncode == 0, first.stderr
    fixed = run_hipo(memory_root, "remember", "--replaces", the_id(first.stdout),
                     stdin=f"- outcome: {RIGHT}\n")  # fmt: skip
    assert fixed.returncode == 0 and "replaces" in fixed.stdout, fixed.stderr
    shown = run_hipo(memory_root, "recall", "renewal", "price").stdout
    assert RIGHT in shown and WRONG not in shown
    everything = run_hipo(memory_root, "recall", "renewal", "price", "--all").stdout
    assert WRONG in everything and "superseded by a correction" in everything
    context = run_hipo(memory_root, "recall", "renewal", "price", "--context").stdout
    assert RIGHT in context and WRONG not in context.split("hipo-recalled-memory", 1)[1]


def test_who_may_correct_whom(memory_root: Path) -> None:
    memory = Memory(memory_root)
    users = memory.remember("Mine [project]", "- outcome: mine", via="cli")
    agents = memory.remember("Its [project]", "- outcome: its", via="mcp")
    claudes = memory.remember("Claude's [project]", "- outcome: claude", via="write-back")
    assert correction(USER, users) == REPLACES and correction(USER, claudes) == REPLACES
    assert correction(AGENT, agents) == REPLACES
    assert correction(AGENT, users) == PROPOSES and correction(AGENT, claudes) == PROPOSES
    for writer in (CLAUDE, IMPORT, "teammate"):
        assert correction(writer, agents) is None
    with pytest.raises(HipoError, match="may not correct"):
        correct(memory, agents.id, "", "- outcome: x", via="import")


def test_an_agent_corrects_what_an_agent_wrote(memory_root: Path) -> None:
    from test_mcp import call, session

    async def scenario() -> None:
        async with session(memory_root) as client:
            text, error = await call(client, "remember", title="Build", body=f"- outcome: {WRONG}")
            assert not error, text
            text, error = await call(client, "remember", title="Build",
                                     body=f"- outcome: {RIGHT}", replaces=the_id(text))  # fmt: skip
            assert not error and "replaces" in text, text
            text, error = await call(client, "recall", query="renewal price")
            assert RIGHT in text and WRONG not in text, text

    anyio.run(scenario)


def test_an_agents_correction_of_the_users_words_waits_for_the_user(memory_root: Path) -> None:
    from test_mcp import call, session

    mine = run_hipo(memory_root, "remember", "Renewal price", stdin=f"- outcome: {WRONG}\n")
    wrong_id = the_id(mine.stdout)

    async def scenario() -> None:
        async with session(memory_root) as client:
            text, error = await call(client, "remember", title="Renewal price",
                                     body=f"- outcome: {RIGHT}", replaces=wrong_id)  # fmt: skip
            assert not error and "proposes a correction" in text, text
            text, error = await call(client, "forget", id=wrong_id)
            assert error, text  # there is no forget tool: forgetting is the user's

    anyio.run(scenario)
    assert WRONG in run_hipo(memory_root, "recall", "renewal", "price").stdout  # not yet
    listing = run_hipo(memory_root, "corrections")
    assert listing.returncode == 0 and f"corrects {wrong_id}" in listing.stdout
    proposal = listing.stdout.split("\n- ", 1)[1].split(": corrects", 1)[0]
    accepted = run_hipo(memory_root, "corrections", "accept", proposal)
    assert accepted.returncode == 0, accepted.stderr
    shown = run_hipo(memory_root, "recall", "renewal", "price").stdout
    assert RIGHT in shown and WRONG not in shown
    assert "no proposed corrections" in run_hipo(memory_root, "corrections").stdout
    again = run_hipo(memory_root, "corrections", "accept", proposal)
    assert again.returncode == 2 and "no proposed correction" in again.stderr


def test_forgetting_what_a_correction_replaced_leaves_the_correction(memory_root: Path) -> None:
    from hipo_jupyter.memory.views.check import forgotten_ids_remain

    memory = Memory(memory_root)
    wrong = memory.remember("Renewal price [project]", f"- outcome: {WRONG}", via="cli")
    fixed = correct(memory, wrong.id, "", f"- outcome: {RIGHT}", via="cli")
    report = memory.forget(wrong.id, via="cli")
    assert report.clean, report.text()
    assert forgotten_ids_remain(memory)[0]  # its id, named by the correction, is no text of it
    (hit,) = memory.recall("renewal price").hits
    assert RIGHT in hit.snippet and fixed.replaces == wrong.id
