"""Layer 1 in OpenAI-format requests: the openai SDK's `chat.completions` and `responses`, and
litellm's `completion` / `acompletion` (which take chat.completions' messages, whatever model
they route to). Ollama, vLLM and llama.cpp serve the same interface, so this reaches them too.

Each shape knows one request format: whether a call already carries Layer 1, how to put it in
(a copy of the call's keyword arguments, the caller's objects untouched), what the call asked,
and what it answered. Layer 1 is the same fenced text `%%ask` and the anthropic SDK send
(`prompt.layer1_block`), as one system message:

- chat.completions and litellm: Layer 1 opens the first message when that is the caller's
  system (or developer) message, the caller's own text kept after it; otherwise a system message
  of its own goes first. One system message, first, is what every chat template of a local
  model accepts.
- responses: Layer 1 opens `instructions`, the caller's instructions kept after it (the API
  does not carry instructions over from `previous_response_id`, so every call needs its own).

Layer 1's lines written since it was first sent (`layer1_pin`) and recalled memory
(`Hipo.auto_recall_sdk`) follow the caller's text, as they do for the anthropic SDK, so the
prefix a provider caches (OpenAI's is automatic) stays the same from call to call.

Nothing here imports openai or litellm: the wrappers run only once the user's code did.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from .layer1_pin import PromptLayer1
from .prompt import LAYER1_OPEN, fresh_block, layer1_block

SYSTEM_ROLES = ("system", "developer")
STREAM_FINISH = "_hipo_finish_reason"  # set on a chat stream hipo reads along (`tap`)
STREAM_ENDED = "_hipo_stream_ended"
CHAT_INCOMPLETE = {
    "length": "stopped at the token limit",
    "content_filter": "stopped by the content filter",
}


def _given(value: Any) -> bool:
    """Not None and not one of the SDKs' "not given" sentinels (openai.NotGiven / Omit)."""
    return value is not None and type(value).__name__ not in ("NotGiven", "Omit")


def _field(item: Any, name: str, default: Any = None) -> Any:
    """A key of a dict or an attribute of an SDK object."""
    if isinstance(item, dict):
        return item.get(name, default)
    return getattr(item, name, default)


def _part_texts(content: Any, kinds: tuple[str, ...]) -> list[str]:
    """The texts of a message's content: a string, or a list of parts of the given types."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list | tuple):
        return []
    return [
        str(_field(part, "text", ""))
        for part in content
        if _field(part, "type") in kinds and _field(part, "text") is not None
    ]


def _opens_with_layer1(content: Any) -> bool:
    return any(
        text.lstrip().startswith(LAYER1_OPEN)
        for text in _part_texts(content, ("text", "input_text"))
    )


def layer1_texts(split: PromptLayer1, recalled: str | None) -> tuple[str, list[str]]:
    """Layer 1's fenced text (the anthropic SDK's first system block, word for word), and
    what goes after the caller's own text: the fresh lines' fence, then recalled memory."""
    after = [fresh_block(split.fresh)["text"]] if split.fresh else []
    if recalled:
        after.append(recalled)
    return layer1_block(split.stable, cache=False)["text"], after


class ChatShape:
    """openai's `chat.completions.create / parse / stream`: `messages` with a system role."""

    def applies(self, arguments: dict[str, Any]) -> bool:
        return _given(arguments.get("messages")) and not isinstance(
            arguments.get("messages"), str | bytes
        )

    def carries(self, arguments: dict[str, Any]) -> bool:
        """Whether a system or developer message already opens with hipo's Layer 1."""
        messages = arguments.get("messages")
        if not isinstance(messages, list | tuple):
            return False
        return any(
            _field(message, "role") in SYSTEM_ROLES
            and _opens_with_layer1(_field(message, "content"))
            for message in messages
        )

    def inject(
        self, arguments: dict[str, Any], split: PromptLayer1, recalled: str | None
    ) -> tuple[dict[str, Any], None]:
        """A copy of the call's arguments with Layer 1 in, and no cache plan (OpenAI caches
        prefixes by itself; the stable part goes first)."""
        messages = list(arguments["messages"])  # an iterable is read once: send the list on
        layer1, after = layer1_texts(split, recalled)
        first = messages[0] if messages else None
        content = first.get("content") if isinstance(first, dict) else None
        if isinstance(first, dict) and first.get("role") in SYSTEM_ROLES:
            if isinstance(content, str):
                joined = "\n\n".join(text for text in (layer1, content, *after) if text)
                messages[0] = {**first, "content": joined}
                return {**arguments, "messages": messages}, None
            if isinstance(content, list | tuple):
                parts = [{"type": "text", "text": text} for text in after]
                new = [{"type": "text", "text": layer1}, *content, *parts]
                messages[0] = {**first, "content": new}
                return {**arguments, "messages": messages}, None
        system = {"role": "system", "content": "\n\n".join([layer1, *after])}
        return {**arguments, "messages": [system, *messages]}, None

    def asked(self, arguments: dict[str, Any]) -> tuple[str, list[str]]:
        """The last user message's text, and the tool results that end the conversation."""
        messages = arguments.get("messages")
        if not isinstance(messages, list | tuple):
            return "", []
        tool_results: list[str] = []
        for message in reversed(messages):  # the tool results that end the conversation
            if _field(message, "role") != "tool":
                break
            tool_results.insert(0, "\n".join(_part_texts(_field(message, "content"), ("text",))))
        for message in reversed(messages):
            if _field(message, "role") == "user":
                return "\n".join(_part_texts(_field(message, "content"), ("text",))), tool_results
        return "", tool_results

    def reply(self, result: Any) -> str | None:
        """The first choice's text: a ChatCompletion (openai) or a ModelResponse (litellm)."""
        choices = _field(result, "choices")
        if isinstance(choices, list) and choices:
            content = _field(_field(choices[0], "message"), "content")
            if isinstance(content, str):
                return content
        return None

    def incomplete(self, result: Any) -> str | None:
        """Why the first choice is not whole: `finish_reason` length (the token limit) or
        content_filter, or, for a stream hipo read along (`tap`), none at all; None when it
        is whole or cannot be known."""
        choices = _field(result, "choices")
        if isinstance(choices, list) and choices:
            reason = _field(choices[0], "finish_reason")
        elif hasattr(result, STREAM_FINISH):
            reason = getattr(result, STREAM_FINISH) or (
                "" if getattr(result, STREAM_ENDED, False) else None
            )
            if reason == "":
                return "the stream ended before the reply did (no finish_reason)"
        else:
            return None
        if reason in CHAT_INCOMPLETE:
            return f"{CHAT_INCOMPLETE[reason]} (finish_reason {reason})"
        return None

    def streamed_finish(self, event: Any) -> str | None:
        """The `finish_reason` a `stream=True` chunk carries, if any."""
        choices = _field(event, "choices")
        if isinstance(choices, list) and choices:
            reason = _field(choices[0], "finish_reason")
            return reason if isinstance(reason, str) else None
        return None

    def streamed_text(self, event: Any) -> str:
        """The text a `stream=True` chunk adds."""
        choices = _field(event, "choices")
        if isinstance(choices, list) and choices:
            text = _field(_field(choices[0], "delta"), "content")
            return text if isinstance(text, str) else ""
        return ""

    def tap(self, result: Any, sink: list[str]) -> None:
        _tap_openai_stream(result, sink, self.streamed_text, self.streamed_finish)

    def arguments(
        self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return args, kwargs


class ResponsesShape(ChatShape):
    """openai's `responses.create / parse / stream`: `instructions`, and `input` items."""

    def applies(self, arguments: dict[str, Any]) -> bool:
        # responses.stream(response_id=...) resumes a response: it takes no instructions
        return not _given(arguments.get("response_id"))

    def carries(self, arguments: dict[str, Any]) -> bool:
        if _opens_with_layer1(arguments.get("instructions")):
            return True
        items = arguments.get("input")
        if not isinstance(items, list | tuple):
            return False
        return any(
            _field(item, "role") in SYSTEM_ROLES and _opens_with_layer1(_field(item, "content"))
            for item in items
        )

    def inject(
        self, arguments: dict[str, Any], split: PromptLayer1, recalled: str | None
    ) -> tuple[dict[str, Any], None]:
        """A copy of the call's arguments with Layer 1 in, and no cache plan (OpenAI caches
        prefixes by itself; the stable part goes first)."""
        layer1, after = layer1_texts(split, recalled)
        own = arguments.get("instructions")
        own = own if isinstance(own, str) else ""
        joined = "\n\n".join(text for text in (layer1, own, *after) if text)
        return {**arguments, "instructions": joined}, None

    def asked(self, arguments: dict[str, Any]) -> tuple[str, list[str]]:
        items = arguments.get("input")
        if isinstance(items, str):
            return items, []
        if not isinstance(items, list | tuple):
            return "", []
        tool_results: list[str] = []
        for item in reversed(items):
            if _field(item, "type") != "function_call_output":
                break
            output = _field(item, "output")
            texts = _part_texts(output, ("input_text", "output_text", "text"))
            tool_results.insert(0, "\n".join(texts))
        for item in reversed(items):
            if _field(item, "role") == "user":
                texts = _part_texts(_field(item, "content"), ("input_text", "text"))
                return "\n".join(texts), tool_results
        return "", tool_results

    def reply(self, result: Any) -> str | None:
        text = getattr(result, "output_text", None) if hasattr(result, "output") else None
        return text if isinstance(text, str) else None

    def incomplete(self, result: Any) -> str | None:
        """A response whose status is `incomplete`, with the reason the API gave."""
        if not hasattr(result, "output") or _field(result, "status") != "incomplete":
            return None
        reason = _field(_field(result, "incomplete_details"), "reason")
        return f"the response is incomplete ({reason or 'no reason given'})"

    def streamed_text(self, event: Any) -> str:
        if _field(event, "type") == "response.output_text.delta":
            delta = _field(event, "delta")
            return delta if isinstance(delta, str) else ""
        return ""


class LiteLLMShape(ChatShape):
    """litellm's `completion` / `acompletion`: chat messages, positional `model, messages`
    allowed, and its own stream wrapper, which keeps the chunks it gave out."""

    def arguments(
        self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if not args:
            return args, kwargs
        try:
            bound = inspect.signature(function).bind_partial(*args, **kwargs)
        except (TypeError, ValueError):  # a signature we cannot read: leave the call as is
            return args, kwargs
        keywords: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            kind = bound.signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL and value:
                return args, kwargs
            if kind is inspect.Parameter.VAR_KEYWORD:
                keywords.update(value)
            elif kind is not inspect.Parameter.VAR_POSITIONAL:
                keywords[name] = value
        return (), keywords

    def reply(self, result: Any) -> str | None:
        text = super().reply(result)
        if text is not None:
            return text
        chunks = getattr(result, "chunks", None)  # litellm's CustomStreamWrapper, as consumed
        if isinstance(chunks, list) and chunks:
            return "".join(self.streamed_text(chunk) for chunk in chunks)
        return None

    def tap(self, result: Any, sink: list[str]) -> None:
        return None  # the stream wrapper keeps its chunks (`reply`)


def _tap_openai_stream(
    result: Any,
    sink: list[str],
    text_of: Callable[[Any], str],
    finish_of: Callable[[Any], str | None] | None = None,
) -> None:
    """Collect the text of an openai `Stream` / `AsyncStream` as the caller reads it, so a
    streamed reply is written back too, and (with `finish_of`) how it finished: the last
    finish reason seen (STREAM_FINISH) and whether the stream was read to its end
    (STREAM_ENDED), for `incomplete`. The SDK's streams iterate their `_iterator`; it is
    wrapped on this one object only. Anything else (a raw response) is left alone."""
    streaming = sys.modules.get("openai._streaming")
    kinds = tuple(getattr(streaming, name, None) for name in ("Stream", "AsyncStream"))
    if streaming is None or not all(kinds) or not isinstance(result, kinds):
        return
    iterator = getattr(result, "_iterator", None)
    if finish_of is not None:
        setattr(result, STREAM_FINISH, None)

    def seen(event: Any) -> None:
        _collect(sink, text_of, event)
        if finish_of is not None:
            with contextlib.suppress(Exception):  # a shape we do not know: the stream goes on
                setattr(result, STREAM_FINISH, finish_of(event) or getattr(result, STREAM_FINISH))

    if hasattr(iterator, "__anext__"):

        async def collected_async(source: AsyncIterator[Any]) -> AsyncIterator[Any]:
            async for event in source:
                seen(event)
                yield event
            setattr(result, STREAM_ENDED, True)

        result._iterator = collected_async(iterator)
    elif hasattr(iterator, "__next__"):

        def collected(source: Iterator[Any]) -> Iterator[Any]:
            for event in source:
                seen(event)
                yield event
            setattr(result, STREAM_ENDED, True)

        result._iterator = collected(iterator)


def _collect(sink: list[str], text_of: Callable[[Any], str], event: Any) -> None:
    try:
        text = text_of(event)
    except Exception:  # an event of a shape we do not know: the user's stream goes on
        return
    if text:
        sink.append(text)


CHAT = ChatShape()
RESPONSES = ResponsesShape()
LITELLM = LiteLLMShape()
