"""The Topics Index as data: what ROOT.md's `## Topics Index` lines say, one `Topic` each.

A topic is a checkpoint's `#tag`; a checkpoint without tags is its own topic (its title's slug).
Topics are collected from the raw logs by a compaction pass and saved in its state, then kept
up to date in place by each `remember`, so "do I know about X?" never re-reads every log. The
words a topic is made of come from `topics.py` (extraction); `root.py` writes them into ROOT.md.

Kept at hand (`TopicsCache`): `Memory.topics()` is asked at every prompt and recall, so it must
be cheap when nothing changed.

The topics are kept in memory against the raw logs' sizes and times; when those moved they come
from what the last compaction pass saved (if it was saved for these very logs), and only failing
that from reading every raw log. A checkpoint this process appended updates them in place;
in a new process (a CLI call) it is added to the topics saved for the logs as they were just
before the append, so one `hipo remember` does not read every raw log either.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from ..disk.checkpoint import Checkpoint
from ..disk.files import MAX_STATE_BYTES
from ..disk.jsonread import parse_json
from ..disk.layout import stamp_key
from ..disk.periods import week_id, week_month
from ..disk.store import Appended, Store
from ..disk.trust import CLAUDE, IMPORT, writer_of
from ..errors import HipoError
from .topics import slug

MAX_KEYWORDS = 4


@dataclass(frozen=True)
class Topic:
    """One Topics Index line: `- pricing [project, 3d]: competitor-analysis -> 2026-03 (W11)`."""

    name: str
    type: str  # project | feedback | user | reference
    age_days: int  # days since it was last mentioned
    keywords: tuple[str, ...]  # titles (slugged) of its checkpoints, newest first
    months: tuple[str, ...]  # "2026-03", newest first
    weeks: tuple[str, ...]  # "2026-W11", newest first
    last_date: str  # ISO date of the last mention
    count: int  # checkpoints that mention it

    def line(self, detail: int = 2) -> str:
        """detail 2: keywords and weeks; 1: months only; 0: name and age only."""
        head = f"- {self.name} [{self.type}, {self.age_days}d]"
        if detail >= 2 and self.keywords:
            head += ": " + ", ".join(self.keywords)
        if detail >= 1:
            pointers = []
            for month in self.months[:2]:
                weeks = [w.split("-")[1] for w in self.weeks if _week_in_month(w, month)][:3]
                pointers.append(f"{month} ({', '.join(weeks)})" if detail >= 2 and weeks else month)
            head += " -> " + ", ".join(pointers)
        return head

    def to_json(self) -> dict[str, object]:
        """One topic as every front end's JSON gives it (the server's tree, `--json`)."""
        return {
            "name": self.name,
            "type": self.type,
            "age_days": self.age_days,
            "keywords": list(self.keywords),
            "months": list(self.months),
            "weeks": list(self.weeks),
            "last_date": self.last_date,
            "count": self.count,
        }


@dataclass(frozen=True)
class TopicsIndex:
    """The Topics Index as a whole, most recently mentioned first: what `Memory.topics()`
    returns. It iterates, indexes and counts its topics like the list it replaces."""

    topics: tuple[Topic, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"topics": [topic.to_json() for topic in self.topics]}

    def __iter__(self) -> Iterator[Topic]:
        return iter(self.topics)

    def __len__(self) -> int:
        return len(self.topics)

    def __getitem__(self, index: int) -> Topic:
        return self.topics[index]


def checkpoint_topics(checkpoint: Checkpoint) -> list[str]:
    """A checkpoint's topics: its #tags, else its title's slug. A Claude call's write-back has
    none: it is the agent's task log, and a topic of its own would push the user's topics
    down the index (it is still found by search, and grouped in the Active Context). An
    imported turn without tags has one only when titled by its speaker (a conversation's
    people: "Ana"): a title made from a turn's first words is not a topic, and a chat
    export's turns filled the Topics Index, a section of Layer 1 read as the user's, with
    them (5,420 in MemAware's dev memory: "helpful", "take", "wrote")."""
    writer = writer_of(checkpoint)
    if writer == CLAUDE:
        return []
    if checkpoint.tags:
        return list(checkpoint.tags)
    name = slug(checkpoint.title, max_words=3)
    if writer == IMPORT and not (name and name == slug(checkpoint.speaker or "", max_words=3)):
        return []
    return [name or "untitled"]


TOPIC_RULES = "2"  # which checkpoints make topics: saved topics made under other rules are
# collected again (2: an imported turn not titled by its speaker makes none)


def topics_stamp(stamps: dict) -> str:
    """What saved topics are kept against: the raw logs they were read from, and the rules."""
    return f"{TOPIC_RULES}:{stamp_key(stamps)}"


def collect_topics(checkpoints: Iterable[Checkpoint], today: date) -> list[Topic]:
    """Aggregate checkpoints into topics, most recently mentioned first."""
    grouped: dict[str, list[Checkpoint]] = {}
    for checkpoint in checkpoints:
        if not checkpoint.date:
            continue
        for name in checkpoint_topics(checkpoint):
            grouped.setdefault(name, []).append(checkpoint)
    topics = []
    for name, members in grouped.items():
        members.sort(key=lambda c: (c.date, c.line), reverse=True)
        last = members[0].date
        types = Counter(c.type for c in members)
        keywords: list[str] = []
        for member in members:
            keyword = slug(member.title, max_words=3)
            if keyword and keyword != name and keyword not in keywords:
                keywords.append(keyword)
        weeks = sorted({week_id(date.fromisoformat(c.date)) for c in members}, reverse=True)
        months = sorted({week_month(w) for w in weeks}, reverse=True)
        topics.append(
            Topic(
                name=name,
                type=max(types, key=lambda t: (types[t], t == members[0].type)),
                age_days=max(0, (today - date.fromisoformat(last)).days),
                keywords=tuple(keywords[:MAX_KEYWORDS]),
                months=tuple(months),
                weeks=tuple(weeks),
                last_date=last,
                count=len(members),
            )
        )
    topics.sort(key=lambda t: (t.last_date, t.count, t.name), reverse=True)
    return topics


def add_to_topics(topics: Sequence[Topic], checkpoint: Checkpoint, today: date) -> list[Topic]:
    """The topics after one more checkpoint, without re-reading every raw log.

    What a full `collect_topics` would give for counts, dates, keywords and periods; a topic's
    type stays as it was (the majority vote is redone at the next compaction).
    """
    if not checkpoint.date:
        return list(topics)
    by_name = {t.name: t for t in topics}
    week = week_id(date.fromisoformat(checkpoint.date))
    keyword = slug(checkpoint.title, max_words=3)
    for name in checkpoint_topics(checkpoint):
        old = by_name.get(name)
        keywords = [k for k in (keyword,) if k and k != name]
        if old:
            keywords += [k for k in old.keywords if k not in keywords]
            if checkpoint.date < old.last_date:
                keywords = list(old.keywords)  # a late entry does not lead the list
        last = max(checkpoint.date, old.last_date) if old else checkpoint.date
        weeks = sorted({week, *(old.weeks if old else ())}, reverse=True)
        by_name[name] = Topic(
            name=name,
            type=old.type if old else checkpoint.type,
            age_days=max(0, (today - date.fromisoformat(last)).days),
            keywords=tuple(keywords[:MAX_KEYWORDS]),
            months=tuple(sorted({week_month(w) for w in weeks}, reverse=True)),
            weeks=tuple(weeks),
            last_date=last,
            count=(old.count if old else 0) + 1,
        )
    return sorted(by_name.values(), key=lambda t: (t.last_date, t.count, t.name), reverse=True)


def topics_to_json(topics: Sequence[Topic]) -> list[dict]:
    return [
        {
            "name": t.name,
            "type": t.type,
            "keywords": list(t.keywords),
            "months": list(t.months),
            "weeks": list(t.weeks),
            "last_date": t.last_date,
            "count": t.count,
        }
        for t in topics
    ]


def topics_from_json(items: Sequence[dict], today: date) -> list[Topic]:
    """Topics saved by a compaction pass, with their ages taken against `today`."""
    return [
        Topic(
            name=item["name"],
            type=item["type"],
            age_days=max(0, (today - date.fromisoformat(item["last_date"])).days),
            keywords=tuple(item["keywords"]),
            months=tuple(item["months"]),
            weeks=tuple(item["weeks"]),
            last_date=item["last_date"],
            count=item["count"],
        )
        for item in items
    ]


def _week_in_month(week: str, month: str) -> bool:
    return week_month(week) == month


class TopicsCache:
    """The topics of one root, with the raw-log stamps and the day they were collected for."""

    def __init__(self, store: Store, read_checkpoints: Callable[[], list[Checkpoint]]) -> None:
        self.store = store
        self._read_checkpoints = read_checkpoints
        self._cached: tuple[dict, date, list[Topic]] | None = None  # (raw stamps, today, topics)
        self._index: tuple[list[Topic], TopicsIndex] | None = None  # `index`'s, of those topics
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

    def index(self, today: date, stamps: dict | None = None) -> TopicsIndex:
        """`topics` as a Topics Index, the same object while they are unchanged: what is worked
        out from a whole index (recall's `topic_match`) is kept against it."""
        topics = self.topics(today, stamps)
        kept = self._index
        if kept is None or kept[0] is not topics:
            kept = self._index = (topics, TopicsIndex(tuple(topics)))
        return kept[1]

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
            saved = parse_json(
                self.store.read_file(self.store.state_path, MAX_STATE_BYTES),
                self.store.relative(self.store.state_path),
            )
            saved = saved["hipo"]
            if saved.get("topics-stamp") == topics_stamp(stamps):
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
