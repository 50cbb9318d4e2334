"""One request, one answer: the CLI, the magics and the server parse a request with the
engine's one parser and render the engine's one result.

The same bad inputs give the same one-line message in each (a UsageError, exit 2 with
`hipo: error: ...`, a 400 with the message), and `hipo recall --json`, the server's
/hipo/api/recall and `RecallResult.to_json()` are the same document for the same memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from claude_helpers import new_shell
from IPython.core.error import UsageError

from hipo_jupyter.ipython.extension import unload_ipython_extension
from hipo_jupyter.memory import Memory, render

TODAY = "2026-03-12"

HUGE = "4000000000000000000"
# (CLI arguments after `recall`, the magic's line after `%recall`, the server's parameters)
BAD_REQUESTS = [
    (["x", "--since", "March"], "x --since March", {"q": "x", "since": "March"}),
    (["x", "--since", "20260301"], "x --since 20260301", {"q": "x", "since": "20260301"}),
    (["x", "--until", "2026-02-30"], "x --until 2026-02-30", {"q": "x", "until": "2026-02-30"}),
    (["x", "--since", "9999-12-31"], "x --since 9999-12-31", {"q": "x", "since": "9999-12-31"}),
    (
        ["x", "--since", "2026-03-12", "--until", "2026-03-01"],
        "x --since 2026-03-12 --until 2026-03-01",
        {"q": "x", "since": "2026-03-12", "until": "2026-03-01"},
    ),
    (["x", "-k", "0"], "x -k 0", {"q": "x", "k": "0"}),
    (["x", "-k", "ten"], "x -k ten", {"q": "x", "k": "ten"}),
    (["x", "-k", HUGE], f"x -k {HUGE}", {"q": "x", "k": HUGE}),
    (["x", "--type", "diary"], "x --type diary", {"q": "x", "type": "diary"}),
    (["x", "--mode", "fuzzy"], "x --mode fuzzy", {"q": "x", "mode": "fuzzy"}),
]

# (the title line, options as the CLI and the magic both take them, the body)
BAD_CHECKPOINTS = [
    ("Pricing", ["--type", "diary"], "- outcome: x"),
    ("Pricing", ["--date", "20260301"], "- outcome: x"),
    ("Pricing", ["--date", "2026-02-30"], "- outcome: x"),
    ("Pricing", ["--date", "2300-01-01"], "- outcome: x"),
    ("P" * 301, [], "- outcome: x"),
    ("Pricing", [], "   "),
    ("Deploys", ["--type", "project", "--trigger", "before"], "- outcome: x"),
]


def three_checkpoints(memory: Memory) -> None:
    memory.remember("Competitor pricing #pricing", "- decisions: cut the starter tier by 15%")
    memory.remember("Pricing page copy", "- outcome: new pricing page copy", on="2026-03-10")
    memory.remember("Launch plan", "- decisions: launch Heron in May #launch")
    memory.compact()


@pytest.fixture
def project(notebook_folder) -> Path:
    return notebook_folder("project", three_checkpoints, today=date.fromisoformat(TODAY))


def hipo(root: Path, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "HIPO_TODAY": TODAY}
    done = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def shell(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(project)!r}")
    shell.run_cell("%load_ext hipo")
    yield shell
    unload_ipython_extension(shell)


@pytest.mark.parametrize(("cli_args", "magic_line", "params"), BAD_REQUESTS)
async def test_the_same_bad_request_gets_the_same_line_everywhere(
    api_get, project: Path, shell, cli_args, magic_line, params
) -> None:
    with pytest.raises(UsageError) as raised:
        shell.run_cell(f"%recall {magic_line}")
    message = str(raised.value)
    assert "\n" not in message
    code, _, err = hipo(project, "recall", *cli_args)
    assert code == 2 and err.strip() == f"hipo: error: {message}"
    status, body = await api_get("recall", path="project/analysis.ipynb", **params)
    assert status == 400 and body["message"] == message


async def test_recall_json_is_one_document(api_get, project: Path, monkeypatch) -> None:
    monkeypatch.setenv("HIPO_TODAY", TODAY)  # the server's clock too: recency is in the scores
    code, out, err = hipo(project, "recall", "pricing", "-k", "3", "--json")
    assert code == 0, err
    from_cli = json.loads(out)
    status, from_server = await api_get(
        "recall", path="project/analysis.ipynb", q="pricing", k="3", mode="auto"
    )
    assert status == 200
    memory = Memory(project, today=lambda: date.fromisoformat(TODAY))
    from_engine = memory.recall("pricing", k=3, mode="auto").to_json()
    memory.close()
    assert from_cli == from_server == json.loads(json.dumps(from_engine))
    assert from_cli["hits"] and from_cli["mode"] == "keyword"
    assert all(isinstance(hit["path"], list) for hit in from_cli["hits"])


def test_recall_text_is_one_rendering(project: Path, shell) -> None:
    """`hipo recall`, `%recall` and MCP's recall tool print the engine's one text renderer."""
    from hipo_jupyter.mcp.server import recall_text as mcp_recall_text

    code, out, err = hipo(project, "recall", "pricing", "-k", "3", "--paths")
    assert code == 0, err
    in_notebook = str(shell.run_line_magic("recall", "pricing -k 3"))
    memory = Memory(project, today=lambda: date.fromisoformat(TODAY))
    try:
        from_mcp = mcp_recall_text(memory, "pricing", k=3)
        from_engine = render.recall_text(memory.recall("pricing", k=3, mode="auto"))
    finally:
        memory.close()
    from test_mcp import quoted

    assert out.rstrip("\n") == in_notebook == quoted(from_mcp) == from_engine  # MCP's fenced
    assert from_engine.startswith("recall 'pricing': ")
    assert " -> memory/2026-03-12.md#L" in from_engine  # the drill-down, joined one way


def test_status_text_and_json_are_one_rendering(project: Path, shell, capsys) -> None:
    code, out, err = hipo(project, "status")
    assert code == 0, err
    shell.run_line_magic("hipo", "status")
    assert capsys.readouterr().out == out
    code, out, err = hipo(project, "status", "--json")
    memory = Memory(project, today=lambda: date.fromisoformat(TODAY))
    try:
        assert json.loads(out) == json.loads(json.dumps(memory.status().to_json()))
    finally:
        memory.close()


async def test_budget_and_topics_json_come_from_the_engine(
    jp_fetch, project: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HIPO_TODAY", TODAY)  # the server's clock: topic ages are against today
    memory = Memory(project, today=lambda: date.fromisoformat(TODAY))
    try:
        layer1, topics = memory.layer1().to_json(), memory.topics().to_json()
    finally:
        memory.close()
    response = await jp_fetch("hipo", "api", "budget", params={"path": "project/analysis.ipynb"})
    assert json.loads(response.body) == json.loads(json.dumps(layer1))
    response = await jp_fetch("hipo", "api", "tree", params={"path": "project/analysis.ipynb"})
    served = json.loads(response.body)["topics"]
    assert [{k: v for k, v in t.items() if k != "periods"} for t in served] == topics["topics"]


@pytest.mark.parametrize(("title", "options", "body"), BAD_CHECKPOINTS)
def test_the_same_bad_checkpoint_gets_the_same_line_everywhere(
    project: Path, shell, title: str, options: list[str], body: str
) -> None:
    """`%%remember`, `hipo remember` and `Memory.remember` refuse a bad checkpoint with the
    engine's one message, and nothing is written."""
    before = (project / "memory" / f"{TODAY}.md").read_bytes()
    with pytest.raises(UsageError) as raised:
        shell.run_cell(f"%%remember {title} {' '.join(options)}\n{body}")
    message = str(raised.value)
    assert "\n" not in message
    env = {**os.environ, "HIPO_TODAY": TODAY}
    done = subprocess.run(
        [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(project), "remember", title,
         *options],
        input=body, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip() == f"hipo: error: {message}"
    assert (project / "memory" / f"{TODAY}.md").read_bytes() == before
