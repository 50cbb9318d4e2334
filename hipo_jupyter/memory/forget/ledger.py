"""The forget ledger: what the user forgot or superseded, published to every holder of memory.

A forget rewrites the raw log in one process, but memory is also held alive elsewhere: a
kernel's `%%ask` conversation and its pinned Layer 1, the Jupyter server's open memories, the
sidebar, a later import of the same transcript, a notebook run again. So the engine keeps one
small durable record, `memory/.forgotten.json`, that any process reads cheaply (a stat, parsed
again only when it changed), and every holder obeys before its next use:

- `generation` moves with every forget and every correction in force; a holder remembers the
  generation it last saw and asks `since(generation)` at the start of each call.
- each forget event keeps what identifies the content, never the text: keyed hashes (HMAC with
  the memory's own key, `memory/.forget-key`, made once and kept in the root) of its content
  as a whole (`content_key`: a re-run, a re-import or a teammate's copy of the same note is
  not written again; `copy_key`: a team row of the same title and body, which team recall
  leaves out) and of its pieces (title, lines, field values), which a holder looks for in what
  it keeps (`scrubber`: a whole line or field value, never a word found elsewhere) and recall
  leaves out while the forget is `pending`. What was made from the note is found by lineage
  (the `sources` of a checkpoint or a conversation turn), not by its words.
- a forget is written `pending` before the raw log is touched and `done` after its last step:
  a forget killed at any point is finished by running it again, and until then recall leaves
  its text out (`Hidden`).
- the user may say it again: a deliberate write of forgotten content by the user
  (`trust.says_again`) marks its event `said again`, hashes dropped, and is written.
- damage is said, never guessed around: the ledger is read through the bounded typed reader
  (`disk/jsonread`), and a ledger of the wrong shape, or a key missing or damaged while the
  ledger holds forgets, is one line (`LedgerDamaged`) for every command that needs it, never
  a traceback, never read as "nothing forgotten", and the key is never made anew over it.
  `hipo check` fails while a tombstone's forget is not in the ledger
  (`views/check.forgets_obeyed`).

Hashes of short pieces can be tested against guesses by whoever holds the key (it is in the
root, beside the memory itself): they keep the text out of the ledger, not out of reach of
someone who already has the folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime

from ..disk.checkpoint import Checkpoint
from ..disk.jsonread import parse_json
from ..disk.layout import MEMORY_DIR
from ..disk.store import Store
from ..errors import HipoError
from ..tree.layer1 import Layer1
from ..words import ledger_words

LEDGER_FILE = f"{MEMORY_DIR}/.forgotten.json"
KEY_FILE = f"{MEMORY_DIR}/.forget-key"
FORMAT_VERSION = 1
MAX_LEDGER_BYTES = 32 * 1024 * 1024
FORGOTTEN_MARK = "[forgotten]"
QUOTE_CHARS = 12  # a line or value this long, found inside another text, is a quote of it
RUN_WORDS = 4  # this many words of the note in a row, in another line, make it a quoted line
RUN = "\u2063run "  # marks a run's piece apart from a line's (an invisible separator)
_HEX_KEY_RE = re.compile(r"[0-9a-f]{64}\Z")
_FIELD_RE = re.compile(r"^[-*]\s*[\w -]{1,40}:\s+(.+)$")
FORGET, CORRECT = "forget", "correct"
PENDING, DONE, SAID_AGAIN = "pending", "done", "said again"
RESTORE = ("restore memory/.forgotten.json and memory/.forget-key from a backup; moving the "
           "ledger aside cancels every forget in it")  # fmt: skip


class LedgerDamaged(HipoError):
    """The forget ledger or its key cannot be used: forgets cannot be obeyed, so nothing that
    needs them goes on as if nothing were forgotten. One line, saying how to restore."""


def normal(text: str) -> str:
    """`text` on one line with single spaces: how pieces are hashed on both sides."""
    return " ".join(text.split())


def copy_text(title: str, body: str) -> str:
    """A team row's title and body (`team/rows`: its field lines, then its free text) as the
    copy hash is taken of them."""
    return f"{normal(title)}\x1f{normal(body)}"


def team_body(checkpoint: Checkpoint) -> str:
    """The body a team row of `checkpoint` carries (as `team/rows` builds it)."""
    parts = [f"{key}: {value}" for key, value in checkpoint.fields]
    return "\n".join([*parts, checkpoint.text] if checkpoint.text else parts)


def content_text(checkpoint: Checkpoint) -> str:
    """What makes two checkpoints the same content wherever they were written: title, fields
    and free text (not the id, day, notebook, cell or front end)."""
    fields = "\n".join(f"{key}: {normal(value)}" for key, value in checkpoint.fields)
    return f"{normal(checkpoint.title)}\n{fields}\n{normal(checkpoint.text)}"


@dataclass(frozen=True)
class ForgetEvent:
    """One forget or correction, as the ledger keeps it (hashes only, no text)."""

    generation: int
    kind: str  # FORGET or CORRECT
    id: str  # the checkpoint forgotten, or the one a correction superseded
    at: str = ""
    day: str = ""  # the raw log of a forgotten checkpoint
    state: str = DONE  # a forget is PENDING until every step is done
    by: str = ""  # a correction: the correcting checkpoint's id
    content: str = ""  # keyed hash of `content_text`
    pieces: tuple[str, ...] = field(default_factory=tuple)  # keyed hashes of its pieces
    copy: str = ""  # keyed hash of its team row's title and body (`copy_text`)

    @classmethod
    def from_json(cls, data: object, where: str = "event") -> ForgetEvent:
        """One event from the ledger's JSON, its shape checked: LedgerDamaged names what
        is wrong (an event that cannot be read is a forget that cannot be obeyed)."""
        if not isinstance(data, dict):
            raise LedgerDamaged(f"{LEDGER_FILE}: {where} is not an object; {RESTORE}")
        text = {"kind": FORGET, "at": "", "day": "", "state": DONE, "by": "", "content": "",
                "copy": ""}  # fmt: skip
        for key in ("id", *text):
            value = data.get(key, text.get(key))
            if not isinstance(value, str) or len(value) > 4096:
                raise LedgerDamaged(f"{LEDGER_FILE}: {where}.{key} is not text; {RESTORE}")
        generation, pieces = data.get("generation", 0), data.get("pieces", [])
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            raise LedgerDamaged(f"{LEDGER_FILE}: {where}.generation is not a count; {RESTORE}")
        if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
            raise LedgerDamaged(f"{LEDGER_FILE}: {where}.pieces is not a list of hashes; {RESTORE}")
        return cls(generation=generation, pieces=tuple(pieces),
                   **{key: data.get(key, text.get(key)) for key in ("id", *text)})  # fmt: skip


class ForgetLedger:
    """`memory/.forgotten.json` of one root, read again only when its stat changed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._seen: tuple[tuple[int, int, int] | None, tuple[ForgetEvent, ...]] = (None, ())
        self._key: bytes | None = None

    # --- reading ---------------------------------------------------------------------------
    def events(self) -> tuple[ForgetEvent, ...]:
        """Every event, oldest first; () when nothing was ever forgotten or corrected."""
        path = self.store.root / LEDGER_FILE
        try:
            info = os.lstat(path)
        except OSError:
            return ()
        stamp = (info.st_size, info.st_mtime_ns, info.st_ino)
        if self._seen[0] != stamp:
            self._seen = (stamp, self._read())
        return self._seen[1]

    def _read(self) -> tuple[ForgetEvent, ...]:
        """The events on disk; () when there is no ledger; LedgerDamaged, one line, when it
        cannot be read or is not a ledger (too large, truncated, of another shape)."""
        try:
            raw = self.store.read_file(self.store.root / LEDGER_FILE, MAX_LEDGER_BYTES)
        except FileNotFoundError:
            return ()
        except (OSError, HipoError) as error:
            raise LedgerDamaged(f"{LEDGER_FILE} cannot be read ({error}); {RESTORE}") from None
        try:
            data = parse_json(raw, LEDGER_FILE)
        except HipoError as error:
            raise LedgerDamaged(f"{error}; {RESTORE}") from None
        events = data.get("events") if isinstance(data, dict) else None
        if not isinstance(events, list):
            raise LedgerDamaged(f"{LEDGER_FILE}: not a ledger (no list of events); {RESTORE}")
        return tuple(ForgetEvent.from_json(e, f"events[{i}]") for i, e in enumerate(events))

    def generation(self) -> int:
        """A number that moves with every forget and correction (0: none yet)."""
        return max((e.generation for e in self.events()), default=0)

    def since(self, generation: int) -> list[ForgetEvent]:
        """The events a holder that last saw `generation` has not obeyed yet."""
        return [e for e in self.events() if e.generation > generation]

    def pending(self) -> list[ForgetEvent]:
        """Forgets begun and not finished (killed midway): run them again to finish."""
        return [e for e in self.events() if e.kind == FORGET and e.state == PENDING]

    def forgotten(self) -> list[ForgetEvent]:
        """The forgets in force (not those the user said again since)."""
        return [e for e in self.events() if e.kind == FORGET and e.state != SAID_AGAIN]

    def forgotten_ids(self) -> set[str]:
        """Every id the ledger records a forget of (said again or not): what lineage
        (`sources`) is checked against, and what accounts for a tombstone."""
        return {e.id for e in self.events() if e.kind == FORGET}

    def find_pending(self, wanted: str) -> ForgetEvent | None:
        """The pending forget of the id `wanted` (or the one id ending with it)."""
        hits = [e for e in self.pending() if e.id == wanted or e.id.endswith(wanted)]
        return hits[0] if len(hits) == 1 else None

    # --- hashing ---------------------------------------------------------------------------
    def key(self) -> bytes:
        """The memory's own HMAC key, made once (O_EXCL: two processes agree on one), and
        never made anew while the ledger holds forgets (their hashes are of the old key):
        LedgerDamaged says how to restore it instead."""
        if self._key is None:
            path = self.store.root / KEY_FILE
            self.store.ensure_layout()
            if not os.path.lexists(path) and self.events():
                raise LedgerDamaged(f"{KEY_FILE} is missing while {LEDGER_FILE} holds "
                                    f"{len(self.events())} forgets; {RESTORE}")  # fmt: skip
            with contextlib.suppress(FileExistsError):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                try:
                    os.write(fd, os.urandom(32).hex().encode() + b"\n")
                    os.fsync(fd)
                finally:
                    os.close(fd)
            try:
                text = self.store.read_file(path, 1024).decode("ascii", "replace").strip()
            except (OSError, HipoError) as error:
                raise LedgerDamaged(f"{KEY_FILE} cannot be read ({error}); {RESTORE}") from None
            if not _HEX_KEY_RE.match(text):
                raise LedgerDamaged(f"{KEY_FILE} is damaged (not 64 hex digits); {RESTORE}")
            self._key = bytes.fromhex(text)
        return self._key

    def digest(self, text: str) -> str:
        return hmac.new(self.key(), normal(text).encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def content_key(self, checkpoint: Checkpoint) -> str:
        return self.digest("content\x1f" + content_text(checkpoint))

    def copy_key(self, title: str, body: str) -> str:
        return self.digest("copy\x1f" + copy_text(title, body))

    def forgotten_content(self) -> dict[str, ForgetEvent]:
        """Content hash -> its forget: what a write must not bring back."""
        return {e.content: e for e in self.forgotten() if e.content}

    def hides_copy(self) -> Callable[[str, str], bool] | None:
        """Whether a team row's (title, body) is a copy of forgotten content (team recall
        leaves it out); None when nothing of the kind was forgotten."""
        copies = {e.copy for e in self.forgotten() if e.copy}
        if not copies:
            return None
        return lambda title, body: self.copy_key(title, body) in copies

    def scrubber(self, events: Iterable[ForgetEvent]) -> Callable[[str], str]:
        """A function that replaces, in a text a holder keeps, each line or field value whose
        keyed hash is a piece of `events` by FORGOTTEN_MARK (never a word: words are every
        text's)."""
        pieces = {piece for event in events for piece in event.pieces}
        return lambda text: scrub(text, pieces, self.digest) if pieces else text

    def hides(self, events: Sequence[ForgetEvent]) -> Callable[[str], bool]:
        """Whether a text holds a piece of `events` (what recall leaves out while pending)."""
        pieces = {piece for event in events for piece in event.pieces}
        return lambda text: bool(pieces) and holds_piece(text, pieces, self.digest)

    def without_pending(self, layer1: Layer1) -> Layer1:
        """`layer1` with the pieces of a pending forget (killed before ROOT.md was rebuilt)
        replaced in every part: not in any prompt until the forget is run again."""
        pending = self.pending()
        if not pending:
            return layer1
        scrub = self.scrubber(pending)
        parts = tuple(replace(part, text=scrub(part.text)) for part in layer1.parts)
        return replace(layer1, parts=parts)

    # --- writing ---------------------------------------------------------------------------
    def begin_forget(self, checkpoint: Checkpoint, pieces: Iterable[str]) -> ForgetEvent:
        """Record the forget of `checkpoint` as PENDING, before anything is touched."""
        hashed = tuple(sorted({self.digest(piece) for piece in pieces if normal(piece)}))
        copy = self.copy_key(checkpoint.title, team_body(checkpoint))
        content = self.content_key(checkpoint)
        return self._add(FORGET, checkpoint.id or "", day=checkpoint.date or "", state=PENDING,
                         content=content, pieces=hashed, copy=copy)  # fmt: skip

    def said_again(self, event: ForgetEvent) -> None:
        """The user deliberately wrote the content of `event` again: it is no longer kept
        out (its hashes are dropped; the id stays, so its tombstone is still accounted for)."""
        self._update(event.id, lambda old, generation: replace(
            old, state=SAID_AGAIN, content="", pieces=(), copy=""))  # fmt: skip

    def finish_forget(self, checkpoint_id: str) -> None:
        self._update(checkpoint_id, lambda event, generation: replace(
            event, state=DONE, generation=generation))  # fmt: skip

    def corrected(self, replaced_id: str, by_id: str) -> None:
        """A correction in force superseded `replaced_id`: holders of the old text re-read."""
        self._add(CORRECT, replaced_id, by=by_id)

    def _add(self, kind: str, checkpoint_id: str, **values: object) -> ForgetEvent:
        made: list[ForgetEvent] = []

        def add(events: list[ForgetEvent], generation: int) -> list[ForgetEvent]:
            at = datetime.now(UTC).isoformat(timespec="seconds")
            event = ForgetEvent(generation, kind, checkpoint_id, at, **values)  # type: ignore[arg-type]
            made.append(event)
            keep = [e for e in events if not (e.kind == kind == FORGET and e.id == checkpoint_id)]
            return [*keep, event]

        self._change(add)
        return made[0]

    def _update(
        self, checkpoint_id: str, change: Callable[[ForgetEvent, int], ForgetEvent]
    ) -> None:
        self._change(lambda events, generation: [
            change(e, generation) if e.kind == FORGET and e.id == checkpoint_id else e
            for e in events
        ])  # fmt: skip

    def _change(self, change: Callable[[list[ForgetEvent], int], list[ForgetEvent]]) -> None:
        """Read, change and write the ledger under an exclusive lock on the key file, so two
        processes' forgets never lose one another."""
        self.key()
        fd = os.open(self.store.root / KEY_FILE, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            events = list(self._read())
            generation = max((e.generation for e in events), default=0) + 1
            events = change(events, generation)
            data = {"version": FORMAT_VERSION, "events": [_jsonable(e) for e in events]}
            self.store.write_atomic(self.store.root / LEDGER_FILE, json.dumps(data, indent=1))
            self._seen = (None, ())
        finally:
            os.close(fd)


def _jsonable(event: ForgetEvent) -> dict[str, object]:
    data = asdict(event)
    data["pieces"] = list(event.pieces)
    return {key: value for key, value in data.items() if value not in ("", [])}


def _line_candidates(line: str) -> list[str]:
    """A line as a piece may have been taken from it: whole, without its bullet, its value."""
    whole = normal(line)
    bare = whole.lstrip("-*>#| ").strip()
    found = _FIELD_RE.match(whole)
    return [c for c in (whole, bare, found.group(1) if found else "") if c]


def runs(text: str) -> set[str]:
    """Each RUN_WORDS words in a row of `text` (QUOTE_CHARS or longer), as RUN pieces: what
    a line that quotes part of the note shares with it (a gist, a sentence cut short)."""
    words = ledger_words(text)  # the ledger's own words: stored hashes are of their runs
    found = (" ".join(words[i : i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1))
    return {RUN + run for run in found if len(run) >= QUOTE_CHARS}


def _quotes_line(line: str, pieces: set[str], digest: Callable[[str], str]) -> bool:
    """Whether `line` is a piece, has one as its value, or holds a run of the note."""
    if any(digest(c) in pieces for c in _line_candidates(line)):
        return True
    return any(digest(run) in pieces for run in runs(line))


def holds_piece(text: str, pieces: set[str], digest: Callable[[str], str]) -> bool:
    """Whether a line of `text` quotes the note: is, or has as its value, one of its lines or
    values, or holds RUN_WORDS of its words in a row."""
    return any(_quotes_line(line, pieces, digest) for line in text.splitlines())


def scrub(
    text: str, pieces: set[str], digest: Callable[[str], str], quotes: Sequence[str] = ()
) -> str:
    """`text` with each line whose text or value is a piece replaced by FORGOTTEN_MARK, each
    of `quotes` (the note's own lines, QUOTE_CHARS or longer, when the text is at hand) found
    inside a line replaced by it, and a line still holding a run of the note (RUN_WORDS of its
    words in a row) replaced whole; every other character kept. Words alone are never
    replaced: a word of the note is every other text's word too."""
    lines = []
    for line in text.split("\n"):
        if any(digest(c) in pieces for c in _line_candidates(line)):
            lines.append(FORGOTTEN_MARK)
            continue
        for quote in quotes:
            line = line.replace(quote, FORGOTTEN_MARK)
        quoting = any(digest(run) in pieces for run in runs(line))
        lines.append(FORGOTTEN_MARK if quoting else line)
    return "\n".join(lines)


def quote_scrubber(pieces: Iterable[str]) -> tuple[Callable[[str], str], Callable[[str], bool]]:
    """(scrub, holds) for the forget that has the note's `pieces` as text: a line that is one
    of them, or a quote of one QUOTE_CHARS or longer inside a line."""
    plain = {piece if piece.startswith(RUN) else normal(piece) for piece in pieces}
    plain.discard("")
    quotes = sorted((p for p in plain if len(p) >= QUOTE_CHARS and not p.startswith(RUN)),
                    key=len, reverse=True)  # fmt: skip

    def same(text: str) -> str:
        return text if text.startswith(RUN) else normal(text)

    def holds(text: str) -> bool:
        flat = normal(text)
        return holds_piece(text, plain, same) or any(quote in flat for quote in quotes)

    return (lambda text: scrub(text, plain, same, quotes)), holds
