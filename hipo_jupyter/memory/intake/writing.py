"""The write path: what `remember`, `save_knowledge` and `hipo import` put on disk.

A checkpoint is checked once (a `CheckpointDraft`), redacted, appended whole to the raw log of
its day, and indexed (text and vectors) and added to the topics in the same call. The raw log is
the truth: when indexing fails the checkpoint is kept and the index catches up at the next sync.
Events, compaction and the team are the `Memory` facade's business, not this module's.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from ..disk.checkpoint import Checkpoint, new_id, parse_body, parse_log, render
from ..disk.exchanges import pair
from ..disk.redact import redact
from ..disk.store import Store
from ..errors import HipoError
from ..requests import CheckpointDraft, storable
from ..search.indexing import IndexKeeper
from ..tree.chain import CompactionReport
from ..tree.status import read_checkpoints
from ..tree.topic_index import TopicsCache
from ..tree.topics import slug
from ..views.structured import StructuredViews
from .importers import ImportRecord, ImportReport, blocks_by_day

log = logging.getLogger("hipo_jupyter.memory.memory")  # where these warnings always came from


def new_checkpoint(
    draft: CheckpointDraft,
    *,
    notebook: str | None = None,
    cell: str | None = None,
    via: str | None = None,
    model: str | None = None,
) -> Checkpoint:
    """The checkpoint a draft becomes, secrets redacted (not yet dated or written). A draft
    without a title is titled by its first words."""
    fields, text = parse_body(redact(draft.body))
    title_text = redact(draft.title)
    if not title_text:
        title_text = " ".join(text.split()[:8]) or (fields[0][1][:60] if fields else "")
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
            notebook=redact(storable(notebook)) if notebook else None,
            cell=storable(cell) if cell else None,
            via=storable(via) if via else None,
            model=storable(model) if model else None,
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

    def report(self, compaction: CompactionReport | None) -> ImportReport:
        """What `hipo import` tells the user, with the compaction pass that followed."""
        return ImportReport(
            written=sum(self.counts.values()),
            skipped=self.skipped,
            days=tuple(day.isoformat() for day in self.counts),
            compaction=compaction,
            per_day={day.isoformat(): n for day, n in self.counts.items()},
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
    ) -> None:
        self.store = store
        self._indexer = indexer
        self._topics = topics
        self._lock = lock
        self._views = views  # the rules kept for Layer 1, carried over an append

    def checkpoint(self, checkpoint: Checkpoint, day: date) -> Checkpoint:
        """Append `checkpoint` to the raw log of `day`, index and embed it, add its topics;
        returns it with its date and line."""
        with self._lock:
            written = self.store.append_raw(day, render(checkpoint))
            checkpoint = replace(checkpoint, date=day.isoformat(), line=written.line)
            try:
                self._indexer.add_raw_append(day, written, checkpoint)
            except (HipoError, sqlite3.Error, OSError) as exc:
                # The checkpoint is safe in the raw log; the index catches up at the next sync.
                # Raising here would invite the user to write it a second time.
                self._indexer.stale()
                log.warning("hipo: checkpoint saved but not indexed yet: %s", exc)
            self._indexer.embed_raw_append(day, written, checkpoint)
            self._topics.after_append(day, written, checkpoint)
            if self._views is not None:
                self._views.after_append(self.store.raw_path(day).name, written, checkpoint)
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
        block = "\n".join(render(checkpoint) for checkpoint in checkpoints)
        with self._lock:
            written = self.store.append_raw(day, block)
            lines = {c.id: c.line for c in parse_log(written.text_after, date=day.isoformat())}
            relative = self.store.relative(self.store.raw_path(day))
            try:
                self._indexer.refresh_file(relative)
            except (HipoError, sqlite3.Error, OSError) as exc:
                self._indexer.stale()  # the raw log holds them; the index catches up
                log.warning("hipo: checkpoints saved but not indexed yet: %s", exc)
            self._topics.forget()
        return [replace(c, date=day.isoformat(), line=lines.get(c.id)) for c in checkpoints]

    def knowledge(self, title: str, text: str, day: date) -> str:
        """Write a new knowledge/ file (redacted) and index it; returns its relative path."""
        self.store.ensure_layout()
        path = free_knowledge_path(self.store.root / "knowledge", title, day)
        body = f"# {' '.join(title.split())}\n\n{redact(text).strip()}\n"
        with self._lock:
            self.store.write_atomic(path, body)
            relative = self.store.relative(path)
            self._indexer.refresh_file(relative)
        return relative

    def imports(self, records: Sequence[ImportRecord]) -> ImportWrite:
        """Append imported turns to the raw logs of their own dates, one append of whole
        checkpoints per day, each rendered before the first write. A turn whose source id is
        already in its day's log is skipped, so a repeated import adds nothing twice. A user
        turn and the assistant's reply become one checkpoint (`exchanges.pair`)."""
        records = pair(records)
        days = sorted({record.day for record in records})
        with self._lock:
            known = {c.id for c in read_checkpoints(self.store, days) if c.id}
            blocks, counts, skipped = blocks_by_day(records, known)
            for day, block in blocks.items():
                self.store.append_raw(day, block)
        return ImportWrite(counts=counts, skipped=skipped)
