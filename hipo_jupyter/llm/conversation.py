"""A long `%%ask` conversation, kept in three zones so that it fits the window and loses nothing.

- ANCHOR: the goal, constraints and key identifiers, taken from the first question and never
  rewritten. Its hash is logged with every compaction, so a changed anchor would show.
- SUMMARY: a rolling, keyword-dense summary of the turns folded out of ACTIVE, rewritten on a
  trigger: live tokens over half the window (checked before each call), a sub-task marked done
  (`%ask done`), or a turn over ~8k tokens (a tool result, pasted data, a long reply), whose text
  goes to knowledge/ while the turn keeps a pointer and the few facts extracted from it.
- ACTIVE: the last turns verbatim, sent as the call's messages.

Folding is done by a `Folder` (Claude when available); if it fails, the extractive fold is used
and the compaction event says why. The conversation is a JSON file beside the memory
(`memory/.conversations/<name>-<hash>.json`, by the notebook's identity: `conversation_path`),
rewritten after every exchange, so a restarted kernel continues where it stopped. This module
knows nothing of the SDK or IPython.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import logging
import os
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from hipo_jupyter.memory import HipoError
from hipo_jupyter.memory.disk import (
    CONVERSATIONS_DIR,
    MAX_STATE_BYTES,
    notebook_stem,
    read_json_file,
    redact,
    write_atomic_bytes,
)
from hipo_jupyter.memory.forget import FORGOTTEN_MARK
from hipo_jupyter.memory.tree import (
    count_tokens,
    find_identifiers,
    identifiers,
    slug,
    truncate_to_tokens,
)

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
LARGE_TURN_TOKENS = 8_000  # a turn above this is offloaded to knowledge/
KEEP_TURNS = 4  # ACTIVE keeps the last two exchanges after a compaction
ANCHOR_TOKENS = 1_000
SUMMARY_TOKENS = 2_000
GIST_CHARS = 200
FACTS = 8
EARLIER_IDS = 200

TRIGGER_WINDOW = "live tokens over half the window"
TRIGGER_DONE = "sub-task done"
TRIGGER_LARGE = "a turn over ~8k tokens"

Folder = Callable[[str, Sequence["Turn"], str], str]
"""fold(summary, turns, anchor) -> the new summary, with `turns` merged into it."""


def _identity_of(created: str) -> str:
    return hashlib.sha256(created.encode("utf-8", "replace")).hexdigest()[:12]


def _now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


def gist(text: str, chars: int = GIST_CHARS) -> str:
    """The text on one line, cut at a word boundary to about `chars` characters."""
    flat = " ".join(text.split())
    if len(flat) <= chars:
        return flat
    cut = flat[:chars].rsplit(" ", 1)[0] or flat[:chars]
    return cut + " ..."


def extract_facts(text: str, limit: int = FACTS) -> list[str]:
    """The few lines of a large text worth keeping in view: those carrying identifiers or
    numbers (ids, paths, amounts, dates), in order; the first lines when none do."""
    lines = [line.strip().lstrip("-*>#| \t").strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    facts = [gist(line, 160) for line in lines if find_identifiers(line)]
    return list(dict.fromkeys(facts or [gist(line, 160) for line in lines]))[:limit]


def make_anchor(question: str) -> str:
    """The ANCHOR from the first question: verbatim when short; otherwise its start and every
    identifier of the whole text, so the goal's names and ids are never lost."""
    text = question.strip()
    if count_tokens(text) <= ANCHOR_TOKENS:
        return text
    start = truncate_to_tokens(text, ANCHOR_TOKENS // 2).rstrip()
    ids = identifiers(text)[:120]
    return f"{start}\n[...]\nkey identifiers: {', '.join(ids)}"


@dataclass
class Turn:
    role: Literal["user", "assistant"]
    text: str
    knowledge: str | None = None  # knowledge/ path when the full text was offloaded there
    incomplete: str | None = None  # why a reply is not whole (`llm.replies`); None when it is
    sources: list[str] = field(default_factory=list)  # lineage: checkpoints its call was sent

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)

    def message(self) -> dict[str, Any]:
        """The turn as the next call sends it; an incomplete reply says so, so that the model
        does not build on it as if it were whole."""
        if self.incomplete:
            return {"role": self.role, "content": f"{self.text}\n\n{incomplete_mark(self)}"}
        return {"role": self.role, "content": self.text}


def incomplete_mark(turn: Turn) -> str:
    return f"[hipo: this reply is incomplete: {turn.incomplete}]"


@dataclass(frozen=True)
class CompactionEvent:
    """One rewrite of SUMMARY, as logged: why, tokens before and after, the anchor's hash."""

    at: str
    trigger: str
    tokens_before: int
    tokens_after: int
    anchor_hash: str
    folded: int  # turns folded into SUMMARY by this compaction
    summarizer: str
    note: str = ""  # e.g. why the Claude fold fell back to extractive

    def line(self) -> str:
        text = (
            f"conversation compacted ({self.trigger}): {self.tokens_before:,} -> "
            f"{self.tokens_after:,} tokens, {self.folded} turns folded, anchor {self.anchor_hash}"
        )
        return text + (f"; {self.note}" if self.note else "")


def extractive_fold(
    summary: str, turns: Sequence[Turn], anchor: str = "", *, budget: int = SUMMARY_TOKENS
) -> str:
    """The offline fold: one line per turn (its gist plus the identifiers the gist cut off).

    When the summary outgrows its token budget, the oldest lines go, but their identifiers
    stay on an `- earlier ids:` line, so what anyone would search for verbatim is kept (only a
    window too small for even that line loses the oldest ids).
    """
    bullets: list[str] = []
    earlier: list[str] = []
    for line in summary.splitlines():
        if line.startswith("- earlier ids: "):
            earlier.extend(i.strip() for i in line[len("- earlier ids: ") :].split(","))
        elif line.strip():
            bullets.append(line)
    for turn in turns:
        short = gist(turn.text)
        lost = [i for i in identifiers(turn.text) if i not in short][:12]
        bullets.append(f"- {turn.role}: {short}" + (f" [ids: {', '.join(lost)}]" if lost else ""))

    def text() -> str:
        ids = list(dict.fromkeys(i for i in earlier if i))[-EARLIER_IDS:]
        return "\n".join(bullets + ([f"- earlier ids: {', '.join(ids)}"] if ids else []))

    while len(bullets) > 1 and count_tokens(text()) > budget:
        dropped = find_identifiers(bullets.pop(0))
        earlier.extend(i.value for i in dropped if i.kind != "number")  # a bare 8 says nothing
    while len(earlier) > 1 and count_tokens(text()) > budget:
        earlier.pop(0)
    return text()


@dataclass
class Conversation:
    """The zones of one notebook's conversation, and the log of its compactions."""

    anchor: str = ""
    summary: str = ""
    active: list[Turn] = field(default_factory=list)
    compactions: list[CompactionEvent] = field(default_factory=list)
    folded: int = 0  # turns folded into SUMMARY so far
    pending: str | None = None  # a trigger waiting to be acted on
    created: str = field(default_factory=_now)
    # Who it is, for the write-backs of its turns (`ipython/ask`): random, saved with it; a file
    # saved before it had one is known by its start time.
    identity: str = field(default_factory=lambda: secrets.token_hex(6))
    # Lineage: the checkpoints the calls the anchor and the summary were made from were sent
    # (a forget of one takes that zone: `drop_forgotten`).
    anchor_sources: list[str] = field(default_factory=list)
    summary_sources: list[str] = field(default_factory=list)

    # --- reading -------------------------------------------------------------------------
    @property
    def anchor_hash(self) -> str:
        return hashlib.sha256(self.anchor.encode("utf-8")).hexdigest()[:16] if self.anchor else ""

    @property
    def turns(self) -> int:
        return self.folded + len(self.active)

    def zones_in_prompt(self) -> bool:
        """ANCHOR and SUMMARY go into the prompt once turns were folded out of ACTIVE (before
        that, the first question, which the anchor is made from, is still in ACTIVE)."""
        return self.folded > 0

    def live_tokens(self) -> int:
        """Tokens the conversation adds to a call (approximate; the system block's tags aside)."""
        zones = count_tokens(self.anchor) + count_tokens(self.summary)
        return (zones if self.zones_in_prompt() else 0) + sum(t.tokens for t in self.active)

    def messages(self, question: str) -> list[dict[str, Any]]:
        return [turn.message() for turn in self.active] + [{"role": "user", "content": question}]

    def over_half(self, extra_tokens: int, window: int) -> bool:
        return extra_tokens + self.live_tokens() > window / 2

    # --- changing ------------------------------------------------------------------------
    def add_exchange(
        self,
        question: str,
        reply: str,
        incomplete: str | None = None,
        sources: Sequence[str] = (),
    ) -> None:
        """A question and its reply, appended to ACTIVE; the first question makes the anchor.
        `incomplete` says why the reply is not whole (a cut stream, max_tokens); `sources` are
        the checkpoints the call was sent (its lineage: a forget of one drops the exchange)."""
        if not self.anchor:
            self.anchor = make_anchor(question)
            self.anchor_sources = list(sources)
        self.active.append(Turn("user", question, sources=list(sources)))
        self.active.append(Turn("assistant", reply, incomplete=incomplete, sources=list(sources)))

    def offload_large(self, save: Callable[[str, str], str]) -> list[str]:
        """Move each turn over LARGE_TURN_TOKENS to knowledge/ (`save(title, text) -> path`);
        the turn keeps a pointer and the facts extracted from it. Returns the paths."""
        paths = []
        for index, turn in enumerate(self.active):
            if turn.knowledge is not None or turn.tokens <= LARGE_TURN_TOKENS:
                continue
            if turn.role == "assistant" and index > 0:  # titled by the question it answers
                title = f"reply: {gist(self.active[index - 1].text, 60)}"
            else:
                title = f"input: {gist(turn.text, 60)}"
            path = save(title, turn.text)
            facts = "\n".join(f"- {fact}" for fact in extract_facts(turn.text))
            turn.text = (
                f"[{turn.tokens:,} tokens moved to {path}; the facts kept here:]\n{facts}"
            ).rstrip()
            turn.knowledge = path
            paths.append(path)
        if paths:
            self.pending = TRIGGER_LARGE
        return paths

    def mark_done(self, note: str = "") -> None:
        """A sub-task is finished: its turns will be folded into SUMMARY (with the note)."""
        self.pending = TRIGGER_DONE
        if note.strip():
            self.summary = (self.summary.rstrip() + f"\n- done: {gist(note)}").strip()

    def compact(
        self,
        trigger: str,
        fold: Folder | None = None,
        *,
        fold_name: str = "extractive",
        extra_tokens: int = 0,
        window: int | None = None,
    ) -> CompactionEvent | None:
        """Fold the older turns of ACTIVE into SUMMARY; None when there is nothing to fold.

        ACTIVE keeps the last two exchanges, one after a sub-task is done, and for the window
        trigger as many as fit in a quarter of the window (none if even one does not). SUMMARY
        is held to an eighth of the window (at most SUMMARY_TOKENS), so that a compaction
        always brings the conversation well under the trigger.
        """
        keep = {TRIGGER_DONE: 2}.get(trigger, KEEP_TURNS)
        budget = min(SUMMARY_TOKENS, window // 8) if window else SUMMARY_TOKENS
        if trigger == TRIGGER_WINDOW and window:
            while keep and sum(t.tokens for t in self.active[-keep:]) + extra_tokens > window / 4:
                keep -= 2
        cut = max(len(self.active) - keep, 0)
        cut -= cut % 2  # ACTIVE must start with a question
        to_fold, kept = self.active[:cut], self.active[cut:]
        self.pending = None
        if not to_fold:
            return None
        before = self.live_tokens() + extra_tokens
        note, used = "", fold_name
        offline = functools.partial(extractive_fold, budget=budget)
        try:
            summary = (fold or offline)(self.summary, to_fold, self.anchor)
            if not summary.strip():
                raise ValueError("empty summary")
        except Exception as error:  # a remote folder may fail in any way; nothing is lost
            note, used = f"{fold_name} fold failed ({error}); used extractive", "extractive"
            summary = offline(self.summary, to_fold, self.anchor)
        self.summary = summary.strip()
        folded_sources = (source for turn in to_fold for source in turn.sources)
        self.summary_sources = list(dict.fromkeys([*self.summary_sources, *folded_sources]))
        self.active = kept
        self.folded += len(to_fold)
        event = CompactionEvent(
            at=_now(),
            trigger=trigger,
            tokens_before=before,
            tokens_after=self.live_tokens() + extra_tokens,
            anchor_hash=self.anchor_hash,
            folded=len(to_fold),
            summarizer=used,
            note=note,
        )
        self.compactions.append(event)
        log.info("hipo: %s", event.line())
        return event

    # --- on disk -------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """What is saved: every text redacted, since a secret typed into a question must not
        reach the disk (the live conversation in memory is left as the user wrote it)."""
        data = _redacted(asdict(self))
        data["version"] = FORMAT_VERSION
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Conversation:
        """A conversation from a dict already checked against `Conversation`'s own fields
        (`load`: `shape_problem`); unknown keys are ignored."""
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unknown conversation format {data.get('version')!r}")
        return cls(
            anchor=data.get("anchor", ""),
            summary=data.get("summary", ""),
            active=[_known(Turn, turn) for turn in data.get("active", [])],
            compactions=[_known(CompactionEvent, event) for event in data.get("compactions", [])],
            folded=int(data.get("folded", 0)),
            pending=data.get("pending"),
            created=data.get("created") or _now(),
            identity=data.get("identity") or _identity_of(data.get("created") or ""),
            anchor_sources=list(data.get("anchor_sources") or []),
            summary_sources=list(data.get("summary_sources") or []),
        )

    def save(self, path: Path) -> None:
        """Write atomically: a crash mid-write leaves the previous file, never half of one."""
        if path.parent.is_symlink():
            raise OSError(errno.ELOOP, f"{CONVERSATIONS_DIR} is a symbolic link; not written")
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=1)
        write_atomic_bytes(path, text.encode("utf-8", "surrogatepass"))

    @classmethod
    def load(cls, path: Path) -> Conversation | None:
        """The saved conversation, or None if there is none. A damaged file (not a regular
        file, too large, not bounded JSON, a value of the wrong type) raises ValueError naming
        it; the caller sets it aside."""
        shown = f"{CONVERSATIONS_DIR}/{path.name}"
        if path.parent.is_symlink():  # the folder may lead anywhere: neither read nor written
            raise ValueError(f"{CONVERSATIONS_DIR} is a symbolic link; not used")
        try:
            data = read_json_file(path, Conversation, shown=shown, limit=MAX_STATE_BYTES)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise ValueError(f"{shown} cannot be read: {error.strerror or error}") from None
        except HipoError as error:
            raise ValueError(f"{error} (not a conversation file)") from None
        try:
            return cls.from_dict(data)
        except ValueError as error:
            raise ValueError(f"{shown}: {error}") from None


def _known(kind: type, data: dict[str, Any]) -> Any:
    """`kind(**data)` with only the keys `kind` has (a newer version may add some)."""
    names = {f.name for f in fields(kind)}
    return kind(**{key: value for key, value in data.items() if key in names})


def conversation_path(root: Path, notebook: str | None) -> Path:
    """Where a notebook's conversation is kept, by its identity (`notebook`: its path relative
    to the root, or its kernel's name): `notebook_stem`, a readable name and a hash, so that
    notebooks whose names slug alike never share one; consoles share `console.json`."""
    return Path(root) / CONVERSATIONS_DIR / f"{notebook_stem(notebook)}.json"


def adopt_legacy(root: Path, notebook: str | None, path: Path) -> Path | None:
    """Move a conversation kept under the name a version before issue 43 gave it (the slug of
    the notebook's name: "report.ipynb" and "The report.ipynb" were both `report.json`) to
    `path`, when it can only be this notebook's: no file at `path` yet, and no other notebook
    beside this one whose name slugs alike. Returns the old path when it was moved; an
    ambiguous old file is left where it is, untouched."""
    if not notebook:
        return None
    relative = Path(notebook.replace("\\", "/"))
    name = slug(relative.stem, max_words=0)
    old = Path(root) / CONVERSATIONS_DIR / f"{name}.json"
    if not name or old == path or os.path.lexists(path) or path.parent.is_symlink():
        return None
    if old.is_symlink() or not old.is_file():
        return None
    folder = relative.parent if relative.is_absolute() else Path(root) / relative.parent
    try:
        alike = [
            entry.name
            for entry in os.scandir(folder)
            if entry.name.endswith(".ipynb") and slug(Path(entry.name).stem, max_words=0) == name
        ]
    except OSError:
        return None
    if alike != [relative.name]:
        return None
    os.replace(old, path)
    return old


def archive(path: Path) -> Path | None:
    """Set a finished conversation aside (`name-YYYYMMDDTHHMMSS.json`) instead of deleting it."""
    if path.parent.is_symlink() or not os.path.lexists(path):  # a FIFO or a link is moved too
        return None
    stamp = datetime.now().strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.stem}-{stamp}{path.suffix}")
    counter = 2
    while target.exists():
        target = path.with_name(f"{path.stem}-{stamp}-{counter}{path.suffix}")
        counter += 1
    os.replace(path, target)
    return target


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def drop_forgotten(
    conversation: Conversation,
    scrub: Callable[[str], str],
    forgotten_ids: Collection[str] = (),
) -> bool:
    """Obey a forget in a conversation kept alive by a kernel: each exchange whose call was
    sent a forgotten checkpoint (`Turn.sources`, its lineage) is dropped, as is the anchor or
    summary made from one; the anchor, the summary and every turn left go through `scrub`
    (`ForgetLedger.scrubber`: a line or value the forgotten checkpoint's keyed hashes find is
    replaced), so nothing forgotten is sent or saved again. Called at the start of each call
    and before each save; True when anything changed."""
    forgotten = set(forgotten_ids)
    kept = [turn for turn in conversation.active if not forgotten & set(turn.sources)]
    changed = len(kept) != len(conversation.active)
    conversation.active = kept
    if forgotten & set(conversation.anchor_sources):
        conversation.anchor, conversation.anchor_sources, changed = FORGOTTEN_MARK, [], True
    if forgotten & set(conversation.summary_sources):
        conversation.summary, conversation.summary_sources, changed = FORGOTTEN_MARK, [], True
    for turn in conversation.active:
        text = scrub(turn.text)
        changed, turn.text = changed or text != turn.text, text
    anchor, summary = scrub(conversation.anchor), scrub(conversation.summary)
    changed = changed or (anchor, summary) != (conversation.anchor, conversation.summary)
    conversation.anchor, conversation.summary = anchor, summary
    return changed
