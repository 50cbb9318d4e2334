"""A stand-in for OpenAI's HTTP API (chat.completions and responses), for the client tests.

`FakeOpenAIAPI` answers as the real API does, in its wire format: `POST /v1/chat/completions`
with a ChatCompletion as JSON, or, when the body says `"stream": true`, the server-sent events of
`chat.completion.chunk`s ending in `data: [DONE]`; `POST /v1/responses` with a Response, or
its event stream (`response.created` ... `response.output_text.delta` ... `response.completed`).
It records every request body as the client sent it and can be scripted to fail (a status
code, in order). `claude_helpers.serve(api)` puts it on a real HTTP server on 127.0.0.1: the
real `openai` SDK and litellm talk to it there, selected by `base_url` / `api_base`, as a user
selects Ollama or vLLM.

`network_watch()` records every connection and name lookup the process makes outside the
loopback while it is on, so a test can show that nothing left the machine (litellm, notably).
"""

from __future__ import annotations

import ipaddress
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from claude_helpers import CHUNK_WORDS, Reply

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
RESPONSES_PATHS = ("/v1/responses", "/responses")
CREATED = 1_765_000_000


def words(value: Any) -> int:
    return max(1, len(json.dumps(value).split()))


def message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def last_user_text(body: dict[str, Any]) -> str:
    """The last user message of a chat body, or the input of a responses body."""
    items = body.get("messages", body.get("input", []))
    if isinstance(items, str):
        return items
    for item in reversed(items):
        if item.get("role") == "user":
            return message_text(item.get("content"))
    return ""


@dataclass
class FakeOpenAIAPI:
    """OpenAI's chat.completions and responses endpoints, as data in and wire format out."""

    failures: list[int] = field(default_factory=list)  # status codes, answered in order
    cut_short: int = 0  # the next calls stop at the token limit: finish_reason "length"
    # (chat, streamed or not), status "incomplete" for max_output_tokens (unstreamed responses)
    requests: list[dict[str, Any]] = field(default_factory=list)  # every body, as sent
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        headers = {name.lower(): value for name, value in headers.items()}
        body = json.loads(raw or b"{}")
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            number = len(self.requests)
            failure = self.failures.pop(0) if self.failures else None
        if failure is None and not headers.get("authorization"):
            failure = 401
        if failure is not None:
            return self._error(failure)
        text = self.reply_text(number, body)
        short = False
        if self.cut_short and (path in CHAT_PATHS or not body.get("stream")):
            with self._lock:
                self.cut_short, short = self.cut_short - 1, True
        if path in CHAT_PATHS:
            if body.get("stream"):
                chunks = self._chat_chunks(body, text, number)
                if short:  # the last chunk before [DONE] says why it stopped
                    chunks[-2]["choices"][0]["finish_reason"] = "length"  # type: ignore[index]
                return self._sse(chunks)
            completion = self._chat_completion(body, text, number)
            if short:
                completion["choices"][0]["finish_reason"] = "length"
            return self._json(completion)
        if path in RESPONSES_PATHS:
            if body.get("stream"):
                return self._sse(self._response_events(body, text, number))
            response = self._response(body, text, number)
            if short:
                response["status"] = "incomplete"
                response["incomplete_details"] = {"reason": "max_output_tokens"}
            return self._json(response)
        return self._error(404)

    @staticmethod
    def reply_text(number: int, body: dict[str, Any]) -> str:
        question = " ".join(last_user_text(body).split()[:12])
        return f"Reply {number}: you asked about {question}."

    # --- chat.completions ----------------------------------------------------------------
    @staticmethod
    def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
        prompt = words(body.get("messages", body.get("input", [])))
        return {
            "prompt_tokens": prompt,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt + len(text.split()),
        }

    def _chat_completion(self, body: dict[str, Any], text: str, number: int) -> dict:
        return {
            "id": f"chatcmpl-{number:04d}",
            "object": "chat.completion",
            "created": CREATED,
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": self._usage(body, text),
        }

    def _chat_chunks(self, body: dict[str, Any], text: str, number: int) -> list[dict | str]:
        def chunk(delta: dict[str, Any], finish: str | None) -> dict:
            return {
                "id": f"chatcmpl-{number:04d}",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": body.get("model", ""),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        chunks: list[dict | str] = [chunk({"role": "assistant", "content": ""}, None)]
        chunks += [chunk({"content": piece}, None) for piece in pieces(text)]
        chunks.append(chunk({}, "stop"))
        chunks.append("[DONE]")
        return chunks

    # --- responses ---------------------------------------------------------------------
    def _message_item(self, text: str, number: int, status: str = "completed") -> dict:
        content = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
        return {
            "type": "message",
            "id": f"msg_{number:04d}",
            "status": status,
            "role": "assistant",
            "content": content if text else [],
        }

    def _response(self, body: dict[str, Any], text: str, number: int, done: bool = True) -> dict:
        usage = self._usage(body, text)
        return {
            "id": f"resp_{number:04d}",
            "object": "response",
            "created_at": CREATED,
            "status": "completed" if done else "in_progress",
            "model": body.get("model", ""),
            "instructions": body.get("instructions"),
            "output": [self._message_item(text, number)] if done else [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": usage["prompt_tokens"],
                "output_tokens": usage["completion_tokens"],
                "total_tokens": usage["total_tokens"],
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }

    def _response_events(self, body: dict[str, Any], text: str, number: int) -> list[dict | str]:
        item_id = f"msg_{number:04d}"
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": self._response(body, "", number, False)},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": self._message_item("", number, "in_progress"),
            },
            {"type": "response.content_part.added", **where, "part": part},
        ]
        events += [
            {"type": "response.output_text.delta", **where, "delta": piece, "logprobs": []}
            for piece in pieces(text)
        ]
        events += [
            {"type": "response.output_text.done", **where, "text": text, "logprobs": []},
            {"type": "response.content_part.done", **where, "part": {**part, "text": text}},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": self._message_item(text, number),
            },
            {"type": "response.completed", "response": self._response(body, text, number)},
        ]
        return [{**event, "sequence_number": n} for n, event in enumerate(events)]

    # --- the wire ----------------------------------------------------------------------
    @staticmethod
    def _json(data: dict[str, Any], status: int = 200, headers: dict | None = None) -> Reply:
        return Reply(
            status,
            {"content-type": "application/json", **(headers or {})},
            [json.dumps(data).encode()],
        )

    @staticmethod
    def _sse(events: list[dict | str]) -> Reply:
        chunks = []
        for event in events:
            if isinstance(event, str):
                chunks.append(f"data: {event}\n\n".encode())
            elif str(event.get("type", "")).startswith("response."):
                chunks.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            else:
                chunks.append(f"data: {json.dumps(event)}\n\n".encode())
        return Reply(200, {"content-type": "text/event-stream"}, chunks)

    def _error(self, status: int) -> Reply:
        data = {"error": {"message": f"fake error {status}", "type": "api_error", "code": None}}
        # retry-after-ms keeps the SDK's own retries (429 and 5xx) instant
        return self._json(data, status, {"retry-after-ms": "1", "x-request-id": f"req_{status}"})

    # --- reading what was sent -----------------------------------------------------------
    def bodies(self, kind: str = "chat") -> list[dict[str, Any]]:
        wanted = CHAT_PATHS if kind == "chat" else RESPONSES_PATHS
        return [
            body for body, path in zip(self.requests, self.paths, strict=True) if path in wanted
        ]


def pieces(text: str) -> list[str]:
    """`text` in chunks of a few words, as a model streams it."""
    split = text.split(" ")
    return [
        " ".join(split[i : i + CHUNK_WORDS]) + (" " if i + CHUNK_WORDS < len(split) else "")
        for i in range(0, len(split), CHUNK_WORDS)
    ]


# --- nothing leaves the machine -------------------------------------------------------------------
_WATCH: list[list[str]] = []  # the open watches; the audit hook cannot be removed, only idle
_HOOKED = False


def _loopback(host: Any) -> bool:
    if host in (None, "", "localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCH:
        return
    if event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else None
        if isinstance(address, tuple) and not _loopback(host):
            for seen in _WATCH:
                seen.append(f"connect {address!r}")
    elif event == "socket.getaddrinfo" and not _loopback(args[0]):
        for seen in _WATCH:
            seen.append(f"lookup {args[0]!r}")


@contextmanager
def network_watch() -> Iterator[list[str]]:
    """Yields a list that receives every non-loopback connect and name lookup made while on."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    seen: list[str] = []
    _WATCH.append(seen)
    try:
        yield seen
    finally:
        _WATCH.remove(seen)
