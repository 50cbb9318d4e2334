"""The sidebar keeps up (issue 36): a write by any process moves `/hipo/api/changes`, the header
has a folder to name, and `/hipo/api/sent` tells what the notebook's last `%%ask` sent.

The server is real (pytest-jupyter), the writes are the `hipo` command in a process of its own
and a real IPython shell answered by the Messages API stand-in; the panel's polling itself is
covered by jest (labextension/test) and, in JupyterLab, by tests/test_browser.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

from claude_helpers import (  # noqa: F401 - fixtures
    FakeMessagesAPI,
    api_fixture,
    claude_shell_fixture,
    run,
    served_fixture,
)

from hipo_jupyter.memory import Memory

REPO = Path(__file__).resolve().parent.parent
HIPO = "import sys; from hipo_jupyter.cli.entry import main; sys.exit(main())"


def pricing(memory: Memory) -> None:
    memory.remember(
        "Competitor pricing", "- decisions: cut the starter tier by 15%", on=date(2026, 3, 10)
    )


def hipo_remember(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", HIPO, "--root", str(root), "remember", "--title", "From a shell"],
        input="- outcome: written from a terminal\n",
        env=env | {"HIPO_TODAY": "2026-03-12"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


async def test_a_write_from_the_command_line_moves_the_stamp(notebook_folder, api_get) -> None:
    folder = notebook_folder("project", pricing)
    _, before = await api_get("changes", path="project/analysis.ipynb")
    _, again = await api_get("changes", path="project/analysis.ipynb")
    assert before["stamp"] and again == before  # nothing written: the sidebar reloads nothing
    hipo_remember(folder)
    _, after = await api_get("changes", path="project/analysis.ipynb")
    assert after["stamp"] != before["stamp"]
    _, recent = await api_get("recent", path="project/analysis.ipynb")
    assert recent["checkpoints"][0]["title"] == "From a shell"


async def test_an_edited_layer1_file_moves_the_stamp(notebook_folder, api_get) -> None:
    folder = notebook_folder("project", pricing)
    _, before = await api_get("changes", path="project/analysis.ipynb")
    (folder / "SCRATCHPAD.md").write_text("# Scratchpad\n- trying the churn model\n")
    _, after = await api_get("changes", path="project/analysis.ipynb")
    assert after["stamp"] != before["stamp"]


async def test_a_folder_without_memory_answers_an_empty_stamp(notebook_folder, api_get) -> None:
    notebook_folder("fresh", notebook="new.ipynb")
    status, body = await api_get("changes", path="fresh/new.ipynb")
    assert (status, body) == (200, {"stamp": ""})


async def test_the_header_has_the_folder_name_at_the_server_root(
    jp_root_dir: Path, api_get
) -> None:
    memory = Memory(jp_root_dir, today=lambda: date(2026, 3, 12))
    pricing(memory)
    memory.close()
    (jp_root_dir / "analysis.ipynb").write_text("{}")
    _, tree = await api_get("tree", path="analysis.ipynb")
    assert tree["root"] == "" and tree["folder"] == jp_root_dir.resolve().name


async def test_sent_is_null_before_the_first_ask(notebook_folder, api_get) -> None:
    notebook_folder("project", pricing)
    status, body = await api_get("sent", path="project/analysis.ipynb")
    assert (status, body) == (200, {"sent": None})


def test_ask_records_each_part_it_sent(claude_shell, api: FakeMessagesAPI, memory_root) -> None:
    run(claude_shell, "%%remember Competitor pricing #pricing\n- decisions: cut starter by 15%\n")
    run(claude_shell, "%%ask\nWhat did we decide on pricing?")
    (body,) = api.message_requests()
    sent = Memory(memory_root).last_sent(None)  # a shell outside a notebook: the console's
    assert sent is not None and sent.model == body["model"]
    layer1 = [part for part in sent.parts if part.kind == "layer1"]
    recalled = [part for part in sent.parts if part.kind == "recalled"]
    assert "ROOT" in {part.name for part in layer1} and all(p.tokens > 0 for p in layer1)
    assert [part.name for part in recalled] == ["Competitor pricing"]
    assert recalled[0].source.startswith("memory/2026-03-12.md#L") and recalled[0].tokens > 0
    assert sent.tokens >= sum(part.tokens for part in sent.parts)


def test_a_damaged_sent_record_reads_as_nothing_sent(memory_root: Path) -> None:
    memory = Memory(memory_root)
    memory.init()
    record = memory_root / "memory" / ".conversations" / "console.sent.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    for damaged in ("{", '{"parts": 5}', "[" * 100_000, '{"tokens": 1e400, "parts": []}'):
        record.write_text(damaged)
        assert memory.last_sent(None) is None
