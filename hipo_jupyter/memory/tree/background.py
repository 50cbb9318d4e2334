"""The summaries a model owes, written in a thread of their own: a cell never waits on them.

A deferred compaction pass (`Compactor(defer=True)`) writes every node at once, the nodes above
their threshold with the extractive summary, and marks those owed their summarizer's in the
state file. This thread then asks the model for them one by one (`Memory.write_summaries`), so
Layer 1 and recall are served from the extractive tree until each summary lands. The thread
is a daemon: a kernel that exits mid-summary simply stops, the state still says what is owed,
and the next start (or `hipo compact`) writes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]


class SummaryWriter(Protocol):
    def __call__(
        self, *, progress: Progress | None = None, stop: threading.Event | None = None
    ) -> list[str]: ...


class BackgroundSummaries:
    """One thread per Memory writing the owed summaries; `start` again while it runs makes it
    look once more when it is done (a pass that deferred more meanwhile)."""

    def __init__(self, write: SummaryWriter) -> None:
        self._write = write
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._again = False
        self._listeners: list[Progress] = []
        self.progress: tuple[int, int, str] | None = None  # (done, total, node) of the last step
        self.written: list[str] = []  # the node paths written so far

    def subscribe(self, callback: Progress) -> None:
        """`callback(done, total, node)` after each step, from the thread; "done" at the end."""
        self._listeners.append(callback)

    def start(self) -> None:
        with self._guard:
            if self._stop.is_set():
                return
            if self._thread is not None and self._thread.is_alive():
                self._again = True
                return
            self._thread = threading.Thread(target=self._run, name="hipo-summaries", daemon=True)
            self._thread.start()

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the thread to finish; True when it has (or never ran)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return not self.running

    def stop(self) -> None:
        """No further model call nor write after the one in flight (the Memory is closing)."""
        self._stop.set()

    def _run(self) -> None:
        while True:
            try:
                self.written += self._write(progress=self._step, stop=self._stop)
            except Exception:  # a model or a disk may fail in any way; the stand-ins stay
                log.exception("hipo: writing the owed summaries stopped")
            with self._guard:
                if not self._again or self._stop.is_set():
                    return
                self._again = False

    def _step(self, done: int, total: int, node: str) -> None:
        self.progress = (done, total, node)
        for callback in list(self._listeners):
            try:
                callback(done, total, node)
            except Exception:  # a front end's display must never stop the summaries
                log.exception("hipo: a summaries progress listener failed")
