"""Claude's memory tool over the tree: `HipoMemoryTool`, each command and each refusal, directly
and through the fake Messages API (a scripted `tool_use` for `memory`, run by the SDK's own tool
runner; the `tool_result` it sends back checked, and the file on disk), and `%%ask --tools
memory` in a shell."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
from anthropic.lib.tools import ToolError
from claude_helpers import (  # noqa: F401
    TODAY,
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
    tool_results,
    tool_use_reply,
)
from IPython.core.error import UsageError

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.checkpoint import parse_log
from hipo_jupyter.memory_tool import AsyncHipoMemoryTool, HipoMemoryTool, checkpoint_blocks

PINNED = date.fromisoformat(TODAY)
RAW = f"memory/{TODAY}.md"


@pytest.fixture
def memory(memory_root: Path) -> Memory:
    """A memory with a raw log, its tree, a knowledge note, a plan, and a notebook's own files."""
    memory = Memory(memory_root, today=lambda: PINNED)
    memory.init()
    memory.remember("Competitor pricing", "- decisions: cut the starter tier by 15%")
    memory.compact()
    (memory_root / "knowledge" / "pricing.md").write_text("# Pricing\n\nstarter tier: 15% cut\n")
    (memory_root / "plans" / "q2.md").write_text("# Q2\n- launch\n")
    (memory_root / "analysis.ipynb").write_text("{}")
    (memory_root / ".env").write_text("TOKEN=x")
    yield memory
    memory.close()


@pytest.fixture
def tool(memory: Memory) -> HipoMemoryTool:
    return HipoMemoryTool(memory)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(tool: HipoMemoryTool, **command: Any) -> str:
    with pytest.raises(ToolError) as raised:
        tool.call(command)
    message = str(raised.value)
    assert len(message.splitlines()) == 1, message
    return message


# --- view ---------------------------------------------------------------------------------------


def test_view_lists_the_memory_with_sizes_and_rules(tool: HipoMemoryTool, memory_root) -> None:
    listing = tool.call({"command": "view", "path": "/memories"})
    for path, note in [
        ("SCRATCHPAD.md", "Layer 1, edit freely"),
        ("memory/ROOT.md", "topic index, read-only"),
        (RAW, "raw log, append-only"),
        (f"memory/daily/{TODAY}.md", "compaction node, read-only"),
        ("knowledge/pricing.md", "note, edit freely"),
        ("plans/q2.md", "note, edit freely"),
    ]:
        line = next(line for line in listing.splitlines() if f"/memories/{path}\t" in line)
        size = (memory_root / path).stat().st_size
        assert line.split("\t")[0] in (f"{size}B", f"{size / 1024:.1f}K")
        assert line.endswith(f"({note})")
    assert "analysis.ipynb" not in listing and ".env" not in listing and ".index" not in listing
    assert "Rules:" in listing
    knowledge = tool.call({"command": "view", "path": "/memories/knowledge"})
    assert "/memories/knowledge/pricing.md" in knowledge and "plans/q2.md" not in knowledge


def test_view_a_file_numbers_its_lines_and_takes_a_range(tool: HipoMemoryTool) -> None:
    text = tool.call({"command": "view", "path": f"/memories/{RAW}"})
    assert text.splitlines()[1] == "     1\t## Competitor pricing [project]"
    part = tool.call({"command": "view", "path": "/memories/plans/q2.md", "view_range": [2, -1]})
    assert part.splitlines()[1:] == ["     2\t- launch", "     3\t"]
    assert "outside" in refused(
        tool, command="view", path="/memories/plans/q2.md", view_range=[9, 12]
    )
    assert "not part of the memory" in refused(tool, command="view", path="/memories/.env")
    assert "not part of the memory" in refused(
        tool, command="view", path="/memories/analysis.ipynb"
    )


# --- writing what may be written ----------------------------------------------------------------


def test_create_a_knowledge_note_is_indexed_at_once_and_redacted(
    tool: HipoMemoryTool, memory: Memory, memory_root: Path
) -> None:
    result = tool.call(
        {
            "command": "create",
            "path": "/memories/knowledge/churn.md",
            "file_text": "# Churn\n\nannual plans churn less; sk-ant-api03-abcdefghijklmnop\n",
        }
    )
    assert result == "File created successfully at: /memories/knowledge/churn.md"
    text = (memory_root / "knowledge" / "churn.md").read_text()
    assert "annual plans churn" in text and "sk-ant-api03-abcdefghijklmnop" not in text
    assert memory.recall("annual").hits[0].file == "knowledge/churn.md"
    again = tool.call(
        {"command": "create", "path": "/memories/knowledge/churn.md", "file_text": "# Churn\nv2\n"}
    )
    assert "overwritten" in again
    assert (memory_root / "knowledge" / "churn.md").read_text() == "# Churn\nv2\n"
    assert not memory.recall("annual").hits


def test_str_replace_and_insert_edit_the_layer1_files_and_notes(
    tool: HipoMemoryTool, memory: Memory, memory_root: Path
) -> None:
    result = tool.call(
        {
            "command": "str_replace",
            "path": "/memories/SCRATCHPAD.md",
            "old_str": "(none yet)",
            "new_str": "- segment churn by plan before averaging",
        }
    )
    assert "has been edited" in result and "segment churn by plan" in result
    assert "segment churn by plan" in (memory_root / "SCRATCHPAD.md").read_text()
    assert "segment churn by plan" in memory.layer1().text  # the next prompt sees it
    tool.call(
        {"command": "insert", "path": "/memories/plans/q2.md", "insert_line": 1, "insert_text": "x"}
    )
    assert (memory_root / "plans" / "q2.md").read_text() == "# Q2\nx\n- launch\n"
    assert "did not appear" in refused(
        tool, command="str_replace", path="/memories/WORKING.md", old_str="nope", new_str="y"
    )
    (memory_root / "plans" / "twice.md").write_text("a\na\n")
    assert "lines 1, 2" in refused(
        tool, command="str_replace", path="/memories/plans/twice.md", old_str="a", new_str="b"
    )
    assert "outside [0, 3]" in refused(
        tool, command="insert", path="/memories/plans/q2.md", insert_line=7, insert_text="z"
    )


def test_delete_and_rename_a_note_keep_the_index_in_step(
    tool: HipoMemoryTool, memory: Memory, memory_root: Path
) -> None:
    tool.call(
        {
            "command": "rename",
            "old_path": "/memories/knowledge/pricing.md",
            "new_path": "/memories/knowledge/archive/pricing-2026.md",
        }
    )
    assert (memory_root / "knowledge" / "archive" / "pricing-2026.md").is_file()
    files = {hit.file for hit in memory.recall("starter tier", k=10).hits}
    assert "knowledge/archive/pricing-2026.md" in files and "knowledge/pricing.md" not in files
    tool.call({"command": "delete", "path": "/memories/knowledge/archive/pricing-2026.md"})
    files = {hit.file for hit in memory.recall("starter tier", k=10).hits}
    assert not any(file.startswith("knowledge/") for file in files)
    assert "already exists" in refused(
        tool, command="rename", old_path="/memories/plans/q2.md", new_path="/memories/plans/q2.md"
    )


# --- the raw log: appended to, never rewritten ---------------------------------------------------


def test_create_or_insert_under_the_raw_folder_appends_checkpoints(
    tool: HipoMemoryTool, memory: Memory, memory_root: Path
) -> None:
    log = memory_root / RAW
    before = log.read_bytes()
    result = tool.call(
        {
            "command": "create",
            "path": f"/memories/{RAW}",
            "file_text": "## Churn analysis [feedback] #churn\n- rule: segment by plan\n"
            "## Launch date\n- decisions: launch on 2026-04-02\n",
        }
    )
    assert result.startswith(f"Appended 2 checkpoints to /memories/{RAW} at line ")
    assert log.read_bytes().startswith(before)  # nothing already there was touched
    tool.call({"command": "create", "path": "/memories/memory/notes.md", "file_text": "free text"})
    assert not (memory_root / "memory" / "notes.md").exists()  # today's log took it
    inserted = tool.call(
        {"command": "insert", "path": f"/memories/{RAW}", "insert_line": 1, "insert_text": "late"}
    )
    assert "(not at line 1)" in inserted and "append-only" in inserted
    checkpoints = parse_log(log.read_text(), date=TODAY)
    assert [c.title for c in checkpoints] == [
        "Competitor pricing",
        "Churn analysis",
        "Launch date",
        "free text",
        "late",
    ]
    assert checkpoints[1].type == "feedback" and checkpoints[1].tags == ("churn",)
    assert memory.recall("segment by plan").hits[0].title == "Churn analysis"
    earlier = tool.call(
        {"command": "create", "path": "/memories/memory/2026-03-10.md", "file_text": "- a: b"}
    )
    assert "memory/2026-03-10.md" in earlier
    assert "future day" in refused(
        tool, command="create", path="/memories/memory/2026-03-13.md", file_text="x"
    )
    assert "not a real day" in refused(
        tool, command="create", path="/memories/memory/2026-02-30.md", file_text="x"
    )


def test_checkpoint_blocks_split_at_headings() -> None:
    assert checkpoint_blocks("plain text") == [("", "plain text")]
    assert checkpoint_blocks("intro\n## A [user]\nbody a\n## B\n") == [
        ("", "intro\n"),
        ("A [user]", "body a\n"),
        ("B", ""),
    ]
    assert checkpoint_blocks("  \n") == []


# --- refusals -----------------------------------------------------------------------------------

REFUSALS = [
    (
        {"command": "str_replace", "path": f"/memories/{RAW}", "old_str": "15%", "new_str": "20%"},
        ["raw log", "append-only", "append a checkpoint"],
    ),
    ({"command": "delete", "path": f"/memories/{RAW}"}, ["raw log", "cannot be deleted"]),
    (
        {"command": "rename", "old_path": f"/memories/{RAW}", "new_path": "/memories/memory/x.md"},
        ["raw log", "renamed or moved"],
    ),
    (
        {"command": "create", "path": f"/memories/memory/daily/{TODAY}.md", "file_text": "x"},
        ["compaction node", "rebuilt from the raw logs", "append a checkpoint"],
    ),
    (
        {
            "command": "str_replace",
            "path": "/memories/memory/ROOT.md",
            "old_str": "#",
            "new_str": "",
        },
        ["topic index", "cannot be edited"],
    ),
    ({"command": "delete", "path": "/memories/memory/ROOT.md"}, ["topic index"]),
    (
        {
            "command": "insert",
            "path": "/memories/memory/ROOT.md",
            "insert_line": 0,
            "insert_text": "x",
        },
        ["topic index"],
    ),
    ({"command": "delete", "path": "/memories/SCRATCHPAD.md"}, ["Layer 1 working file"]),
    ({"command": "delete", "path": "/memories/knowledge"}, ["folder"]),
    ({"command": "delete", "path": "/memories"}, ["folder"]),
    (
        {"command": "create", "path": "/memories/notes.md", "file_text": "x"},
        ["not part of the memory", "knowledge/"],
    ),
    (
        {"command": "create", "path": "/memories/analysis.ipynb", "file_text": "x"},
        ["not part of the memory"],
    ),
    (
        {"command": "create", "path": "/memories/memory/.compaction-state.json", "file_text": "x"},
        ["not part of the memory"],
    ),
    (
        {"command": "rename", "old_path": "/memories/plans/q2.md", "new_path": f"/memories/{RAW}"},
        ["raw log"],
    ),
]


@pytest.mark.parametrize(("command", "words"), REFUSALS)
def test_refusals_say_why_and_leave_every_file_as_it_was(
    tool: HipoMemoryTool, memory_root: Path, command: dict, words: list[str]
) -> None:
    files = sorted(p for p in memory_root.rglob("*") if p.is_file() and ".index" not in p.parts)
    before = {p: digest(p) for p in files}
    message = refused(tool, **command)
    for word in words:
        assert word in message, message
    after = sorted(p for p in memory_root.rglob("*") if p.is_file() and ".index" not in p.parts)
    assert after == files and {p: digest(p) for p in after} == before


CONFINEMENT = [
    "/etc/passwd",
    "memories/SCRATCHPAD.md",
    "/memoriesX/SCRATCHPAD.md",
    "/memories/../secret.md",
    "/memories/knowledge/../../secret.md",
    "/memories/knowledge/link-out.md",
    "/memories/knowledge/link-in.md",
    "/memories/linked/a.md",
]


@pytest.mark.parametrize("path", CONFINEMENT)
@pytest.mark.parametrize("verb", ["view", "create", "str_replace", "delete"])
def test_paths_are_confined_to_memories(
    tool: HipoMemoryTool, memory_root: Path, path: str, verb: str
) -> None:
    secret = memory_root.parent / "secret.md"
    secret.write_text("outside")
    (memory_root / "knowledge" / "link-out.md").symlink_to(secret)
    (memory_root / "knowledge" / "link-in.md").symlink_to(memory_root / RAW)
    (memory_root / "linked").symlink_to(memory_root.parent)
    raw_before = digest(memory_root / RAW)
    arguments = {
        "view": {},
        "create": {"file_text": "x"},
        "str_replace": {"old_str": "a", "new_str": "b"},
        "delete": {},
    }[verb]
    message = refused(tool, command=verb, path=path, **arguments)
    assert any(
        words in message
        for words in ("start with /memories", "outside the memory root", "symlink", "not part")
    ), message
    assert secret.read_text() == "outside" and digest(memory_root / RAW) == raw_before


def test_the_default_root_is_hipo_root(memory_root: Path, monkeypatch) -> None:
    monkeypatch.setenv("HIPO_ROOT", str(memory_root))
    tool = HipoMemoryTool()
    try:
        tool.call({"command": "create", "path": "/memories/plans/a.md", "file_text": "a\n"})
    finally:
        tool.close()
    assert (memory_root / "plans" / "a.md").read_text() == "a\n"


def test_the_async_twin_runs_the_same_commands(memory: Memory, memory_root: Path) -> None:
    tool = AsyncHipoMemoryTool(memory)

    async def scenario() -> None:
        created = await tool.call(
            {"command": "create", "path": "/memories/plans/async.md", "file_text": "ok\n"}
        )
        assert created == "File created successfully at: /memories/plans/async.md"
        with pytest.raises(ToolError, match="append-only"):
            await tool.call({"command": "delete", "path": f"/memories/{RAW}"})

    anyio.run(scenario)
    assert (memory_root / "plans" / "async.md").read_text() == "ok\n"
    assert tool.calls == 2 and tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


# --- through the Messages API -------------------------------------------------------------------


def run_tool_conversation(api: FakeMessagesAPI, tool: HipoMemoryTool) -> Any:
    client = api.client()
    runner = client.beta.messages.tool_runner(
        model="claude-sonnet-4-5",
        max_tokens=512,
        messages=[{"role": "user", "content": "Keep a note of the pricing decision."}],
        tools=[tool],
    )
    return runner.until_done()


def test_a_scripted_tool_use_writes_through_the_tool_runner(
    api: FakeMessagesAPI, tool: HipoMemoryTool, memory_root: Path
) -> None:
    api.replies = [
        tool_use_reply(
            "memory",
            {
                "command": "create",
                "path": "/memories/knowledge/decision.md",
                "file_text": "# Decision\nstarter tier -15%\n",
            },
            text="Noting it.",
        ),
        tool_use_reply(
            "memory",
            {"command": "str_replace", "path": f"/memories/{RAW}", "old_str": "15", "new_str": "9"},
        ),
        "Noted in knowledge/decision.md.",
    ]
    raw_before = digest(memory_root / RAW)
    final = run_tool_conversation(api, tool)
    assert final.content[0].text == "Noted in knowledge/decision.md."
    first, second, third = api.message_requests()
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    (created,) = tool_results(second)
    assert created["content"] == "File created successfully at: /memories/knowledge/decision.md"
    assert not created.get("is_error")
    (refusal,) = tool_results(third)
    assert refusal["is_error"] is True
    text = (
        refusal["content"] if isinstance(refusal["content"], str) else refusal["content"][0]["text"]
    )
    assert "append-only" in text and "append a checkpoint" in text
    assert (
        memory_root / "knowledge" / "decision.md"
    ).read_text() == "# Decision\nstarter tier -15%\n"
    assert digest(memory_root / RAW) == raw_before
    assert tool.calls == 2


def test_ask_with_the_memory_tool(claude_shell, api: FakeMessagesAPI, memory_root: Path, capsys):
    api.replies = [
        tool_use_reply(
            "memory",
            {
                "command": "create",
                "path": f"/memories/{RAW}",
                "file_text": "## Churn rule [feedback]\n- rule: segment churn by plan\n",
            },
        ),
        "I noted the churn rule.",
    ]
    run(claude_shell, "%%ask --tools memory\nRemember: segment churn by plan.")
    out = capsys.readouterr().out
    assert "I noted the churn rule." in out
    usage = next(line for line in out.splitlines() if line.startswith("tokens:"))
    assert usage.endswith("· tools: 1 call")
    first, second = api.message_requests()
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert first["system"][0]["text"].startswith("<hipo-layer1-")  # Layer 1 as in any %%ask
    (result,) = tool_results(second)
    assert result["content"].startswith(f"Appended 1 checkpoint to /memories/{RAW}")
    titles = [c.title for c in parse_log((memory_root / RAW).read_text(), date=TODAY)]
    assert "Churn rule" in titles

    api.replies = ["Plain answer."]  # Hipo.ask_tools makes it the default
    run(claude_shell, "%config Hipo.ask_tools = ['memory']")
    run(claude_shell, "%%ask\nAnything else?")
    assert api.message_requests()[-1]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert capsys.readouterr().out.rstrip().endswith("· tools: 0 calls")
    with pytest.raises(UsageError, match="unknown tool"):
        run(claude_shell, "%%ask --tools shell\nls")
