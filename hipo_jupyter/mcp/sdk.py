"""The few parts of the MCP SDK that `hipo mcp` uses, from either line of the SDK.

jupyter-ai 3.2 brings mcp 1.x (its fastmcp-slim needs mcp<2), where the high-level server is
`mcp.server.fastmcp.FastMCP` and the protocol types are `mcp.types`; mcp 2.x renamed them
`mcp.server.mcpserver.MCPServer` and `mcp_types`. Everything that differs is named here once,
so `hipo mcp` serves the same tools and the same wire in an environment of either (the `mcp`
extra pins `mcp>=1.24,<3`; `make test` runs 2.x, `make test-clients` runs jupyter-ai's 1.x):

- `Server`, `ToolError`, `ResourceError`, `types`: the classes, from where this SDK has them.
- `new_server`: the server with our name, instructions and version (1.x has no `version`
  argument and, left empty, reports the SDK's own version instead).
- `lowlevel`: the protocol server under the high-level one.
- `message_streams`: the stream pair a transport hands the session (2.x carries each
  message's context along; 1.x is a plain anyio memory stream).
- `session_message`, `wire_out`: a JSON-RPC error reply wrapped for the write stream, and the
  standard output a reply with `"id": null` reaches whole (1.x's writer drops null members).
"""

from __future__ import annotations

import io
import sys
from typing import Any

import anyio

try:  # mcp 2.x
    import mcp_types as types
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    SDK_LINE = 2
except ImportError:  # mcp 1.x (jupyter-ai 3.2's)
    from mcp import types  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef,assignment]
    from mcp.server.fastmcp.exceptions import (  # type: ignore[no-redef,assignment]
        ResourceError,
        ToolError,
    )

    SDK_LINE = 1

from mcp.shared.message import SessionMessage

from .config import server_version

__all__ = [
    "SDK_LINE",
    "ResourceError",
    "Server",
    "ToolError",
    "lowlevel",
    "message_streams",
    "new_server",
    "json_rpc_error",
    "session_message",
    "types",
    "wire_out",
]


def new_server(cls: type[Any], name: str, instructions: str) -> Any:
    """An instance of `cls` (a subclass of `Server`) named `name`, at our version, logging
    warnings only."""
    if SDK_LINE == 2:
        return cls(name, instructions=instructions, version=server_version(), log_level="WARNING")
    server = cls(name, instructions=instructions, log_level="WARNING")
    server._mcp_server.version = server_version()
    return server


def lowlevel(server: Any) -> Any:
    """The protocol server that runs a session for the high-level `server`."""
    return server._lowlevel_server if SDK_LINE == 2 else server._mcp_server


def message_streams() -> tuple[Any, Any]:
    """(send, receive) for messages between a transport and the session, unbuffered."""
    if SDK_LINE == 2:
        from mcp.shared._context_streams import create_context_streams

        return create_context_streams[SessionMessage | Exception](0)
    return anyio.create_memory_object_stream[SessionMessage | Exception](0)


def session_message(reply: Any) -> SessionMessage:
    """A `types.JSONRPCError` as the write stream takes it."""
    if SDK_LINE == 2:
        return SessionMessage(reply)
    return SessionMessage(types.JSONRPCMessage(reply))


def json_rpc_error(request_id: int | str | None, code: int, message: str) -> Any:
    """A JSON-RPC error reply; `request_id` None for a line whose id could not be read (1.x's
    model requires an id, so that reply is built without validation)."""
    error = types.ErrorData(code=code, message=message)
    if request_id is None and SDK_LINE == 1:
        return types.JSONRPCError.model_construct(jsonrpc="2.0", id=None, error=error)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


class _NullIds(io.TextIOBase):
    """1.x writes each message with `exclude_none`, so an error reply to an unreadable line
    would lose its `"id": null`, which JSON-RPC requires: put it back, nothing else."""

    BARE = '{"jsonrpc":"2.0","error":'

    def __init__(self, wire: io.TextIOBase) -> None:
        self._wire = wire

    def write(self, text: str) -> int:
        if text.startswith(self.BARE):
            text = '{"jsonrpc":"2.0","id":null,"error":' + text[len(self.BARE) :]
        return self._wire.write(text)

    def flush(self) -> None:
        self._wire.flush()


def wire_out() -> Any:
    """The standard output `stdio_server` should write to: its own default under 2.x."""
    if SDK_LINE == 2:
        return None
    return anyio.wrap_file(_NullIds(sys.stdout))  # not a wrapper of its own: that would close
    # the wire when it is collected
