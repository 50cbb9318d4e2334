"""The Topics Index kept at hand: `Memory.topics()` is asked at every prompt and recall, so it
must be cheap when nothing changed.

The topics are kept in memory against the raw logs' sizes and times; when those moved they come
from what the last compaction pass saved (if it was saved for these very logs), and only failing
that from reading every raw log. A checkpoint this process appended updates them in place;
in a new process (a CLI call) it is added to the topics saved for the logs as they were just
before the append, so one `hipo remember` does not read every raw log either.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import date

from ..disk.checkpoint import Checkpoint
from ..disk.files import MAX_STATE_BYTES
from ..disk.store import Appended, Store
from ..errors import HipoError
from .chain import stamp_key
from .topic_index import Topic, add_to_topics, collect_topics, topics_from_json


class TopicsCache:
    """The topics of one root, with the raw-log stamps and the day they were collected for."""

    def __init__(self, store: Store, read_checkpoints: Callable[[], list[Checkpoint]]) -> None:
        self.store = store
        self._read_checkpoints = read_checkpoints
        self._cached: tuple[dict, date, list[Topic]] | None = None  # (raw stamps, today, topics)
        # (stamps before, stamps after, checkpoint) of an append made with nothing cached
        self._pending: tuple[dict, dict, Checkpoint] | None = None
        self.kept_in_place = False  # the last append updated topics held since before it

    def topics(self, today: date, stamps: dict | None = None) -> list[Topic]:
        """The Topics Index as data (what ROOT.md lists), for `today`; `stamps` are the raw
        logs' (`Store.raw_stamps`) when the caller has just listed them."""
        stamps = self.store.raw_stamps() if stamps is None else stamps
        cached = self._cached
        if cached and cached[0] == stamps and cached[1] == today:
            return cached[2]
        topics = self._saved(stamps, today)
        pending, self._pending = self._pending, None
        if topics is None and pending and pending[1] == stamps:
            saved = self._saved(pending[0], today)
            topics = None if saved is None else add_to_topics(saved, pending[2], today)
        if topics is None:
            topics = collect_topics(self._read_checkpoints(), today)
        self._cached = (stamps, today, topics)
        return topics

    def forget(self) -> None:
        """Drop what is kept (a compaction pass saved newer topics)."""
        self._cached = None

    def after_append(self, day: date, written: Appended, checkpoint: Checkpoint) -> None:
        """Add a checkpoint this process just appended, unless someone else wrote the log too."""
        cached = self._cached
        name = self.store.raw_path(day).name
        info = os.stat(self.store.raw_path(day))
        self.kept_in_place = bool(cached) and cached[0].get(name, (0, 0))[0] == written.size_before
        if not self.kept_in_place:
            self._cached = None  # someone else wrote too: re-read on the next question
            after = self.store.raw_stamps()
            before = {key: value for key, value in after.items() if key != name}
            if written.size_before:
                before[name] = written.stamp_before
            self._pending = (before, after, checkpoint)
            return
        stamps = {**cached[0], name: (info.st_size, info.st_mtime_ns)}
        self._cached = (stamps, cached[1], add_to_topics(cached[2], checkpoint, cached[1]))

    def _saved(self, stamps: dict, today: date) -> list[Topic] | None:
        try:
            saved = json.loads(self.store.read_file(self.store.state_path, MAX_STATE_BYTES))
            saved = saved["hipo"]
            if saved.get("topics-stamp") == stamp_key(stamps):
                return topics_from_json(saved["topics"], today)
        except (
            OSError,
            HipoError,
            ValueError,
            LookupError,
            TypeError,
            AttributeError,
            RecursionError,
        ):
            pass  # no saved topics, or not ours: they are collected from the raw logs
        return None
