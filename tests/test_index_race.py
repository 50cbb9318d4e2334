"""Two writers on one folder whose index steps cross: the index still holds both checkpoints.

Each `Memory` has its own writer lock, as two processes do (a kernel and `hipo remember`); the
raw log's `flock` is what orders them. The run that found it: tests/test_load.py lost a
checkpoint from the index 1 run in 4, when the first writer's index step (built from the log as
its own append left it) finished after the second writer's and set the index back to a log
without the second checkpoint. Here the order is forced: the first writer is held inside its
index step while the second writes. With the index step under the log's lock
(`Store.append_raw_composed`'s `then`), the second writer waits for it instead.
"""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.search.indexing import open_index

TODAY = date(2026, 3, 12)
SECOND_WRITER_CHANCE_S = 2.0  # how long the first writer is held while the second may write
HANG_GUARD_S = 60.0  # only so that a deadlock fails the test instead of hanging it


def held_in_its_index_step(memory: Memory) -> tuple[threading.Event, threading.Event]:
    """(entered, release): the memory's next write to its search index (the index step of its
    next append: `add` for one checkpoint, `replace_file` for a batch) runs only once `release`
    is set; `entered` says it was reached, so the append before it is done. The real index
    object's own methods do the writing."""
    index = memory._writer._indexer.open()
    entered, release = threading.Event(), threading.Event()

    def held(real):
        def write(*args, **kwargs):
            if not entered.is_set():
                entered.set()
                assert release.wait(HANG_GUARD_S), "the first writer was never released"
            return real(*args, **kwargs)

        return write

    for name in ("add", "replace_file"):
        setattr(index, name, held(getattr(index, name)))
    return entered, release


def in_thread(work) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - handed to the test's thread
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def indexed_titles(root: Path) -> set[str]:
    """The raw checkpoints' titles in the index as the writers left it (not re-synced)."""
    index = open_index(root / "memory" / ".index")
    try:
        return {doc.title for doc in index.documents(kinds={"raw"})}
    finally:
        index.close()


@pytest.mark.parametrize(
    "first_write",
    [
        lambda memory: memory.remember("First zqracefirst", "- outcome: one"),
        lambda memory: memory.remember_all([("First zqracefirst", "- outcome: one")]),
    ],
    ids=["remember", "remember_all"],
)
def test_a_writer_whose_index_step_ends_last_keeps_the_others_checkpoint(
    memory_root: Path, first_write
) -> None:
    first = Memory(memory_root, today=lambda: TODAY)
    second = Memory(memory_root, today=lambda: TODAY)
    first.init()
    # both have the index open and in step with the log (a warm kernel and a warm server)
    first.remember("Warm-up zqracewarm", "- outcome: both see it")
    assert second.recall("zqracewarm").hits
    entered, release = held_in_its_index_step(first)

    first_thread, first_errors = in_thread(lambda: first_write(first))
    assert entered.wait(HANG_GUARD_S), "the first writer never reached its index step"
    second_thread, second_errors = in_thread(
        lambda: second.remember("Second zqracesecond", "- outcome: two")
    )
    second_thread.join(SECOND_WRITER_CHANCE_S)  # without the fix it writes and indexes here
    release.set()
    first_thread.join(HANG_GUARD_S)
    second_thread.join(HANG_GUARD_S)
    assert not first_thread.is_alive() and not second_thread.is_alive(), "a writer hung"
    assert not first_errors and not second_errors, first_errors + second_errors

    titles = indexed_titles(memory_root)
    assert {"First zqracefirst", "Second zqracesecond"} <= titles, titles
    for memory in (first, second):
        for word in ("zqracefirst", "zqracesecond"):
            assert memory.recall(word).hits, (word, "not found")
    first.close()
    second.close()
