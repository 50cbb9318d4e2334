"""The built wheel, installed as a user installs it, does what the README says.

Run by `make test-wheel` in `.venv-wheel`, a fresh environment holding only the wheel that
`make dist` built (with its `mcp` and `lab` extras) and pytest, never the editable source tree:
this file's folder is the only one pytest puts on `sys.path`, so `hipo_jupyter` can only come
from site-packages. The main test run does not collect this folder (tests/conftest.py).

What a user runs first is checked here: the quickstart headless (`hipo demo`), `hipo mcp` driven
by the MCP SDK's own stdio client, and the JupyterLab sidebar and server extension found by
Jupyter's own listings (the prebuilt extension ships in the wheel, so no Node is needed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import anyio
import pytest

BIN = Path(sys.executable).parent
SITE_PACKAGES = Path(sysconfig.get_paths()["purelib"]).resolve()
TODAY = "2026-03-12"


def user_env(home: Path) -> dict[str, str]:
    """A user with nothing set up: a fresh HOME, no memory root pinned, keyword recall."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPO_", "PYTHON"))}
    env.update(HOME=str(home), HIPO_SEMANTIC="0", JUPYTER_PLATFORM_DIRS="1")
    return env


def test_hipo_jupyter_comes_from_the_wheel() -> None:
    import hipo_jupyter

    assert Path(hipo_jupyter.__file__).resolve().is_relative_to(SITE_PACKAGES)


def test_the_wheel_brings_recall_by_meaning() -> None:
    """Issue 35: `pip install hipo-jupyter` includes the embedding model, its weights checked
    against the pinned digests."""
    from hipo_jupyter.memory.search.embed import semantic_available

    on, message = semantic_available()
    assert on, message


def test_the_quickstart_runs_headless(tmp_path: Path) -> None:
    run = subprocess.run(
        [str(BIN / "hipo"), "demo", "--timeout", "120"],
        cwd=tmp_path,
        env=user_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "ROOT.md" in run.stdout and "Topics Index" in run.stdout


def test_hipo_mcp_answers_the_sdk_client(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    root = tmp_path / "analysis"
    root.mkdir()
    env = user_env(tmp_path) | {"HIPO_TODAY": TODAY}
    remember = subprocess.run(
        [str(BIN / "hipo"), "--root", str(root), "remember", "--title", "Launch moved to May"],
        input="- decisions: launch the Heron release in May\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert remember.returncode == 0, remember.stderr
    params = StdioServerParameters(
        command=str(BIN / "hipo"), args=["--root", str(root), "mcp"], env=env, cwd=str(root)
    )

    async def ask() -> tuple[set[str], str]:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                tools = {tool.name for tool in (await client.list_tools()).tools}
                result = await client.call_tool("recall", {"query": "Heron launch"})
                text = "\n".join(b.text for b in result.content if b.type == "text")
                return tools, text

    tools, text = anyio.run(ask)
    assert {"recall", "remember", "layer1"} <= tools
    assert "Heron" in text


@pytest.mark.parametrize(
    ("listing", "name"),
    [(["labextension", "list"], "hipo-jupyter"), (["server", "extension", "list"], "hipo_jupyter")],
)
def test_jupyter_finds_the_extensions(tmp_path: Path, listing: list[str], name: str) -> None:
    run = subprocess.run(
        [str(BIN / "jupyter"), *listing],
        env=user_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    shown = run.stdout + run.stderr
    assert run.returncode == 0, shown
    named = [line for line in shown.splitlines() if name in line]
    assert any("enabled" in line for line in named), shown
    assert any("OK" in line for line in named), shown  # its module imports and validates
