"""Who wrote a knowledge note is a typed fact (issue 49, item 1): a note Claude's memory tool
writes, driven by a real `%%ask --tools memory` (the SDK's tool runner over the fake Messages
API), is recalled into `Memory.context` under a line saying an agent wrote it, never as the
user's; so is a long reply the write-back offloads to knowledge/. The record survives a rebuild
of the index and the user's hand edits; the note's own text cannot claim to be the user's; a
damaged record labels every note rather than none. Imported turns of the user's own reach a
context labelled as imported."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from claude_helpers import (  # noqa: F401
    SDK_CALL,
    TODAY,
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
    tool_results,
    tool_use_reply,
)

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.disk.note_writers import RECORD_SHOWN
from hipo_jupyter.memory.intake.importers import parse_text
from hipo_jupyter.memory_tool import HipoMemoryTool

AGENT_LABEL = "[written by an agent]"
NOTE = "knowledge/churn-findings.md"
AGENT_TEXT = "---\nwriter: user\n---\n# Churn findings\n\nannual plans churn less than monthly\n"
QUESTION = "which plans churn less, annual or monthly?"


def memory_at(root: Path) -> Memory:
    return Memory(root, today=lambda: date.fromisoformat(TODAY))


def group_of(text: str, words: str) -> str:
    """The group line over the piece that holds `words` in a context's text."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if words in line and not line.startswith("<"))
    return next(line for line in reversed(lines[:at]) if not line.startswith(("L", "  ")))


def context_text(root: Path, question: str = QUESTION) -> str:
    memory = memory_at(root)
    try:
        return memory.context(question, budget=800, layer1=False, mode="keyword").text
    finally:
        memory.close()


def create_through_ask(claude_shell, api: FakeMessagesAPI, path: str, text: str) -> None:
    api.replies = [
        tool_use_reply("memory", {"command": "create", "path": f"/memories/{path}",
                                  "file_text": text}),  # fmt: skip
        "Noted.",
    ]
    run(claude_shell, "%%ask --tools memory\nKeep what we found about churn.")
    (result,) = tool_results(api.message_requests()[-1])
    assert result["content"] == f"File created successfully at: /memories/{path}"


def test_a_note_the_memory_tool_creates_is_the_agents_in_the_context(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    """The user's own note of the same subject stays the user's: no label on its line."""
    (memory_root / "knowledge").mkdir(exist_ok=True)
    (memory_root / "knowledge" / "own.md").write_text("# Own\n\nmonthly plans churn more\n")
    create_through_ask(claude_shell, api, NOTE, AGENT_TEXT)
    text = context_text(memory_root)
    assert group_of(text, "annual plans churn less").endswith(AGENT_LABEL), text
    assert not group_of(text, "monthly plans churn more").endswith("]"), text
    memory = memory_at(memory_root)
    try:
        hits = {hit.file: hit for hit in memory.recall(QUESTION, mode="keyword").hits}
        assert "annual plans churn less" not in memory.layer1().text  # no section of Layer 1
    finally:
        memory.close()
    agents = hits[NOTE]
    assert (agents.writer, agents.via, agents.provenance) == (
        "agent", "memory-tool", "Claude's memory tool",
    )  # fmt: skip
    assert agents.to_json()["writer"] == "agent"
    assert hits["knowledge/own.md"].writer == ""  # the user's, as a hand-written note is


def test_the_label_survives_a_rebuild_and_the_users_hand_edit(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    """The record is one of the files the index is rebuilt from, kept by path: an edit by
    hand does not turn the agent's words into the user's, nor does the note's text (its front
    matter says `writer: user`, the agent's words)."""
    create_through_ask(claude_shell, api, NOTE, AGENT_TEXT)
    note = memory_root / NOTE
    note.write_text(note.read_text() + "checked again on the Q2 cohort\n")
    memory = memory_at(memory_root)
    try:
        memory.reindex()
    finally:
        memory.close()
    text = context_text(memory_root)
    assert group_of(text, "annual plans churn less").endswith(AGENT_LABEL), text


def test_rename_carries_the_label_and_delete_drops_it(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.init()
    tool = HipoMemoryTool(memory)
    tool.call({"command": "create", "path": f"/memories/{NOTE}", "file_text": AGENT_TEXT})
    moved = "knowledge/churn/by-plan.md"
    tool.call(
        {"command": "rename", "old_path": f"/memories/{NOTE}", "new_path": f"/memories/{moved}"}
    )
    memory.close()
    text = context_text(memory_root)
    assert group_of(text, "annual plans churn less").startswith(moved), text
    assert group_of(text, "annual plans churn less").endswith(AGENT_LABEL), text
    memory = memory_at(memory_root)
    HipoMemoryTool(memory).call({"command": "delete", "path": f"/memories/{moved}"})
    memory.close()
    assert json.loads((memory_root / RECORD_SHOWN).read_text()) == {}
    # the user writes a note of their own at the same path later: it is theirs
    (memory_root / moved).write_text("# By plan\n\nannual plans churn less, said the user\n")
    text = context_text(memory_root)
    assert not group_of(text, "said the user").endswith("]"), text


def test_the_agent_cannot_reach_the_record(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.init()
    tool = HipoMemoryTool(memory)
    tool.call({"command": "create", "path": f"/memories/{NOTE}", "file_text": AGENT_TEXT})
    before = (memory_root / RECORD_SHOWN).read_bytes()
    for command in (
        {"command": "create", "path": f"/memories/{RECORD_SHOWN}", "file_text": "{}"},
        {"command": "delete", "path": f"/memories/{RECORD_SHOWN}"},
        {"command": "str_replace", "path": f"/memories/{RECORD_SHOWN}", "old_str": "memory-tool",
         "new_str": "cli"},
    ):  # fmt: skip
        try:
            tool.call(command)
        except Exception as error:  # noqa: BLE001 (the SDK's ToolError)
            assert "not part of the memory" in str(error)
        else:
            raise AssertionError(f"{command['command']} of the record was not refused")
    memory.close()
    assert (memory_root / RECORD_SHOWN).read_bytes() == before


def test_a_damaged_record_labels_every_note_rather_than_none(memory_root: Path) -> None:
    memory = memory_at(memory_root)
    memory.init()
    HipoMemoryTool(memory).call(
        {"command": "create", "path": f"/memories/{NOTE}", "file_text": AGENT_TEXT}
    )
    (memory_root / "knowledge" / "own.md").write_text("# Own\n\nmonthly plans churn more\n")
    (memory_root / RECORD_SHOWN).write_text("{not json")
    memory.reindex()
    memory.close()
    text = context_text(memory_root)
    assert group_of(text, "annual plans churn less").endswith(AGENT_LABEL), text
    assert group_of(text, "monthly plans churn more").endswith(AGENT_LABEL), text


def test_a_reply_the_write_back_offloads_is_labelled_as_the_write_backs(
    claude_shell, api: FakeMessagesAPI, memory_root: Path
) -> None:
    large = "\n".join(f"Row {n}: zephyrine order ORD-{1000 + n} shipped" for n in range(900))
    api.replies.append(large)
    run(claude_shell, SDK_CALL.format(prompt="List every zephyrine order"))
    (saved,) = (memory_root / "knowledge").glob("*.md")
    text = context_text(memory_root, "zephyrine order ORD-1899")
    group = group_of(text, "zephyrine order [knowledge]")
    assert group.startswith(f"knowledge/{saved.name}"), text
    assert group.endswith("[an LLM call's write-back]"), text


def test_imported_user_turns_reach_the_context_as_imported(memory_root: Path) -> None:
    """A chat export's user turns, with a reply and without one, are imported, not the
    user's own notes of today: their group says so, the user's note beside them does not."""
    chat = [
        {"role": "user", "content": "My sourdough starter ratio is 1:1:1", "time": "2026-03-02"},
        {"role": "user", "content": "The sourdough proofs overnight in the fridge"},
        {"role": "assistant", "content": "Cold proofing deepens the flavour."},
    ]
    memory = memory_at(memory_root)
    memory.import_records(parse_text(json.dumps(chat), name="chat.json"))
    memory.remember("Sourdough", "- decisions: the sourdough bakes at 250C", on="2026-03-02")
    text = memory.context("sourdough starter ratio proofs", budget=800, layer1=False,
                          mode="keyword").text  # fmt: skip
    memory.close()
    assert group_of(text, "starter ratio is 1:1:1").endswith("[imported]"), text
    assert group_of(text, "proofs overnight").endswith("[imported]"), text
    assert not group_of(text, "bakes at 250C").endswith("]"), text


def test_mcp_read_of_the_agents_note_says_who_wrote_it(memory_root: Path) -> None:
    """A real `hipo mcp`: `read` of the agent's note carries `writer="agent"` on its fence;
    the user's own note carries none."""
    import anyio
    from test_mcp import call, session

    memory = memory_at(memory_root)
    memory.init()
    HipoMemoryTool(memory).call(
        {"command": "create", "path": f"/memories/{NOTE}", "file_text": AGENT_TEXT}
    )
    memory.close()
    (memory_root / "knowledge" / "own.md").write_text("# Own\n\nmonthly plans churn more\n")
    answers: dict[str, str] = {}

    async def scenario() -> None:
        async with session(memory_root) as client:
            for path in (NOTE, "knowledge/own.md"):
                text, error = await call(client, "read", path=path)
                assert not error, text
                answers[path] = text.splitlines()[0]

    anyio.run(scenario)
    assert f'path="{NOTE}" writer="agent"' in answers[NOTE]
    assert "writer=" not in answers["knowledge/own.md"]
