"""Semantic recall inside `Memory`: the vector side of the index.

`SemanticIndex` owns the embedder and the `VectorStore` of one memory and keeps the vectors in
step with the text index the way the text index keeps in step with the files: per file, by hash.
It is lazy on purpose: `%load_ext hipo` with nothing to do never imports numpy or onnxruntime
nor loads the model. And it embeds off the caller's path (issue 35: recall by meaning is the
default install, so `%%remember` must not wait for a model): a write hands its texts to one
background worker per memory (`submit`), which loads the model, embeds and writes the vectors;
a recall that needs vectors first waits for the writes handed over (`flush`), so what was just
remembered is found by meaning too. A text not embedded yet is still found by its keywords. A
large backlog (a memory written before the model was installed) is embedded by the same worker
in small steps, between writes, rather than refused: `reindex` still does it at once, with a
progress bar.

Nothing here may break keyword memory: a missing extra, a damaged model file or a failing model
turns semantic recall off for this `Memory`, with the reason kept for `%hipo status`, and the
text index (the one that matters for correctness) is written as before.

How hybrid recall combines these vectors with keywords is the recall room's business
(`recall/hybrid.py`): this room finds vectors, it does not rank hits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
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
# Texts a recall embeds itself before answering, when the vectors lag the text index (a few
# seconds at most); a larger backlog (the model installed on an existing memory) is embedded by
# the background worker, CATCH_UP_STEP texts at a time, while recall answers with what it has.
BACKLOG_LIMIT = 256
# Texts the worker embeds per step of a background catch-up: small, so a write handed over, a
# recall's flush or a close waits for at most one step (~0.2 s with all-MiniLM-L6-v2 int8 here).
CATCH_UP_STEP = 16
VectorWrite = Callable[["VectorStore"], object]


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
        self._worker = BackgroundEmbedder(self)

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
            message += (
                " (catching up: older texts are being embedded in the background; "
                "%hipo reindex embeds them now, with a progress bar)"
            )
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
        self.close()  # not under the lock: closing waits for the worker, which may want it

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
            stale = self._stale_files(index, store)
            # Counted first, then read again file by file as they are embedded: the documents
            # of a whole memory are never held at once (issue 25; reading is ~0.5 ms a text,
            # embedding ~150).
            waiting = 0
            for path in stale:
                found = read(path)
                if found is not None:
                    waiting += len(store.unembedded(found[1]))
                if limit is not None and waiting > limit:  # enough to know: stop reading
                    self._backlog = max(waiting, self._backlog)
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

    def _stale_files(self, index: SearchIndex, store: VectorStore) -> list[str]:
        """The files whose vectors lag the text index (after dropping those it no longer has)."""
        wanted = index.file_hashes()
        held = store.file_hashes()
        for path in set(held) - set(wanted):
            store.remove_file(path)
        return sorted(path for path, digest in wanted.items() if held.get(path) != digest)

    def catch_up_step(self, index: SearchIndex, read: ReadFile, *, budget: int) -> bool:
        """Embed the lagging files, whole files at a time, until about `budget` texts were
        embedded (the background worker's step); True when the vectors are in step."""
        with self._lock:
            store = self.store()
            stale = self._stale_files(index, store)
            taken: list[tuple[str, str, list[Document]]] = []
            fresh = 0
            for path in stale:
                if fresh >= budget:
                    break
                found = read(path)
                if found is None:
                    continue
                taken.append((path, *found))
                fresh += len(store.unembedded(found[1]))
            store.replace_files(taken)
            done = len(taken) == len(stale) or not stale
            remaining = self._backlog - fresh if self._backlog else 0
            self._backlog = 0 if done else max(remaining, 1)
            self._pending = not done
            return done

    def ready(self, index: SearchIndex, read: ReadFile) -> VectorStore:
        """The store, caught up with the text index if it lagged by up to BACKLOG_LIMIT texts;
        a larger backlog is handed to the background worker and the store returned as it is
        (what is not embedded yet is found by its keywords)."""
        self._worker.flush()
        with self._lock:
            store = self.store()
            if self._pending and not self._backlog:
                with contextlib.suppress(SemanticBacklog):
                    self.catch_up(index, read, limit=BACKLOG_LIMIT)
            if self._pending:
                self._worker.catch_up_later(index, read)
            return store

    def submit(self, write: VectorWrite, index: SearchIndex, read: ReadFile) -> None:
        """Hand a mirror write (the vectors of texts just written to the text index) to the
        background worker: the caller does not wait for the model. Off: nothing to do."""
        if self.enabled:
            self._worker.submit(write, index, read)

    def flush(self) -> None:
        """Wait until the writes handed over so far are embedded (not a background catch-up)."""
        self._worker.flush()

    def catch_up_later(self, index: SearchIndex, read: ReadFile) -> None:
        """Have the background worker bring the vectors in step with the text index."""
        if self.enabled:
            self._worker.catch_up_later(index, read)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until the worker has nothing left, a background catch-up included (benchmarks,
        tests, a caller that wants every text embedded); False when `timeout` ran out."""
        return self._worker.wait_idle(timeout)

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
        self._worker.stop()  # the writes handed over are embedded first
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            self._pending = True
            self._backlog = 0  # looked at again when next opened


class BackgroundEmbedder:
    """One thread per `SemanticIndex` that embeds what writes hand it, in order, then catches
    the vectors up with the text index in steps of CATCH_UP_STEP texts when asked to.

    A write is a function of the store (`VectorWrite`), run under `SemanticIndex.guarded`: a
    failing model turns semantic recall off, as it did in the caller's thread. The thread
    starts with the first write and stops at `stop` (`Memory.close`), after the writes handed
    over; a catch-up left unfinished goes on at the next open (each step is committed).
    """

    def __init__(self, owner: SemanticIndex) -> None:
        self.owner = owner
        self._writes: deque[VectorWrite] = deque()
        self._source: tuple[SearchIndex, ReadFile] | None = None
        self._catch_up = False
        self._running_write = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._cond = threading.Condition()

    def submit(self, write: VectorWrite, index: SearchIndex, read: ReadFile) -> None:
        with self._cond:
            self._writes.append(write)
            self._source = (index, read)
            self._start()

    def catch_up_later(self, index: SearchIndex, read: ReadFile) -> None:
        with self._cond:
            self._source = (index, read)
            self._catch_up = True
            self._start()

    def flush(self) -> None:
        """Wait for the writes handed over so far (never from the worker itself)."""
        if threading.current_thread() is self._thread:
            return
        with self._cond:
            while self._writes or self._running_write:
                if self._thread is None or not self._thread.is_alive():
                    self._writes.clear()  # nobody left to run them: the next sync catches up
                    break
                self._cond.wait(0.5)

    def wait_idle(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._writes or self._running_write or self._catch_up:
                if self._thread is None or not self._thread.is_alive():
                    return not self._writes
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(0.5 if left is None else min(left, 0.5))
            return True

    def stop(self) -> None:
        """Run the writes handed over, leave any catch-up for next time, end the thread."""
        self.flush()
        with self._cond:
            thread, self._thread = self._thread, None
            self._stopping, self._catch_up = True, False
            self._cond.notify_all()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._cond:
            self._stopping = False

    def _start(self) -> None:
        self._cond.notify_all()
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="hipo-embedder", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                mine = threading.current_thread()
                while self._thread is mine and not (
                    self._writes or self._catch_up or self._stopping
                ):
                    self._cond.wait()
                if self._thread is not mine:
                    return  # stopped (from inside a write too: a failed model turned it off)
                if self._stopping and not self._writes:
                    return
                write = self._writes.popleft() if self._writes else None
                self._running_write = write is not None
                source = self._source
            try:
                if write is not None:
                    self.owner.guarded(lambda w=write: w(self.owner.store()))
                elif source is not None:
                    self._step(*source)
                else:
                    self._catch_up = False
            finally:
                with self._cond:
                    self._running_write = False
                    self._cond.notify_all()

    def _step(self, index: SearchIndex, read: ReadFile) -> None:
        done = [False]

        def step() -> None:
            done[0] = self.owner.catch_up_step(index, read, budget=CATCH_UP_STEP)

        if not self.owner.guarded(step) or done[0]:
            with self._cond:
                self._catch_up = False
