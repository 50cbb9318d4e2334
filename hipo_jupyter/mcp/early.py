"""`hipo mcp` answers the client's `initialize` before the MCP SDK has finished importing.

Importing the SDK (pydantic models of every protocol era, an HTTP stack) takes one to several
seconds on a small machine, and a client waits for `initialize` before it shows the server as
connected. The answer to `initialize` is fixed for a given server: its name, its instructions,
its capabilities and the protocol version the client asked for. So the process starts the SDK's
import in a thread, reads the first line, and when it is an `initialize` for a version in
`EARLY_VERSIONS`, answers it at once, then hands the wire to the SDK with that request replayed
under a private id whose answer is dropped (the SDK still sees a normal handshake and checks
every later request against it). Anything else (another first message, another version) is
handed over untouched: the SDK answers, as before, only later. `tests/test_mcp_early.py`
checks the early answer equals the SDK's own. Arrows point down: this module imports `config`
(the instructions, the version) and, to warm it, `sdk`, never `server` or `stdio`.

The standard descriptors are diverted the way the SDK's `stdio_server` diverts them (fd 0 to
/dev/null, fd 1 to stderr) so that stray output never reaches the wire.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .config import INSTRUCTIONS, server_version

EARLY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
PRIVATE_ID = "hipo-early-initialize"


def capabilities() -> dict[str, Any]:
    """The capabilities the installed SDK's server declares: mcp 1.x (jupyter-ai 3.2's, see
    `sdk.py`) adds an empty `experimental`. Read from the package's metadata, not imported."""
    try:
        line = version("mcp").split(".", 1)[0]
    except PackageNotFoundError:
        return CAPABILITIES
    return {"experimental": {}, **CAPABILITIES} if line == "1" else CAPABILITIES


def instructions_literal() -> str | None:
    """The server's instructions (`config.INSTRUCTIONS`, which `server.py` serves too): held
    below both, so this module reads them without importing the server or the SDK."""
    return INSTRUCTIONS if isinstance(INSTRUCTIONS, str) else None


def early_answer(request: Any, instructions: str | None) -> dict[str, Any] | None:
    """The answer to `request` when it is an `initialize` this module may answer, else None."""
    if not isinstance(request, dict) or request.get("method") != "initialize":
        return None
    params = request.get("params")
    if not isinstance(params, dict) or instructions is None or "id" not in request:
        return None
    client = params.get("clientInfo")
    well_formed = (
        isinstance(params.get("capabilities"), dict)
        and isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
    )
    version = params.get("protocolVersion")
    if not well_formed or version not in EARLY_VERSIONS:
        return None  # the SDK's own validation answers (with its error)
    result = {
        "capabilities": capabilities(),
        "instructions": instructions,
        "protocolVersion": version,
        "serverInfo": {"name": "hipo", "version": server_version()},
    }
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


class _Replayed(io.RawIOBase):
    """The wire's input with one line put back in front of it."""

    def __init__(self, first: bytes, rest: io.BufferedReader) -> None:
        self._pending = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._pending:  # a first line longer than the buffer is served in pieces
            data, self._pending = self._pending[: len(buffer)], self._pending[len(buffer) :]
        else:
            data = self._rest.read1(len(buffer))[: len(buffer)]
        buffer[: len(data)] = data
        return len(data)


class _DropPrivate(io.RawIOBase):
    """The wire's output less the SDK's answer to the replayed `initialize`."""

    def __init__(self, wire: io.RawIOBase) -> None:
        self._wire = wire
        self._partial = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._partial += bytes(data)
        *lines, self._partial = self._partial.split(b"\n")
        for line in lines:
            if not _is_private_answer(line):
                self._wire.write(line + b"\n")
        return len(data)


def _is_private_answer(line: bytes) -> bool:
    if PRIVATE_ID.encode() not in line:
        return False
    try:
        return json.loads(line).get("id") == PRIVATE_ID
    except (ValueError, AttributeError):
        return False


def take_the_wire() -> tuple[io.BufferedReader, io.RawIOBase]:
    """Private copies of fds 0 and 1 for the protocol; fd 0 then reads /dev/null and fd 1
    writes to stderr, as under the SDK's own stdio transport."""
    wire_in = io.BufferedReader(io.FileIO(os.dup(0), "rb"))
    wire_out = io.FileIO(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


_importer: threading.Thread | None = None
_answered: list[str | int] = []  # the client's id of the `initialize` answered here


def answered_ids() -> tuple[str | int, ...]:
    """The ids of requests answered here, before the SDK: used ids, for the rest of the session."""
    return tuple(_answered)


def answer_first() -> None:
    """Start the SDK's import, take the wire and answer `initialize` if it may; the streams
    the SDK will serve are left on sys.stdin and sys.stdout. Idempotent."""
    global _importer
    if _importer is not None:
        return
    _importer = threading.Thread(target=_import_sdk, daemon=True)
    _importer.start()
    wire_in, wire_out = take_the_wire()
    first = wire_in.readline()
    try:
        request = json.loads(first) if first.strip() else None
    except (ValueError, RecursionError):  # not JSON, or nested past the parser
        request = None
    early = os.environ.get("HIPO_MCP_EARLY", "1") != "0"  # 0: the SDK answers, as before
    answer = early_answer(request, instructions_literal()) if early else None
    if answer is not None:
        wire_out.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
        _answered.append(answer["id"])
        first = json.dumps({**request, "id": PRIVATE_ID}).encode() + b"\n"
    sys.stdin = io.TextIOWrapper(io.BufferedReader(_Replayed(first, wire_in)), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_DropPrivate(wire_out)), encoding="utf-8", write_through=True
    )


def serve_early(start_server: Any) -> None:
    """Answer `initialize` early (unless `hipo_jupyter.cli.entry` already did), then run
    `start_server()` (which serves stdio until the client closes) with the request replayed."""
    answer_first()
    assert _importer is not None
    _importer.join()
    start_server()


def _import_sdk() -> None:
    # The slow part (the MCP SDK, through `sdk.py`, below this module's callers), done while the
    # client waits; an ImportError shows again in the caller. Never `server.py`: it imports
    # `stdio.py`, which imports this module, and arrows point down.
    with contextlib.suppress(ImportError):
        from . import sdk  # noqa: F401
