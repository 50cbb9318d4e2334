"""TAB completion for `%recall`: topic names from the Topics Index, types after `--type`.

It uses IPython's matcher API v2 (`IPCompleter.custom_matchers`), which, unlike the
`complete_command` hook, can be removed again, so unloading the extension leaves no trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from IPython.core.completer import CompletionContext, SimpleCompletion, context_matcher

from .magics import CHECKPOINT_TYPES
from .session import HipoSession

log = logging.getLogger(__name__)

MAGIC_PREFIXES = ("%recall", "recall")  # `recall` alone works when automagic is on


def recall_arguments(text_until_cursor: str) -> list[str] | None:
    """The words typed after `%recall` (the last one may be partial), or None if the line is
    not a %recall line."""
    words = text_until_cursor.lstrip().split(" ")
    if len(words) < 2 or words[0] not in MAGIC_PREFIXES:
        return None
    return words[1:]


def candidates(session: HipoSession, arguments: list[str]) -> list[tuple[str, str]]:
    """(completion, kind) pairs for the last, partial word."""
    partial = arguments[-1]
    previous = arguments[-2] if len(arguments) > 1 else ""
    if previous == "--type":
        return [(name, "type") for name in CHECKPOINT_TYPES if name.startswith(partial)]
    if partial.startswith("-") or previous in ("-k", "--since", "--until"):
        return []
    names = [topic.name for topic in session.memory.topics()]
    return [(name, "topic") for name in names if name.lower().startswith(partial.lower())]


def topic_matcher(session: HipoSession) -> Callable[[CompletionContext], dict[str, Any]]:
    """A matcher bound to `session`; the extension adds it on load and removes it on unload."""

    @context_matcher(identifier="hipo.recall")
    def match_recall(context: CompletionContext) -> dict[str, Any]:
        arguments = recall_arguments(context.text_until_cursor)
        if arguments is None:
            return {"completions": []}
        try:
            found = candidates(session, arguments)
        except Exception:  # a completer must never raise into the user's typing
            log.debug("hipo: %recall completion failed", exc_info=True)
            found = []
        return {
            "completions": [SimpleCompletion(text, type=kind) for text, kind in found],
            "matched_fragment": arguments[-1],
            "suppress": bool(found),
        }

    return match_recall
