"""A hit shows what matched: the passage of its checkpoint that answers, never its title twice,
the same in every front end (they all print `render.recall_text` or the hit's JSON snippet).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import anyio
import pytest

from hipo_jupyter.memory import Memory, render

pytest.importorskip("mcp")

from hipo_jupyter.mcp import server as hipo_mcp  # noqa: E402

LONG = (
    "- request: plan the second quarter with the whole team\n"
    "- analysis: we went through staffing, the hiring plan, travel, the offsite, vendor "
    "contracts, the roadmap review and every open budget line one by one for an hour\n"
    "- decisions: the launch moves to May because QA needs two more weeks\n"
    "- outcome: plan shared with finance and the board\n"
)


@pytest.fixture
def memory(memory_root: Path):
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    memory.remember("Launch date #launch", "moved the launch to May", via="cli")
    memory.remember("Q2 planning", LONG, via="mcp")
    yield memory
    memory.close()


def test_a_one_line_note_shows_its_line_not_its_title(memory: Memory) -> None:
    result = memory.recall("launch date?")
    note = next(hit for hit in result.hits if hit.title == "Launch date")
    assert note.snippet == "moved the launch to May"
    text = render.recall_text(result)
    assert text.count("Launch date") == 1 and "\n   moved the launch to May\n" in text
    assert "\n   from the command line" in text and "from MCP" in text


def test_a_long_checkpoint_shows_the_passage_that_answers(memory: Memory) -> None:
    hits = memory.recall("why did QA move the launch?").hits
    (hit,) = [h for h in hits if h.title != "Launch date"]
    assert "QA needs two more weeks" in hit.snippet
    assert "request: plan the second quarter" not in hit.snippet  # not the head
    assert hit.to_json()["snippet"] == hit.snippet  # what the sidebar and --json show


def test_mcp_shows_the_same_lines(memory: Memory) -> None:
    server = hipo_mcp.build_server(memory)

    async def scenario() -> str:
        result = await server.call_tool("recall", {"query": "launch date?"})
        return "\n".join(block.text for block in result.content)

    from test_mcp import quoted

    text = quoted(anyio.run(scenario))  # fenced as quoted data (test_mcp_fence.py)
    assert text == render.recall_text(memory.recall("launch date?", mode="auto"))
    assert "moved the launch to May" in text and "from the command line" in text
