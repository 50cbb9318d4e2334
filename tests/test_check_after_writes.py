"""`hipo check` passes after every writer, not only after the CLI (issue 44, item 3).

A write puts its checkpoint in the raw log, the index and ROOT.md at once; the tentative nodes
above it wait for the next pass, which the check accepts (`chain._behind`). A late entry (a day
already over) is folded into the tree at once. What still fails is a tree that says less than
the logs in a way no pass has vouched for: a closed day's log nobody compacted.

Each writer is driven for real: a kernel's magics, `hipo mcp` as a process, Claude's memory
tool; each time the `hipo check` command in a subprocess is the judge.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from test_magics import TODAY, RaisingShell, bare_shell, run, shell  # noqa: F401, F811
from test_mcp import call, run_hipo, session

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.roots import today_from_env
from hipo_jupyter.memory_tool import HipoMemoryTool


def check_passes(root: Path) -> str:
    result = run_hipo(root, "check")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_a_notebook_session_leaves_check_passing(
    shell: RaisingShell,  # noqa: F811
    memory_root: Path,
) -> None:
    run(shell, "%%remember Competitor pricing #pricing\n- decisions: cut the starter tier by 15%")
    run(shell, "%remember Standup: moved the launch to May")
    out = check_passes(memory_root)
    assert "tentative nodes behind the latest writes" in out  # said, and not a failure

    run(shell, "%%remember Old wiki page --date 2026-01-05\nimported from the old wiki")
    check_passes(memory_root)  # a late entry: its closed day is folded in at once
    assert (memory_root / "memory" / "daily" / "2026-01-05.md").exists()


def test_one_mcp_remember_leaves_check_passing(memory_root: Path) -> None:
    """The write waits for the server's session-start pass (`mcp.server.build_server`): ahead
    of it, the pass then built the day's nodes and was cut when the client closed, and the
    check failed about one run in several under load."""
    async def scenario() -> None:
        async with session(memory_root) as client:
            text, error = await call(client, "remember", title="Deploy window", body="Tue-Thu")
            assert not error, text

    anyio.run(scenario)
    check_passes(memory_root)


def test_the_memory_tool_leaves_check_passing(memory_root: Path, monkeypatch) -> None:
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    memory = Memory(memory_root, today=today_from_env)
    memory.compact()
    tool = HipoMemoryTool(memory)
    for day in (TODAY, "2026-03-02"):  # today's log and a late entry
        text = "## Cache bug\n- outcome: the key ignored the region\n"
        tool.call({"command": "create", "path": f"/memories/memory/{day}.md", "file_text": text})
    memory.close()
    check_passes(memory_root)


def test_a_closed_day_nobody_compacted_still_fails(memory_root: Path) -> None:
    """Another tool wrote a log for a day already over: no pass vouches for its node."""
    assert run_hipo(memory_root, "compact").returncode == 0
    (memory_root / "memory" / "2026-03-02.md").write_text("## Found later\n- outcome: ok\n")
    result = run_hipo(memory_root, "check")
    assert result.returncode == 1
    assert "FAIL  compaction state is fresh: 1 node to rebuild: run compact" in result.stdout
