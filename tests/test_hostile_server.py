"""The server against a memory folder that lies: hidden files, loops of links, long names, and
raw logs that would block. Through a real Jupyter server (pytest-jupyter); each request has a
timeout, so a request that hangs fails the test instead of the suite."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory


def pricing(memory: Memory) -> None:
    memory.init()  # knowledge/ and plans/ as `hipo init` makes them (compaction makes neither)
    memory.remember("Competitor pricing", "- decisions: cut the starter tier by 15%")
    memory.compact()


@pytest.fixture
def project(notebook_folder) -> Path:
    return notebook_folder("project", pricing)


async def test_hidden_files_are_not_served(api_get, project: Path) -> None:
    (project / ".private").mkdir()
    (project / ".private" / "keys.md").write_text("# SECRET-KEYS\n")
    (project / "knowledge" / ".hidden.md").write_text("# SECRET-NOTE\n")
    for file in (".private/keys.md", "knowledge/.hidden.md", "memory/.private.md"):
        code, body = await api_get("node", path="project", file=file)
        assert code == 404, (file, code)
        assert "SECRET" not in json.dumps(body)
    code, _ = await api_get("node", path="project", file="memory/ROOT.md")
    assert code == 200


async def test_a_hidden_notebook_folder_is_not_served(api_get, jp_root_dir: Path) -> None:
    hidden = jp_root_dir / ".secret-project"
    hidden.mkdir()
    Memory(hidden).remember("Hidden", "- outcome: HIDDEN-SENTINEL")
    for endpoint in ("tree", "recall", "budget", "recent"):
        code, body = await api_get(endpoint, path=".secret-project/nb.ipynb", q="hidden")
        assert code == 404, (endpoint, code)
        assert "HIDDEN-SENTINEL" not in json.dumps(body)


async def test_error_bodies_name_no_absolute_path(api_get, jp_root_dir: Path, project) -> None:
    long_name = "x" * 300 + ".md"
    code, body = await api_get("node", path="project", file=f"knowledge/{long_name}")
    assert code in (400, 404)
    assert str(jp_root_dir) not in json.dumps(body)
    code, body = await api_get("tree", path="y" * 300 + "/nb.ipynb")
    assert code in (400, 404)
    assert str(jp_root_dir) not in json.dumps(body)


async def test_a_loop_of_links_is_a_400(api_get, project: Path) -> None:
    (project / "knowledge" / "loop.md").symlink_to("loop.md")
    code, body = await api_get("node", path="project", file="knowledge/loop.md")
    assert code == 400, body
    (project.parent / "ring").symlink_to("ring")
    code, body = await api_get("tree", path="ring/nb.ipynb")
    assert code == 400, body


async def test_a_fifo_raw_log_never_stalls_the_server(api_get, jp_fetch, project: Path) -> None:
    os.mkfifo(project / "memory" / "2026-03-11.md")
    os.mkfifo(project / "memory" / "daily" / "2026-03-11.md")
    for endpoint in ("tree", "recall", "budget", "recent"):
        code, body = await api_get(endpoint, path="project/analysis.ipynb", q="pricing")
        assert code == 200, (endpoint, body)
    code, body = await api_get("node", path="project", file="memory/2026-03-11.md")
    assert code in (404, 422), body
    # Jupyter's own API still answers while ours is asked about a FIFO
    response = await asyncio.wait_for(jp_fetch("api", "status", method="GET"), timeout=30)
    assert response.code == 200


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"q": "x", "since": "9999-12-31"}, "out of range"),
        ({"q": "x", "k": "4000000000000000000"}, "at most"),
        ({"q": "x", "since": "20260301"}, "bad date"),
    ],
)
async def test_the_server_uses_the_engine_s_parser(api_get, project, params, fragment) -> None:
    code, body = await api_get("recall", path="project", **params)
    assert code == 400 and fragment in body["message"], body
