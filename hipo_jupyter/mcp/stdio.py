"""`hipo mcp`'s stdio transport: every line a client sends gets an answer.

The `mcp` package's stdio server hands a line it cannot read (not JSON, JSON that is not an
object, bytes that are not UTF-8) to the session as an exception, which logs it and replies
nothing, so the client waits forever. Here such a line gets the JSON-RPC error reply the
specification gives it: -32700 (parse error) for a line that is not JSON, -32600 (invalid
request) for JSON that is not a JSON-RPC message, with the request's id when it has one.
Tool arguments that fail validation are one line of tool error (`HipoMCPServer.call_tool`),
not pydantic's several lines with a link to its documentation.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from hipo_jupyter.memory.disk import MAX_LINE_BYTES, JsonInputError, parse_json

from .sdk import (
    Server,
    ToolError,
    json_rpc_error,
    lowlevel,
    message_streams,
    session_message,
    wire_out,
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


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


def error_reply(problem: Exception) -> Any:
    """The JSON-RPC error for a line the transport could not read as a message."""
    code, message = INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message"
    request_id: int | str | None = None
    if isinstance(problem, ValidationError):
        errors = problem.errors(include_url=False)
        if any(item.get("type") == "json_invalid" for item in errors):
            code, message = PARSE_ERROR, "Parse error: the line is not JSON"
        else:
            found = _id_of(errors)
            request_id = found if isinstance(found, int | str) and found is not True else None
    return json_rpc_error(request_id, code, message)


def _id_of(errors: list[Any]) -> object:
    for item in errors:
        value = item.get("input")
        if isinstance(value, dict) and "id" in value:
            return value["id"]
    return None


class BoundedLines:
    """stdin as text lines of at most MAX_LINE_BYTES (the engine's bound for one JSON line from
    outside): a longer line is read through to its end without being kept, and stands as one
    the reader refuses, so the client gets its -32700 reply and memory never holds the line. A
    line nested past the engine's depth or holding a number past its bounds is refused alike."""

    def __init__(self, raw: Any, limit: int = MAX_LINE_BYTES) -> None:
        self._raw = raw
        self._limit = limit

    def readline(self, size: int = -1) -> str:
        line = self._raw.readline(self._limit + 1)
        if len(line) > self._limit and not line.endswith(b"\n"):
            while (rest := self._raw.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            return f"line over {self._limit:,} bytes: not read\n"
        text = line.decode("utf-8", "replace")
        try:  # the engine's bounds on depth and numbers, as for every JSON hipo reads
            parse_json(text, "an MCP message")
        except JsonInputError as error:
            if not error.syntax:  # valid JSON past the bounds: refused as not JSON (-32700)
                return f"{error}\n"
        return text  # JSON, or text the SDK itself answers as not JSON


def bounded_stdin() -> Any:
    """The SDK's stdin, lines bounded, when hipo took the wire itself (`early.py`: sys.stdin
    is then not fd 0); None, the SDK's own reader, when stdin is still fd 0 for it to claim."""
    try:
        if sys.stdin.buffer.fileno() == 0:
            return None
    except (AttributeError, OSError, ValueError):
        pass
    buffer = getattr(sys.stdin, "buffer", None)
    return anyio.wrap_file(BoundedLines(buffer)) if buffer is not None else None


async def serve_stdio(server: Server) -> None:
    """Run `server` over stdin and stdout, answering every unreadable line (see above)."""
    streams = stdio_server(stdin=bounded_stdin(), stdout=wire_out())
    async with streams as (read_stream, write_stream):
        send, receive = message_streams()

        async def answer_bad_lines() -> None:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(session_message(error_reply(item)))
                    else:
                        await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(answer_bad_lines)
            protocol = lowlevel(server)
            await protocol.run(receive, write_stream, protocol.create_initialization_options())
            group.cancel_scope.cancel()
