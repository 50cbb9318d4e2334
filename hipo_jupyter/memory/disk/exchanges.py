"""Exchanges: a conversation with an assistant stored as user turn + reply, one checkpoint each.

When an import has roles (a json list with ``user``/``assistant`` roles, a Claude Code
transcript), each user turn and the assistant's reply to it become one checkpoint: the user's
words as its ``request`` field, the reply as its ``outcome``. Why (issue 25, measured on
MemAware's dev questions): imported a turn per checkpoint, long generic assistant turns crowd
the user's own words out of the candidates and out of the budget (0.343 at 2,000 tokens, below
plain BM25 over the user turns); the reply is still evidence of what the turn was about, so it
stays in the same document, where it helps the user's turn be found instead of competing with it.

The reply is kept whole in the raw log (up to the size limit of any checkpoint). The index keeps
its first REPLY_INDEX_TOKENS words (`index_text`): the start of a reply says what it is about,
its long tail mostly adds generic words that make every exchange match every question. A
context shows the request first and the passage of the reply that matches the query
(`recall/context.piece_line`), so a hit is readable and cheap.

Pairing is by order: an assistant turn joins the user turn before it (several assistant turns in
a row, as Claude Code writes a reply between tool calls, join into one reply). An assistant turn
with no user turn before it, and every turn of a conversation without both roles (LoCoMo's two
people), stays a checkpoint of its own. The exchange keeps the user turn's source id, so
importing a file again adds nothing, even a file imported turn by turn before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from .provenance import VIA_CLAUDE_CODE, VIA_IMPORT

USER_ROLES = frozenset({"user", "human"})
ASSISTANT_ROLES = frozenset({"assistant", "ai", "model", "claude"})
REQUEST_FIELD, REPLY_FIELD = "request", "outcome"
# Words of a reply the index keeps (the raw log keeps all of it): chosen by 3-fold
# cross-validation on MemAware's dev questions at 2,000 tokens (issue 25): 0 words 0.427,
# 40 0.440, 120 0.460, 400 0.477 (dev); the embedding reads the first 256 tokens anyway.
REPLY_INDEX_TOKENS = 400
_WORD = re.compile(r"\S+")


class Turn(Protocol):
    """What pairing reads of a turn: the role (`title`), the words and the reply joined so far;
    a dataclass, since the reply is set with `dataclasses.replace`. `intake.importers`'
    `ImportRecord` is one: this room names the shape, and never imports the room above it."""

    @property
    def title(self) -> str: ...

    @property
    def body(self) -> str: ...

    @property
    def reply(self) -> str: ...


TurnT = TypeVar("TurnT", bound=Turn)


def is_user(role: str) -> bool:
    return role.strip().casefold() in USER_ROLES


def is_assistant(role: str) -> bool:
    return role.strip().casefold() in ASSISTANT_ROLES


def pair(records: Sequence[TurnT]) -> list[TurnT]:
    """The records with each assistant reply joined to the user turn before it (see the module
    docstring); records without both roles come back as they are."""
    roles = {record.title.strip().casefold() for record in records}
    if not (roles & USER_ROLES and roles & ASSISTANT_ROLES):
        return list(records)
    out: list[TurnT] = []
    open_turn: int | None = None  # index in `out` of the user turn a reply may join
    for record in records:
        if is_user(record.title) and not record.reply:
            out.append(record)
            open_turn = len(out) - 1
        elif is_assistant(record.title) and open_turn is not None:
            turn = out[open_turn]
            reply = f"{turn.reply}\n\n{record.body}" if turn.reply else record.body
            out[open_turn] = replace(turn, reply=reply.strip())
        else:
            out.append(record)
            open_turn = None
    return out


def exchange_fields(request: str, reply: str) -> tuple[tuple[str, str], ...]:
    """The checkpoint fields of one exchange."""
    return ((REQUEST_FIELD, request), (REPLY_FIELD, reply))


def index_reply(reply: str, tokens: int | None = None) -> str:
    """The part of a reply the index keeps: its first `tokens` words (REPLY_INDEX_TOKENS)."""
    tokens = REPLY_INDEX_TOKENS if tokens is None else tokens
    if tokens <= 0:
        return ""
    words = _WORD.findall(reply)
    return reply if len(words) <= tokens else " ".join(words[:tokens]) + " ..."


EXCHANGE_WRITERS = frozenset({VIA_IMPORT, VIA_CLAUDE_CODE})  # `hipo import`, Claude Code's hooks


def is_exchange(fields: Iterable[tuple[str, str]], via: str | None) -> bool:
    """An imported checkpoint of a request and a reply (and nothing else): from `hipo import`
    or a Claude Code session's hooks (`provenance.VIA_CLAUDE_CODE`)."""
    keys = [key for key, _ in fields]
    return via in EXCHANGE_WRITERS and keys == [REQUEST_FIELD, REPLY_FIELD]


def split_shown(text: str) -> tuple[str, str] | None:
    """(request, reply) of an exchange's indexed text (`request: ...\\noutcome: ...`), or None
    when the text is not one."""
    head = f"{REQUEST_FIELD}: "
    marker = f"\n{REPLY_FIELD}: "
    if not text.startswith(head):
        return None
    at = text.find(marker)
    if at < 0:
        return None
    return text[len(head) : at], text[at + len(marker) :]
