"""Layer 1 shows a checkpoint the moment it is written, from every front end (`root_update`).

A `%remember` is in the next `%hipo layer1` of the same shell; a `hipo remember` process is in
the next `hipo layer1` process; `hipo mcp` (which runs the session-start ritual as it starts)
answers `layer1` with a root only the CLI ever wrote. The update is incremental: a new process
adds to the topics a pass saved instead of reading every raw log, and it never waits for a
compaction pass that holds the lock.
"""

from __future__ import annotations

import os
import subprocess
from datetime import date
from pathlib import Path

import anyio
import pytest
from claude_helpers import RaisingShell
from traitlets.config import Config

import hipo_jupyter.ipython as hipo_ipython
from hipo_jupyter.mcp import server as hipo_mcp
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory import memory as memory_module
from hipo_jupyter.memory.tree.root_update import compaction_lock_nowait

TODAY = "2026-03-12"
PINNED = date.fromisoformat(TODAY)
REPO = Path(__file__).resolve().parent.parent


def root_sections(root: Path) -> str:
    return (root / "memory" / "ROOT.md").read_text("utf-8")


def run_hipo(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env.update({"HIPO_TODAY": TODAY, "HIPO_SEMANTIC": "0"})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [*hipo_mcp.hipo_command(), "--root", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
    )


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, memory_root: Path, capsys):
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = RaisingShell(config=config)
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%load_ext hipo")
    capsys.readouterr()
    yield shell
    hipo_ipython.unload_ipython_extension(shell)


def test_remember_then_layer1_in_one_shell(shell: RaisingShell, capsys) -> None:
    shell.run_cell("%hipo layer1")
    assert "(no topics yet)" in capsys.readouterr().out  # the session started empty
    shell.run_cell("%remember Launch date #launch: moved the launch to May", store_history=True)
    shell.run_cell("%%remember Diet [user] #food\nI am vegetarian\n", store_history=True)
    capsys.readouterr()
    shell.run_cell("%hipo layer1")
    shown = capsys.readouterr().out
    assert "(no topics yet)" not in shown and "(nothing in the last 7 days)" not in shown
    assert f"- {TODAY} launch-date [project] #launch: moved the launch to May" in shown
    assert f"- {TODAY} diet [user] #food: I am vegetarian" in shown
    assert "- launch [project, 0d]: launch-date -> 2026-03 (W11)" in shown
    assert "- food [user, 0d]: diet -> 2026-03 (W11)" in shown
    shell.run_cell("%hipo topics")
    assert "food" in capsys.readouterr().out  # the same topics, at the same moment


def test_cli_remember_then_cli_layer1(memory_root: Path) -> None:
    written = run_hipo(memory_root, "remember", "Launch date #launch", stdin="moved it to May")
    assert written.returncode == 0, written.stderr
    shown = run_hipo(memory_root, "layer1")
    assert shown.returncode == 0, shown.stderr
    assert "- launch [project, 0d]: launch-date" in shown.stdout
    assert "launch-date [project] #launch: moved it to May" in shown.stdout


def test_mcp_layer1_on_a_root_only_the_cli_wrote(memory_root: Path) -> None:
    from test_mcp import call, session

    written = run_hipo(memory_root, "remember", "Diet [user] #food", stdin="vegetarian")
    assert written.returncode == 0, written.stderr
    (memory_root / "memory" / "ROOT.md").unlink()  # as a root written before this feature

    async def scenario() -> None:
        async with session(memory_root) as client:
            text, error = await call(client, "layer1")
            for _ in range(100):  # the ritual runs beside `initialize`, not before it
                if "food" in text:
                    break
                await anyio.sleep(0.1)
                text, error = await call(client, "layer1")
            assert not error and "- food [user, 0d]: diet" in text, text
            for uri in ("hipo://memory/ROOT.md", "hipo://WORKING.md", "hipo://layer1"):
                read = await client.read_resource(uri)
                assert isinstance(read.contents[0].text, str)
            text, error = await call(client, "remember", title="Dinner #food", body="pasta")
            assert not error
            text, error = await call(client, "layer1")
            # in Layer 1 at once, labelled as an agent's (issue 49): never as the user's own line
            assert "dinner [project] #food (written by an agent, not the user): pasta" in text

    anyio.run(scenario)
    assert "via=mcp" in (memory_root / "memory" / f"{TODAY}.md").read_text("utf-8")


def test_a_missing_layer1_file_is_an_empty_resource(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: PINNED)
    server = hipo_mcp.build_server(memory)

    async def scenario() -> None:
        from test_mcp import quoted

        contents = list(await server.read_resource("hipo://WORKING.md"))
        assert [quoted(getattr(c, "content", "")) for c in contents] == ["(empty)"]  # fenced

    anyio.run(scenario)


def test_a_new_process_adds_to_the_saved_topics(memory_root: Path, monkeypatch) -> None:
    first = Memory(memory_root, today=lambda: PINNED)
    first.remember("Pricing #pricing", "- decisions: cut the starter tier")
    first.compact()
    first.close()
    reads: list[object] = []
    original = memory_module.read_checkpoints

    def counting(store, days=None):  # type: ignore[no-untyped-def]
        reads.append(days)
        return original(store, days)

    monkeypatch.setattr(memory_module, "read_checkpoints", counting)
    second = Memory(memory_root, today=lambda: PINNED)  # a CLI call: nothing cached
    second.remember("Launch #launch", "- decisions: May")
    assert None not in reads  # no read of every raw log
    assert {t.name for t in second.topics()} == {"pricing", "launch"}
    text = root_sections(memory_root)
    assert "- launch [project, 0d]" in text and "- pricing [project, 0d]" in text
    second.close()


def test_a_write_never_waits_for_a_compaction_pass(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: PINNED)
    memory.remember("Pricing #pricing", "- decisions: cut")
    before = root_sections(memory_root)
    with compaction_lock_nowait(memory.store) as held:  # a pass in another process
        assert held
        memory.remember("Launch #launch", "- decisions: May")
    assert root_sections(memory_root) == before  # left to the pass
    memory.compact()
    assert "- launch [project, 0d]" in root_sections(memory_root)
    memory.close()


def test_an_old_checkpoint_is_indexed_but_not_active(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: PINNED)
    memory.remember("Old note #archive", "- outcome: filed", on="2025-12-01")
    text = root_sections(memory_root)
    assert "- archive [project, 101d]: old-note -> 2025-12" in text
    assert "(nothing in the last 7 days)" in text
    memory.remember("Fresh #launch", "- outcome: May")
    text = root_sections(memory_root)
    assert "(nothing in the last 7 days)" not in text and "- 2026-03-12 fresh" in text
    memory.close()


def test_the_pin_keeps_the_cached_block_and_sends_what_is_new_after_it(memory_root: Path) -> None:
    from hipo_jupyter import llm

    memory = Memory(memory_root, today=lambda: PINNED)
    memory.remember("Pricing #pricing", "- decisions: cut the starter tier")
    pin = llm.Layer1Pin()
    first = pin.split(memory.root, memory.layer1())
    assert first.fresh == "" and "- pricing [project, 0d]" in first.stable
    memory.remember("Launch #launch", "- decisions: moved to May")
    second = pin.split(memory.root, memory.layer1())
    assert second.stable == first.stable  # the bytes the API cached
    assert "- launch [project, 0d] -> 2026-03 (W11)" in second.fresh
    assert "- 2026-03-12 launch [project] #launch: moved to May" in second.fresh
    assert "- pricing [project, 0d]" not in second.fresh  # unchanged lines are not repeated
    pin.reset()  # a compaction pass rewrote ROOT.md
    third = pin.split(memory.root, memory.layer1())
    assert third.fresh == "" and "- launch [project, 0d]" in third.stable
    tight = llm.Layer1Pin(max_fresh_tokens=5)
    tight.split(memory.root, memory.layer1())
    memory.remember("Diet [user] #food", "vegetarian")
    grown = tight.split(memory.root, memory.layer1())
    assert grown.fresh == "" and "- food [user, 0d]" in grown.stable  # re-pinned
    memory.close()


def test_one_layer1_figure_in_budget_status_and_the_cache_line(shell, capsys) -> None:
    import re

    shell.run_cell("%remember Launch date #launch: moved the launch to May", store_history=True)
    capsys.readouterr()
    shell.run_cell("%hipo budget --text")
    budget = capsys.readouterr().out
    shell.run_cell("%hipo status --text")
    status = capsys.readouterr().out
    figures = {
        "headline": re.search(r"Layer 1: ([\d,]+) / ", budget)[1],
        "total row": re.search(r"\ntotal\s+([\d,]+)", budget)[1],
        "cache line": re.search(r"prompt cache \(.*\): Layer 1 ([\d,]+) tokens", budget)[1],
        "status": re.search(r"layer 1:\s+([\d,]+) / ", status)[1],
    }
    assert len(set(figures.values())) == 1, figures
    assert int(figures["status"].replace(",", "")) > 0


def test_mcp_tells_agents_to_recall_with_the_users_request(memory_root: Path) -> None:
    from mcp import ClientSession, stdio_client
    from test_mcp import server_params

    async def scenario() -> str:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(server_params(memory_root), errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                return (await client.initialize()).instructions or ""

    instructions = anyio.run(scenario)
    assert "call recall with the user's request itself as the query" in instructions
    assert "before answering each user request" in instructions.lower()
