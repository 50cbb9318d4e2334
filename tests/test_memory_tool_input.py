"""The memory tool under wrong-typed input from a model (issue 23): `file_text: null`,
`view_range: ["a", "b"]`, an unknown command, a path that is a number... Each is one clear tool
error sent back to the model (never a Python repr), the cell shows no traceback, and no file
changes. Checked directly, through the SDK's tool runner over the fake Messages API, with the
async twin, and under `%%ask --tools memory`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest
from anthropic.lib.tools import ToolError
from claude_helpers import (  # noqa: F401
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
    tool_results,
    tool_use_reply,
)

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory_tool import AsyncHipoMemoryTool, HipoMemoryTool

RAW = "/memories/memory/2026-03-12.md"
BAD: list[Any] = [
    {"command": "create", "path": "/memories/knowledge/a.md", "file_text": None},
    {"command": "create", "path": "/memories/knowledge/a.md"},
    {"command": "create", "path": 42, "file_text": "x"},
    {"command": "view", "path": "/memories/SCRATCHPAD.md", "view_range": ["a", "b"]},
    {"command": "view", "path": "/memories/SCRATCHPAD.md", "view_range": [1]},
    {"command": "view", "path": "/memories/SCRATCHPAD.md", "view_range": "1-3"},
    {"command": "view", "path": "/memories/SCRATCHPAD.md", "view_range": [True, 2]},
    {"command": "view", "path": None},
    {"command": "str_replace", "path": "/memories/SCRATCHPAD.md", "old_str": 1, "new_str": "x"},
    {"command": "str_replace", "path": "/memories/SCRATCHPAD.md", "old_str": "x"},
    {"command": "insert", "path": "/memories/SCRATCHPAD.md", "insert_line": "2",
     "insert_text": "x"},
    {"command": "insert", "path": RAW, "insert_line": 1, "insert_text": ["x"]},
    {"command": "delete", "path": ["/memories/SCRATCHPAD.md"]},
    {"command": "rename", "old_path": "/memories/plans/q2.md", "new_path": {"a": 1}},
    {"command": "undo_edit", "path": "/memories/SCRATCHPAD.md"},
    {"command": None},
    {"command": ["view"]},
    {"path": "/memories"},
    {},
]  # fmt: skip


@pytest.fixture
def memory(memory_root: Path) -> Memory:
    memory = Memory(memory_root)
    memory.init()
    memory.remember("Competitor pricing", "- decisions: cut the starter tier by 15%")
    (memory_root / "plans" / "q2.md").write_text("# Q2\n- launch\n")
    yield memory
    memory.close()


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".index" not in p.parts
    }


def assert_clear(message: str) -> None:
    assert len(message.splitlines()) == 1, message
    assert "Traceback" not in message and "object has no attribute" not in message
    assert "NoneType" not in message and "<class" not in message, message


@pytest.mark.parametrize("command", BAD)
def test_wrong_input_is_one_clear_tool_error(
    memory: Memory, memory_root: Path, command: Any
) -> None:
    before = snapshot(memory_root)
    tool = HipoMemoryTool(memory)
    with pytest.raises(ToolError) as raised:
        tool.call(command)
    assert_clear(str(raised.value))
    assert snapshot(memory_root) == before


def test_the_async_twin_checks_the_same(memory: Memory) -> None:
    tool = AsyncHipoMemoryTool(memory)

    async def scenario() -> None:
        for command in BAD:
            with pytest.raises(ToolError) as raised:
                await tool.call(command)
            assert_clear(str(raised.value))

    anyio.run(scenario)


def test_through_the_tool_runner_the_model_gets_tool_errors(
    api: FakeMessagesAPI, memory: Memory, memory_root: Path
) -> None:
    before = snapshot(memory_root)
    api.replies = [tool_use_reply("memory", command) for command in BAD[:6]] + ["Done."]
    runner = api.client().beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=512,
        messages=[{"role": "user", "content": "Keep a note."}],
        tools=[HipoMemoryTool(memory)],
    )
    assert runner.until_done().content[0].text == "Done."
    requests = api.message_requests()
    for body in requests[1:]:
        (result,) = tool_results(body)
        content = result["content"]
        text = content if isinstance(content, str) else content[0]["text"]
        assert result["is_error"] is True
        assert_clear(text)
        assert "Error" not in text.split(":")[0]  # not an exception's repr, e.g. TypeError(...)
    assert snapshot(memory_root) == before


def test_ask_with_tools_shows_no_traceback(claude_shell, api: FakeMessagesAPI, capsys) -> None:
    api.replies = [
        tool_use_reply("memory", BAD[0]),
        tool_use_reply("memory", BAD[3]),
        tool_use_reply("memory", {"command": "undo_edit", "path": "/memories"}),
        "I could not write it.",
    ]
    run(claude_shell, "%%ask --tools memory\nNote it.")
    captured = capsys.readouterr()
    assert "I could not write it." in captured.out
    assert "Traceback" not in captured.out + captured.err
    for body in api.message_requests()[1:]:
        (result,) = tool_results(body)
        content = result["content"]
        assert_clear(content if isinstance(content, str) else content[0]["text"])
