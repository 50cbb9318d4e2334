"""`hipo mcp` answers `initialize` before the MCP SDK is imported, with exactly the answer the
SDK would give, then serves a normal session: real `hipo mcp` processes over raw JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from hipo_jupyter.mcp.early import EARLY_VERSIONS, PRIVATE_ID  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def initialize(version: str, client: dict | None = None) -> dict:
    client = {"name": "t", "version": "1"} if client is None else client
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


CLI = ["-m", "hipo_jupyter.cli"]
SCRIPT = ["-c", "import sys; from hipo_jupyter.cli.entry import main; sys.exit(main())"]  # `hipo`


def exchange(
    root: Path, messages: list[dict], *, early: bool, entry: list[str] = CLI
) -> tuple[list[dict], float]:
    """Send `messages` to a fresh `hipo mcp`; return its answers and the seconds to the first."""
    env = {
        **os.environ,
        "HIPO_SEMANTIC": "0",
        "HIPO_TODAY": "2026-03-12",
        "HIPO_MCP_EARLY": "1" if early else "0",
        "PYTHONPATH": str(REPO),
    }
    server = subprocess.Popen(
        [sys.executable, *entry, "--root", str(root), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert server.stdin and server.stdout
    started = time.perf_counter()
    answers: list[dict] = []
    first_after = 0.0
    try:
        for message in messages:
            server.stdin.write(json.dumps(message).encode() + b"\n")
            server.stdin.flush()
            if "id" in message:
                answers.append(json.loads(server.stdout.readline()))
                first_after = first_after or time.perf_counter() - started
    finally:
        server.stdin.close()
        rest = server.stdout.read()
        server.wait(timeout=30)
    assert PRIVATE_ID.encode() not in rest  # the replayed handshake's answer never leaks
    return answers, first_after


@pytest.mark.parametrize("version", EARLY_VERSIONS)
def test_the_early_answer_is_the_sdks_own(memory_root: Path, version: str) -> None:
    (early,), _ = exchange(memory_root, [initialize(version)], early=True, entry=SCRIPT)
    (sdk,), _ = exchange(memory_root, [initialize(version)], early=False)
    assert early == sdk
    assert early["result"]["protocolVersion"] == version


@pytest.mark.parametrize("entry", [CLI, SCRIPT], ids=["cli", "script"])
def test_a_session_after_the_early_answer_is_a_normal_one(
    memory_root: Path, entry: list[str]
) -> None:
    session = [
        initialize("2025-06-18"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"title": "Early bird", "body": "- x: y"}},
        },
    ]
    answers, _ = exchange(memory_root, session, early=True, entry=entry)
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= {"recall", "remember"}
    assert not answers[2]["result"].get("isError")
    assert "Early bird" in (memory_root / "memory" / "2026-03-12.md").read_text("utf-8")


@pytest.mark.parametrize(
    "request_", [initialize("2031-01-01"), initialize("2025-06-18", client={"name": "t"})]
)
def test_what_it_cannot_vouch_for_is_left_to_the_sdk(memory_root: Path, request_: dict) -> None:
    """An unknown version, a client without a version: the SDK's own answer, early or not."""
    (answer,), _ = exchange(memory_root, [request_], early=True)
    (sdk,), _ = exchange(memory_root, [request_], early=False)
    assert answer == sdk


@pytest.mark.parametrize("target", ["claude-code", "jupyter-ai", "claude-desktop"])
def test_the_scripts_quick_config_is_the_clis(memory_root: Path, target: str) -> None:
    """`hipo --root DIR mcp --config T` skips the CLI's imports; it must print the same."""
    printed = []
    for entry in (SCRIPT, CLI):
        done = subprocess.run(
            [sys.executable, *entry, "--root", str(memory_root), "mcp", "--config", target],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        printed.append((done.stdout, done.stderr))
    assert printed[0] == printed[1]
    assert str(memory_root) in printed[0][0]
