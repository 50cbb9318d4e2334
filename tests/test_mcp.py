"""`hipo mcp`: a real `hipo mcp` process, driven by the `mcp` package's own stdio client.

Each test starts the server as Claude Code or Claude Desktop would (the command the config
snippet prints) on the test's memory root, and checks what the tools answer against what the
`hipo` command and the files on disk say: a checkpoint written through MCP is found by
`hipo recall`, one written by `hipo remember` is found through MCP, bad input is a tool error of
one line and the server goes on, and two servers and a kernel writing at once lose nothing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from hipo_jupyter.cli import commands as cli  # noqa: E402
from hipo_jupyter.llm import prompt as llm_prompt  # noqa: E402
from hipo_jupyter.mcp import config as mcp_config
from hipo_jupyter.mcp import server as hipo_mcp  # noqa: E402
from hipo_jupyter.memory import Memory  # noqa: E402
from hipo_jupyter.memory.disk.checkpoint import parse_log  # noqa: E402
from hipo_jupyter.memory.recall import LAYER1_PREAMBLE, RECALL_PREAMBLE, escape_fence  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TODAY = "2026-03-12"
PINNED = date.fromisoformat(TODAY)
TOOLS = {"recall", "remember", "topics", "layer1", "read", "status"}


def server_env() -> dict[str, str]:
    """What the server process needs beyond the client's default environment."""
    return {
        "HIPO_TODAY": TODAY,
        "HIPO_SEMANTIC": "0",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }


def server_params(root: Path) -> StdioServerParameters:
    """The server as the printed Claude Desktop snippet registers it."""
    entry = json.loads(mcp_config.config_snippet("claude-desktop", root))["mcpServers"]["hipo"]
    return StdioServerParameters(
        command=entry["command"], args=entry["args"], env=server_env(), cwd=str(root)
    )


@asynccontextmanager
async def session(root: Path) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as quiet:  # the server logs to stderr
        async with (
            stdio_client(server_params(root), errlog=quiet) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


async def call(client: ClientSession, tool: str, **arguments: Any) -> tuple[str, bool]:
    """(text, is_error) of one tool call."""
    result = await client.call_tool(tool, arguments)
    text = "\n".join(block.text for block in result.content if block.type == "text")
    return text, bool(result.is_error)


FENCED = re.compile(r"<(hipo-[a-z0-9-]+-\d{12})[^>]*>\n(.*)\n</\1>", re.S)


def quoted(text: str) -> str:
    """The stored text of an answer that is one fence of quoted data (`test_mcp_fence.py`
    checks every tool and resource for it): the body after its preamble."""
    found = FENCED.fullmatch(text)
    assert found, f"not one fence: {text[:300]!r}"
    preamble, _, body = found.group(2).partition("\n\n")
    assert preamble in (RECALL_PREAMBLE, LAYER1_PREAMBLE), preamble
    return body


def run_hipo(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env.update(server_env())
    command = mcp_config.hipo_command()
    return subprocess.run(
        [*command, "--root", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
    )


def checkpoints_on_disk(root: Path) -> list[Any]:
    return parse_log((root / "memory" / f"{TODAY}.md").read_text("utf-8"), date=TODAY)


# --- the tools ----------------------------------------------------------------------------------


def test_remember_and_recall_cross_between_mcp_and_the_hipo_command(memory_root: Path) -> None:
    assert run_hipo(memory_root, "init").returncode == 0

    async def scenario() -> None:
        async with session(memory_root) as client:
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == TOOLS
            recall_schema = next(t for t in listed.tools if t.name == "recall").input_schema
            assert set(recall_schema["properties"]) == {
                "query",
                "k",
                "since",
                "until",
                "type",
                "budget",
            }

            text, error = await call(
                client,
                "remember",
                title="Competitor pricing",
                body="- decisions: cut the starter tier by 15%\n- outcome: report shared",
                tags=["pricing"],
            )
            assert not error, text
            assert text.startswith(f"memory/{TODAY}.md:1  ")

            found = run_hipo(memory_root, "recall", "starter tier", "--json")
            assert found.returncode == 0, found.stderr
            hits = json.loads(found.stdout)["hits"]
            assert hits[0]["title"] == "Competitor pricing"
            assert hits[0]["file"] == f"memory/{TODAY}.md"

            written = run_hipo(
                memory_root,
                "remember",
                "Churn analysis [feedback] #churn",
                stdin="- rule: segment churn by plan before averaging\n- why: mix shift",
            )
            assert written.returncode == 0, written.stderr
            text, error = await call(client, "recall", query="segment churn", type="feedback")
            assert not error, text
            assert "1. 2026-03-12 [feedback] Churn analysis" in text, text
            assert "Competitor pricing" not in text

            text, error = await call(client, "recall", query="starter", since=TODAY, k=1)
            assert not error and "Competitor pricing" in text
            text, error = await call(client, "recall", query="starter", until="2026-03-11")
            # nothing of the 12th (`hipo remember` compacted: the week's and month's nodes
            # start before it), fenced as quoted data
            assert not error and f"{TODAY} [project]" not in quoted(text), text
            assert 'query="starter"' in text.splitlines()[0]

    anyio.run(scenario)
    titles = [c.title for c in checkpoints_on_disk(memory_root)]
    assert titles == ["Competitor pricing", "Churn analysis"]


def test_read_status_topics_layer1_and_the_resources(memory_root: Path) -> None:
    memory = Memory(memory_root, today=lambda: PINNED)
    memory.init()
    memory.remember("Launch date", "- decisions: launch on 2026-04-02", tags=["launch"])
    memory.compact()
    memory.close()

    async def scenario() -> None:
        async with session(memory_root) as client:
            text, error = await call(client, "read", path=f"memory/{TODAY}.md#L1")
            assert not error and "## Launch date [project]" in quoted(text)
            assert f'path="memory/{TODAY}.md#L1"' in text.splitlines()[0]
            text, error = await call(client, "status")
            assert not error and "1 day, 1 checkpoint" in text
            text, error = await call(client, "topics")
            assert not error and "\n- launch [project, 0d]" in quoted(text), text
            text, error = await call(client, "layer1")
            layer1 = quoted(text)
            assert not error and "# memory/ROOT.md" in layer1
            assert "# SCRATCHPAD.md" not in layer1  # an untouched template is left out
            assert text == llm_prompt.layer1_block(layer1)["text"].replace(  # a prompt's fence
                FENCED.fullmatch(llm_prompt.layer1_block(layer1)["text"]).group(1),
                FENCED.fullmatch(text).group(1),
            )

            listed = await client.list_resources()
            uris = {str(resource.uri) for resource in listed.resources}
            assert uris == {
                "hipo://memory/ROOT.md",
                "hipo://SCRATCHPAD.md",
                "hipo://WORKING.md",
                "hipo://TASK-QUEUE.md",
                "hipo://layer1",
            }
            root = await client.read_resource("hipo://memory/ROOT.md")
            on_disk = (memory_root / "memory" / "ROOT.md").read_text()
            assert quoted(root.contents[0].text) == escape_fence(on_disk).strip()
            layer1 = await client.read_resource("hipo://layer1")
            assert "launch" in quoted(layer1.contents[0].text)

    anyio.run(scenario)


def test_bad_input_is_a_one_line_tool_error_and_the_server_goes_on(memory_root: Path) -> None:
    (memory_root.parent / "secret.md").write_text("outside")
    (memory_root / "knowledge").mkdir()
    (memory_root / "knowledge" / "link.md").symlink_to(memory_root.parent / "secret.md")
    bad_calls = [
        ("recall", {"query": "x", "since": "2026-13-01"}, "bad date: --since"),
        ("recall", {"query": "x", "until": "last week"}, "bad date: --until"),
        ("recall", {"query": "x", "k": 0}, "at least 1"),
        ("recall", {"query": "x", "type": "gossip"}, "type must be one of"),
        ("recall", {"query": "   "}, "recall needs a query"),
        ("recall", {"query": "x", "budget": 0}, "budget must be at least 100"),
        ("remember", {"title": "Empty", "body": "  "}, "needs a body"),
        ("remember", {"title": "  ", "body": "b"}, "needs a title"),  # as `hipo remember`
        ("remember", {"title": "[user] #diet", "body": "b"}, "needs a title"),
        ("remember", {"title": "T", "body": "b", "type": "gossip"}, "type must be one of"),
        ("read", {"path": "../secret.md"}, "outside the memory root"),
        ("read", {"path": "/etc/passwd"}, "not a path inside the memory root"),
        ("read", {"path": "knowledge/link.md"}, "outside the memory root"),
        ("read", {"path": "memory/2020-01-01.md"}, "no such memory file"),
    ]

    async def scenario() -> None:
        async with session(memory_root) as client:
            for tool, arguments, words in bad_calls:
                text, error = await call(client, tool, **arguments)
                assert error, (tool, arguments, text)
                assert len(text.splitlines()) == 1 and "Traceback" not in text, text
                assert words in text, (tool, arguments, text)
            # a Layer 1 file not written yet is an empty resource, not an error (the
            # session-start ritual, running beside us, may have written it by now)
            read = await client.read_resource("hipo://memory/ROOT.md")
            assert isinstance(read.contents[0].text, str)
            text, error = await call(client, "remember", title="Still here", body="- outcome: ok")
            assert not error, text

    anyio.run(scenario)
    assert [c.title for c in checkpoints_on_disk(memory_root)] == ["Still here"]


def test_two_servers_and_a_kernel_writing_at_once_lose_nothing(memory_root: Path) -> None:
    per_writer = 8
    kernel = Memory(memory_root, today=lambda: PINNED)

    async def server_writes(name: str) -> None:
        async with session(memory_root) as client:
            for number in range(per_writer):
                text, error = await call(
                    client, "remember", title=f"{name} step {number}", body=f"- outcome: {name}"
                )
                assert not error, text

    def kernel_writes() -> None:
        for number in range(per_writer):
            kernel.remember(f"kernel step {number}", "- outcome: kernel")

    async def scenario() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(server_writes, "alpha")
            group.start_soon(server_writes, "beta")
            group.start_soon(anyio.to_thread.run_sync, kernel_writes)

    anyio.run(scenario)
    titles = sorted(c.title for c in checkpoints_on_disk(memory_root))
    expected = sorted(
        f"{name} step {n}" for name in ("alpha", "beta", "kernel") for n in range(per_writer)
    )
    assert titles == expected
    found = kernel.recall("outcome", k=3 * per_writer)
    assert len(found.hits) == 3 * per_writer  # the shared index holds every one of them
    kernel.close()


# --- budget: Memory.context where the engine has it, else the hits ------------------------------


def test_recall_with_a_budget_is_memory_context(memory_root: Path) -> None:
    memory = Memory(memory_root)
    memory.remember("Launch date", "- decisions: launch on 2026-04-02")
    text = hipo_mcp.recall_within_budget(memory, "launch", 500, k=5)
    expected = memory.context("launch", budget=500, mode="auto").text
    memory.close()
    assert text == expected
    assert "<hipo-recalled-memory" in text and "launch on 2026-04-02" in text


# --- registering it -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", mcp_config.CONFIG_TARGETS)
def test_config_prints_the_snippet_with_absolute_paths(
    target: str, memory_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.chdir(memory_root)
    assert cli.main(["--root", ".", "mcp", "--config", target]) == 0
    out, err = capsys.readouterr()
    command = mcp_config.hipo_command()
    expected = {"command": command[0], "args": [*command[1:], "--root", str(memory_root), "mcp"]}
    if target == "claude-code":
        words = shlex.split(out)
        assert words[:7] == ["claude", "mcp", "add", "--transport", "stdio", "hipo", "--"]
        assert words[7:] == [*command, "--root", str(memory_root), "mcp"]
    elif target == "jupyter-ai":
        # jupyter-ai 3's McpSettings: a list of {name, command, args, env: [{name, value}]}
        assert json.loads(out) == {"mcp_servers": [{"name": "hipo", **expected, "env": []}]}
    else:
        assert json.loads(out)["mcpServers"]["hipo"] == expected
    assert Path(command[0]).is_absolute()
    assert err.startswith("hipo: ") and len(err.splitlines()) == 1


def test_the_readme_shows_each_snippet_as_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    """README's example (root /home/me/analysis, hipo in /home/me/.venv) is what --config
    prints, and each other target is named with the --config that prints it: the
    documentation cannot drift from the command."""
    monkeypatch.setattr(mcp_config, "hipo_command", lambda: ["/home/me/.venv/bin/hipo"])
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("## Agents: Claude Code, jupyter-ai, Claude Desktop", 1)[1]
    shown = mcp_config.config_snippet("claude-code", Path("/home/me/analysis"))
    assert shown in section
    for target in set(mcp_config.CONFIG_TARGETS) - {"claude-code"}:
        assert f"`{target}`" in section or f"--config {target}" in section, target


def test_mcp_on_a_missing_root_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert cli.main(["--root", str(tmp_path / "nowhere"), "mcp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("hipo: error: the memory root") and len(err.splitlines()) == 1


def test_the_server_runs_under_the_module_entry_point_too(memory_root: Path) -> None:
    """`python -m hipo_jupyter.cli mcp`: the fallback command when no `hipo` script exists."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hipo_jupyter.cli", "--root", str(memory_root), "mcp"],
        env=server_env(),
    )

    async def scenario() -> None:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS

    anyio.run(scenario)
