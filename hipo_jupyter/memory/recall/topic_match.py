"""Which topics a question names: a topic whose name (or one of its parts) is a word of the
question, or starts like one (its first four or five letters: "forecasting" finds "forecast").

Asked on every recall and context, against every topic the memory holds. Comparing each
question word with each part of each topic name grew with the topics: at 5,420 (MemAware's dev
memory, when each imported turn still made a topic of its first words) it was most of a
context's time (about 100 of 150 ms CPU). `TopicMatcher` indexes the names once per Topics
Index, by their parts and by the four- and five-letter starts of those parts, so a question
costs a few dictionary lookups per word; it answers exactly what the comparison did, in the
index's order.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache

from ..tree.topic_index import Topic
from ..words import words as words_of

MIN_WORD = 2  # shorter words name no topic
MIN_START = 4  # a word this long or longer also finds the names that start like it...
START_LETTERS = 5  # ... in its first (up to) five letters
KEPT_MATCHERS = 8  # Topics Indexes whose matcher is kept (a few memories open in one process)


class TopicMatcher:
    """The topics of one Topics Index, found by the words that name them."""

    def __init__(self, topics: Sequence[Topic]) -> None:
        self.topics = topics
        self._by_part: dict[str, list[int]] = {}  # a part of a name -> its topics' places
        self._by_start: dict[str, list[int]] = {}  # a part's first 4 and first 5 letters -> ...
        for place, topic in enumerate(topics):
            for part in name_parts(topic.name):
                self._by_part.setdefault(part, []).append(place)
                if len(part) >= MIN_START:
                    self._by_start.setdefault(part[:MIN_START], []).append(place)
                if len(part) >= START_LETTERS:
                    self._by_start.setdefault(part[:START_LETTERS], []).append(place)

    def matching(self, words: Sequence[str]) -> list[Topic]:
        """The topics `words` name, in the index's order (most recently mentioned first)."""
        found: set[int] = set()
        for word in {w for w in words if len(w) >= MIN_WORD}:
            found.update(self._by_part.get(word, ()))
            if len(word) >= MIN_START:  # a start of 4 letters only meets 4-letter keys
                found.update(self._by_start.get(word[:START_LETTERS], ()))
        return [self.topics[place] for place in sorted(found)]


@lru_cache(maxsize=65536)
def name_parts(name: str) -> frozenset[str]:
    """A topic name and its words: a slug's parts ("next.js" -> next, js; "q3-plan" -> q3,
    plan). Kept per name: a Topics Index changed by one note is indexed again from these."""
    return frozenset(words_of(name)) | {name}


_kept: dict[int, tuple[Sequence[Topic], TopicMatcher]] = {}
_kept_lock = threading.Lock()


def matcher_for(topics: Sequence[Topic]) -> TopicMatcher:
    """The matcher of this very Topics Index (by identity: `TopicsCache.index` hands out the
    same object until the topics change), built on its first question."""
    with _kept_lock:
        kept = _kept.get(id(topics))
        if kept is not None and kept[0] is topics:
            return kept[1]
    matcher = TopicMatcher(topics)
    with _kept_lock:
        while len(_kept) >= KEPT_MATCHERS:
            del _kept[next(iter(_kept))]
        _kept[id(topics)] = (topics, matcher)  # the index held: its id is not reused meanwhile
    return matcher


def match_topics(words: Sequence[str], topics: Sequence[Topic]) -> list[Topic]:
    """Topics whose name (or one of its parts) is a word of the query, or starts like one."""
    return matcher_for(topics).matching(words)
