"""Checkpoints: one task's record in a raw daily log `memory/YYYY-MM-DD.md`, and its parser.

A checkpoint is a level-2 heading with a type tag, our optional comment line, field lines and
free text. This is the Hipocampus format plus the comment line, which Hipocampus ignores:

    ## Competitor pricing [project]
    <!-- hipo id=2026-03-12T14:32:05Z-7f3a notebook=analysis.ipynb cell=7 via=magic tags=q1 -->
    - request: Compare our pricing with the top 5 competitors
    - decisions: recommend a 15% cut on the starter tier
      (a continuation line, indented by two spaces)

    Free text, `### sub-headings`, tables: anything that is not a field line.

Feedback entries use the fields `rule`, `why` and `how-to-apply`. Logs written by Hipocampus
itself (`## [Topic Name] [type]`, no comment line) and hand-written free text parse as well: the
raw log is the source of truth, so nothing in it may become unsearchable.

Parsing (`parse_log`), line by line:
- A line starting with `##` followed by a space, a tab or the end of the line starts a
  checkpoint. Its trailing `[type]` (project, feedback, user, reference) is the type; no tag
  means project. Trailing `#tags` are tags. A title wholly in square brackets loses them.
- Text before the first heading becomes a checkpoint too (titled by its first words), except
  level-1 `# ` lines there, which are the file's header.
- The line right after a heading may be `<!-- hipo key=value ... -->`. Its keys: `id`,
  `notebook`, `cell`, `via` (the front end that wrote it: magic, cli, import, write-back, mcp),
  `model` (for a write-back, the model id of the request), `provider` (for a write-back, the
  SDK that made the calls: `anthropic`, `openai`, `litellm`), `conversation` (for a write-back
  of `%%ask`, the identity of its conversation), `replaces` / `proposes` (the
  id of the checkpoint it corrects, or proposes to: `disk/trust`), `sources` (its lineage: for
  a write-back, the ids of the checkpoints its call was sent, each percent-encoded and joined
  with `,` like tags; a forget of one of them takes this one too, `forget/forgetting`),
  `speaker` (an imported turn's speaker as its source named it: a role such as `user`, or a
  person's name; the title no longer says it, and recall's neighbours ask who spoke), `tags`,
  `title`. Every key is optional and unknown keys are ignored, so older checkpoints (no `via`,
  no `model`, no `sources`) stay valid.
- `- key: value` at column 0 is a field (key: letters, digits, hyphens; stored lower-case);
  following lines indented by two spaces continue it (two spaces removed, joined with "\\n").
  A blank line or any other line ends it. Every other line is free text.
- Headings inside fenced code blocks are not special-cased: a hand-written log with `## ` at
  column 0 inside a fence splits there (nothing is lost; our own writes escape such lines).

Quoting, so that `parse_log(render(cp))` gives `cp` back for any content:
- Comment values are percent-encoded: `%`, whitespace, control characters, `=`, `,`, `<`, `>`,
  `"` and `'` become `%XX` of their UTF-8 bytes (so `-->` can never occur). Tags are encoded
  one by one and joined with `,`. Other characters, non-ASCII included, are written as they are,
  so `notebook=Analyse%20März.ipynb` stays readable.
- The heading shows the title for people and for Hipocampus. When the heading would not parse
  back to the same title (a title in brackets, ending in `#word` or `[project]`, ...), the
  comment also carries `title=`, which wins; likewise `tags=` in the comment wins over heading
  tags.
- A free-text line that would be read as a heading, a field or our comment is written with a
  leading backslash (`\\## not a heading`); so is such a line that already starts with
  backslashes (one more is added). Parsing removes one backslash from a line whose text after
  all its leading backslashes is such a line; other backslashes are left alone (`\\section`).
- Field values continue on lines indented by two spaces, so their lines never need escaping.

Normalisation in `Checkpoint` (so that equality means "same on disk"): line endings become
"\\n"; the title is one stripped line; field values and text are stripped; keys and the type
are lower-case; tags are stripped and empty ones dropped. Lines are split on "\\n" only:
files are read with universal newlines, and other separators (`\\x0b`, `\\u2028`) stay in
their line.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol, TypeVar
from urllib.parse import unquote

from ..errors import HipoError

CHECKPOINT_TYPES = ("project", "feedback", "user", "reference")
TASK_FIELDS = ("request", "analysis", "decisions", "outcome", "references")
FEEDBACK_FIELDS = ("rule", "why", "how-to-apply")
MIN_ID_CHARS = 4  # an id may be given by its end (the random part) from this many characters

_TYPE_SET = frozenset(CHECKPOINT_TYPES)
_KEY_RE = re.compile(r"[A-Za-z0-9-]+\Z")
_FIELD_RE = re.compile(r"- ([A-Za-z0-9-]+):(?:[ \t](.*))?\Z", re.DOTALL)
_COMMENT_RE = re.compile(r"<!--[ \t]*hipo(?:[ \t]+(.*?))?[ \t]*-->[ \t]*\Z", re.DOTALL)
_COMMENT_START_RE = re.compile(r"<!--[ \t]*hipo")
_TOMBSTONE_RE = re.compile(r"<!-- hipo forgotten((?: [a-z]+=[^\s<>]*)+) -->\Z")
_TYPE_TAG_RE = re.compile(r"(?:^|(?<=\s))\[([A-Za-z]+)\]\Z")
_HASH_TAG_RE = re.compile(r"(?:^|(?<=\s))#([^\s#]+)\Z")
_BRACKETED_RE = re.compile(r"\[([^\[\]]*)\]\Z")
_ENCODE_RE = re.compile(r"[%\s\x00-\x1f\x7f=,<>\"']")
_NEWLINES_RE = re.compile(r"\r\n?")
_TITLE_WORDS = 8
_TITLE_CHARS = 80


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """One checkpoint. Construct it freely: the values are normalised (see the module doc)."""

    title: str
    type: str = "project"
    fields: tuple[tuple[str, str], ...] = ()  # ordered (key, value) pairs of "- key: value" lines
    text: str = ""  # free text (anything not a field line), stripped
    id: str | None = None
    tags: tuple[str, ...] = ()
    notebook: str | None = None
    cell: str | None = None
    via: str | None = None  # front end that wrote it: magic, cli, import, write-back, mcp
    model: str | None = None  # model id of the request a write-back came from
    provider: str | None = None  # the SDK that made a write-back's calls: anthropic, openai, ...
    conversation: str | None = None  # a write-back of %%ask: its conversation's identity
    speaker: str | None = None  # an imported turn's speaker ("user", "assistant", a name)
    replaces: str | None = None  # the id of the checkpoint this one corrects (supersedes)
    proposes: str | None = None  # the id of the user's checkpoint an agent proposes to correct
    # Lineage: the ids of the checkpoints the call this one was made from was sent (a
    # write-back's recalled notes); a forget of one of them takes this one as well.
    sources: tuple[str, ...] = ()
    date: str | None = dataclasses.field(default=None, compare=False)  # ISO date of its raw log
    line: int = dataclasses.field(default=0, compare=False)  # 1-based line of its "## " heading
    # True when a write found this very checkpoint already in its day's log and wrote nothing
    # (`intake/writing`: nothing twice); then id, date and line are the one already there.
    repeated: bool = dataclasses.field(default=False, compare=False)
    # True (with `repeated`) when the user forgot this content: nothing was written, and id and
    # date are the forgotten checkpoint's (`forget/ledger`: a forget is remembered).
    forgotten: bool = dataclasses.field(default=False, compare=False)
    # What redaction replaced when this checkpoint was made, (kind, count) in order: for the
    # writer's one-line report (`render.redacted_note`); never written to the log.
    redacted: tuple[tuple[str, int], ...] = dataclasses.field(default=(), compare=False)

    def __post_init__(self) -> None:
        kind = self.type.strip().lower()
        if kind not in _TYPE_SET:
            raise ValueError(
                f"unknown checkpoint type {self.type!r}: use one of {', '.join(CHECKPOINT_TYPES)}"
            )
        fields = []
        for key, value in self.fields:
            if not _KEY_RE.match(key):
                raise ValueError(f"field name {key!r} must be letters, digits and hyphens")
            fields.append((key.lower(), _NEWLINES_RE.sub("\n", value).strip()))
        set_value = object.__setattr__
        set_value(self, "type", kind)
        set_value(self, "title", " ".join(_NEWLINES_RE.sub("\n", self.title).split("\n")).strip())
        set_value(self, "fields", tuple(fields))
        set_value(self, "text", _NEWLINES_RE.sub("\n", self.text).strip())
        set_value(self, "tags", tuple(t for t in (tag.strip() for tag in self.tags) if t))
        sources = (source.strip() for source in self.sources)
        set_value(self, "sources", tuple(dict.fromkeys(source for source in sources if source)))

    def field(self, name: str) -> str | None:
        """The value of the first field called `name` (case-insensitive), or None."""
        name = name.lower()
        for key, value in self.fields:
            if key == name:
                return value
        return None

    get = field

    def search_text(self) -> str:
        """Title, tags, fields and free text: what the search index stores for this checkpoint."""
        parts = [self.title]
        if self.tags:
            parts.append(" ".join(self.tags))
        parts.extend(f"{key}: {value}" for key, value in self.fields)
        if self.text:
            parts.append(self.text)
        return "\n".join(parts)


@dataclasses.dataclass(frozen=True)
class Tombstone:
    """What is left of a checkpoint the user forgot: one line in its raw log, with its id, the
    day it was forgotten and why, and no word of its text. Hipocampus reads it as an HTML
    comment (nothing); our parser skips it wherever it stands, so no checkpoint gains it."""

    id: str
    forgotten: str  # ISO date of the forget
    reason: str = ""

    def line(self) -> str:
        reason = f" reason={_encode(self.reason)}" if self.reason else ""
        when = _encode(self.forgotten)
        return f"<!-- hipo forgotten id={_encode(self.id)} date={when}{reason} -->"


def parse_tombstone(line: str) -> Tombstone | None:
    """The tombstone a raw-log line is, or None."""
    match = _TOMBSTONE_RE.match(line.rstrip())
    if not match:
        return None
    meta = _decode_comment(match.group(1))
    if "id" not in meta:
        return None
    reason = unquote(meta.get("reason", ""))
    return Tombstone(unquote(meta["id"]), unquote(meta.get("date", "")), reason)


def tombstones(text: str) -> list[Tombstone]:
    """Every tombstone of a raw log, in file order."""
    found = (parse_tombstone(line) for line in _NEWLINES_RE.sub("\n", text).split("\n"))
    return [stone for stone in found if stone is not None]


def without_comments(text: str) -> str:
    """`text` less its lines that are hipo comments (`<!-- hipo id=... via=... -->`): a node
    that copies checkpoints keeps them for the reader, but their keys and values (ids, notebook
    names, "via", "import") are not words of the memory and must not match a query."""
    return "\n".join(line for line in text.split("\n") if not _COMMENT_RE.match(line.strip()))


def new_id(now: datetime | None = None) -> str:
    """A stable checkpoint id: UTC time to the second and 8 random hex digits, e.g.
    `2026-03-12T14:32:05Z-7f3a09c2`. A naive `now` is taken to be UTC.

    32 random bits, redrawn if this process already issued the id: thousands of checkpoints in
    one second (an import, several kernels) must not share an id. Older 4-digit ids still parse.
    """
    now = datetime.now(UTC) if now is None else now
    if now.tzinfo is not None:
        now = now.astimezone(UTC)
    stamp = f"{now:%Y-%m-%dT%H:%M:%S}Z"
    if _issued.get("stamp") != stamp:
        _issued.clear()
        _issued["stamp"] = stamp
    while True:
        candidate = f"{stamp}-{secrets.token_hex(4)}"
        if candidate not in _issued:
            _issued[candidate] = stamp
            return candidate


_issued: dict[str, str] = {}  # ids handed out in the current second, by this process


class HasId(Protocol):
    """What may be picked by its id: a checkpoint, or a rule (whose id is its checkpoint's)."""

    @property
    def id(self) -> str | None: ...


Identified = TypeVar("Identified", bound=HasId)


def pick_by_id(
    items: Sequence[Identified], wanted: str, *, plural: str, none: str, unknown: str
) -> Identified:
    """The item whose id is `wanted`, or ends with it (its random part, at least MIN_ID_CHARS
    characters, when only one id does): how every front end names a checkpoint or a rule.
    HipoError, one line, for no id (`none`), an id naming several `plural`, or none
    (`unknown`, formatted with `wanted`). Here, beside `new_id`, because an id's shape (its
    random part last) is this module's: the forget and the rules both name things by it."""
    wanted = wanted.strip()
    if not wanted:
        raise HipoError(none)
    exact = [item for item in items if item.id == wanted]
    matches = exact or [
        item for item in items
        if len(wanted) >= MIN_ID_CHARS and item.id and item.id.endswith(wanted)
    ]  # fmt: skip
    if len({item.id for item in matches}) > 1:
        raise HipoError(f"{wanted!r} names {len(matches)} {plural}: give the whole ID")
    if not matches:
        raise HipoError(unknown.format(wanted=wanted))
    return matches[-1]


def parse_title(line: str) -> tuple[str, str, tuple[str, ...]]:
    """Split a heading or `%%remember` line into (title, type, tags).

    `Competitor pricing [project] #pricing #q1` -> ("Competitor pricing", "project",
    ("pricing", "q1")). Type tag and `#tags` are read from the end, in any order; only the last
    known `[type]` counts, so `Notes [draft]` and `A [user] [project]` keep their brackets.
    """
    rest = line.strip()
    kind = None
    tags: list[str] = []
    while rest:
        match = _HASH_TAG_RE.search(rest)
        if match:
            tags.append(match.group(1))
        else:
            match = _TYPE_TAG_RE.search(rest) if kind is None else None
            if not match or match.group(1).lower() not in _TYPE_SET:
                break
            kind = match.group(1).lower()
        rest = rest[: match.start()].rstrip()
    bracketed = _BRACKETED_RE.match(rest)
    if bracketed:  # Hipocampus writes "## [Topic Name] [type]"
        rest = bracketed.group(1).strip()
    return rest, kind or "project", tuple(reversed(tags))


def parse_body(body: str) -> tuple[tuple[tuple[str, str], ...], str]:
    """A `%%remember` cell body -> (fields, free text). Typed text is taken literally: no
    backslash is removed, and headings or comments in it are plain text."""
    return _parse_lines(_NEWLINES_RE.sub("\n", body).split("\n"), unescape=False)


def render(cp: Checkpoint) -> str:
    """The Markdown block of one checkpoint, ending with a newline; always writes `[type]`."""
    heading = f"## {cp.title} [{cp.type}]" if cp.title else f"## [{cp.type}]"
    heading_title, _, heading_tags = parse_title(heading[3:])
    pairs = []
    if cp.id is not None:
        pairs.append(("id", _encode(cp.id)))
    if cp.notebook is not None:
        pairs.append(("notebook", _encode(cp.notebook)))
    if cp.cell is not None:
        pairs.append(("cell", _encode(cp.cell)))
    if cp.via is not None:
        pairs.append(("via", _encode(cp.via)))
    if cp.model is not None:
        pairs.append(("model", _encode(cp.model)))
    if cp.provider is not None:
        pairs.append(("provider", _encode(cp.provider)))
    if cp.conversation is not None:
        pairs.append(("conversation", _encode(cp.conversation)))
    if cp.speaker is not None:
        pairs.append(("speaker", _encode(cp.speaker)))
    if cp.replaces is not None:
        pairs.append(("replaces", _encode(cp.replaces)))
    if cp.proposes is not None:
        pairs.append(("proposes", _encode(cp.proposes)))
    if cp.sources:
        pairs.append(("sources", ",".join(_encode(source) for source in cp.sources)))
    if cp.tags or heading_tags:
        pairs.append(("tags", ",".join(_encode(tag) for tag in cp.tags)))
    if heading_title != cp.title:
        pairs.append(("title", _encode(cp.title)))
    lines = [heading]
    if pairs:
        lines.append("<!-- hipo " + " ".join(f"{key}={value}" for key, value in pairs) + " -->")
    for key, value in cp.fields:
        first, *more = value.split("\n")
        lines.append(f"- {key}: {first}" if first else f"- {key}:")
        lines.extend("  " + line for line in more)
    if cp.text:
        if cp.fields:
            lines.append("")
        lines.extend("\\" + line if _needs_escape(line) else line for line in cp.text.split("\n"))
    return "\n".join(lines) + "\n"


def parse_log(text: str, *, date: str | None = None) -> list[Checkpoint]:
    """Every checkpoint of a raw log, in file order. Never raises on text: anything that is not
    a checkpoint's structure is kept as free text of the checkpoint it falls in."""
    if "\r" in text:
        text = _NEWLINES_RE.sub("\n", text)
    lines = text.split("\n")
    checkpoints: list[Checkpoint] = []
    start = 0  # index of the current heading, or 0 for the text before the first one
    heading: str | None = None
    for index, line in enumerate(lines):
        if line.startswith("##") and (len(line) == 2 or line[2] in " \t"):
            _collect(checkpoints, heading, lines, start, index, date)
            heading, start = line, index
    _collect(checkpoints, heading, lines, start, len(lines), date)
    return checkpoints


def _collect(
    out: list[Checkpoint],
    heading: str | None,
    lines: list[str],
    start: int,
    end: int,
    date: str | None,
) -> None:
    if heading is None:
        _collect_preamble(out, lines[start:end], date)
        return
    title, kind, tags = parse_title(heading[2:])
    body_start = start + 1
    meta: dict[str, str] = {}
    if body_start < end:
        comment = _COMMENT_RE.match(lines[body_start])
        if comment:
            meta = _decode_comment(comment.group(1) or "")
            body_start += 1
    fields, text = _parse_lines(lines[body_start:end], unescape=True)
    if "tags" in meta:
        tags = tuple(unquote(tag) for tag in meta["tags"].split(","))
    out.append(
        Checkpoint(
            title=unquote(meta["title"]) if "title" in meta else title,
            type=kind,
            fields=fields,
            text=text,
            id=_decoded(meta, "id"),
            tags=tags,
            notebook=_decoded(meta, "notebook"),
            cell=_decoded(meta, "cell"),
            via=_decoded(meta, "via"),
            model=_decoded(meta, "model"),
            provider=_decoded(meta, "provider"),
            conversation=_decoded(meta, "conversation"),
            speaker=_decoded(meta, "speaker"),
            replaces=_decoded(meta, "replaces"),
            proposes=_decoded(meta, "proposes"),
            sources=tuple(unquote(s) for s in meta.get("sources", "").split(",") if s),
            date=date,
            line=start + 1,
        )
    )


def _collect_preamble(out: list[Checkpoint], lines: list[str], date: str | None) -> None:
    """Text before the first heading. Its first line, if a `# ` title, is the file's header."""
    content = (i for i, line in enumerate(lines) if line.strip())
    first = next(content, None)
    if first is not None and lines[first].startswith("# "):
        first = next(content, None)
        if first is not None:  # drop the header, keep what follows it
            lines = lines[first:]
            offset, first = first, 0
    else:
        offset = 0
    if first is None:
        return
    fields, text = _parse_lines(lines, unescape=True)
    if not fields and not text:
        return  # only tombstones
    first = next(i for i, line in enumerate(lines) if line.strip() and not parse_tombstone(line))
    words = lines[first].strip().lstrip("-*>#\\ \t").split()[:_TITLE_WORDS]
    title = " ".join(words)[:_TITLE_CHARS].strip() or "Notes"
    line = offset + first + 1
    out.append(Checkpoint(title=title, fields=fields, text=text, date=date, line=line))


def _parse_lines(lines: list[str], *, unescape: bool) -> tuple[tuple[tuple[str, str], ...], str]:
    fields: list[tuple[str, list[str]]] = []
    text: list[str] = []
    current: list[str] | None = None  # value lines of the field being read
    for line in lines:
        if unescape and line.startswith("<!-- hipo forgotten") and parse_tombstone(line):
            current = None
            continue  # a forgotten checkpoint's tombstone belongs to no checkpoint
        if current is not None and line.startswith("  "):
            current.append(line[2:])
            continue
        if line.startswith("- "):
            match = _FIELD_RE.match(line)
            if match:
                current = [match.group(2) or ""]
                fields.append((match.group(1), current))
                continue
        current = None
        if unescape and line.startswith("\\") and _is_structural(line.lstrip("\\")):
            line = line[1:]
        text.append(line)
    return (
        tuple((key, "\n".join(value)) for key, value in fields),
        "\n".join(text).strip(),
    )


def _is_structural(line: str) -> bool:
    """Would the parser read this line as a heading, a field or our comment?"""
    if line.startswith("##"):
        return len(line) == 2 or line[2] in " \t"
    if line.startswith("- "):
        return _FIELD_RE.match(line) is not None
    return _COMMENT_START_RE.match(line) is not None


def _needs_escape(line: str) -> bool:
    """A free-text line is escaped when it, or its text after leading backslashes, is structural."""
    return _is_structural(line.lstrip("\\"))


def _encode(value: str) -> str:
    return _ENCODE_RE.sub(
        lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode("utf-8")), value
    )


def _decode_comment(payload: str) -> dict[str, str]:
    meta: dict[str, str] = {}
    for token in payload.split():
        key, sep, value = token.partition("=")
        if sep:
            meta.setdefault(key.lower(), value)
    return meta


def _decoded(meta: dict[str, str], key: str) -> str | None:
    value = meta.get(key)
    return None if value is None else unquote(value)
