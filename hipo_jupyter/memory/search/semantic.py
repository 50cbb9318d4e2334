"""Semantic recall inside `Memory`: the vector side of the index.

`SemanticIndex` owns the embedder and the `VectorStore` of one memory and keeps the vectors in
step with the text index the way the text index keeps in step with the files: per file, by hash.
It is lazy on purpose: `%load_ext hipo` with nothing to do never imports numpy or onnxruntime
nor loads the model. The vectors catch up before their first use (a recall, a write), and from
then on every write is mirrored in the same call (no indexing lag).

Nothing here may break keyword memory: a missing extra, a damaged model file or a failing model
turns semantic recall off for this `Memory`, with the reason kept for `%hipo status`, and the
text index (the one that matters for correctness) is written as before.

How hybrid recall combines these vectors with keywords is the recall room's business
(`recall/hybrid.py`): this room finds vectors, it does not rank hits.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import HipoError
from .contract import Document, SearchIndex
from .embed import Embedder, SemanticUnavailable, semantic_available, shared_embedder

if TYPE_CHECKING:
    from .vectors import VectorHit, VectorStore

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
ReadFile = Callable[[str], "tuple[str, list[Document]] | None"]
"""relative path -> (sha256 of the bytes read, its documents), or None when it cannot be read."""

# HIPO_SEMANTIC=0 turns the automatic setting off for a whole process tree (a test run, a CI job
# that has the extra installed for other reasons); an explicit setting still wins.
ENV_SWITCH = "HIPO_SEMANTIC"
OFF_VALUES = ("0", "off", "false", "no")
# Texts a catch-up embeds on its own before a recall or a write (a few seconds at most); a larger
# backlog (the extra installed on an existing memory) waits for `reindex`, with a progress bar.
BACKLOG_LIMIT = 256


class SemanticBacklog(HipoError):
    """More texts wait to be embedded than a recall or a write should take on: run reindex."""

    def __init__(self, count: int) -> None:
        super().__init__(
            f"semantic recall is waiting for {count:,} texts to be embedded; run %hipo reindex "
            "(or `hipo reindex`) once to embed them with a progress bar"
        )
        self.count = count


class SemanticIndex:
    """The vectors of one memory: on or off, opened on first use, kept in step by file hash."""

    def __init__(
        self,
        index_dir: Path,
        *,
        setting: bool | None = None,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        """`setting`: True or False forces semantic recall on or off; None (the default) turns it
        on when the extra is installed. `embedder` replaces the model (tests, other models)."""
        self.index_dir = Path(index_dir)
        self.setting = setting
        self.model_path = model_path or None
        self.tokenizer_path = tokenizer_path or None
        self._embedder = embedder
        self._store: VectorStore | None = None
        self._availability: tuple[bool, str] | None = None
        self._failure = ""  # why it turned off while running, if it did
        self._pending = True  # the vectors may lag the text index until `catch_up`
        self._backlog = 0  # texts a limited catch-up found waiting (see SemanticBacklog)
        self._lock = threading.RLock()

    # -- on or off ------------------------------------------------------------------------------

    def status(self) -> tuple[bool, str]:
        """(on, one line saying so, and how to turn it on when it is off)."""
        if self.setting is False:
            return False, (
                "semantic recall is off (turned off in the settings: c.Hipo.semantic = False)"
            )
        if self.setting is None and os.environ.get(ENV_SWITCH, "").lower() in OFF_VALUES:
            return False, f"semantic recall is off ({ENV_SWITCH}={os.environ[ENV_SWITCH]})"
        if self._failure:
            return False, self._failure
        if self._embedder is not None:
            on, message = True, f"semantic recall is on: {self._embedder.model_id}"
        else:
            if self._availability is None:
                self._availability = semantic_available(self.model_path, self.tokenizer_path)
            on, message = self._availability
        if on and self._backlog:
            message += f" ({SemanticBacklog(self._backlog)})"
        return on, message

    @property
    def enabled(self) -> bool:
        return self.status()[0]

    @property
    def is_open(self) -> bool:
        return self._store is not None

    def turn_off(self, reason: str) -> None:
        """Stop using vectors for the life of this object (a model that failed mid-run)."""
        with self._lock:
            self._failure = (
                reason
                if reason.startswith("semantic recall is off")
                else (f"semantic recall is off: {reason}")
            )
            self.close()

    def store(self) -> VectorStore:
        """The open vector store; SemanticUnavailable when semantic recall is off."""
        with self._lock:
            if self._store is not None:
                return self._store
            on, message = self.status()
            if not on:
                raise SemanticUnavailable(message)
            from .vectors import open_vectors  # numpy: imported only when vectors are used

            embedder = self._embedder or shared_embedder(self.model_path, self.tokenizer_path)
            store = open_vectors(self.index_dir, embedder)
            self._store = store
            return store

    # -- keeping in step ----------------------------------------------------------------------

    def catch_up(
        self,
        index: SearchIndex,
        read: ReadFile,
        *,
        progress: Progress | None = None,
        limit: int | None = None,
    ) -> int:
        """Embed what the text index holds and the vectors do not: files whose hash moved (a
        write by a kernel without the extra, a rebuilt node), every file after a model change;
        drop the vectors of files the text index no longer has. Returns how many were embedded.
        With `limit`, more than `limit` texts to embed is a SemanticBacklog and nothing is.
        """
        with self._lock:
            store = self.store()
            wanted = index.file_hashes()
            held = store.file_hashes()
            for path in set(held) - set(wanted):
                store.remove_file(path)
            stale = sorted(path for path, digest in wanted.items() if held.get(path) != digest)
            # Counted first, then read again file by file as they are embedded: the documents
            # of a whole memory are never held at once (issue 25; reading is ~0.5 ms a text,
            # embedding ~150).
            waiting = 0
            for path in stale:
                found = read(path)
                if found is not None:
                    waiting += len(store.unembedded(found[1]))
            if limit is not None and waiting > limit:
                self._backlog = waiting
                raise SemanticBacklog(waiting)

            def files() -> Iterator[tuple[str, str, list[Document]]]:
                for path in stale:
                    found = read(path)
                    if found is not None:
                        yield path, *found

            embedded = store.replace_files(files(), progress=progress, total=waiting)
            self._pending = False
            self._backlog = 0
            return embedded

    def ready(self, index: SearchIndex, read: ReadFile) -> VectorStore:
        """The store, caught up with the text index if it had not been yet (up to
        BACKLOG_LIMIT texts; more is a SemanticBacklog, for `reindex` to clear)."""
        with self._lock:
            store = self.store()
            if self._pending and self._backlog:  # known too large: not read again each call
                raise SemanticBacklog(self._backlog)
            if self._pending:
                self.catch_up(index, read, limit=BACKLOG_LIMIT)
            return store

    def guarded(self, action: Callable[[], object]) -> bool:
        """Run a mirror write; a failure turns semantic recall off instead of failing the
        caller (the text index, already written, is what keeps memory correct)."""
        try:
            action()
        except SemanticBacklog:
            return False  # still on; the status says to run reindex
        except HipoError as error:
            self.turn_off(str(error))
            return False
        except Exception as error:  # a model or runtime bug must not lose a checkpoint
            log.warning("hipo: semantic recall failed and is off: %r", error)
            self.turn_off(f"the vector index failed ({error!r})")
            return False
        return True

    def search(
        self,
        index: SearchIndex,
        read: ReadFile,
        query: str,
        *,
        limit: int,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> list[VectorHit]:
        store = self.ready(index, read)
        return store.search(query, limit=limit, kinds=kinds, types=types, since=since, until=until)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            self._pending = True
            self._backlog = 0  # looked at again when next opened
