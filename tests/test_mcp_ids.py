"""`hipo mcp` answers every request as JSON-RPC and MCP allow, whatever its id, and follows the
negotiated protocol version's batch rule (issue 43): raw lines to a real `hipo mcp` process.

- an id that is a string or an integer (0, negative, 2**53 + 1) is answered with that id, of
  that type; one that is null, a float, a boolean, an object or an array is -32600 with
  `"id": null` (before: no answer at all, the client waited forever); an integer past the
  engine's 20 digits is -32600 with its id (before: -32700, "not JSON"); an id used before in
  the session, the `initialize` answered early included, is -32600 and the request is not run;
- a notification and a response sent to the server are never answered, even when invalid;
- a batch: answered element by element, in one array, under 2025-03-26; one -32600 under the
  versions without batches and before `initialize`; an empty array is -32600 in every version.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from test_mcp_hostile import INITIALIZE, exchange, raw_server  # noqa: E402

from hipo_jupyter.memory import Memory  # noqa: E402

_probe_ids = itertools.count(1000)


def line(message: Any) -> bytes:
    return json.dumps(message).encode()


def ping(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


def start(root: Path, version: str | None, monkeypatch: pytest.MonkeyPatch, *, early: bool = True):
    """A `hipo mcp` process, initialized at `version` (None: not initialized)."""
    Memory(root).init()
    monkeypatch.setenv("HIPO_MCP_EARLY", "1" if early else "0")
    process = raw_server(root)
    if version is not None:
        hello = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
        reply = exchange(process, line(hello))
        assert reply["result"]["protocolVersion"] == version
        write(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return process


def write(process: Any, message: Any) -> None:
    process.stdin.write((message if isinstance(message, bytes) else line(message)) + b"\n")
    process.stdin.flush()


def unanswered(process: Any, message: Any) -> None:
    """`message` gets no answer: the next answer is that of the ping sent after it."""
    write(process, message)
    probe = next(_probe_ids)
    reply = exchange(process, line(ping(probe)))
    assert reply.get("id") == probe and "result" in reply, (message, reply)


def invalid(reply: Any, request_id: Any, *words: str) -> None:
    assert isinstance(reply, dict), reply
    assert reply["jsonrpc"] == "2.0" and reply["error"]["code"] == -32600, reply
    assert "id" in reply and reply["id"] == request_id and type(reply["id"]) is type(request_id)
    for word in words:
        assert word in reply["error"]["message"], reply


def stop(process: Any) -> None:
    process.stdin.close()
    process.wait(timeout=30)


GOOD_IDS = ["abc", "", "1", 0, -5, 2**53 + 1, 9_223_372_036_854_775_807]
BAD_IDS = [1.5, -0.0, 1e3, None, True, False, {"a": 1}, [1], []]
NEVER_ANSWERED = [
    {"jsonrpc": "2.0", "method": "ping"},  # a notification of a request method
    {"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"x": 1}},
    {"jsonrpc": "1.0", "method": "ping"},  # broken notifications: still never answered
    {"jsonrpc": "2.0", "method": 5},
    {"jsonrpc": "2.0", "method": "ping", "params": [1, 2]},
    {"jsonrpc": "2.0", "id": 3, "result": {}},  # responses, valid or not
    {"jsonrpc": "2.0", "id": 4, "result": 5},
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}},
    {"jsonrpc": "2.0", "id": "x", "error": {"code": 1}},
]


@pytest.mark.parametrize("early", [True, False], ids=["early", "sdk-initialize"])
def test_every_request_gets_an_answer_its_id_allows(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, early: bool
) -> None:
    process = start(memory_root, "2025-06-18", monkeypatch, early=early)
    try:
        for request_id in GOOD_IDS:
            reply = exchange(process, line(ping(request_id)))
            assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {}}, reply
            assert type(reply["id"]) is type(request_id)
        for request_id in BAD_IDS:
            reply = exchange(process, line(ping(request_id)))
            invalid(reply, None, "string or an integer")
        huge = 12345678901234567890123
        invalid(exchange(process, line(ping(huge))), huge, "23 digits")
        # ids used before: a ping's, and the initialize's (1, answered early or by the SDK)
        for request_id in ("abc", 0, 1):
            invalid(exchange(process, line(ping(request_id))), request_id, "already used")
        remember = {"name": "remember", "arguments": {"title": "Twice", "body": "- x: y"}}
        call = {"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": remember}
        assert "result" in exchange(process, line(call))
        invalid(exchange(process, line(call)), "call", "already used")
        for message in NEVER_ANSWERED:
            unanswered(process, message)
        # batches: not in 2025-06-18; an empty array is never one
        batch = [ping(20), ping(21)]
        invalid(exchange(process, line(batch)), None, "batch", "2025-06-18")
        invalid(exchange(process, line([])), None, "empty batch")
        assert exchange(process, line(ping(20)))["result"] == {}  # the batch's ping never ran
    finally:
        stop(process)
    log = (memory_root / "memory" / "2026-03-12.md").read_text("utf-8")
    assert log.count("## Twice") == 1  # a reused id runs nothing


def test_a_2025_03_26_batch_is_answered_element_by_element(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    process = start(memory_root, "2025-03-26", monkeypatch)
    try:
        remember = {"name": "remember", "arguments": {"title": "Batched", "body": "- x: y"}}
        batch = [
            ping(11),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "12", "method": "tools/call", "params": remember},
            ping(1.5),
            5,
            {"jsonrpc": "2.0", "id": 13, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 14, "method": "no/such/method"},
            {"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": [1]},  # not MCP
            {"jsonrpc": "2.0", "id": 99, "result": {}},  # a response: no answer in the array
        ]
        answers = exchange(process, line(batch))
        assert isinstance(answers, list), answers
        assert [a["id"] for a in answers] == [11, "12", None, None, 13, 14, 15]
        assert answers[0]["result"] == {} and not answers[1]["result"].get("isError")
        invalid(answers[2], None)
        invalid(answers[3], None)
        assert {t["name"] for t in answers[4]["result"]["tools"]} >= {"recall", "remember"}
        assert answers[5]["error"]["code"] == -32601
        invalid(answers[6], 15, "not an MCP message")
        # the rules for single messages hold inside a batch
        hello = {**INITIALIZE, "id": 30}
        answers = exchange(process, line([hello, ping(11), ping(31)]))
        assert isinstance(answers, list) and len(answers) == 3, answers
        invalid(answers[0], 30, "initialize")
        invalid(answers[1], 11, "already used")
        assert answers[2] == {"jsonrpc": "2.0", "id": 31, "result": {}}
        # only notifications and responses: nothing at all; empty: one error, not an array
        unanswered(
            process,
            [{"jsonrpc": "2.0", "method": "ping"}, {"jsonrpc": "2.0", "id": 7, "result": {}}],
        )
        invalid(exchange(process, line([])), None, "empty batch")
    finally:
        stop(process)
    assert "## Batched" in (memory_root / "memory" / "2026-03-12.md").read_text("utf-8")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
def test_versions_without_batches_refuse_them_and_so_does_an_uninitialized_session(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    process = start(memory_root, None, monkeypatch)
    try:
        invalid(exchange(process, line([ping(2), ping(3)])), None, "batch", "before initialize")
        hello = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}
        invalid(exchange(process, line([hello])), None, "batch")
        assert exchange(process, line(hello))["result"]["protocolVersion"] == version
        invalid(exchange(process, line([ping(2), ping(3)])), None, "batch", version)
    finally:
        stop(process)
