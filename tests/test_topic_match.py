"""Which topics a question names (`recall/topic_match.py`), at any number of topics.

- The indexed matcher answers exactly what comparing every word with every topic name's parts
  answered (hypothesis, against that comparison written out here), in the index's order.
- A question's matching runs the same lines at 100 topics and at 5,000 (a memory of imported
  chats holds thousands: the comparison was most of a context's time there).
- The matcher kept for a Topics Index follows it: a tag written after a question is matched by
  the next one, through `Memory.recall`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from work_helpers import lines_run

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.disk import VIA_CLI
from hipo_jupyter.memory.recall.topic_match import TopicMatcher, match_topics
from hipo_jupyter.memory.tree.topic_index import Topic
from hipo_jupyter.memory.words import words as words_of

TODAY = date(2026, 3, 12)


def _topic(name: str) -> Topic:
    return Topic(name, "project", 1, (), (), (), "2026-03-01", 1)


def _compared(words: Sequence[str], topics: Sequence[Topic]) -> list[Topic]:
    """What recall did before the matcher: every query word against every part of every name."""
    wanted = {w for w in words if len(w) >= 2}
    matched = []
    for topic in topics:
        parts = set(words_of(topic.name)) | {topic.name}
        if wanted & parts or any(
            len(w) >= 4 and any(p.startswith(w[:5]) and len(p) >= 4 for p in parts) for w in wanted
        ):
            matched.append(topic)
    return matched


LETTERS = st.sampled_from("abcdeéprst1-._ ")
NAMES = st.text(LETTERS, min_size=1, max_size=14)
WORDS = st.text(st.sampled_from("abcdeéprst1"), min_size=1, max_size=8)


@given(st.lists(NAMES, max_size=30), st.lists(WORDS, max_size=8))
def test_the_matcher_answers_what_comparing_every_name_answered(
    names: list[str], words: list[str]
) -> None:
    topics = [_topic(name) for name in names]
    assert TopicMatcher(topics).matching(words) == _compared(words, topics)


def test_a_few_letters_in_common_find_a_topic_and_a_short_word_does_not() -> None:
    topics = [_topic(name) for name in ("forecast", "next.js", "q3-plan", "data", "ab")]
    found = TopicMatcher(topics).matching(["forecasting", "plan", "dat", "ab", "x"])
    assert [t.name for t in found] == ["forecast", "q3-plan", "ab"]


def _lines(words: list[str], topics: Sequence[Topic]) -> int:
    match_topics(words, topics)  # the matcher of these topics, built once
    return lines_run(lambda: match_topics(words, topics))[0]


def test_a_questions_matching_does_not_grow_with_the_topics_held() -> None:
    words = words_of("how did I fix the pricing page's pandas warning last week")
    few = tuple(_topic(f"conversation-{n}-opening") for n in range(100)) + (_topic("pricing"),)
    many = tuple(_topic(f"conversation-{n}-opening") for n in range(5000)) + (_topic("pricing"),)
    assert [t.name for t in match_topics(words, many)] == ["pricing"]
    assert _lines(words, many) == _lines(words, few)


def test_a_tag_written_after_a_question_is_matched_by_the_next(tmp_path: Path) -> None:
    memory = Memory(tmp_path, config=MemoryConfig(semantic=False), today=lambda: TODAY)
    try:
        memory.remember("Kestrel rollout", "The kestrel model ships on Monday.", tags=["kestrel"],
                        on=TODAY, via=VIA_CLI)  # fmt: skip
        assert memory.recall("kestrel falcon", k=3).topic_matches == ["kestrel"]
        memory.remember("Falcon rollout", "The falcon model ships on Friday.", tags=["falcon"],
                        on=TODAY, via=VIA_CLI)  # fmt: skip
        assert memory.recall("kestrel falcon", k=3).topic_matches == ["falcon", "kestrel"]
    finally:
        memory.close()
