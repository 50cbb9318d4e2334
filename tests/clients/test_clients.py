"""The configs `hipo mcp --config` prints, taken by the real clients that read them.

Run by `make test-clients` in `.venv-clients` (the `[clients]` extra: jupyter-ai 3's persona
manager) with Claude Code and the MCP Inspector from npm (`package.json` and its lock beside this
file, installed by `npm ci`). Each test starts from what a user copies: the printed command or
JSON, produced by a real `hipo` process, and fails when the client refuses it or cannot reach
the server it names. Nothing here talks to a network: Claude Code's non-essential traffic and
updater are off, and a throwaway HOME keeps the developer's own settings out.

The main test run does not collect this folder (tests/conftest.py): its packages live in the
other environment.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

HERE = Path(__file__).resolve().parent
NODE_BIN = HERE / "node_modules" / ".bin"
TOOLS = {"recall", "remember", "topics", "layer1", "read", "status"}
TIMEOUT = 120
TODAY = "2026-03-12"


def hipo_executable() -> str:
    beside = Path(sys.executable).parent / "hipo"
    return str(beside) if beside.exists() else shutil.which("hipo") or "hipo"


def node_tool(name: str) -> Path:
    tool = NODE_BIN / name
    if not tool.exists():
        pytest.skip(
            f"{name} is not installed in tests/clients/node_modules: the npm registry was "
            "unreachable when `make test-clients` ran `npm ci`"
        )
    return tool


def quiet_env(home: Path) -> dict[str, str]:
    """A user with nothing set up: a throwaway HOME, no updater, no telemetry, no semantic
    model loading in the server (it is not what these tests are about)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPO_", "ANTHROPIC_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        HIPO_SEMANTIC="0",
        HIPO_TODAY=TODAY,
        MCP_INSPECTOR_SECRET_STORE="memory",
        NO_COLOR="1",
    )
    return env


def run(args: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{shlex.join(args)} -> {done.returncode}\n{done.stderr}"
    return done.stdout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A notebook folder with one checkpoint, written by the `hipo` command."""
    folder = tmp_path / "analysis"
    folder.mkdir()
    env = quiet_env(tmp_path / "home")
    subprocess.run(
        [hipo_executable(), "--root", str(folder), "remember", "--title", "Launch plan #launch"],
        input="- decisions: moved the launch to May\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    return folder


def printed_config(target: str, root: Path, env: dict[str, str]) -> str:
    return run([hipo_executable(), "--root", str(root), "mcp", "--config", target], env)


def test_claude_code_takes_the_printed_command_and_connects(root: Path, tmp_path: Path) -> None:
    claude = node_tool("claude")
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir()
    env = quiet_env(home)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    words = shlex.split(printed_config("claude-code", root, env))
    assert words[:3] == ["claude", "mcp", "add"]
    run([str(claude), *words[1:]], env, cwd=project)
    listed = run([str(claude), "mcp", "list"], env, cwd=project)
    line = next((ln for ln in listed.splitlines() if ln.startswith("hipo:")), "")
    assert "Connected" in line and "Failed" not in line, listed


def test_claude_code_loads_what_install_writes(root: Path, tmp_path: Path) -> None:
    """`hipo mcp --install claude-code` writes the project's `.mcp.json`: Claude Code lists
    hipo from it, waiting for the user's approval of the project's servers; approved (the
    user's setting that trusts them), it connects; `--uninstall` takes it out of the list."""
    claude = node_tool("claude")
    home = tmp_path / "home"
    env = quiet_env(home)
    run([hipo_executable(), "--root", str(root), "mcp", "--install", "claude-code"], env)
    listed = run([str(claude), "mcp", "list"], env, cwd=root)
    line = next((ln for ln in listed.splitlines() if ln.startswith("hipo:")), "")
    # the root is the folder Claude Code works in, as Claude Code expands it (issue 52)
    assert hipo_executable() in line and " mcp" in line and "approval" in line, listed
    assert (
        str(root)
        not in json.loads((root / ".mcp.json").read_text("utf-8"))["mcpServers"]["hipo"]["args"]
    )
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enableAllProjectMcpServers": True}), "utf-8")
    listed = run([str(claude), "mcp", "list"], env, cwd=root)
    line = next((ln for ln in listed.splitlines() if ln.startswith("hipo:")), "")
    assert "Connected" in line and "Failed" not in line, listed
    run([hipo_executable(), "--root", str(root), "mcp", "--uninstall", "claude-code"], env)
    listed = run([str(claude), "mcp", "list"], env, cwd=root)
    assert not any(ln.startswith("hipo:") for ln in listed.splitlines()), listed


@pytest.mark.parametrize("made_by", ["--config", "--install"])
def test_jupyter_ai_reads_the_settings_and_hands_hipo_to_its_agents(
    made_by: str, root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """jupyter-ai 3.2 reads `.jupyter/mcp_settings.json` with its own pydantic model in
    `PersonaManager.get_mcp_settings` (a file it cannot parse is only logged), and its ACP
    client hands the stdio servers found there to the agent of a chat session
    (`JaiAcpClient._get_mcp_servers`). Both are run as jupyter-ai runs them, on stand-ins
    reduced to what they read (the .jupyter folder, the built-in servers, the log; the
    agent's capabilities); the server handed to the agent must be ours, and answer."""
    persona_manager = pytest.importorskip("jupyter_ai_persona_manager.persona_manager")
    models = pytest.importorskip("jupyter_ai_persona_manager.mcp_server_models")
    acp_client = pytest.importorskip("jupyter_ai_acp_client.default_acp_client")
    from acp.schema import AgentCapabilities

    dotjupyter = root / ".jupyter"
    env = quiet_env(tmp_path / "home")
    if made_by == "--config":  # what a user copies by hand
        dotjupyter.mkdir()
        text = printed_config("jupyter-ai", root, env)
        (dotjupyter / "mcp_settings.json").write_text(text, "utf-8")
    else:  # beside a server of their own, merged by `hipo mcp --install jupyter-ai`
        dotjupyter.mkdir()
        mine = {"name": "files", "command": "/bin/true", "args": [], "env": []}
        (dotjupyter / "mcp_settings.json").write_text(json.dumps({"mcp_servers": [mine]}))
        run([hipo_executable(), "--root", str(root), "mcp", "--install", "jupyter-ai"], env)
    log = logging.getLogger("jupyter-ai-under-test")
    manager = SimpleNamespace(
        get_dotjupyter_dir=lambda: str(dotjupyter), builtin_mcp_servers=[], log=log
    )
    with caplog.at_level(logging.INFO, logger=log.name):
        settings = persona_manager.PersonaManager.get_mcp_settings(manager)
    assert "Failed to read or parse" not in caplog.text
    assert settings is not None
    (server,) = [s for s in settings.mcp_servers if s.name == "hipo"]
    assert isinstance(server, models.McpServerStdio)
    assert {s.name for s in settings.mcp_servers} == (
        {"hipo"} if made_by == "--config" else {"hipo", "files"}
    )
    # The shape printed before this test existed, `{"mcpServers": {...}}`, is what it refused.
    with pytest.raises(ValueError):
        models.McpSettings(**{"mcpServers": {"hipo": {"command": server.command, "args": []}}})

    async def capabilities() -> AgentCapabilities:
        return AgentCapabilities()

    client = SimpleNamespace(get_agent_capabilities=capabilities)
    persona = SimpleNamespace(get_mcp_settings=lambda: settings)
    import anyio

    handed = anyio.run(acp_client.JaiAcpClient._get_mcp_servers, client, persona)
    (agents,) = [s for s in handed if s.name == "hipo"]
    assert agents.command == hipo_executable() and Path(agents.command).is_absolute()
    assert agents.args == ["--root", str(root), "mcp"]
    assert answers_tools(agents.command, agents.args, {e.name: e.value for e in agents.env})


def answers_tools(command: str, args: list[str], env: dict[str, str]) -> bool:
    """Start the server as the settings name it and list its tools over MCP."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args, env={**env, "HIPO_SEMANTIC": "0"})

    async def listed() -> set[str]:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                return {tool.name for tool in (await client.list_tools()).tools}

    return anyio.run(listed) == TOOLS


TOOL_CALLS: dict[str, list[str]] = {
    "remember": ["title=Inspector visit", "body=- outcome: the inspector called every tool"],
    "recall": ["query=launch"],
    "topics": [],
    "layer1": [],
    "read": [f"path=memory/{TODAY}.md"],
    "status": [],
}


def test_the_inspector_lists_and_calls_each_tool_from_the_printed_json(
    root: Path, tmp_path: Path
) -> None:
    """The MCP Inspector's CLI reads the Claude Desktop JSON as its own config file."""
    inspector = node_tool("mcp-inspector")
    env = quiet_env(tmp_path / "home")
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(printed_config("claude-desktop", root, env), "utf-8")
    base = [str(inspector), "--cli", "--config", str(config), "--server", "hipo"]
    listed = json.loads(run([*base, "--method", "tools/list"], env))
    assert {tool["name"] for tool in listed["tools"]} == TOOLS == set(TOOL_CALLS)
    answers: dict[str, str] = {}
    for name, tool_args in TOOL_CALLS.items():
        call = [*base, "--method", "tools/call", "--tool-name", name]
        if tool_args:
            call += ["--tool-arg", *tool_args]
        result = json.loads(run(call, env))
        assert not result.get("isError"), (name, result)
        answers[name] = "\n".join(c.get("text", "") for c in result["content"])
    assert "Launch plan" in answers["recall"] and "memory/2026-03-12.md" in answers["recall"]
    assert "Launch plan" in answers["read"]
    # The server runs in the environment the client gives it (no HIPO_TODAY): any day's log.
    raw_logs = "".join(p.read_text("utf-8") for p in (root / "memory").glob("????-??-??.md"))
    assert "the inspector called every tool" in raw_logs


def test_the_inspector_reads_what_install_writes_for_claude_desktop(
    root: Path, tmp_path: Path
) -> None:
    """`hipo mcp --install claude-desktop` merges into Claude Desktop's own file (under
    XDG_CONFIG_HOME on Linux), beside a server already there; the Inspector, which reads
    that format, starts hipo from it and lists its tools."""
    inspector = node_tool("mcp-inspector")
    home = tmp_path / "home"
    env = quiet_env(home)
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    mine = {"command": "/bin/true", "args": []}
    config.write_text(json.dumps({"mcpServers": {"mine": mine}, "theme": "dark"}), "utf-8")
    run([hipo_executable(), "--root", str(root), "mcp", "--install", "claude-desktop"], env)
    written = json.loads(config.read_text("utf-8"))
    assert written["mcpServers"]["mine"] == mine and written["theme"] == "dark"
    base = [str(inspector), "--cli", "--config", str(config), "--server", "hipo"]
    listed = json.loads(run([*base, "--method", "tools/list"], env))
    assert {tool["name"] for tool in listed["tools"]} == TOOLS


# --- Claude Code's hooks (issue 52): the settings `--install` writes, run by the real CLI -------


class StandInModel:
    """Anthropic's Messages API on loopback, as far as Claude Code uses it: every request kept,
    every answer a short text (streamed when asked), so `claude -p` runs a whole session
    offline and the test reads what the session sent."""

    REPLY = "Noted: the launch moved to May."

    def __init__(self) -> None:
        import http.server
        import threading

        self.bodies: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                self.send_response(404)
                self.end_headers()

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200)
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                outer.bodies.append(body)
                if "count_tokens" in self.path:
                    return self.answer({"input_tokens": 10})
                try:
                    request = json.loads(body)
                except ValueError:
                    request = {}
                if request.get("stream"):
                    return self.stream(request.get("model", "claude-sonnet-4-5"))
                return self.answer(outer.message(request.get("model", "claude-sonnet-4-5")))

            def answer(self, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def stream(self, model: str) -> None:
                message = outer.message(model)
                text = message["content"][0]["text"]
                start = {**message, "content": [], "stop_reason": None}
                events = [
                    ("message_start", {"type": "message_start", "message": start}),
                    ("content_block_start", {"type": "content_block_start", "index": 0,
                                             "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                             "delta": {"type": "text_delta", "text": text}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta",
                                       "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                       "usage": {"output_tokens": 9}}),
                    ("message_stop", {"type": "message_stop"}),
                ]  # fmt: skip
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def message(self, model: str) -> dict:
        return {
            "id": "msg_standin", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": self.REPLY}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 9},
        }  # fmt: skip

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_claude_code_runs_the_hooks_install_writes(root: Path, tmp_path: Path) -> None:
    """`hipo mcp --install claude-code`, then a real `claude -p` session in the folder against
    a stand-in model on loopback: the request Claude Code sends holds Layer 1 (SessionStart)
    and the recalled note (UserPromptSubmit), each fenced; after the session its exchange is
    a checkpoint from Claude Code (Stop, SessionEnd). `claude mcp list` lists the server."""
    claude = node_tool("claude")
    home = tmp_path / "home"
    env = quiet_env(home)
    run([hipo_executable(), "--root", str(root), "mcp", "--install", "claude-code"], env)
    listed = run([str(claude), "mcp", "list"], env, cwd=root)
    assert any(ln.startswith("hipo:") for ln in listed.splitlines()), listed
    model = StandInModel()
    try:
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-api03-" + "x" * 40)
        out = run([str(claude), "-p", "When is the launch?", "--output-format", "json"],
                  env, cwd=root)  # fmt: skip
    finally:
        model.close()
    assert StandInModel.REPLY in out
    sent = "\n".join(model.bodies)
    assert re.search(r"hipo-layer1-\d{12}", sent), "SessionStart's Layer 1 was not sent"
    assert re.search(r"hipo-recalled-memory-\d{12}", sent), "the prompt's recall was not sent"
    assert "moved the launch to May" in sent

    def written() -> str:
        logs = (root / "memory").glob("????-??-??.md")
        return "".join(p.read_text("utf-8") for p in logs)

    deadline = time.monotonic() + 60
    while "via=claude-code" not in written() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert "via=claude-code" in written() and "When is the launch?" in written()
