"""`hipo import`: past conversations turned into checkpoints in the raw logs of their own dates.

Parsing is pure: a file's text becomes a list of `ImportRecord`s (day, title, body, source id,
conversation title), one per turn, or an `ImportFormatError` naming the line (JSON Lines, JSON
syntax) or the record that is wrong. Everything given is read and checked before anything is
written (`sources.plan_import`), so a bad or truncated file leaves the memory as it was; a
ChatGPT or Claude.ai export is streamed conversation by conversation (`exports.py`,
`stream.py`), every other format is read whole. The formats:

- ``chatgpt``, ``claude-ai``: the exports people download (`exports.py`).
- ``json``: the chat formats people have. A JSON list of turns ``{"speaker"|"role",
  "text"|"content", "time"?}`` (OpenAI's and Anthropic's message arrays as they are: ``content`` a
  string or a list of content blocks, whose text blocks are kept; system and developer
  messages, tool calls, images and refusals are left out and counted by kind; a tool's output
  with figures is kept in the reply, `records.tool_result_text`), or the same list wrapped as
  ``{"messages": [...], "title"?}``, which is also a jupyter-ai / jupyterlab-chat ``.chat`` file
  (its messages ``{"sender", "body", "time"}``, the sender named in its ``"users"``; a bot's
  messages are the assistant's, deleted ones are left out). ``time`` is an ISO date or
  date-time, epoch seconds, or LoCoMo's "1:56 pm on 8 May, 2023"; a turn without one takes
  the time of the turn before it, and turns before any time take the file's modification time
  (now, for text with no file), which the record says (`ImportRecord.dated`) and `hipo import`
  reports in one line. An optional ``"id"`` is kept as the source id; a turn without one gets
  an id made of its words and the turn before it (`turn_id`), never of the file's name and a
  position, so two different files both store and the same file twice stores nothing new.
- ``locomo``: a LoCoMo conversation ``{"sample_id", "conversation": {"speaker_a", "session_N":
  [{"speaker", "dia_id", "text", "blip_caption"?}], "session_N_date_time"}}``, a list of them
  (``locomo10.json``), or the ``conversation`` object alone. Source id ``<sample_id>:<dia_id>``,
  e.g. ``conv-26:D1:3``. A shared image's caption is kept after the text as
  ``[shared an image: ...]``, since questions ask about what the image shows.
- ``claude-code``: a Claude Code session transcript (JSON Lines, one record per line). The
  ``user`` and ``assistant`` records with text become turns keyed by their ``uuid`` and titled
  by the session's summary line when there is one; tool calls, tool results, thinking, meta
  records (``isMeta``), sub-agent records (``isSidechain``) and the other record types
  (summary, snapshots, queue operations) are left out.

One turn is one checkpoint (text: what was said; the comment line's ``id``: the source id), so
a recalled hit is exactly the turn that holds the evidence and can be traced back to it
(measured on LoCoMo: turns as checkpoints beat whole sessions at every token budget, see
benchmarks/LOCOMO.md). A conversation with an assistant is the exception: a user turn and the
reply to it are one checkpoint, an exchange (`exchanges.py`, paired when written). Its title
(`record_title`) is the conversation's title, else a person's name (LoCoMo), else the first
words of the request: never the role "user". Turns are written to the raw log of their local
date; a turn whose source id is already in that log is skipped, so an import can be repeated
safely.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..disk.checkpoint import Checkpoint, render
from ..disk.exchanges import exchange_fields
from ..disk.files import MAX_IMPORT_BYTES, UnsafeFileError, read_user_file
from ..disk.jsonread import MAX_LINE_BYTES, JsonInputError, parse_json
from ..disk.redact import Redaction, redact, redact_counted
from ..errors import ParseError
from ..requests import MAX_BODY_CHARS, MAX_TITLE_CHARS, in_range, storable, title_from_text
from ..tree.chain import CompactionReport
from .exports import conversation_records
from .import_times import parse_locomo_time, parse_time
from .records import ImportFormatError, ImportRecord, NoTurnsError, tool_result_text

FORMATS = ("json", "locomo", "claude-code", "chatgpt", "claude-ai")
EXPORTS = ("chatgpt", "claude-ai")  # read conversation by conversation (`exports.py`)
EXPECTED = (
    "a JSON list of chat messages (role and content, as OpenAI and Anthropic write them), "
    "ChatGPT's or Claude.ai's conversations.json, "
    '{"messages": [...]}, a jupyter-ai .chat file, a LoCoMo conversation or a Claude Code '
    ".jsonl session; name one with --format"
)
LEFT_OUT_ROLES = frozenset({"system", "developer"})
TOOL_ROLES = frozenset({"tool", "function", "ipython"})
ROLE_TITLES = frozenset({"user", "human", "assistant", "ai", "model", "claude", "turn"})
_SPEAKER_KEYS = ("speaker", "role", "sender")
CUT_NOTE = "\n[hipo: cut at {limit:,} characters on import; the turn had {chars:,}]"
IMAGE_NOTE = "[shared an image: {caption}]"

_SESSION_KEY = re.compile(r"session_(\d+)\Z")
MAX_SESSION_DIGITS = 6


@dataclass(frozen=True)
class ImportReport:
    """What an import did: turns written and skipped (already there), days touched."""

    written: int
    skipped: int
    days: tuple[str, ...]  # ISO dates of the raw logs written to
    compaction: CompactionReport | None = None  # the pass that followed (None: nothing new)
    per_day: dict[str, int] = field(default_factory=dict)  # ISO date -> turns written
    forgotten: int = 0  # turns the user forgot, kept out (`forget/ledger`)
    left_out: tuple[tuple[str, int], ...] = ()  # (kind, count): what the source held, not kept
    conversations: int = 0  # conversations read (0: the source did not say)
    redacted: dict[str, int] = field(default_factory=dict)  # kind -> secrets replaced


# --- reading ---------------------------------------------------------------------------------


def read_file(path: str | Path, format: str | None = None) -> list[ImportRecord]:
    """Parse a transcript file (format detected when not given); raises ImportFormatError."""
    path = Path(path)
    text = read_transcript_text(path)
    try:
        modified = datetime.fromtimestamp(path.stat().st_mtime)
    except (OSError, OverflowError, ValueError):
        modified = None
    return parse_text(text, format, name=path.name, undated=modified)


def read_transcript_text(path: Path) -> str:
    """A transcript's text (UTF-8, a BOM allowed); ImportFormatError, one line, if it cannot be
    read or is not text. What `hipo import` and `hipo check --transcript` read."""
    try:
        data = read_transcript(path)
    except OSError as error:
        raise ImportFormatError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportFormatError(f"{path.name} is not UTF-8 text (byte {error.start})") from None


def read_transcript(path: Path) -> bytes:
    """A transcript's bytes: a regular file (a symlink to one is fine: it is the user's own
    file, outside the memory), at most MAX_IMPORT_BYTES. `/dev/zero` or a FIFO is refused at
    once instead of being read forever."""
    try:
        return read_user_file(path, MAX_IMPORT_BYTES, str(path))
    except UnsafeFileError as error:
        raise ImportFormatError(str(error)) from None


def parse_text(
    text: str,
    format: str | None = None,
    *,
    name: str = "input",
    undated: datetime | None = None,
    left_out: Counter[str] | None = None,
) -> list[ImportRecord]:
    """Parse a transcript held in a string; `name` (the file name) appears in errors.
    `undated`: the time of turns that have none (the file's; None: now). What the source held
    and the memory does not keep is counted by kind in `left_out` (tool results, images...)."""
    left_out = Counter() if left_out is None else left_out
    if format is None:
        format = detect_format(text, name)
    if format not in FORMATS:
        raise ImportFormatError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    if format == "claude-code":
        records = parse_claude_code(text, name, left_out)
    else:
        data = _load_json(text, name)
        if format in EXPORTS:
            records = export_records(data, format, name, left_out, undated=undated)
        elif format == "locomo":
            records = parse_locomo(data, name)
        else:
            records = parse_turns(data, name, undated=undated, left_out=left_out)
    if not records:
        raise NoTurnsError(f"{name}: no turns to import")
    return records


def detect_format(text: str, name: str = "input") -> str:
    """json, locomo or claude-code, from the file's content (and a .jsonl name)."""
    stripped = text.lstrip()
    if not stripped:
        raise ImportFormatError(f"{name} is empty")
    if name.endswith(".jsonl") or (stripped[0] == "{" and _first_line_is_object(stripped)):
        return "claude-code"
    data = _load_json(text, name)
    if _looks_locomo(data):
        return "locomo"
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and "mapping" in first:
        return "chatgpt"
    if isinstance(first, dict) and "chat_messages" in first:
        return "claude-ai"
    if isinstance(first, dict) and not any(key in first for key in _SPEAKER_KEYS):
        keys = ", ".join(sorted(repr(str(key)[:20]) for key in first)[:6]) or "none"
        raise ImportFormatError(
            f"{name}: unknown format (its first record's keys: {keys}); expected {EXPECTED}"
        )
    if isinstance(data, list) or (isinstance(data, dict) and "messages" in data):
        return "json"
    raise ImportFormatError(f"{name}: unknown format; expected {EXPECTED}")


def export_records(
    data: Any,
    format: str,
    name: str,
    left_out: Counter[str],
    *,
    undated: datetime | None = None,
) -> list[ImportRecord]:
    """A ChatGPT or Claude.ai export held whole (a small one; `sources.py` streams large)."""
    if not isinstance(data, list):
        raise ImportFormatError(f"{name}: expected a list of conversations; got {_kind(data)}")
    records: list[ImportRecord] = []
    for number, conversation in enumerate(data, start=1):
        where = f"{name} conversation {number}"
        records.extend(conversation_records(format, conversation, where, left_out, undated))
    return records


def _first_line_is_object(text: str) -> bool:
    """JSON Lines: the first line is a whole object and more text follows it."""
    first, _, rest = text.partition("\n")
    if not rest.strip():
        return False
    try:
        return isinstance(parse_json(first, "first line"), dict)
    except ParseError:
        return False


def _looks_locomo(data: Any) -> bool:
    items = data if isinstance(data, list) else [data]
    return bool(items) and all(
        isinstance(item, dict)
        and ("conversation" in item or ("speaker_a" in item and "session_1" in item))
        for item in items
    )


def _load_json(text: str, name: str) -> Any:
    try:
        return parse_json(text, name)
    except ParseError as error:  # not JSON, nested too deep, a number out of bounds
        raise ImportFormatError(str(error)) from None


# --- the formats -----------------------------------------------------------------------------


_BLOCK_KINDS = {  # content blocks that are not text, and the kind a report counts them as
    "image": "images",
    "image_url": "images",
    "input_image": "images",
    "tool_use": "tool calls",
    "tool_result": "tool results",
    "function_call": "tool calls",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "refusal": "refusals",
    "document": "attachments",
    "file": "attachments",
    "input_file": "attachments",
}


def _content_text(content: Any, left_out: Counter[str] | None = None) -> str | None:
    """A message's text: a string, or the text blocks of a content list; None if neither.
    The blocks that are not text are counted by kind in `left_out`."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type", "text")
            if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif left_out is not None and kind in _BLOCK_KINDS:
                left_out[_BLOCK_KINDS[kind]] += 1
        return "\n\n".join(texts)
    return None


def _senders(data: dict) -> dict[str, str]:
    """A `.chat` file's senders: id -> "assistant" for a bot (jupyter-ai's personas), else the
    person's display name (or name, or username); in a chat with a bot the people are "user",
    so each question and the bot's reply are one exchange (`exchanges.pair`)."""
    users = data.get("users")
    names: dict[str, str] = {}
    for key, user in (users.items() if isinstance(users, dict) else ()):
        if not isinstance(user, dict):
            continue
        if user.get("bot"):
            names[str(key)] = "assistant"
            continue
        for field_name in ("display_name", "name", "username"):
            value = user.get(field_name)
            if isinstance(value, str) and value.strip():
                names[str(key)] = value.strip()
                break
    if "assistant" in names.values():
        return {key: name if name == "assistant" else "user" for key, name in names.items()}
    return names


def turn_id(previous: str, speaker: str, time: Any, text: str) -> str:
    """The id of a turn its source gave none: a hash of its words, its speaker and time as
    given, and the turn before it (so of its conversation), never of a file name and a
    position. Two different files imported the same day keep both; the same file again, or
    a later export of the same conversation, adds nothing twice."""
    given = json.dumps(time, sort_keys=True, default=str) if time is not None else ""
    digest = hashlib.sha256("\x1f".join((previous, speaker, given, text)).encode())
    return f"turn-{digest.hexdigest()[:20]}"


def parse_turns(
    data: Any,
    name: str,
    *,
    undated: datetime | None = None,
    left_out: Counter[str] | None = None,
) -> list[ImportRecord]:
    """The JSON chat formats (see the module docstring): a list of turns or messages, or a
    `{"messages": [...]}` wrapper (a jupyter-ai `.chat` file among them)."""
    left_out = Counter() if left_out is None else left_out
    senders: dict[str, str] = {}
    title = ""
    if isinstance(data, dict) and "messages" in data:
        senders = _senders(data)
        named = data.get("title", data.get("name"))
        title = " ".join(named.split()) if isinstance(named, str) else ""
        data = data["messages"]
    if not isinstance(data, list):
        raise ImportFormatError(f"{name}: expected {EXPECTED}; got {_kind(data)}")
    records: list[ImportRecord] = []
    last_time: datetime | None = None
    dated = ""
    previous = ""
    for number, turn in enumerate(data, start=1):
        where = f"{name} record {number}"
        if not isinstance(turn, dict):
            raise ImportFormatError(f"{where}: expected a message object, got {_kind(turn)}")
        speaker = turn.get("speaker", turn.get("role"))
        if speaker is None and isinstance(turn.get("sender"), str):
            speaker = senders.get(turn["sender"], turn["sender"])
        if not isinstance(speaker, str) or not speaker.strip():
            raise ImportFormatError(
                f"{where}: expected a 'role' (or 'speaker', or a .chat 'sender') string"
            )
        role = speaker.strip().casefold()
        if role in LEFT_OUT_ROLES or turn.get("deleted") is True:
            left_out["system messages" if role in LEFT_OUT_ROLES else "deleted messages"] += 1
            continue
        raw_text = turn.get("text", turn.get("content", turn.get("body")))
        if raw_text is None and ("tool_calls" in turn or isinstance(turn.get("refusal"), str)):
            left_out["refusals" if turn.get("refusal") else "tool calls"] += 1
            raw_text = ""
        text = _content_text(raw_text, left_out)
        if text is None:
            raise ImportFormatError(
                f"{where}: expected 'content' as a string or a list of content blocks "
                "(or 'text', or a .chat 'body')"
            )
        if turn.get("time") is not None:
            try:
                last_time = parse_time(turn["time"])
            except ValueError as error:
                raise ImportFormatError(f"{where}: bad 'time': {error}") from None
            dated = ""
        elif last_time is None:
            last_time = undated or datetime.now()
            dated = "the file's time" if undated else "now"
        if role in TOOL_ROLES:  # a tool's output: kept in the reply when it holds figures
            speaker, text = "assistant", tool_result_text(text, left_out)
        if not text.strip():
            continue
        given = turn.get("id")
        source = (str(given) if given not in (None, "")
                  else turn_id(previous, speaker.strip(), turn.get("time"), text))  # fmt: skip
        previous = source
        records.append(ImportRecord(last_time.date(), speaker.strip(), text, source,
                                    dated=dated, conversation=title))  # fmt: skip
    return records


def undated_line(records: Iterable[ImportRecord], name: str) -> str:
    """One line for the turns that had no time (`ImportRecord.dated`), or ""."""
    undated = [record for record in records if record.dated]
    if not undated:
        return ""
    return (
        f"{len(undated)} turn{'s' * (len(undated) != 1)} of {name} had no time: dated "
        f"{undated[0].day.isoformat()}, {undated[0].dated}"
    )


def parse_locomo(data: Any, name: str) -> list[ImportRecord]:
    """A LoCoMo conversation, a list of them, or a bare `conversation` object."""
    samples = data if isinstance(data, list) else [data]
    records: list[ImportRecord] = []
    for number, sample in enumerate(samples, start=1):
        where = f"{name} conversation {number}" if isinstance(data, list) else name
        if not isinstance(sample, dict):
            raise ImportFormatError(f"{where}: expected an object, got {_kind(sample)}")
        conversation = sample.get("conversation", sample)
        sample_id = str(sample.get("sample_id") or (f"locomo-{number}"))
        if not isinstance(conversation, dict):
            raise ImportFormatError(f"{where}: 'conversation' must be an object")
        records.extend(locomo_turns(conversation, sample_id, where))
    return records


def locomo_sessions(conversation: dict, where: str = "input") -> list[int]:
    """The session numbers of a LoCoMo conversation, in order (a number of more than
    MAX_SESSION_DIGITS digits is an ImportFormatError naming the key, not a ValueError)."""
    numbers = []
    for key in conversation:
        match = _SESSION_KEY.match(key)
        if match:
            digits = match.group(1)
            if len(digits) > MAX_SESSION_DIGITS or str(int(digits)) != digits:
                raise ImportFormatError(
                    f"{where} {key[:40]}{'...' if len(key) > 40 else ''}: not a session number "
                    f"(session_1, session_2, ...: at most {MAX_SESSION_DIGITS} digits)"
                )
            numbers.append(int(digits))
    return sorted(numbers)


def locomo_turns(conversation: dict, sample_id: str, where: str) -> list[ImportRecord]:
    records: list[ImportRecord] = []
    for session in locomo_sessions(conversation, where):
        key = f"session_{session}"
        turns = conversation[key]
        if not isinstance(turns, list):
            raise ImportFormatError(f"{where} {key}: expected a list of turns")
        when = conversation.get(f"{key}_date_time")
        if not isinstance(when, str):
            raise ImportFormatError(f"{where} {key}_date_time: missing (the session's date)")
        try:
            day = parse_locomo_time(when).date()
        except ValueError as error:
            raise ImportFormatError(f"{where} {key}_date_time: {error}") from None
        if not in_range(day):
            raise ImportFormatError(
                f"{where} {key}_date_time: {when!r} is out of range (memory keeps days from "
                "1900-01-01 to 2199-12-31)"
            )
        for number, turn in enumerate(turns, start=1):
            at = f"{where} {key} turn {number}"
            if not isinstance(turn, dict):
                raise ImportFormatError(f"{at}: expected an object, got {_kind(turn)}")
            speaker, text, dia_id = turn.get("speaker"), turn.get("text"), turn.get("dia_id")
            if not isinstance(speaker, str) or not speaker.strip():
                raise ImportFormatError(f"{at}: needs a 'speaker' string")
            if not isinstance(text, str):
                raise ImportFormatError(f"{at}: needs a 'text' string")
            if not isinstance(dia_id, str) or not dia_id.strip():
                raise ImportFormatError(f"{at}: needs a 'dia_id' string")
            body = locomo_body(turn)
            if body.strip():
                source = f"{sample_id}:{dia_id.strip()}"
                records.append(ImportRecord(day, speaker.strip(), body, source))
    return records


def locomo_body(turn: dict) -> str:
    """A LoCoMo turn's text, and the caption of the image it shares, if any."""
    text = turn.get("text") or ""
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        note = IMAGE_NOTE.format(caption=" ".join(caption.split()))
        return f"{text}\n{note}" if text.strip() else note
    return text


def claude_code_records(text: str, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of each JSON object of a Claude Code transcript; a line that is
    not one is an ImportFormatError naming it. `hipo import` and `hipo check --transcript`
    read transcripts through this."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        if len(line) > MAX_LINE_BYTES:
            raise ImportFormatError(f"{where}: over {MAX_LINE_BYTES:,} characters; not read")
        try:
            record = parse_json(line, name, line=number)
        except JsonInputError as error:
            if not error.syntax:  # nested too deep, a number out of bounds
                raise ImportFormatError(str(error)) from None
            raise ImportFormatError(
                f"{where}: not a JSON record ({error.syntax}); "
                "a transcript cut off mid-write ends like this"
            ) from None
        if not isinstance(record, dict):
            raise ImportFormatError(f"{where}: expected a JSON object, got {_kind(record)}")
        yield number, record


def parse_claude_code(
    text: str, name: str, left_out: Counter[str] | None = None
) -> list[ImportRecord]:
    """A Claude Code session transcript: one JSON record per line. Its exchanges are titled by
    the session's summary line when it has one."""
    records: list[ImportRecord] = []
    summary = ""
    for number, record in claude_code_records(text, name):
        where = f"{name} line {number}"
        kind = record.get("type")
        if kind == "summary" and isinstance(record.get("summary"), str) and not summary:
            summary = " ".join(record["summary"].split())
        if kind not in ("user", "assistant"):
            if kind is None:
                raise ImportFormatError(f"{where}: a record without a 'type'")
            continue  # summaries, snapshots, queue operations, system notes
        if record.get("isMeta") or record.get("isSidechain"):
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            raise ImportFormatError(f"{where}: a {kind} record without a 'message' object")
        body = _content_text(message.get("content"), left_out)
        if body is None:
            raise ImportFormatError(f"{where}: message content is neither text nor a list")
        if not body.strip():
            continue  # tool calls, tool results, thinking
        try:
            moment = parse_time(record.get("timestamp"))
        except ValueError as error:
            raise ImportFormatError(f"{where}: bad 'timestamp': {error}") from None
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or not uuid.strip():
            raise ImportFormatError(f"{where}: a {kind} record without a 'uuid'")
        role = message.get("role") if isinstance(message.get("role"), str) else kind
        records.append(ImportRecord(moment.date(), role, body, uuid.strip()))
    if summary:
        records = [replace(record, conversation=summary) for record in records]
    return records


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string"}.get(type(value), repr(value))


# --- writing: records -> checkpoint blocks per day (pure; Memory.import_records writes) -------


def to_checkpoint(record: ImportRecord) -> Checkpoint:
    """The checkpoint of one turn (or of one exchange: the user's words as its request, the
    reply as its outcome): redacted, and cut when longer than a checkpoint may be."""
    body = _stored_counted(record.body)
    title = redact_counted(" ".join(storable(record_title(record)).split()))
    reply = _stored_counted(record.reply) if record.reply.strip() else None
    redacted = title + body + reply if reply is not None else title + body
    source = storable(record.source)
    # who spoke, redacted like the title (counted there: a speaker is most often the title)
    speaker = redact(" ".join(storable(record.title).split()))[:MAX_TITLE_CHARS] or None
    where = {"id": source, "via": record.via, "redacted": tuple(redacted.counts.items())}
    short_title = title.text[:MAX_TITLE_CHARS] or "turn"
    if reply is not None:
        fields = exchange_fields(body.text, reply.text)
        return Checkpoint(title=short_title, fields=fields, speaker=speaker, **where)
    return Checkpoint(title=short_title, text=body.text, speaker=speaker, **where)


def record_title(record: ImportRecord) -> str:
    """An imported checkpoint's title: its conversation's title, else the speaker's name (a
    LoCoMo person), else, for a role ("user", "assistant"), the first words of the request."""
    if record.conversation.strip():
        return record.conversation
    if record.title.strip().casefold() not in ROLE_TITLES:
        return record.title
    return title_from_text(record.body) or title_from_text(record.reply) or record.title


def _stored(text: str) -> str:
    """A turn's text as a checkpoint keeps it: redacted, cut at MAX_BODY_CHARS with a note."""
    return _stored_counted(text).text


def _stored_counted(text: str) -> Redaction:
    """`_stored`, with what redaction replaced."""
    redacted = redact_counted(storable(text))
    body = redacted.text
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS] + CUT_NOTE.format(limit=MAX_BODY_CHARS, chars=len(body))
    return Redaction(body, redacted.counts)


def blocks_by_day(
    records: Iterable[ImportRecord], known_ids: set[str], *, redacted: dict[str, int] | None = None
) -> tuple[dict[date, str], dict[date, int], int]:
    """The Markdown to append to each day's log (turns in file order), the turns per day, and
    how many turns were skipped because their source id is already known (or repeated);
    `redacted`, when given, gains the secrets each kind had replaced in the turns kept."""
    blocks: dict[date, list[str]] = {}
    skipped = 0
    seen = set(known_ids)
    for record in records:
        if record.source in seen:
            skipped += 1
            continue
        seen.add(record.source)
        checkpoint = to_checkpoint(record)
        for kind, count in checkpoint.redacted if redacted is not None else ():
            redacted[kind] = redacted.get(kind, 0) + count
        blocks.setdefault(record.day, []).append(render(checkpoint))
    return (
        {day: "\n".join(parts) for day, parts in sorted(blocks.items())},
        {day: len(parts) for day, parts in sorted(blocks.items())},
        skipped,
    )
