"""Where the prompt-cache breakpoints go, so that caching actually caches.

The API caches the prefix of a request up to a block marked `cache_control` (tools, then system,
then messages, in that order), but only when that prefix is at least the model's minimum; below
it the mark silently does nothing. The minimum differs by model (`MIN_CACHEABLE_TOKENS`, one
table), while Layer 1 alone is often 1,500-3,000 tokens. So a breakpoint is placed at the end of
each stable stretch whose prefix reaches the minimum:

1. the end of Layer 1 (tools before it are in its prefix): the same in every call of the kernel;
2. the end of the caller's own system text, or of a `%%ask` conversation's ANCHOR/SUMMARY:
   stable between calls (between folds), so the longer prefix is read too.

What changes every call (the context-status note, recalled memory) comes after the last
breakpoint. The API allows four breakpoints a request, the caller's own included: hipo uses at
most two and never more than are left. A prefix under the minimum gets no mark, and the caller
is told once (`CachePlan.note`) rather than left wondering why nothing was read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hipo_jupyter.memory.tree import count_tokens

MAX_CACHE_BREAKPOINTS = 4  # the Messages API refuses a request with more cache_control blocks
EPHEMERAL = {"type": "ephemeral"}

MIN_CACHEABLE_TOKENS: dict[str, int] = {
    # Anthropic's prompt-caching documentation, by model id prefix (the longest prefix wins).
    "claude-opus-5": 512,
    "claude-sonnet-5": 512,
    "claude-haiku-5": 512,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-3-7-sonnet": 1024,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
DEFAULT_MIN_CACHEABLE = 1024
"""For a model the table does not know: the most common minimum. A mark under the real minimum
costs nothing but caches nothing; leaving one off where it would cache loses the savings."""


def min_cacheable_tokens(model: str) -> int:
    """The model's minimum cacheable prefix, in tokens (DEFAULT_MIN_CACHEABLE if unknown)."""
    name = (model or "").lower().rsplit("/", 1)[-1].removeprefix("anthropic.")
    matches = [prefix for prefix in MIN_CACHEABLE_TOKENS if name.startswith(prefix)]
    return MIN_CACHEABLE_TOKENS[max(matches, key=len)] if matches else DEFAULT_MIN_CACHEABLE


@dataclass(frozen=True)
class CachePlan:
    """Where breakpoints went in one request, and why not elsewhere."""

    model: str
    minimum: int
    prefix_tokens: int  # tokens of the longest stable prefix (tools and stable system blocks)
    marked: tuple[int, ...]  # indexes of the system blocks hipo marked
    room: int  # breakpoints the caller left for us

    @property
    def cached(self) -> bool:
        return bool(self.marked)

    @property
    def reason(self) -> str | None:
        """Why nothing was marked: "full" (no breakpoint left), "short" (under the minimum)."""
        if self.marked:
            return None
        if self.room <= 0:
            return "full"
        return "short" if self.prefix_tokens < self.minimum else None

    @property
    def note(self) -> str | None:
        """One line when the stable prefix is too short to cache (or no breakpoint was left)."""
        if self.reason == "full":
            return (
                f"prompt caching: the request already uses all {MAX_CACHE_BREAKPOINTS} cache "
                "breakpoints, so Layer 1 is sent without one"
            )
        if self.reason == "short":
            return (
                f"prompt caching: the stable prefix (~{self.prefix_tokens:,} tokens) is under "
                f"{self.model or 'this model'}'s minimum of {self.minimum:,}, so it is sent "
                "without a breakpoint (it would cache nothing); it caches once the memory grows"
            )
        return None


def _given(value: Any) -> bool:
    return value is not None and type(value).__name__ not in ("Omit", "NotGiven")


def _marked(blocks: Any) -> int:
    if not isinstance(blocks, list | tuple):
        return 0
    return sum(1 for b in blocks if isinstance(b, dict) and _given(b.get("cache_control")))


def breakpoints_used(arguments: dict[str, Any]) -> int:
    """cache_control marks a call already uses (top level, tools, system, message blocks).

    Only lists are looked into: a generator must not be consumed here.
    """
    count = 1 if _given(arguments.get("cache_control")) else 0
    count += _marked(arguments.get("system")) + _marked(arguments.get("tools"))
    messages = arguments.get("messages")
    if isinstance(messages, list | tuple):
        count += sum(_marked(m.get("content")) for m in messages if isinstance(m, dict))
    return count


def tools_tokens(tools: Any, counter: Callable[[str], int] = count_tokens) -> int:
    """An estimate of the tool definitions' tokens (they come first in every cached prefix)."""
    if not isinstance(tools, list | tuple) or not tools:
        return 0
    definitions = [t.to_dict() if hasattr(t, "to_dict") else t for t in tools]
    try:
        return counter(json.dumps(definitions, default=str))
    except (TypeError, ValueError):
        return 0


def _block_text(block: Any) -> str:
    return str(block.get("text", "")) if isinstance(block, dict) else str(block)


def place_breakpoints(
    arguments: dict[str, Any],
    stable: Sequence[int],
    *,
    counter: Callable[[str], int] = count_tokens,
) -> tuple[dict[str, Any], CachePlan]:
    """A copy of `arguments` with `cache_control` on the stable system blocks at `stable`
    (indexes, in order; the ends of the stable stretches) whose prefix reaches the model's
    minimum, within the breakpoints left. The caller's blocks are copied, never mutated.

    A system block the caller marked already caches everything before it: hipo then adds none
    at or before it.
    """
    model = str(arguments.get("model") or "")
    minimum = min_cacheable_tokens(model)
    system = list(arguments.get("system") or [])
    room = MAX_CACHE_BREAKPOINTS - breakpoints_used(arguments)
    last_caller_mark = max(
        (i for i, b in enumerate(system) if isinstance(b, dict) and _given(b.get("cache_control"))),
        default=-1,
    )
    prefix = tools_tokens(arguments.get("tools"), counter)
    counted, longest = 0, 0
    reaching: list[int] = []
    for index in sorted(set(stable)):
        if index >= len(system):
            continue
        prefix += sum(counter(_block_text(b)) for b in system[counted : index + 1])
        counted = index + 1
        longest = prefix
        if prefix >= minimum and index > last_caller_mark:
            reaching.append(index)
    # With fewer breakpoints than stretches, keep the longest prefixes (they include the rest).
    marked = tuple(reaching[-room:]) if room > 0 else ()
    for index in marked:
        system[index] = {**system[index], "cache_control": dict(EPHEMERAL)}
    plan = CachePlan(model, minimum, longest, marked, room)
    if not marked:
        return arguments, plan
    return {**arguments, "system": system}, plan


class NoteOnce:
    """Say a plan's note once per model and reason, not on every call."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self._said: set[tuple[str, str]] = set()

    def __call__(self, plan: CachePlan | None) -> None:
        if plan is None or plan.note is None or plan.reason is None:
            return
        key = (plan.model, plan.reason)
        if key not in self._said:
            self._said.add(key)
            self.say(plan.note)
