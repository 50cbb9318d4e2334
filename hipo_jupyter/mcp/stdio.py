"""`hipo mcp`'s stdio transport: every line a client sends gets the answer JSON-RPC gives it.

The `mcp` package's stdio server reads each line into a message and hands what it cannot read
to the session as an exception, which logs it and replies nothing: the client waits forever.
Here hipo reads the wire itself: each line is judged by `jsonrpc.Wire` (not JSON, not JSON-RPC,
an id that is not one, a reused id, a batch under the negotiated protocol version's rule),
which answers what the session would not; the rest goes to the SDK's session, and its replies
come back through the Wire (a batch's answers leave together, as one array). Tool arguments
that fail validation are one line of tool error (`HipoMCPServer.call_tool`), not pydantic's
several lines with a link to its documentation.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import anyio
from pydantic import ValidationError

from hipo_jupyter.memory.disk import MAX_LINE_BYTES

from . import early
from .jsonrpc import INVALID_REQUEST, Wire, error
from .sdk import Server, ToolError, from_session, lowlevel, message_streams, to_session


def validation_line(tool: str, error: ValidationError) -> str:
    """`recall: query: Input should be a valid string; k: ...`: each field once, no URL."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item.get("loc", ()) if part != "arguments")
        problems.append(f"{where or 'arguments'}: {item.get('msg', 'invalid')}")
    return f"{tool}: " + "; ".join(dict.fromkeys(problems))[:500]


class HipoMCPServer(Server):
    """The SDK's server (`sdk.Server`, of either SDK line) whose argument errors are one
    line. 2.x passes a context, 1.x none: whatever comes is handed on."""

    async def call_tool(self, name: str, arguments: dict[str, Any], *context: Any) -> Any:
        try:
            return await super().call_tool(name, arguments, *context)
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                raise ToolError(validation_line(name, error.__cause__)) from error.__cause__
            if "\n" in str(error):
                raise type(error)(" ".join(str(error).split())) from error.__cause__
            raise


class BoundedLines:
    """stdin as text lines of at most MAX_LINE_BYTES (the engine's bound for one JSON line from
    outside): a longer line is read through to its end without being kept, and stands as one
    that is not JSON, so the client gets its -32700 reply and memory never holds the line.
    Bytes that are not UTF-8 are replaced (and such a line is then not JSON, or a string)."""

    def __init__(self, raw: Any, limit: int = MAX_LINE_BYTES) -> None:
        self._raw = raw
        self._limit = limit

    def readline(self, size: int = -1) -> str:
        line = self._raw.readline(self._limit + 1)
        if len(line) > self._limit and not line.endswith(b"\n"):
            while (rest := self._raw.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            return f"line over {self._limit:,} bytes: not read\n"
        return line.decode("utf-8", "replace")


def wire_streams() -> tuple[Any, io.TextIOBase]:
    """(the client's lines, bounded; the text stream replies go to): the ones `early.py` left
    on sys.stdin and sys.stdout, or, when nothing took the wire yet (stdin is still fd 0),
    the wire taken here the same way, so stray output never reaches the client."""
    try:
        taken = sys.stdin.buffer.fileno() != 0
    except (AttributeError, OSError, ValueError):
        taken = True
    if taken:
        return BoundedLines(sys.stdin.buffer), sys.stdout
    wire_in, wire_out = early.take_the_wire()
    return BoundedLines(wire_in), io.TextIOWrapper(io.BufferedWriter(wire_out), write_through=True)


async def serve_stdio(server: Server) -> None:
    """Run `server` over stdin and stdout until the client closes stdin: every line answered
    as JSON-RPC and the negotiated protocol version say (see above)."""
    lines, out = wire_streams()
    wire = Wire(used_ids=early.answered_ids())
    lock = anyio.Lock()
    to_session_send, to_session_receive = message_streams()
    from_session_send, from_session_receive = anyio.create_memory_object_stream[Any](0)
    stdin, stdout = anyio.wrap_file(lines), anyio.wrap_file(out)

    async def write(reply: Any) -> None:
        async with lock:
            await stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
            await stdout.flush()

    async def read_lines() -> None:
        async with to_session_send:
            async for line in stdin:
                messages, replies = wire.read(line)
                for reply in replies:
                    await write(reply)
                for message in messages:
                    try:
                        session_message = to_session(message)
                    except ValidationError:  # a shape the SDK refuses: a request is told
                        if "method" in message and "id" in message:
                            problem = "Invalid Request: not an MCP message"
                            reply = error(message["id"], INVALID_REQUEST, problem)
                            for answer in wire.written(reply):  # it may complete a batch
                                await write(answer)
                        continue
                    await to_session_send.send(session_message)

    async def write_replies() -> None:
        async with from_session_receive:
            async for session_message in from_session_receive:
                for reply in wire.written(from_session(session_message)):
                    await write(reply)

    protocol = lowlevel(server)
    async with anyio.create_task_group() as group:
        group.start_soon(read_lines)
        async with anyio.create_task_group() as session:  # ends when every reply is written
            session.start_soon(write_replies)
            async with from_session_send:
                await protocol.run(
                    to_session_receive, from_session_send, protocol.create_initialization_options()
                )
        group.cancel_scope.cancel()
