"""The JSON-RPC rules `hipo mcp` keeps itself, between the client's lines and the SDK's session.

The SDK's session answers the requests it can read, and nothing else: a request whose id is
null, a float, a boolean or an object validates as a notification and is never answered; a
batch is not a message it knows; a reused id is served twice. Here each line is judged first
(`Wire.read`), and what the session sends back passes through `Wire.written`, so that every
request gets an answer the specification allows:

- a line that is not JSON: -32700, `"id": null`; JSON that is not a JSON-RPC message, or past
  the engine's bounds (nesting, a number of 21 digits): -32600, with the id when it is one;
- a request's id must be a string or an integer (MCP: "the ID MUST NOT be null"; JSON-RPC:
  numbers "SHOULD NOT contain fractional parts"), else -32600 with `"id": null`; an id already
  used in the session ("MUST NOT have been previously used") is -32600 with that id, and the
  request is not run;
- a notification, and a response sent to the server, are never answered, even when invalid;
- a batch (a JSON array) is what the negotiated protocol version says: 2025-03-26 allows them
  (its changelog: "Added support for JSON-RPC batching"; "MUST support receiving"), so each
  element is judged as above and the answers go back together in one array, none at all when
  the batch held only notifications and responses; 2025-06-18 removed batching ("Remove
  support for JSON-RPC batching"), and no other version has it, so there, and before
  `initialize`, a batch is one -32600 with `"id": null`. An empty array is -32600 in every
  version (JSON-RPC: "an empty Array" is an invalid request). `initialize` is never part of
  a batch (2025-03-26, lifecycle).

Pure: no SDK, no I/O; `stdio.py` feeds it lines and the session's replies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hipo_jupyter.memory.disk import JsonInputError, parse_json

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
BATCH_VERSIONS = frozenset({"2025-03-26"})  # the protocol versions whose clients may batch


def error(request_id: object, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error reply; an id that is not a valid request id becomes null."""
    return {
        "jsonrpc": "2.0",
        "id": request_id if valid_id(request_id) else None,
        "error": {"code": code, "message": message},
    }


def valid_id(value: object) -> bool:
    """A string or an integer (a boolean is not one, though Python says it is an int)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _id_key(value: str | int) -> tuple[str, str | int]:
    return (type(value).__name__, value)  # "1" and 1 are two ids


@dataclass
class _Batch:
    """A batch whose requests went to the session: its answers, in the batch's order."""

    slots: list[dict[str, Any] | tuple[str, str | int]]  # an answer, or the id it waits for
    waiting: set[tuple[str, str | int]] = field(default_factory=set)

    def complete(self) -> bool:
        return not self.waiting


class Wire:
    """One session's JSON-RPC bookkeeping: the ids used, the negotiated protocol version, the
    batches waiting for their answers."""

    def __init__(self, used_ids: tuple[str | int, ...] = ()) -> None:
        self.version: str | None = None
        self._used: set[tuple[str, str | int]] = {_id_key(i) for i in used_ids if valid_id(i)}
        self._initialize_ids: set[tuple[str, str | int]] = set()
        self._batches: list[_Batch] = []

    # -- from the client ---------------------------------------------------------------------

    def read(self, line: str) -> tuple[list[dict[str, Any]], list[Any]]:
        """(messages for the session, replies to write now) for one line from the client."""
        try:
            value = parse_json(line, "an MCP message")
        except JsonInputError as problem:
            if problem.syntax:
                return [], [error(None, PARSE_ERROR, "Parse error: the line is not JSON")]
            message = f"Invalid Request: {problem}"[:300]
            return [], [error(_id_past_bounds(line), INVALID_REQUEST, message)]
        if not isinstance(value, list):
            message, reply = self._element(value, batched=False)
            return ([message] if message else []), ([reply] if reply else [])
        if not value:
            return [], [error(None, INVALID_REQUEST, "Invalid Request: an empty batch")]
        if self.version not in BATCH_VERSIONS:
            when = f"protocol version {self.version}" if self.version else "before initialize"
            return [], [error(None, INVALID_REQUEST, f"Invalid Request: no batches in {when}")]
        return self._batch(value)

    def _batch(self, elements: list[Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        messages: list[dict[str, Any]] = []
        batch = _Batch(slots=[])
        for element in elements:
            message, reply = self._element(element, batched=True)
            if reply is not None:
                batch.slots.append(reply)
            if message is not None:
                messages.append(message)
                if "method" in message and "id" in message:
                    key = _id_key(message["id"])
                    batch.slots.append(key)
                    batch.waiting.add(key)
        if batch.waiting:
            self._batches.append(batch)
            return messages, []
        return messages, ([batch.slots] if batch.slots else [])

    def _element(self, value: object, *, batched: bool) -> tuple[dict | None, dict | None]:
        """(the message for the session or None, the reply to write or None) for one message."""
        if not isinstance(value, dict):
            return None, error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
        request_id = value.get("id")
        if "method" not in value:
            response = ("result" in value) != ("error" in value) and "id" in value
            if response and value.get("jsonrpc") == "2.0":
                return value, None  # a response: the session's, never answered
            return None, error(request_id, INVALID_REQUEST, "Invalid Request: no method")
        if value.get("jsonrpc") != "2.0" or not isinstance(value["method"], str):
            if "id" not in value:
                return None, None  # a broken notification: never answered
            return None, error(
                request_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
            )
        if "id" not in value:
            return value, None  # a notification
        if not valid_id(request_id):
            problem = "Invalid Request: the id must be a string or an integer"
            return None, error(None, INVALID_REQUEST, problem)
        key = _id_key(request_id)
        if key in self._used:
            return None, error(
                request_id, INVALID_REQUEST, f"Invalid Request: id {request_id!r} was already used"
            )
        self._used.add(key)
        if value["method"] == "initialize":
            if batched:
                problem = "Invalid Request: initialize cannot be part of a batch"
                return None, error(request_id, INVALID_REQUEST, problem)
            self._initialize_ids.add(key)
        return value, None

    # -- from the session --------------------------------------------------------------------

    def written(self, message: dict[str, Any]) -> list[Any]:
        """What to write for `message` from the session: itself, nothing while the batch it
        answers waits for more, or that whole batch's array."""
        request_id = message.get("id")
        if "method" in message or not valid_id(request_id):
            return [message]
        key = _id_key(request_id)
        if key in self._initialize_ids and isinstance(message.get("result"), dict):
            version = message["result"].get("protocolVersion")
            self.version = version if isinstance(version, str) else None
        for batch in self._batches:
            if key in batch.waiting:
                batch.waiting.discard(key)
                batch.slots[batch.slots.index(key)] = message
                if not batch.complete():
                    return []
                self._batches.remove(batch)
                return [batch.slots]
        return [message]


def _id_past_bounds(line: str) -> object:
    """The id of a message refused for its bounds, read by json's own parser: an integer id
    of 23 digits is echoed as sent; a line nested too deep, or a number past Python's own
    limit, has no id that can be read (null)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value.get("id") if isinstance(value, dict) else None
