"""The exports people download: ChatGPT's and Claude.ai's `conversations.json`, one
conversation at a time (the file is streamed by `stream.py`; a conversation is one element).

- ``chatgpt``: a list of ``{"title", "create_time", "mapping": {node id: {"id", "parent",
  "children", "message": {"author": {"role"}, "content": {"content_type", "parts" | "text"},
  "create_time", "recipient", "metadata"}}}, "current_node"}``. A conversation is a tree (every
  edit or regenerated answer is a branch); the one the user last saw is followed from
  ``current_node`` up through the parents, then read from the root down. A node without a
  message (the root) is passed over; a cycle, a parent missing from the mapping or a value of
  the wrong type is one ImportFormatError naming the conversation and the node.
- ``claude-ai``: a list of ``{"uuid", "name", "created_at", "chat_messages": [{"uuid",
  "sender": "human" | "assistant", "text", "content": [{"type", "text"}], "created_at",
  "attachments", "files"}]}``.

Each turn keeps the source's own id (the node id, the message uuid) and its conversation's
title; a user turn and the reply to it are paired here, inside their conversation, so a
reply never joins the last question of the conversation before. What is left out is counted
by kind (`LeftOut`): system messages, hidden context, tool calls, reasoning, images, files and
attachments, refusals. A tool's result that holds figures (a digit) is kept as text in the
reply, cut at TOOL_RESULT_CHARS: the numbers an analysis printed are often the answer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..disk.exchanges import pair
from .import_times import parse_time
from .records import ImportFormatError, ImportRecord, tool_result_text

LeftOut = Counter  # kind ("images", "tool results", ...) -> how many were left out

# ChatGPT content types that are not the conversation itself
_CHATGPT_LEFT_OUT = {
    "thoughts": "reasoning",
    "reasoning_recap": "reasoning",
    "code": "tool calls",
    "user_editable_context": "system messages",
    "system_error": "system messages",
    "model_editable_context": "system messages",
}


def kind_of_export(element: Any) -> str | None:
    """ "chatgpt" or "claude-ai" when a list's first element is one of their conversations."""
    if isinstance(element, dict):
        if "mapping" in element:
            return "chatgpt"
        if "chat_messages" in element:
            return "claude-ai"
    return None


def conversation_records(
    format: str, conversation: Any, where: str, left_out: LeftOut, undated: datetime | None
) -> list[ImportRecord]:
    """The turns of one conversation of a `format` ("chatgpt", "claude-ai") export."""
    read = chatgpt_records if format == "chatgpt" else claude_ai_records
    return read(conversation, where, left_out, undated=undated)


def _title(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _shown(where: str, title: str) -> str:
    return f"{where} ({title[:40]!r})" if title else where


@dataclass(frozen=True)
class _Head:
    """Where an export's conversation keeps its title, its turns (and their JSON type) and
    its time."""

    title: str
    turns: str
    turns_type: type
    time: str


_CHATGPT_HEAD = _Head("title", "mapping", dict, "create_time")
_CLAUDE_AI_HEAD = _Head("name", "chat_messages", list, "created_at")


def _conversation_head(
    conversation: Any, where: str, keys: _Head, undated: datetime | None
) -> tuple[str, str, Any, datetime]:
    """(title, where, turns, time) of one conversation of an export, checked: `keys` say
    where each is. The time is the turns' fallback (else `undated`, else now); `where` gains
    the title, so each error names the conversation."""
    if not isinstance(conversation, dict):
        raise ImportFormatError(
            f"{where}: expected a conversation object, got {_kind(conversation)}"
        )
    title = _title(conversation.get(keys.title))
    where = _shown(where, title)
    turns = conversation.get(keys.turns)
    if not isinstance(turns, keys.turns_type):
        raise ImportFormatError(
            f"{where}: {keys.turns!r} is {_kind(turns)}, not {_kind(keys.turns_type())}"
        )
    start = _time_or_none(conversation.get(keys.time)) or undated or datetime.now()
    return title, where, turns, start


# --- ChatGPT -----------------------------------------------------------------------------------


def chatgpt_records(
    conversation: Any, where: str, left_out: LeftOut, *, undated: datetime | None = None
) -> list[ImportRecord]:
    """The turns of one ChatGPT conversation, on the branch the user last saw (paired)."""
    title, where, mapping, moment = _conversation_head(conversation, where, _CHATGPT_HEAD, undated)
    records: list[ImportRecord] = []
    for node_id, node in _branch(mapping, conversation.get("current_node"), where):
        message = node.get("message")
        if message is None:
            continue
        at = f"{where} node {node_id[:40]!r}"
        if not isinstance(message, dict):
            raise ImportFormatError(f"{at}: 'message' is {_kind(message)}, not an object")
        moment = _time_or_none(message.get("create_time"), at) or moment
        role, text = _chatgpt_turn(message, at, left_out)
        if text.strip():
            records.append(ImportRecord(moment.date(), role, text, node_id, conversation=title))
    return pair(records)


def _branch(mapping: dict, current: Any, where: str) -> list[tuple[str, dict]]:
    """(node id, node) from the root down to `current` (the last node of the mapping without
    children when the conversation names none)."""
    if current is None:
        leaves = [key for key, node in mapping.items()
                  if isinstance(node, dict) and not node.get("children")]  # fmt: skip
        current = leaves[-1] if leaves else None
    if current is None:
        return []
    if not isinstance(current, str):
        raise ImportFormatError(f"{where}: 'current_node' is {_kind(current)}, not a node id")
    chain: list[tuple[str, dict]] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if not isinstance(node_id, str):
            raise ImportFormatError(f"{where}: a 'parent' is {_kind(node_id)}, not a node id")
        if node_id in seen:
            raise ImportFormatError(f"{where}: the parents of node {node_id[:40]!r} form a cycle")
        seen.add(node_id)
        node = mapping.get(node_id)
        if node is None:
            child = f"node {chain[-1][0][:40]!r}" if chain else "'current_node'"
            raise ImportFormatError(
                f"{where}: {child} names a parent {node_id[:40]!r} that is not in the mapping"
            )
        if not isinstance(node, dict):
            raise ImportFormatError(f"{where} node {node_id[:40]!r}: {_kind(node)}, not an object")
        chain.append((node_id, node))
        node_id = node.get("parent")
    return chain[::-1]


def _chatgpt_turn(message: dict, at: str, left_out: LeftOut) -> tuple[str, str]:
    """(role, text) of one message; text "" when it is left out (counted in `left_out`)."""
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if not isinstance(role, str) or not role:
        raise ImportFormatError(f"{at}: a message without an 'author.role' string")
    content = message.get("content")
    if content is None:
        return role, ""
    if not isinstance(content, dict):
        raise ImportFormatError(f"{at}: 'content' is {_kind(content)}, not an object")
    kind = content.get("content_type")
    if isinstance(kind, str) and kind in _CHATGPT_LEFT_OUT:  # reasoning has no parts, say
        left_out[_CHATGPT_LEFT_OUT[kind]] += 1
        return role, ""
    text = _chatgpt_text(content, at, left_out)
    metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    if not text.strip():
        return role, ""
    if metadata.get("is_visually_hidden_from_conversation") or role == "system":
        left_out["system messages"] += 1
        return role, ""
    if role == "tool":
        return "assistant", tool_result_text(text, left_out)
    if role == "assistant" and message.get("recipient") not in (None, "all"):
        left_out["tool calls"] += 1
        return role, ""
    return role, text


def _chatgpt_text(content: dict, at: str, left_out: LeftOut) -> str:
    """The text of a ChatGPT content object: its string parts (an image counted), or its
    `text` (code, tool output), or `result` (a browsing tool's page)."""
    parts = content.get("parts")
    if parts is None:
        for key in ("text", "result"):
            if isinstance(content.get(key), str):
                return content[key]
        return ""
    if not isinstance(parts, list):
        raise ImportFormatError(f"{at}: 'content.parts' is {_kind(parts)}, not a list")
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = part.get("content_type")
            if isinstance(part.get("text"), str) and kind == "audio_transcription":
                texts.append(part["text"])
            elif kind == "image_asset_pointer":
                left_out["images"] += 1
            else:
                left_out["attachments"] += 1
        elif part is not None:
            raise ImportFormatError(f"{at}: a part of 'content.parts' is {_kind(part)}")
    return "\n\n".join(text for text in texts if text.strip())


def _time_or_none(value: Any, at: str = "") -> datetime | None:
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError as error:
        if not at:
            return None
        raise ImportFormatError(f"{at}: bad 'create_time': {error}") from None


# --- Claude.ai ---------------------------------------------------------------------------------


def claude_ai_records(
    conversation: Any, where: str, left_out: LeftOut, *, undated: datetime | None = None
) -> list[ImportRecord]:
    """The turns of one Claude.ai conversation (paired)."""
    head = _conversation_head(conversation, where, _CLAUDE_AI_HEAD, undated)
    title, where, messages, moment = head
    records: list[ImportRecord] = []
    for number, message in enumerate(messages, start=1):
        at = f"{where} message {number}"
        if not isinstance(message, dict):
            raise ImportFormatError(f"{at}: expected an object, got {_kind(message)}")
        sender = message.get("sender")
        if not isinstance(sender, str) or not sender:
            raise ImportFormatError(f"{at}: a message without a 'sender' string")
        moment = _time_or_none(message.get("created_at"), at) or moment
        for key in ("attachments", "files"):
            if isinstance(message.get(key), list):
                left_out["images" if key == "files" else "attachments"] += len(message[key])
        text = _claude_ai_text(message, at, left_out)
        uuid = message.get("uuid")
        if not isinstance(uuid, str) or not uuid.strip():
            raise ImportFormatError(f"{at}: a message without a 'uuid'")
        if text.strip():
            records.append(
                ImportRecord(moment.date(), sender, text, uuid.strip(), conversation=title)
            )
    return pair(records)


def _claude_ai_text(message: dict, at: str, left_out: LeftOut) -> str:
    content = message.get("content")
    if isinstance(content, list) and content:
        texts = []
        for block in content:
            if not isinstance(block, dict):
                raise ImportFormatError(f"{at}: a content block is {_kind(block)}")
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_result":
                kept = tool_result_text(_block_text(block.get("content")), left_out)
                texts.append(kept)
            elif kind == "tool_use":
                left_out["tool calls"] += 1
            elif kind == "thinking":
                left_out["reasoning"] += 1
            elif kind == "image":
                left_out["images"] += 1
        return "\n\n".join(text for text in texts if text.strip())
    text = message.get("text")
    if text is None:
        return ""
    if not isinstance(text, str):
        raise ImportFormatError(f"{at}: 'text' is {_kind(text)}, not a string")
    return text


def _block_text(content: Any) -> str:
    """A tool result's content: a string, or the text of its blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content
                         if isinstance(b, dict) and isinstance(b.get("text"), str))  # fmt: skip
    return ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string"}.get(
        type(value), type(value).__name__
    )
