"""A streamed Messages reply, taken for what it is: whole, incomplete (and why), or malformed.

The SDK trusts the stream's shape: an empty body, plain JSON where events were asked for, text
deltas before `message_start` or a `message_start` without its fields end in a bare
`AssertionError`, `AttributeError` or `IndexError`, and a stream cut before `message_stop`
ends quietly, as if the reply were whole. `read_stream` reads the events itself, so that:

- a malformed answer raises `MalformedReply`, whose text is one line naming what was wrong
  (`error_line` passes it on as the cell's one line);
- an `error` event in the stream, or a connection dropped mid-body before any text, is one
  line too;
- a reply that stopped early (no `message_stop`, the connection dropped after some text, a
  stop reason of max_tokens, the context window or a pause) comes back with `incomplete` saying
  why, so the conversation, the cell and the write-back can say so.

`incomplete_reason` is the same judgement on any Messages result (a Message, or a stream
manager's snapshot), for the write-back of the user's own SDK calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# stop reasons of a reply that did not end where the model meant it to
INCOMPLETE_STOPS = {
    "max_tokens": "stopped at the max_tokens limit (--max-tokens, Hipo.max_tokens)",
    "model_context_window_exceeded": "stopped where the context window ended",
    "pause_turn": "paused by the API before it finished",
}
NO_STOP = "the stream ended before the reply did (no message_stop event)"
DROPPED = "the connection dropped before the reply ended"

# What the SDK raises when the stream's shape is not what it assumes (its own asserts, and
# the fields it reads without checking).
SHAPE_ERRORS: tuple[type[BaseException], ...] = (
    AssertionError,
    AttributeError,
    IndexError,
    KeyError,
    TypeError,
    ValueError,
)


class MalformedReply(Exception):
    """The provider's answer was not a Messages reply; the text is one line saying how."""


@dataclass(frozen=True)
class StreamedReply:
    text: str
    message: Any  # the SDK's Message as it was put together from the events
    incomplete: str | None  # why the reply is not whole; None when it is


def incomplete_reason(message: Any) -> str | None:
    """Why a Messages reply is not whole, or None: a known early stop reason, or none at all
    (a stream that never reached its `message_delta`)."""
    if message is None:
        return None
    stop = getattr(message, "stop_reason", None)
    if stop is None:
        return NO_STOP
    return INCOMPLETE_STOPS.get(str(stop))


def read_stream(stream: Any, on_text: Callable[[str], None]) -> StreamedReply:
    """Read a `MessageStream` (inside `client.messages.stream(...)`), handing each text delta
    to `on_text`; raises MalformedReply for an answer that is no reply."""
    import anthropic
    import httpx2

    events: list[str] = []
    texts: list[str] = []
    dropped = False
    iterator = iter(stream)
    while True:
        try:
            event = next(iterator)
        except StopIteration:
            break
        except SHAPE_ERRORS as error:
            raise MalformedReply(_shape_problem(stream, events, error)) from None
        except anthropic.APIStatusError as error:  # an `error` event inside a 200 stream
            raise MalformedReply(
                f"Claude API: the reply stream ended in an error: {_error_of(error)}"
            ) from None
        except (httpx2.TransportError, anthropic.APIConnectionError) as error:
            if not texts:
                raise MalformedReply(
                    f"Claude API: the connection dropped before any reply ({error})"
                ) from None
            dropped = True
            break
        kind = str(getattr(event, "type", ""))
        events.append(kind)
        if kind == "text":
            texts.append(event.text)
            on_text(event.text)
    if not events:
        raise MalformedReply(_empty_problem(stream))
    try:
        message = stream.current_message_snapshot
    except SHAPE_ERRORS:
        raise MalformedReply(
            "Claude API: the reply stream never started a message (no message_start event)"
        ) from None
    text = "".join(texts)
    if dropped:
        incomplete: str | None = DROPPED
    elif "message_stop" not in events:
        incomplete = NO_STOP
    else:
        incomplete = incomplete_reason(message)
    if incomplete and not text:  # nothing to keep: an empty turn would break the next call
        raise MalformedReply(f"Claude API: no reply text arrived: {incomplete}")
    return StreamedReply(text, message, incomplete)


def _content_type(stream: Any) -> str:
    response = getattr(stream, "response", None)
    headers = getattr(response, "headers", None) or {}
    return str(headers.get("content-type", "")).split(";")[0].strip()


def _empty_problem(stream: Any) -> str:
    kind = _content_type(stream)
    if kind and kind != "text/event-stream":
        return f"Claude API: the answer was {kind}, not the event stream that was asked for"
    return "Claude API: the reply stream was empty (no event at all)"


def _shape_problem(stream: Any, events: list[str], error: BaseException) -> str:
    """One line for an event the SDK could not take: which one, and what it lacked."""
    if not events and _content_type(stream) not in ("", "text/event-stream"):
        return _empty_problem(stream)
    if isinstance(error, json.JSONDecodeError):
        return "Claude API: an event of the reply stream was not JSON"
    if "message_start" not in events:
        return "Claude API: the reply stream did not start with a well-formed message_start event"
    after = f" after {events[-1]}" if events else ""
    detail = " ".join(str(error).split())[:120] or type(error).__name__
    return (
        f"Claude API: an event of the reply stream{after} lacked a field the API always "
        f"sends ({detail})"
    )


def _error_of(error: Any) -> str:
    body = getattr(error, "body", None)
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        message = " ".join(str(detail.get("message", "")).split())[:160]
        return f"{detail.get('type', 'error')}: {message}"
    return " ".join(str(error).split())[:160]
