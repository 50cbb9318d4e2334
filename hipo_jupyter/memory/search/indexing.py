"""Keeping the text index and the vectors in step with the Markdown files, which are the truth.

The files are turned into `Document`s here (a raw log: one per checkpoint; a node: one; a
knowledge file: one), re-sent to the index when their hash changed and dropped when they are
gone (`sync`). A checkpoint just appended is added to the text index at once, still under the
raw log's lock, so the index follows the appends' order whichever process wrote, and its vector
handed to the background embedder, which a recall waits for, so recall never lags a write
(`add_raw_append`, `replace_raw_log`, `embed_raw_append`). Whichever process wrote last, the
index can always be rebuilt from the files (`rebuild`). In a folder this process cannot write,
the index is built in memory instead, and a warning says once that it is not kept.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import MemoryConfig
from ..disk.checkpoint import Checkpoint, parse_log, without_comments
from ..disk.exchanges import index_reply, is_exchange
from ..disk.nodes import parse_node
from ..disk.note_writers import UNKNOWN, NoteWriters
from ..disk.periods import period_start
from ..disk.provenance import VIA_PHRASES, provenance_text
from ..disk.store import Appended, Store, decode_markdown, raw_log_day, sha256
from ..disk.trust import writer_of, writer_of_provenance
from ..errors import HipoError, ParseError, PathOutsideRootError
from .contract import BACKENDS, Document, SearchIndex, document_id
from .fts5 import memory_index, open_fts5
from .semantic import SemanticIndex

if TYPE_CHECKING:
    from .vectors import VectorHit  # numpy: imported only with the extra

log = logging.getLogger(__name__)
_NO_ROOM = ("disk i/o error", "database or disk is full", "no space left", "quota exceeded")


def cannot_save(error: BaseException) -> bool:
    """Whether `error` says the index cannot be written here at all (a full disk, a quota, an
    I/O error): then reading goes on from an index held in memory, as for a read-only folder."""
    for cause in (error, error.__cause__):
        if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            return True
        if cause is not None and any(words in str(cause).lower() for words in _NO_ROOM):
            return True
    return False


Progress = Callable[[int, int, str], None]
NODE_KINDS = ("daily", "weekly", "monthly")


def open_index(index_dir: Path, backend: str = "fts5") -> SearchIndex:
    """Open (creating if needed) the index of `backend` under `index_dir`.

    A damaged or foreign index file is deleted and an empty index created in its place: the
    caller re-syncs it from the Markdown files through `file_hashes()`.
    """
    if backend not in BACKENDS:
        raise HipoError(f"unknown search backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    index_dir = Path(index_dir)
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise HipoError(f"cannot create the search index folder {index_dir}: {error}") from error
    if backend == "fts5":
        return open_fts5(index_dir)  # the default, from the standard library
    try:
        from .whoosh_backend import open_whoosh
    except ImportError as error:
        raise HipoError(
            "the whoosh backend needs Whoosh: pip install 'hipo-jupyter[whoosh]'"
        ) from error
    return open_whoosh(index_dir)


class IndexKeeper:
    """The search index of one memory root, opened on first use and synced from the files."""

    def __init__(
        self, store: Store, config: MemoryConfig, semantic: SemanticIndex, today: Callable[[], date]
    ) -> None:
        self.store, self.config, self.semantic, self._today = store, config, semantic, today
        self._index: SearchIndex | None = None
        self._backend = ""
        self._synced = False

    # --- opening -----------------------------------------------------------------------------
    def open(self) -> SearchIndex:
        """The index (as it is: maybe behind the files; `ensure` syncs it)."""
        if self._index is None or self._backend != self.config.search_backend:
            if self._index is not None:
                self._index.close()
            self._index = self._open_saved_or_in_memory()
            self._backend = self.config.search_backend
            self._synced = False
        return self._index

    def ensure(self) -> SearchIndex:
        """The index, synced with the files once per process (later writes keep it in step)."""
        index = self.open()
        if not self._synced:
            self.sync()
        return index

    def stale(self) -> None:
        """Something was written that the index may have missed: sync before the next use."""
        self._synced = False

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def _open_saved_or_in_memory(self) -> SearchIndex:
        self.store.check_root()
        try:
            self.store.confined(self.store.memory_dir)
            self.store.index_dir.mkdir(parents=True, exist_ok=True)
            return open_index(self.store.index_dir, self.config.search_backend)
        except (OSError, HipoError, sqlite3.Error) as error:
            writable = os.access(self.store.memory_dir, os.W_OK)
            if isinstance(error, PathOutsideRootError) or (writable and not cannot_save(error)):
                raise
            reason = getattr(error, "strerror", None) or str(error)
            log.warning(
                "hipo: the search index could not be saved in memory/.index (%s); recall uses "
                "one built in memory for this process",
                reason,
            )
            return memory_index()

    # --- files -> documents --------------------------------------------------------------------
    def searchable_files(self) -> dict[str, Path]:
        store = self.store
        files = {store.relative(store.raw_path(d)): store.raw_path(d) for d in store.raw_days()}
        for level in NODE_KINDS:
            for path in store.node_files(level).values():
                files[store.relative(path)] = path
        knowledge = store.root / "knowledge"
        if knowledge.is_dir():
            for path in sorted(knowledge.rglob("*.md")):
                if path.is_file() and not path.is_symlink():
                    files[store.relative(path)] = path
        return files

    def read(self, relative: str, path: Path) -> bytes:
        """A raw log (under its lock, repaired), or a node or knowledge file: bounded reads of
        regular files only."""
        if self.store.is_raw(path):
            return self.store.read_bytes(path)
        return self.store.read_file(path)

    def documents(self, relative: str, data: bytes) -> list[Document]:
        """The documents of one file's bytes (ParseError for bytes that are not Markdown)."""
        text = decode_markdown(data, relative)
        parts = relative.split("/")
        if parts[0] == "knowledge":
            return [self.knowledge_document(relative, text)]
        if len(parts) == 2:  # memory/YYYY-MM-DD.md
            return [raw_document(relative, c) for c in parse_log(text, date=parts[1][:-3])]
        level, period = parts[1], parts[2][:-3]
        node = parse_node(text)
        try:
            start = period_start(level, period).isoformat()
        except ValueError:
            return []
        title, topics = f"{level} {period}", tuple(node.topics)
        body = without_comments(node.body)
        return [Document(f"{relative}#L1", relative, 1, level, start, "", title, body, topics)]

    def knowledge_document(self, relative: str, text: str) -> Document:
        """A knowledge note's document; who wrote it, when not the user, read from the record
        its writer's write left (`disk/note_writers`), never from the note's text."""
        title = parse_node(text).meta.get("title") or Path(relative).stem.replace("-", " ")
        day = self._today().isoformat()
        via = NoteWriters(self.store.root).via_of(relative)
        if via is None:  # the user's
            return Document(f"{relative}#L1", relative, 1, "knowledge", day, "", title, text)
        known = via if via != UNKNOWN else ""
        return Document(
            f"{relative}#L1", relative, 1, "knowledge", day, "", title, text,
            provenance=VIA_PHRASES.get(known, ""), writer=writer_of_provenance(via), via=known,
        )  # fmt: skip

    def file_documents(self, relative: str) -> tuple[str, list[Document]] | None:
        """(sha256, documents) of a file as it is now, for the vectors to catch up from."""
        try:
            data = self.read(relative, self.store.root / relative)
        except (OSError, ParseError):
            return None
        try:
            return sha256(data), self.documents(relative, data)
        except ParseError:
            return sha256(data), []

    # --- keeping in step -----------------------------------------------------------------------
    def sync(self, progress: Progress | None = None, *, backlog: bool = False) -> int:
        """Make the index match the files: re-send changed files, drop deleted ones. With
        `backlog` (reindex, import) the vectors catch up however many texts wait. When the
        saved index cannot be written (a full disk), one built in memory takes its place for
        this process, so recall, status and check keep working."""
        try:
            return self._sync(progress, backlog=backlog)
        except (HipoError, sqlite3.Error, OSError) as error:
            held = str(getattr(self._index, "path", ":memory:"))
            if not cannot_save(error) or held == ":memory:":
                raise
            log.warning(
                "hipo: the search index could not be written (%s); recall uses one built in "
                "memory for this process",
                error,
            )
            self._index.close()
            self._index = memory_index()
            return self._sync(progress, backlog=backlog)

    def _sync(self, progress: Progress | None = None, *, backlog: bool = False) -> int:
        index = self.open()
        held = index.file_hashes()
        files = self.searchable_files()
        changed = 0
        total = len(files)
        for done, (relative, path) in enumerate(sorted(files.items()), start=1):
            try:
                data = self.read(relative, path)
            except (OSError, ParseError):
                continue  # gone, or not a regular file: the store warned
            digest = sha256(data)
            if held.get(relative) != digest:
                try:
                    docs = self.documents(relative, data)
                except ParseError:
                    docs = []
                # Only over what was recorded when this sync began: another process that
                # appended and indexed since then holds a newer version than the one read here.
                changed += index.replace_file(relative, digest, docs, if_hash=held.get(relative))
            if progress and (done % 25 == 0 or done == total):
                progress(done, total, relative)
        for relative in set(held) - set(files):
            index.remove_file(relative)
            changed += 1
        self._synced = True
        # The vectors follow: for a rebuild or an import at once (in batches, with progress);
        # otherwise in the background when they are in use (the model is loaded), or before
        # their first use, so neither `%load_ext hipo` nor a cell ever waits for the model.
        if backlog and self.semantic.enabled:
            self.semantic.flush()
            self.semantic.guarded(
                lambda: self.semantic.catch_up(index, self.file_documents, progress=progress)
            )
        elif self.semantic.is_open:
            self.semantic.catch_up_later(index, self.file_documents)
        return changed

    def rebuild(self, progress: Progress | None = None) -> int:
        """Drop the index and build it again from the files; the number of documents."""
        index = self.open()
        index.clear()
        self.sync(progress, backlog=True)
        return index.count()

    def add_raw_append(self, day: date, written: Appended, checkpoint: Checkpoint) -> None:
        """Index a checkpoint just appended (and embed it), in the same call as the write."""
        index = self.open()
        relative = self.store.relative(self.store.raw_path(day))
        held = index.file_hashes().get(relative)
        if held == written.hash_before or (held is None and written.line == 1):
            index.add(relative, written.hash_after, [raw_document(relative, checkpoint)])
        else:  # the index missed an earlier write (another tool, a crash): re-read the file
            docs = [
                raw_document(relative, c)
                for c in parse_log(written.text_after, date=day.isoformat())
            ]
            index.replace_file(relative, written.hash_after, docs)

    def replace_raw_log(self, day: date, written: Appended) -> None:
        """Index the raw log as one append left it (many checkpoints at once): run under the
        log's lock (`Store.append_raw_composed`'s `then`), so no older text lands after it."""
        relative = self.store.relative(self.store.raw_path(day))
        logged = parse_log(written.text_after, date=day.isoformat())
        docs = [raw_document(relative, checkpoint) for checkpoint in logged]
        self.open().replace_file(relative, written.hash_after, docs)

    def embed_raw_log(self, day: date, written: Appended) -> None:
        """The vector side of `replace_raw_log`: the log as it is on disk now, when semantic
        recall is on (the background embedder; nothing waits for the model)."""
        relative = self.store.relative(self.store.raw_path(day))

        def write(vectors) -> None:
            if vectors.file_hash(relative) != written.hash_after:
                found = self.file_documents(relative)
                if found is not None:
                    vectors.replace_file(relative, *found)

        self.vectors_in_step(write)

    def embed_raw_append(self, day: date, written: Appended, checkpoint: Checkpoint) -> None:
        """The vector side of `add_raw_append`, when semantic recall is on."""
        relative = self.store.relative(self.store.raw_path(day))

        def write(vectors) -> None:
            held = vectors.file_hash(relative)
            if held == written.hash_before or (held is None and written.line == 1):
                vectors.add(relative, written.hash_after, [raw_document(relative, checkpoint)])
            elif held != written.hash_after:  # missed a write: the file again, as the truth
                found = self.file_documents(relative)
                if found is not None:
                    vectors.replace_file(relative, *found)

        self.vectors_in_step(write)

    def refresh_file(self, relative: str) -> None:
        """Bring the index (and vectors) in step with one file as it is now on disk."""
        index = self.open()
        found = self.file_documents(relative)
        if found is None:
            index.remove_file(relative)
            self.vectors_in_step(lambda vectors: vectors.remove_file(relative))
            return
        digest, docs = found
        index.replace_file(relative, digest, docs)
        self.vectors_in_step(lambda vectors: vectors.replace_file(relative, digest, docs))

    def vectors_in_step(self, write: Callable[..., object]) -> None:
        """Mirror a text-index write into the vectors, when semantic recall is on: handed to
        the background embedder, so the caller never waits for the model (a recall that needs
        vectors waits for it); a failure turns semantic recall off, never the write."""
        self.semantic.submit(write, self.open(), self.file_documents)


def lookup(
    index: SearchIndex, found: Sequence[VectorHit], hits: Sequence = ()
) -> Callable[[str, int], Document | None]:
    """(path, line) -> the Document there, for these vector and keyword hits, read at once."""
    ids = [hit.id for hit in found] + [document_id(hit.file, hit.line) for hit in hits]
    by_place = {(doc.path, doc.line): doc for doc in index.documents_by_id(ids).values()}
    return lambda path, line: by_place.get((path, line))


def body_text(checkpoint: Checkpoint) -> str:
    """Fields and free text; the title and tags have columns of their own in the index. An
    imported exchange keeps the start of its reply only (`exchanges.index_reply`)."""
    fields = checkpoint.fields
    if is_exchange(fields, checkpoint.via):
        fields = ((fields[0]), (fields[1][0], index_reply(fields[1][1])))
    parts = [f"{key}: {value}" for key, value in fields]
    if checkpoint.text:
        parts.append(checkpoint.text)
    return "\n".join(parts)


def raw_document(relative: str, checkpoint: Checkpoint) -> Document:
    return Document(
        id=f"{relative}#L{checkpoint.line}",
        path=relative,
        line=checkpoint.line,
        kind="raw",
        date=checkpoint.date or raw_log_day(relative),
        type=checkpoint.type,
        title=checkpoint.title,
        text=body_text(checkpoint),
        tags=checkpoint.tags,
        provenance=provenance_text(checkpoint),
        writer=writer_of(checkpoint),
        via=checkpoint.via or "",
        provider=checkpoint.provider or "",
        conversation=checkpoint.conversation or "",
        speaker=checkpoint.speaker or "",
        proposes=bool(checkpoint.proposes),
    )
