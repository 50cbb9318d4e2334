"""Nothing twice (issue 35): a checkpoint identical to one already in its day's log is not
written again, whoever writes it. A notebook executed twice with nbclient (a real kernel, its
Claude calls answered by the Messages API stand-in on 127.0.0.1) leaves as many checkpoints as
one run, `%%remember`, `%remember` and the write-backs of identical calls alike; `hipo
remember`, MCP's `remember` and the memory tool each say so in one line, with the id there."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

import nbformat
import pytest
from claude_helpers import SDK_CREDENTIAL_VARIABLES, TODAY, FakeMessagesAPI, serve
from test_quickstart import cells_with

from hipo_jupyter.cli.demo import execute_notebook
from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import parse_log
from hipo_jupyter.memory_tool import HipoMemoryTool

CELLS = [
    "%load_ext hipo",
    "%%remember Churn model retrain [project] #churn\n"
    "- request: should we retrain the churn model before the launch?\n"
    "- decisions: retrain on the March cohort first\n"
    "- outcome: AUC 0.81 -> 0.84",
    "%remember Launch date: we go live on 2026-04-02",
    "import anthropic\n"
    "client = anthropic.Anthropic()\n"
    "reply = client.messages.create(model='claude-sonnet-5-5', max_tokens=200,\n"
    "    messages=[{'role': 'user', 'content': 'Summarize the churn drivers in one line.'}])\n"
    "print(reply.content[0].text)",
    "%%ask\nWhich tier are we cutting?",
]


def logged(folder: Path) -> list:
    return parse_log((folder / "memory" / f"{TODAY}.md").read_text("utf-8"), date=TODAY)


def run_notebook(notebook: Path, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    """One headless run, its Claude calls answered by a fresh stand-in (so the same calls get
    the same replies, as a deterministic model would give)."""
    with monkeypatch.context() as env, serve(FakeMessagesAPI()) as url:
        for name in SDK_CREDENTIAL_VARIABLES:
            env.delenv(name, raising=False)
        env.setenv("ANTHROPIC_BASE_URL", url)
        env.setenv("ANTHROPIC_API_KEY", "test-key")
        env.setenv("JPY_SESSION_NAME", str(notebook))
        return execute_notebook(notebook, timeout=180, today=TODAY)


def test_running_a_notebook_twice_writes_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = tmp_path / "week.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nbformat.write(nb, notebook)
    run_notebook(notebook, monkeypatch)
    once = logged(tmp_path)
    # the %%remember, the %remember, the call's write-back and the %%ask's
    assert len(once) == 4
    assert sum(c.via == "write-back" for c in once) == 2
    again = run_notebook(notebook, monkeypatch)
    twice = logged(tmp_path)
    assert [c.id for c in twice] == [c.id for c in once]
    (remembered,) = cells_with(again, "%%remember")
    assert remembered.strip().startswith("already remembered: 'Churn model retrain'")
    assert once[0].id in remembered and "nothing written twice" in remembered
    (line,) = cells_with(again, "%remember")
    assert line.strip().startswith("already remembered: 'Launch date'")


def test_a_different_body_or_source_is_written(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    first = memory.remember("Pricing #q1", "- decisions: cut 15%", via="magic", cell="3")
    same = memory.remember("Pricing #q1", "- decisions: cut 15%", via="magic", cell="9")
    assert same.repeated and same.id == first.id and same.line == first.line
    assert not memory.remember("Pricing #q1", "- decisions: cut 10%", via="magic").repeated
    assert not memory.remember("Pricing #q1", "- decisions: cut 15%", via="cli").repeated
    assert not memory.remember("Pricing #q2", "- decisions: cut 15%", via="magic").repeated
    # Another day's log is another day: the same note written tomorrow is written
    assert not memory.remember(
        "Pricing #q1", "- decisions: cut 15%", via="magic", on="2026-03-11"
    ).repeated
    assert len(logged(memory_root)) == 4
    memory.close()
    # A new process (another kernel, the CLI) reads the log, not this process's memory of it
    again = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    assert again.remember("Pricing #q1", "- decisions: cut 15%", via="magic").id == first.id
    again.close()


def test_hipo_remember_says_so_in_one_line(memory_root: Path) -> None:
    from test_mcp import run_hipo

    body = "- decisions: launch on 2026-04-02"
    first = run_hipo(memory_root, "remember", "Launch date #launch", stdin=body)
    assert first.returncode == 0, first.stderr
    checkpoint_id = first.stdout.split()[-1]
    again = run_hipo(memory_root, "remember", "Launch date #launch", stdin=body)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("\n") == 1
    assert again.stdout.startswith("already remembered: 'Launch date' [project] #launch is in ")
    assert checkpoint_id in again.stdout
    assert len(logged(memory_root)) == 1


def test_mcp_remember_returns_the_existing_id(memory_root: Path) -> None:
    pytest.importorskip("mcp")
    from test_mcp import call, session

    async def scenario() -> tuple[str, str]:
        async with session(memory_root) as client:
            first, error = await call(client, "remember", title="Churn", body="- outcome: ok")
            assert not error, first
            again, error = await call(client, "remember", title="Churn", body="- outcome: ok")
            assert not error, again
            return first, again

    first, again = asyncio.run(scenario())
    assert again.startswith("already remembered: 'Churn'") and first.split()[-1] in again
    assert len(logged(memory_root)) == 1


def test_the_memory_tool_appends_only_what_is_new(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: date.fromisoformat(TODAY))
    tool = HipoMemoryTool(memory)
    path = f"/memories/memory/{TODAY}.md"
    text = "## Churn analysis\n- rule: segment by plan\n## Launch\n- decisions: April 2\n"
    assert tool.call({"command": "create", "path": path, "file_text": text}).startswith(
        "Appended 2 checkpoints"
    )
    answer = tool.call({"command": "create", "path": path, "file_text": text + "## New\nmore\n"})
    assert answer.startswith("Appended 1 checkpoint to ")
    assert "2 already in /memories/memory/" in answer and "not written twice" in answer
    again = tool.call({"command": "create", "path": path, "file_text": text})
    assert again.startswith("Nothing appended: 2 already in ")
    assert [c.title for c in logged(memory_root)] == ["Churn analysis", "Launch", "New"]
    memory.close()
