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
- `to_session`, `from_session`: a JSON-RPC message (a dict, as read off the wire) as the
  session takes it, and a message the session sends as the dict to write (1.x's models are
  written without their null members, as its own writer does, but an error keeps its
  `"id": null`, which JSON-RPC requires).
"""

from __future__ import annotations

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
    "from_session",
    "to_session",
    "types",
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


def to_session(message: dict[str, Any]) -> SessionMessage:
    """`message` validated into the SDK's model (pydantic's ValidationError when it does not
    fit), wrapped for the session's read stream."""
    if SDK_LINE == 2:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(message, by_name=False))
    return SessionMessage(types.JSONRPCMessage.model_validate(message))


def from_session(session_message: SessionMessage) -> dict[str, Any]:
    """The message the session sends, as the JSON object to write."""
    message = session_message.message
    if SDK_LINE == 2:
        return message.model_dump(by_alias=True, mode="json", exclude_unset=True)
    dumped = message.model_dump(by_alias=True, mode="json", exclude_none=True)
    if "error" in dumped and "id" not in dumped:
        dumped = {"jsonrpc": "2.0", "id": None, **dumped}
    return dumped
