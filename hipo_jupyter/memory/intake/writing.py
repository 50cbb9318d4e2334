"""The write path: what `remember`, `save_knowledge` and `hipo import` put on disk.

A checkpoint is checked once (a `CheckpointDraft`), redacted, appended whole to the raw log of
its day, and indexed (text and vectors) and added to the topics in the same call. The raw log is
the truth: when indexing fails the checkpoint is kept and the index catches up at the next sync.
Events, compaction and the team are the `Memory` facade's business, not this module's.

Nothing twice: a checkpoint whose `identity` is already in its day's log (a notebook run again)
is not appended; the one there comes back marked `repeated`. The test runs under the log's
append lock, against the day's checkpoints parsed once and kept against the log's (size,
mtime): a `%%remember` re-reads nothing while this process is the one writing the day.

A forget is remembered: before each append the write asks the forget room (`forget.kept_out`,
which decides) whether the content or id is one the user forgot; if so nothing is written and
the checkpoint comes back `repeated` and `forgotten`, so the front end says so in one line. A
correction in force is published to the forget ledger too, so holders of the text it
superseded re-read.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from ..disk.checkpoint import Checkpoint, new_id, parse_body, parse_log, render
from ..disk.exchanges import pair
from ..disk.note_writers import NoteWriters
from ..disk.provenance import VIA_WRITE_BACK
from ..disk.redact import Redaction, redact, redact_counted
from ..disk.store import Appended, Store
from ..errors import HipoError
from ..forget import ForgetLedger, kept_out
from ..requests import CheckpointDraft, storable, title_from_text
from ..search.indexing import IndexKeeper
from ..tree.chain import CompactionReport
from ..tree.status import read_checkpoints
from ..tree.topic_index import TopicsCache
from ..tree.topics import slug
from ..views.structured import StructuredViews
from .importers import ImportRecord, ImportReport, blocks_by_day, to_checkpoint

log = logging.getLogger("hipo_jupyter.memory.memory")  # where these warnings always came from

KNOWN_DAYS = 4  # days whose checkpoints' identities are kept in the process (today, an import...)
Stamp = tuple[int, int]
Identity = tuple[object, ...]
EXCHANGE = re.compile(r"\bexchange ([0-9a-f]{16})\b")  # a write-back's calls, as a digest


def identity(checkpoint: Checkpoint) -> Identity:
    """What makes two checkpoints one task written twice (the same cells run again): title, type,
    tags, fields, free text and where it came from (notebook, front end, model). Not the id, the
    day or line, nor the cell: a cell run again gets a new execution count. A write-back's
    `references` field names its cell (and a knowledge/ file, renamed when written again): a
    write-back is the same one when its exchange (the digest of its calls' requests and
    replies, `exchange <16 hex>` in its references) is, whoever wrote its fields, else when
    its other fields are."""
    fields = checkpoint.fields
    if checkpoint.via == VIA_WRITE_BACK:
        exchange = EXCHANGE.search(checkpoint.field("references") or "")
        if exchange:
            return ("exchange", exchange.group(1), checkpoint.notebook, checkpoint.model)
        fields = tuple((key, value) for key, value in fields if key != "references")
    return (
        checkpoint.title,
        checkpoint.type,
        checkpoint.tags,
        fields,
        checkpoint.text,
        checkpoint.notebook,
        checkpoint.via,
        checkpoint.model,
    )


def new_checkpoint(
    draft: CheckpointDraft,
    *,
    notebook: str | None = None,
    cell: str | None = None,
    via: str | None = None,
    model: str | None = None,
    provider: str | None = None,
    conversation: str | None = None,
    sources: Sequence[str] = (),
) -> Checkpoint:
    """The checkpoint a draft becomes, secrets redacted (not yet dated or written). A draft
    without a title is titled by its first words. `sources`: its lineage (the checkpoints its
    call was sent, for a write-back)."""
    body, title = redact_counted(draft.body), redact_counted(draft.title)
    fields, text = parse_body(body.text)
    title_text = title.text
    place = redact_counted(storable(notebook)) if notebook else Redaction("")
    redacted = body + title + place
    if not title_text:
        title_text = title_from_text(text or (fields[0][1] if fields else ""))
    if not fields and not text.strip():
        raise HipoError("a checkpoint needs a body: '- request: ...' lines or free text")
    try:
        return Checkpoint(
            title=title_text,
            type=draft.type,
            fields=fields,
            text=text,
            id=new_id(),
            tags=draft.tags,
            notebook=place.text or None,
            cell=storable(cell) if cell else None,
            via=storable(via) if via else None,
            model=storable(model) if model else None,
            provider=storable(provider) if provider else None,
            conversation=storable(conversation) if conversation else None,
            replaces=draft.replaces,
            proposes=draft.proposes,
            sources=tuple(storable(source) for source in sources if source),
            redacted=tuple(redacted.counts.items()),
        )
    except ValueError as exc:  # the dataclass validates keys and type
        raise HipoError(f"not a valid checkpoint: {exc}") from None


def free_knowledge_path(folder: Path, title: str, day: date) -> Path:
    """knowledge/<day>-<slug of the title>.md, with a counter when that name is taken: an
    offloaded text never overwrites another."""
    stem = f"{day.isoformat()}-{slug(title, max_words=6) or 'note'}"
    path = folder / f"{stem}.md"
    counter = 2
    while path.exists():
        path = folder / f"{stem}-{counter}.md"
        counter += 1
    return path


@dataclass(frozen=True)
class ImportWrite:
    """What an import appended: turns per day, and turns skipped as already there."""

    counts: dict[date, int]
    skipped: int
    forgotten: int = 0  # turns the user forgot, kept out
    redacted: dict[str, int] = field(default_factory=dict)  # kind -> secrets replaced

    @classmethod
    def merged(cls, writes: Iterable[ImportWrite]) -> ImportWrite:
        """The writes of an import made in batches, as one."""
        counts: dict[date, int] = {}
        redacted: dict[str, int] = {}
        skipped = forgotten = 0
        for write in writes:
            for day, count in write.counts.items():
                counts[day] = counts.get(day, 0) + count
            for kind, count in write.redacted.items():
                redacted[kind] = redacted.get(kind, 0) + count
            skipped, forgotten = skipped + write.skipped, forgotten + write.forgotten
        return cls(
            counts=dict(sorted(counts.items())),
            skipped=skipped,
            forgotten=forgotten,
            redacted=redacted,
        )

    def report(self, compaction: CompactionReport | None) -> ImportReport:
        """What `hipo import` tells the user, with the compaction pass that followed."""
        return ImportReport(
            written=sum(self.counts.values()),
            skipped=self.skipped,
            days=tuple(day.isoformat() for day in self.counts),
            compaction=compaction,
            per_day={day.isoformat(): n for day, n in self.counts.items()},
            forgotten=self.forgotten,
            redacted=self.redacted,
        )


class Writer:
    """Writes into one memory root, under the root's lock, keeping index and topics in step."""

    def __init__(
        self,
        store: Store,
        indexer: IndexKeeper,
        topics: TopicsCache,
        lock: threading.RLock,
        views: StructuredViews | None = None,
        forgotten: ForgetLedger | None = None,
    ) -> None:
        self.store = store
        self._forgotten = forgotten or ForgetLedger(store)
        self._indexer = indexer
        self._topics = topics
        self._lock = lock
        self._views = views  # the rules kept for Layer 1, carried over an append
        # day -> (its log's stamp, identity -> the first checkpoint of the log with it)
        self._known: dict[date, tuple[Stamp, dict[Identity, Checkpoint]]] = {}

    def _known_in(self, day: date, data: bytes, stamp: Stamp) -> dict[Identity, Checkpoint]:
        """The identities of the checkpoints in the log of `day` (its bytes `data` and stamp
        under the append lock), parsed only when the log is not as this process left it."""
        held = self._known.get(day)
        if held is None or held[0] != stamp:
            by_identity: dict[Identity, Checkpoint] = {}
            for found in parse_log(data.decode("utf-8", errors="replace"), date=day.isoformat()):
                by_identity.setdefault(identity(found), found)
            held = (stamp, by_identity)
            self._known[day] = held
            for old in sorted(self._known)[:-KNOWN_DAYS]:
                del self._known[old]
        return held[1]

    def _appended(self, day: date, stamp: Stamp, checkpoints: Sequence[Checkpoint]) -> None:
        """The log of `day` now also holds `checkpoints` (dated and lined), at `stamp`."""
        held = self._known.get(day)
        if held is not None:
            for checkpoint in checkpoints:
                held[1].setdefault(identity(checkpoint), checkpoint)
            self._known[day] = (stamp, held[1])

    def checkpoint(self, checkpoint: Checkpoint, day: date) -> Checkpoint:
        """Append `checkpoint` to the raw log of `day`, index and embed it, add its topics;
        returns it with its date and line. When the log holds the same checkpoint already
        (`identity`), nothing is written and that one is returned, `repeated`; when the user
        forgot it, nothing is written either (`forget.kept_out`)."""
        refused = kept_out(self._forgotten, checkpoint)
        if refused is not None:
            return refused
        key = identity(checkpoint)
        there: list[Checkpoint] = []

        def unless_there(data: bytes, stamp: Stamp) -> str | None:
            found = self._known_in(day, data, stamp).get(key)
            if found is not None:
                there.append(found)
                return None
            return render(checkpoint)

        def index_it(written: Appended) -> None:  # under the log's lock: appends' order
            dated = replace(checkpoint, date=day.isoformat(), line=written.line)
            self._index_step(lambda: self._indexer.add_raw_append(day, written, dated))

        with self._lock:
            written = self.store.append_raw_composed(day, unless_there, then=index_it)
            if written is None:
                return replace(there[0], repeated=True)
            checkpoint = replace(checkpoint, date=day.isoformat(), line=written.line)
            self._appended(day, written.stamp_after, [checkpoint])
            self._indexer.embed_raw_append(day, written, checkpoint)
            self._topics.after_append(day, written, checkpoint)
            if self._views is not None:
                self._views.after_append(self.store.raw_path(day).name, written, checkpoint)
        if checkpoint.replaces and checkpoint.id:
            self._forgotten.corrected(checkpoint.replaces, checkpoint.id)
        return checkpoint

    def many(
        self,
        pieces: Sequence[tuple[str, str]],
        *,
        today: date,
        on: str | date | None = None,
        notebook: str | None = None,
        via: str | None = None,
    ) -> tuple[date, list[Checkpoint]]:
        """(day, checkpoints) of `Memory.remember_all`: every (title, body) checked and made
        before anything is written, then `checkpoints` appends them all at once."""
        drafts = [CheckpointDraft.parse(title, body, on=on) for title, body in pieces]
        made = [new_checkpoint(draft, notebook=notebook, via=via) for draft in drafts]
        day = drafts[0].day if drafts and drafts[0].day else today
        return day, self.checkpoints(made, day)

    def checkpoints(self, checkpoints: Sequence[Checkpoint], day: date) -> list[Checkpoint]:
        """Append many checkpoints to the raw log of `day` in ONE append (all or nothing), then
        index that log once: linear in their size, where one `checkpoint` call each re-reads
        the growing log every time. Returns them with their date and line."""
        if not checkpoints:
            return []
        refused = {i: r for i, c in enumerate(checkpoints)
                   if (r := kept_out(self._forgotten, c)) is not None}  # fmt: skip
        if refused:
            rest = iter(self.checkpoints([c for i, c in enumerate(checkpoints)
                                          if i not in refused], day))  # fmt: skip
            return [refused[i] if i in refused else next(rest) for i in range(len(checkpoints))]
        there: dict[int, Checkpoint] = {}  # position -> the one already in the log (or batch)

        def new_ones(data: bytes, stamp: Stamp) -> str | None:
            known = dict(self._known_in(day, data, stamp))
            fresh = []
            for position, checkpoint in enumerate(checkpoints):
                key = identity(checkpoint)
                if key in known:
                    there[position] = known[key]
                else:
                    known[key] = checkpoint
                    fresh.append(render(checkpoint))
            return "\n".join(fresh) if fresh else None

        def index_it(written: Appended) -> None:  # under the log's lock: appends' order
            self._index_step(lambda: self._indexer.replace_raw_log(day, written))

        with self._lock:
            written = self.store.append_raw_composed(day, new_ones, then=index_it)
            if written is None:
                return [replace(there[i], repeated=True) for i in range(len(checkpoints))]
            lines = {c.id: c.line for c in parse_log(written.text_after, date=day.isoformat())}
            self._indexer.embed_raw_log(day, written)
            self._topics.forget()
            made = {
                i: replace(c, date=day.isoformat(), line=lines.get(c.id) or 0)
                for i, c in enumerate(checkpoints)
                if i not in there
            }
            self._appended(day, written.stamp_after, list(made.values()))
            known = self._known.get(day, ((0, 0), {}))[1]
            return [
                made[i] if i in made else replace(known.get(identity(c), there[i]), repeated=True)
                for i, c in enumerate(checkpoints)
            ]

    def _index_step(self, step: Callable[[], object]) -> None:
        """The text index's step for an append; a failure leaves the index stale (the next
        sync catches up), never the write undone: the checkpoints are safe in the raw log, and
        raising here would invite the user to write them a second time."""
        try:
            step()
        except (HipoError, sqlite3.Error, OSError) as exc:
            self._indexer.stale()
            log.warning("hipo: checkpoint saved but not indexed yet: %s", exc)

    def knowledge(self, title: str, text: str, day: date, *, via: str | None = None) -> str:
        """Write a new knowledge/ file (redacted) and index it; returns its relative path. A
        writer other than the user (`via`) is recorded as the note's first (`note_writers`)."""
        self.store.ensure_layout()
        path = free_knowledge_path(self.store.root / "knowledge", title, day)
        body = f"# {' '.join(title.split())}\n\n{redact(text).strip()}\n"
        with self._lock:
            relative = self.store.relative(path)
            writers = NoteWriters(self.store.root)
            record = writers.wrote(relative, via)
            if record is not None:
                self.store.write_atomic(writers.path, record)
            self.store.write_atomic(path, body)
            self._indexer.refresh_file(relative)
        return relative

    def imports(self, records: Sequence[ImportRecord]) -> ImportWrite:
        """Append imported turns to the raw logs of their own dates, one append of whole
        checkpoints per day, each rendered before the first write. A turn whose source id is
        already in its day's log is skipped, so a repeated import adds nothing twice. A user
        turn and the assistant's reply become one checkpoint (`exchanges.pair`)."""
        records = pair(records)
        forgotten = 0
        if self._forgotten.forgotten():  # redacted and hashed only when something was forgotten
            kept = [record for record in records
                    if kept_out(self._forgotten, to_checkpoint(record)) is None]  # fmt: skip
            forgotten, records = len(records) - len(kept), kept
        days = sorted({record.day for record in records})
        with self._lock:
            known = {c.id for c in read_checkpoints(self.store, days) if c.id}
            redacted: dict[str, int] = {}
            blocks, counts, skipped = blocks_by_day(records, known, redacted=redacted)
            for day, block in blocks.items():
                self.store.append_raw(day, block)
        return ImportWrite(counts, skipped, forgotten, redacted)
