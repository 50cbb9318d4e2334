"""A stand-in for the Claude Messages API, and a shell to run magics in, for the LLM tests.

`FakeMessagesAPI` answers `POST /v1/messages` as the real API does: a Message as JSON, or the
server-sent-event sequence when the body says `"stream": true`; `/v1/messages/count_tokens`
too. It records every request body as the SDK sent it, simulates the prompt cache (a prefix
ending at a `cache_control` block is written once and read after), and can be scripted: queue
replies (a text, or a list of content blocks such as a `tool_use`: `tool_use_reply`), or
failures (401, 429, 529, a timeout), or a broken stream (`BrokenStream`: cut halfway, stopped at
max_tokens, empty, plain JSON, an error event, missing fields, not JSON, a dropped connection).
The real anthropic SDK talks to it in two ways:

- `api.transport()`: an `httpx2.MockTransport`, for clients made in the test process;
- `serve(api)`: a real HTTP server on 127.0.0.1 in a thread, selected with ANTHROPIC_BASE_URL,
  for code that makes its own clients (`%%ask`) and for notebook kernels.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from hipo_jupyter.ipython import unload_ipython_extension

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
TIMEOUT = "timeout"  # a scripted failure: the server answers too late
CHUNK_WORDS = 3  # words per text_delta event


def words_tokens(value: Any) -> int:
    """A deterministic stand-in for token counting: words in the JSON text of `value`."""
    return max(1, len(json.dumps(value).split()))


def system_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    system = body.get("system")
    if system is None:
        return []
    if isinstance(system, str):
        return [{"type": "text", "text": system}]
    return list(system)


def tool_use_reply(name: str, tool_input: dict[str, Any], *, text: str = "") -> list[dict]:
    """A scripted reply that calls a tool (a `tool_use` block, after an optional text)."""
    blocks: list[dict] = [{"type": "text", "text": text}] if text else []
    use_id = "toolu_" + hashlib.sha256(json.dumps(tool_input, sort_keys=True).encode()).hexdigest()
    blocks.append({"type": "tool_use", "id": use_id[:30], "name": name, "input": tool_input})
    return blocks


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The `tool_result` blocks of a request's last user message."""
    content = body.get("messages", [{}])[-1].get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if block.get("type") == "tool_result"]


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            return content
        return " ".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


BROKEN_KINDS = (
    "cut",  # half the text, then the server closes the stream: no message_stop
    "max_tokens",  # the whole stream, its stop_reason max_tokens
    "empty",  # a 200 event stream with no event at all
    "json",  # the Message as plain JSON, though a stream was asked for
    "error_event",  # half the text, then an `error` event (overloaded)
    "missing_fields",  # message_start's message lacks its fields
    "not_json",  # an event whose data is not JSON
    "no_start",  # text deltas without message_start
    "dropped",  # half the text, then the connection drops mid-body (served only)
)


@dataclass(frozen=True)
class BrokenStream:
    """A scripted streamed reply that breaks the way `kind` (one of BROKEN_KINDS) says."""

    kind: str
    text: str = "The first half of a reply that goes on and on about the plan"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    chunks: list[bytes]
    delay: float = 0.0


@dataclass
class FakeMessagesAPI:
    """The Messages API's behaviour, whatever carries the HTTP (a mock transport or a server)."""

    replies: list[str | list[dict] | BrokenStream] = field(default_factory=list)  # in order
    failures: list[int | str] = field(default_factory=list)  # status codes or TIMEOUT, in order
    requests: list[dict[str, Any]] = field(default_factory=list)  # every body, as sent
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    timeout_seconds: float = 2.0
    chunk_chars: int = 0  # > 0: text deltas of this many characters, not of CHUNK_WORDS words
    pace: float = 0.0  # seconds between two events of a served stream, as a model writes
    _cached: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # --- what the API answers ------------------------------------------------------------
    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        headers = {name.lower(): value for name, value in headers.items()}
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            failure = self.failures.pop(0) if self.failures else None
            number = sum(1 for p in self.paths if p == "/v1/messages")
            scripted = self.replies.pop(0) if self.replies and path == "/v1/messages" else None
        if failure == TIMEOUT:
            return Reply(200, {}, [b"{}"], delay=self.timeout_seconds)
        if failure is None and not (headers.get("x-api-key") or headers.get("authorization")):
            failure = 401
        if failure is not None:
            return self._error(int(failure))
        if path == "/v1/messages/count_tokens":
            return self._json({"input_tokens": words_tokens(body)})
        reply = scripted if scripted is not None else self.default_reply(number, body)
        if isinstance(reply, BrokenStream):
            return self._broken(body, reply)
        blocks = reply if isinstance(reply, list) else [{"type": "text", "text": reply}]
        text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        usage = self._usage(body, text)
        if body.get("stream"):
            if isinstance(reply, list):
                raise NotImplementedError("scripted content blocks are answered unstreamed only")
            return Reply(
                200, {"content-type": "text/event-stream"}, self._events(body, text, usage)
            )
        return self._json(self._message(body, text, usage, number, blocks))

    @staticmethod
    def default_reply(number: int, body: dict[str, Any]) -> str:
        question = " ".join(last_user_text(body).split()[:12])
        return f"Reply {number}: you asked about {question}."

    def _usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        """Input tokens split as the real API splits them: cache read, cache write, the rest."""
        blocks = system_blocks(body)
        cached_upto = max((i for i, b in enumerate(blocks) if b.get("cache_control")), default=-1)
        prefix = blocks[: cached_upto + 1]
        prefix_tokens = words_tokens(prefix) if prefix else 0
        key = hashlib.sha256(json.dumps(prefix, sort_keys=True).encode()).hexdigest()
        read = write = 0
        if prefix:
            with self._lock:
                if key in self._cached:
                    read = prefix_tokens
                else:
                    write = prefix_tokens
                    self._cached.add(key)
        rest = words_tokens(blocks[cached_upto + 1 :]) + words_tokens(body.get("messages", []))
        return {
            "input_tokens": rest,
            "output_tokens": len(text.split()),
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
        }

    @staticmethod
    def _message(
        body: dict[str, Any],
        text: str,
        usage: dict[str, int],
        number: int,
        blocks: list[dict] | None = None,
    ) -> dict:
        content = blocks if blocks is not None else [{"type": "text", "text": text}]
        uses_tool = any(block.get("type") == "tool_use" for block in content)
        return {
            "id": f"msg_{number:04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": "tool_use" if uses_tool else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }

    def _broken(self, body: dict[str, Any], broken: BrokenStream) -> Reply:
        """A stream (or what stands for one) broken as `broken.kind` says."""
        kind = broken.kind
        usage = self._usage(body, broken.text)
        stream = {"content-type": "text/event-stream"}
        events = self._events(body, broken.text, usage)
        deltas = [
            i for i, event in enumerate(events) if event.startswith(b"event: content_block_d")
        ]
        half = events[: deltas[len(deltas) // 2]] if deltas else events
        if kind == "cut":
            return Reply(200, stream, half)
        if kind == "max_tokens":
            stop = json.dumps({"stop_reason": "end_turn", "stop_sequence": None})
            limited = stop.replace("end_turn", "max_tokens")
            return Reply(200, stream, [e.replace(stop.encode(), limited.encode()) for e in events])
        if kind == "empty":
            return Reply(200, stream, [])
        if kind == "json":
            return self._json(self._message(body, broken.text, usage, len(self.requests)))
        if kind == "error_event":
            error = {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
            }
            return Reply(
                200, stream, [*half, f"event: error\ndata: {json.dumps(error)}\n\n".encode()]
            )
        if kind == "missing_fields":
            bare = {"type": "message_start", "message": {"id": "msg_bare"}}
            start = f"event: message_start\ndata: {json.dumps(bare)}\n\n".encode()
            return Reply(200, stream, [start, *events[1:]])
        if kind == "not_json":
            return Reply(200, stream, [b"event: message_start\ndata: {not json\n\n"])
        if kind == "no_start":
            return Reply(200, stream, events[1:])
        if kind == "dropped":  # the body is announced longer than what is sent
            length = sum(len(event) for event in events)
            return Reply(200, {**stream, "content-length": str(length)}, half)
        raise ValueError(f"unknown broken stream {kind!r}: one of {', '.join(BROKEN_KINDS)}")

    def _events(self, body: dict[str, Any], text: str, usage: dict[str, int]) -> list[bytes]:
        start = self._message(body, "", {**usage, "output_tokens": 1}, len(self.requests))
        start["content"], start["stop_reason"] = [], None
        words = text.split(" ")
        pieces = [
            " ".join(words[i : i + CHUNK_WORDS]) + (" " if i + CHUNK_WORDS < len(words) else "")
            for i in range(0, len(words), CHUNK_WORDS)
        ]
        if self.chunk_chars:  # text without spaces (a table, `>>>>`) streams in pieces too
            size = self.chunk_chars
            pieces = [text[i : i + size] for i in range(0, len(text), size)] or [""]
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            ("ping", {"type": "ping"}),
        ]
        for piece in pieces:
            delta = {"type": "text_delta", "text": piece}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            )
        events += [
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]

    @staticmethod
    def _json(data: dict[str, Any], status: int = 200, headers: dict | None = None) -> Reply:
        return Reply(
            status,
            {"content-type": "application/json", **(headers or {})},
            [json.dumps(data).encode()],
        )

    def _error(self, status: int) -> Reply:
        kind = ERROR_TYPES.get(status, "api_error")
        data = {"type": "error", "error": {"type": kind, "message": f"fake {kind}"}}
        # retry-after-ms keeps the SDK's retries (which it does for 429 and 5xx) instant
        return self._json(data, status, {"retry-after-ms": "1", "request-id": f"req_{status}"})

    # --- carriers ------------------------------------------------------------------------------
    def transport(self) -> httpx2.MockTransport:
        def handler(request: httpx2.Request) -> httpx2.Response:
            reply = self.handle(request.url.path, dict(request.headers), request.content)
            if reply.delay:
                raise httpx2.ReadTimeout("scripted timeout", request=request)
            return httpx2.Response(
                reply.status, headers=reply.headers, content=b"".join(reply.chunks)
            )

        return httpx2.MockTransport(handler)

    def client(self, **options: Any) -> anthropic.Anthropic:
        options.setdefault("max_retries", 0)
        return anthropic.Anthropic(
            api_key="test-key",
            base_url="http://claude.test",
            http_client=httpx2.Client(transport=self.transport()),
            **options,
        )

    def async_client(self, **options: Any) -> anthropic.AsyncAnthropic:
        options.setdefault("max_retries", 0)
        return anthropic.AsyncAnthropic(
            api_key="test-key",
            base_url="http://claude.test",
            http_client=httpx2.AsyncClient(transport=self.transport()),
            **options,
        )

    # --- reading what was sent -----------------------------------------------------------------
    def message_requests(self) -> list[dict[str, Any]]:
        return [
            body
            for body, path in zip(self.requests, self.paths, strict=True)
            if path == "/v1/messages"
        ]


class _Handler(BaseHTTPRequestHandler):
    api: FakeMessagesAPI

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        reply = self.api.handle(self.path.split("?")[0], dict(self.headers), raw)
        if reply.delay:
            time.sleep(reply.delay)
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in reply.chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
                pace = getattr(self.api, "pace", 0.0)  # the OpenAI stand-in is served here too
                if pace:
                    time.sleep(pace)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve(api: FakeMessagesAPI) -> Iterator[str]:
    """Serve `api` on a free port of 127.0.0.1; yields the base URL."""
    handler = type("Handler", (_Handler,), {"api": api})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# --- a shell to run magics in ---------------------------------------------------------------------
class RaisingShell(InteractiveShell):
    """An InteractiveShell that raises a cell's error instead of only printing it, and that
    ends with its test: see `release_at_exit`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        release_at_exit(self)

    def run_cell(self, *args: Any, **kwargs: Any) -> Any:
        result = super().run_cell(*args, **kwargs)
        if result.error_before_exec is not None:
            raise result.error_before_exec
        if result.error_in_exec is not None:
            raise result.error_in_exec
        return result


def release_at_exit(shell: InteractiveShell) -> None:
    """Take back the `atexit_operations` IPython registers for every shell it makes (not only
    the singleton). Registered, it holds each test's shell (its namespace, the Memory its
    `%load_ext hipo` opened, an embedding model) until pytest exits, then resets each one, a
    `gc.collect()` over the whole heap apiece: tests/test_magics.py and
    tests/test_semantic_magics.py alone spent about 2 minutes in it after their last test (2 cores,
    shared). A test's shell has no history database (`HistoryAccessor.enabled = False`) and no
    temp files for that exit to clean: once its test drops it, it is freed like any object."""
    atexit.unregister(shell.atexit_operations)


def new_shell() -> RaisingShell:
    """A fresh shell (not the singleton) without a history database."""
    config = Config()
    config.HistoryAccessor.enabled = False
    return RaisingShell(config=config)


SDK_CALL = (
    "import anthropic\n"
    "client = anthropic.Anthropic()\n"
    "reply = client.messages.create(model='claude-sonnet-5-5', max_tokens=100,\n"
    "    messages=[{{'role': 'user', 'content': {prompt!r}}}])\n"
)
"""A cell making the user's own SDK call; `.format(prompt=...)` fills in the question."""


def run(shell: InteractiveShell, cell: str) -> Any:
    """Run a cell as a notebook would: with an execution count and the cell hooks."""
    return shell.run_cell(cell, store_history=True)


# --- fixtures: import `api_fixture`, `served_fixture`, `claude_shell_fixture` into a test module;
# tests then ask for `api`, `served`, `claude_shell` ---------------------------------------------
TODAY = "2026-03-12"
SDK_CREDENTIAL_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_PROFILE",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_CONFIG_DIR",
)


def isolate_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """No credential from the environment: only what a test sets is used."""
    for name in SDK_CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(name="api")
def api_fixture() -> FakeMessagesAPI:
    return FakeMessagesAPI()


@pytest.fixture(name="served")
def served_fixture(api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The fake API on a local port, selected the way a user selects a proxy: environment."""
    isolate_credentials(monkeypatch)
    with serve(api) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield url


@pytest.fixture(name="claude_shell")
def claude_shell_fixture(
    served: str,
    memory_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> Iterator[RaisingShell]:
    """A shell with hipo loaded on `memory_root`, its Claude calls going to the fake API.

    Summaries are extractive unless a test asks for Claude; one retry keeps error tests short.
    """
    monkeypatch.setenv("HIPO_TODAY", TODAY)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    shell = new_shell()
    shell.run_cell(f"%config Hipo.root = {str(memory_root)!r}")
    shell.run_cell("%config Hipo.summarizer = 'extractive'")
    shell.run_cell("%config Hipo.max_retries = 1")
    shell.run_cell("%load_ext hipo")
    capsys.readouterr()
    yield shell
    unload_ipython_extension(shell)
