"""`hipo mcp` over stdio under hostile input (issue 23): raw lines written to a real process,
and wrong-typed tool arguments through the `mcp` client.

A malformed line, JSON that is not an object or not a JSON-RPC message, and binary each get a
JSON-RPC error reply (-32700 parse error, -32600 invalid request) instead of silence, and the
server goes on answering; argument validation errors are one line, without pydantic's
documentation URL.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from test_mcp import REPO, call, session  # noqa: E402

from hipo_jupyter.memory import Memory  # noqa: E402

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
REPLY_S = 20
BAD_LINES: list[tuple[bytes, int]] = [
    (b"not json at all", -32700),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"', -32700),  # cut short
    (b"\xff\xfe\x00\x01binary\x80", -32700),
    (b"[1, 2, 3]", -32600),
    (b'"a string"', -32600),
    (b"42", -32600),
    (b"null", -32600),
    (b'{"jsonrpc": "1.0", "id": 6, "method": "ping"}', -32600),
    (b'{"id": 7}', -32600),
    (b"{}", -32600),
]


def raw_server(root: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "HIPO_ROOT"}
    env.update(HIPO_TODAY="2026-03-12", HIPO_SEMANTIC="0", PYTHONPATH=str(REPO))
    command = [sys.executable, "-m", "hipo_jupyter.cli", "--root", str(root), "mcp"]
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )


def exchange(process: subprocess.Popen[bytes], line: bytes) -> dict[str, Any]:
    """Write one line; the one reply it gets within REPLY_S seconds (none: the test fails)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line + b"\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], REPLY_S)
    assert ready, f"no reply to {line!r}: the client would wait forever"
    return json.loads(process.stdout.readline())


def test_every_raw_line_gets_a_reply_and_the_server_goes_on(memory_root: Path) -> None:
    Memory(memory_root).init()
    process = raw_server(memory_root)
    try:
        reply = exchange(process, json.dumps(INITIALIZE).encode())
        assert reply["id"] == 1 and "result" in reply
        initialized = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n'
        process.stdin.write(initialized)  # type: ignore[union-attr]
        for line, code in BAD_LINES:
            reply = exchange(process, line)
            assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == code, (line, reply)
            assert "\n" not in reply["error"]["message"]
            if line.startswith(b'{"jsonrpc": "1.0"'):
                assert reply["id"] == 6  # the request's id, when it has one
        listed = exchange(process, b'{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}')
        assert listed["id"] == 9 and {t["name"] for t in listed["result"]["tools"]} >= {"recall"}
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        process.wait(timeout=30)


def test_argument_errors_are_one_line(memory_root: Path) -> None:
    Memory(memory_root).init()
    cases = [
        ("recall", {"query": 123}),
        ("recall", {"query": "x", "k": "many"}),
        ("recall", {"query": "x", "budget": "²"}),
        ("recall", {}),
        ("remember", {"title": ["a"], "body": None}),
        ("read", {"path": {"a": 1}}),
    ]

    async def scenario() -> list[tuple[str, bool]]:
        async with session(memory_root) as client:
            answers = [await call(client, tool, **arguments) for tool, arguments in cases]
            answers.append(await call(client, "status"))  # and the server goes on
            return answers

    answers = anyio.run(scenario)
    for (text, error), (tool, _) in zip(answers, cases, strict=False):
        assert error, text
        assert len(text.splitlines()) == 1, text
        assert "pydantic" not in text and "http" not in text, text
        assert text.startswith(f"{tool}: ") or "must be" in text, text
    assert not answers[-1][1]
