"""Layer 1 in the anthropic SDK's Messages API: first in `system`, with the cache breakpoints,
the caller's own system text kept after it; what a call asked, and what it answered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import caching
from .layer1_pin import PromptLayer1
from .prompt import LAYER1_OPEN, fresh_block, layer1_block
from .replies import incomplete_reason


def _given(value: Any) -> bool:
    import anthropic

    return value is not None and not isinstance(value, anthropic.Omit | anthropic.NotGiven)


def _block_text(block: Any) -> str:
    if isinstance(block, dict):
        return str(block.get("text", ""))
    return str(getattr(block, "text", ""))


def carries_layer1(system: Any) -> bool:
    """Whether a `system` argument already holds hipo's Layer 1 block."""
    if not _given(system):
        return False
    if isinstance(system, str):
        return system.lstrip().startswith(LAYER1_OPEN)
    if isinstance(system, list | tuple):
        return any(_block_text(block).lstrip().startswith(LAYER1_OPEN) for block in system)
    return False


cache_breakpoints = caching.breakpoints_used


def inject_layer1(arguments: dict[str, Any], layer1: str) -> dict[str, Any]:
    """A copy of a call's keyword arguments with Layer 1 first in `system` (see
    `inject_layer1_and_plan`)."""
    return inject_layer1_and_plan(arguments, layer1)[0]


def inject_layer1_and_plan(
    arguments: dict[str, Any], layer1: str, fresh: str = "", recalled: str | None = None
) -> tuple[dict[str, Any], caching.CachePlan | None]:
    """A copy of a call's keyword arguments with Layer 1 first in `system`, and where the
    cache breakpoints went (None: the call already carried Layer 1 and is unchanged).

    A string system becomes a text block after ours; a list keeps its blocks after ours.
    Breakpoints end Layer 1 and the caller's own system text, where their prefix reaches the
    model's minimum and breakpoints are left (`caching.place_breakpoints`). `fresh`, Layer 1's
    lines written since its block was cached (`layer1_pin`), and `recalled` memory (fenced,
    `Hipo.auto_recall_sdk`) go last, after them all. The caller's objects are not mutated.
    """
    system = arguments.get("system")
    if carries_layer1(system):
        return arguments, None
    blocks: list[Any] = [layer1_block(layer1, cache=False)]
    if isinstance(system, str):
        if system:
            blocks.append({"type": "text", "text": system})
    elif _given(system):
        blocks.extend(system)
    stable = [0, len(blocks) - 1] if len(blocks) > 1 else [0]
    if fresh:
        blocks.append(fresh_block(fresh))
    if recalled:
        blocks.append({"type": "text", "text": recalled})
    if not all(isinstance(block, dict) for block in blocks):
        return {**arguments, "system": blocks}, None  # SDK objects: leave the caller's as given
    return caching.place_breakpoints({**arguments, "system": blocks}, stable)


def _last_user_text(messages: Any) -> tuple[str, list[str]]:
    """The text of the last user message and the texts of its tool_result blocks."""
    if not isinstance(messages, list | tuple):
        return "", []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content, []
        texts, tool_results = [], []
        for block in content or ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, str):
                    tool_results.append(inner)
                elif isinstance(inner, list):
                    tool_results.append("\n".join(_block_text(b) for b in inner))
        return "\n".join(texts), tool_results
    return "", []


def message_of(result: Any) -> Any:
    if isinstance(getattr(result, "content", None), list):
        return result
    # A stream manager keeps the MessageStream it opened; its snapshot is the reply so far.
    for value in getattr(result, "__dict__", {}).values():
        if hasattr(type(value), "current_message_snapshot"):
            try:
                return value.current_message_snapshot
            except Exception:  # nothing received yet
                return None
    return None


def reply_text(result: Any) -> str | None:
    message = message_of(result)
    if message is None:
        return None
    blocks = getattr(message, "content", None)
    if not isinstance(blocks, list):  # a malformed reply (`replies.read_stream` says so)
        return None
    return "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")


class MessagesShape:
    """The anthropic SDK's Messages API: Layer 1 first in `system`, with cache breakpoints."""

    def applies(self, arguments: dict[str, Any]) -> bool:
        return True

    def carries(self, arguments: dict[str, Any]) -> bool:
        return carries_layer1(arguments.get("system"))

    def inject(
        self, arguments: dict[str, Any], split: PromptLayer1, recalled: str | None
    ) -> tuple[dict[str, Any], caching.CachePlan | None]:
        return inject_layer1_and_plan(arguments, split.stable, split.fresh, recalled)

    def asked(self, arguments: dict[str, Any]) -> tuple[str, list[str]]:
        return _last_user_text(arguments.get("messages"))

    def reply(self, result: Any) -> str | None:
        return reply_text(result)

    def incomplete(self, result: Any) -> str | None:
        """Why the reply is not whole (max_tokens, a stream that stopped early), or None."""
        return incomplete_reason(message_of(result))

    def tap(self, result: Any, sink: list[str]) -> None:
        return None  # a stream manager keeps its snapshot (`reply_text`)

    def arguments(
        self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return args, kwargs


MESSAGES = MessagesShape()
