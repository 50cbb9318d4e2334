"""The prompt blocks of a Claude call made with hipo: Layer 1, the context-status note, the
conversation's anchor and summary, and `%%ask`'s request, in the order of the package doc.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hipo_jupyter.memory.recall import (  # noqa: F401  (LAYER1_PREAMBLE re-exported)
    LAYER1_PREAMBLE,
    LAYER1_TAG,
    escape_fence,
    fence_layer1,
    wrap,
)
from hipo_jupyter.memory.tree import count_tokens

from . import caching
from .layer1_pin import FRESH_PREAMBLE

if TYPE_CHECKING:  # imported where used: `import anthropic` costs seconds at %load_ext
    pass

log = logging.getLogger(__name__)


DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TOKENS = 4096
DEFAULT_CONTEXT_WINDOW = 200_000
MAX_CACHE_BREAKPOINTS = caching.MAX_CACHE_BREAKPOINTS

# How Layer 1's block opens and closes: each tag ends in a suffix keyed to the content and a
# per-process secret (`fence.wrap`), so these are prefixes: `<hipo-layer1-482913305571>`.
LAYER1_OPEN = f"<{LAYER1_TAG}-"
LAYER1_CLOSE = f"</{LAYER1_TAG}-"
# Layer 1's lines written since the cached block: a fence of its own after the breakpoints.
FRESH_TAG = "hipo-recent-layer1"
FRESH_OPEN = f"<{FRESH_TAG}-"
FRESH_CLOSE = f"</{FRESH_TAG}-"
CONVERSATION_TAG = "hipo-conversation"

NO_KEY_MESSAGE = (
    "no Anthropic API key: set ANTHROPIC_API_KEY in the kernel's environment "
    "(or run %env ANTHROPIC_API_KEY=sk-ant-... in a cell), then run this cell again"
)


# --- the prompt blocks ----------------------------------------------------------------------------
def layer1_block(text: str, *, cache: bool = True) -> dict[str, Any]:
    """Layer 1 as the first system block, recognisable by its opening marker; fenced by the
    function that fences it for agents too (`fence_layer1`, `hipo mcp`'s layer1)."""
    block: dict[str, Any] = {"type": "text", "text": fence_layer1(text)}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return block


def fresh_block(text: str) -> dict[str, Any]:
    """Layer 1's lines written since the cached block (`layer1_pin`), as a block of its own
    that goes after the cache breakpoints: fenced like Layer 1 (a tag of its own, so a call
    still carries Layer 1 once), never marked."""
    body = escape_fence(text).strip()
    return {"type": "text", "text": wrap(FRESH_TAG, f"{FRESH_PREAMBLE}\n\n{body}")}


def _thousands(tokens: int) -> str:
    return f"{tokens / 1000:.0f}k" if tokens >= 1000 else str(tokens)


def status_note(
    live_tokens: int, window: int, *, recalled: int = 0, recall_budget: int | None = None
) -> str:
    """The context-status note of DESIGN.md: "[context status] live: 41k / 200k tokens (~20%).",
    then, when memory was recalled for the call, what it took: "Recalled memory: 312 tokens
    (budget 2,000)."."""
    share = live_tokens / window if window else 1.0
    if share < 0.5:
        verdict = "Budget healthy."
    elif share < 0.8:
        verdict = "Budget filling: older turns are being summarized."
    else:
        verdict = "Budget tight: keep replies short; older turns are being summarized."
    note = (
        f"[context status] live: {_thousands(live_tokens)} / {_thousands(window)} tokens "
        f"(~{share:.0%}). {verdict}"
    )
    if recall_budget is not None:
        note += f" Recalled memory: {recalled:,} tokens (budget {recall_budget:,})."
    return note


def conversation_block(anchor: str, anchor_hash: str, summary: str) -> str:
    """The ANCHOR and SUMMARY zones of a folded conversation, as one system block."""
    parts = []
    parts.append(
        f"## Anchor (goal, constraints, key ids; never rewritten; sha256 {anchor_hash})\n"
        + escape_fence(anchor.strip())
    )
    if summary.strip():
        parts.append("## Summary of earlier turns\n" + escape_fence(summary.strip()))
    return wrap(CONVERSATION_TAG, "\n\n".join(parts))


def ask_request(
    *,
    model: str,
    max_tokens: int,
    messages: list[dict[str, Any]],
    layer1: str | None,
    status: str,
    recalled: str | None = None,
    conversation: str | None = None,
    tools: Sequence[Any] = (),
    layer1_fresh: str | None = None,
) -> dict[str, Any]:
    """The keyword arguments of a %%ask call (see `ask_request_and_plan`)."""
    return ask_request_and_plan(
        model=model,
        max_tokens=max_tokens,
        messages=messages,
        layer1=layer1,
        status=status,
        recalled=recalled,
        conversation=conversation,
        tools=tools,
        layer1_fresh=layer1_fresh,
    )[0]


def ask_request_and_plan(
    *,
    model: str,
    max_tokens: int,
    messages: list[dict[str, Any]],
    layer1: str | None,
    status: str,
    recalled: str | None = None,
    conversation: str | None = None,
    tools: Sequence[Any] = (),
    layer1_fresh: str | None = None,
) -> tuple[dict[str, Any], caching.CachePlan]:
    """The keyword arguments of a %%ask call, and where its cache breakpoints went.

    System blocks, stable first: Layer 1, then the conversation's anchor and summary (stable
    between folds); then what changes every call: the context-status note, Layer 1's lines
    written since its block was cached (`layer1_fresh`, see `layer1_pin`), recalled memory.
    The active turns and the new question are the messages. Breakpoints end the stable blocks
    whose prefix (the tools' definitions included) reaches the model's minimum (`caching`).
    """
    system: list[dict[str, Any]] = []
    if layer1 is not None:
        system.append(layer1_block(layer1, cache=False))
    if conversation:
        system.append({"type": "text", "text": conversation})
    stable = list(range(len(system)))
    system.append({"type": "text", "text": status})
    if layer1_fresh and layer1 is not None:
        system.append(fresh_block(layer1_fresh))
    if recalled:
        system.append({"type": "text", "text": recalled})
    request = {"model": model, "max_tokens": max_tokens, "system": system, "messages": messages}
    placed, plan = caching.place_breakpoints({**request, "tools": list(tools)}, stable)
    placed.pop("tools")
    return placed, plan




def tokens_of_block(text: str | None) -> int:
    return count_tokens(text) if text else 0
