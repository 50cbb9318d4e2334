"""Labels name the real writer and kind (issue 44, item 5): an OpenAI call's write-back says
so wherever a write-back is named (the raw log's provenance, recall's line, ROOT.md's grouped
line, the sidebar's grouped entry), and an agent's proposed correction reads as a proposed
correction in ROOT.md, not as a proposed rule. Driven for real: a kernel whose OpenAI SDK calls
go to the stand-in server, and `hipo mcp` as a process."""

from __future__ import annotations

from pathlib import Path

import anyio
from test_mcp import call, session
from test_openai_clients import (  # noqa: F401  (fixtures: the kernel and its OpenAI stand-in)
    TODAY,
    RaisingShell,
    openai_api,
    openai_url,
    run,
    shell,
    written_back,
)

from hipo_jupyter.memory import Memory

OPENAI_CELL = """
import openai
client = openai.OpenAI(base_url=URL, api_key="test-key", max_retries=0)
reply = client.chat.completions.create(
    model="gpt-test", messages=[{"role": "user", "content": "When is the deploy window?"}]
)
"""


def test_an_openai_calls_write_back_is_named_openai_everywhere(
    shell: RaisingShell,  # noqa: F811
    memory_root: Path,
) -> None:
    run(shell, OPENAI_CELL)
    (written,) = written_back(memory_root)
    assert "provider=openai" in written.split("\n")[1]  # recorded at write time

    hits = shell.run_line_magic("recall", "deploy window")
    assert "an OpenAI call's write-back" in hits[0].provenance
    root = (memory_root / "memory" / "ROOT.md").read_text()
    assert f"- {TODAY} 1 OpenAI call: " in root and "Claude call" not in root
    memory = Memory(memory_root)
    grouped = memory.recent_checkpoints(5, grouped=True)[-1]  # the sidebar's entry
    assert grouped.title.startswith("1 OpenAI call: ")
    memory.compact()  # a pass names them the same way
    assert f"- {TODAY} 1 OpenAI call: " in (memory_root / "memory" / "ROOT.md").read_text()
    memory.close()


def test_a_proposed_correction_reads_as_one_in_root(memory_root: Path, monkeypatch) -> None:
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    memory = Memory(memory_root)
    mine = memory.remember("Launch date", "- decisions: the launch is in April", via="cli")
    memory.close()

    async def scenario() -> None:
        async with session(memory_root) as client:
            body = "- decisions: the launch is in May"
            text, error = await call(
                client, "remember", title="Launch date", body=body, replaces=mine.id
            )
            assert not error and "proposes a correction" in text, text

    anyio.run(scenario)
    root = (memory_root / "memory" / "ROOT.md").read_text()
    assert "a proposed correction, not in force until the user accepts it" in root
    assert "a proposed rule" not in root and "in May" not in root
