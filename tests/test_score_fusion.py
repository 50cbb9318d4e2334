"""Score fusion for hybrid recall: BM25 and cosine, each over its best, added with a weight."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hipo_jupyter.memory.recall.ranking import Hit, blend_relevance
from hipo_jupyter.memory.recall.recall_run import firsts_of_both
from hipo_jupyter.memory.search.contract import Document, SearchHit


def doc(name: str) -> Document:
    return Document(
        id=f"memory/2026-03-02.md#L{name}",
        path="memory/2026-03-02.md",
        line=1,
        kind="raw",
        date="2026-03-02",
        type="project",
        title=name,
        text=f"text of {name}",
    )


def ranked(hits: list[SearchHit]) -> list[str]:
    return [hit.doc.title for hit in hits]


def test_each_score_is_over_the_best_of_its_list_and_the_meaning_weighted() -> None:
    words = [SearchHit(doc("a"), 8.0, "…a…"), SearchHit(doc("b"), 4.0, "…b…")]
    meaning = [(doc("b"), 0.6), (doc("c"), 0.3)]
    blended = {hit.doc.title: hit.score for hit in blend_relevance(words, meaning, 0.5)}
    assert blended == pytest.approx({"a": 1.0, "b": 0.5 + 0.5, "c": 0.25})


def test_found_by_both_beats_found_by_one() -> None:
    words = [SearchHit(doc("words-only"), 5.0, ""), SearchHit(doc("both"), 4.5, "")]
    meaning = [(doc("meaning-only"), 0.8), (doc("both"), 0.7)]
    assert ranked(blend_relevance(words, meaning, 0.5))[0] == "both"


def test_a_meaning_hit_keeps_no_snippet_and_a_word_hit_keeps_its_own() -> None:
    blended = blend_relevance([SearchHit(doc("a"), 1.0, "…a…")], [(doc("m"), 0.5)], 0.5)
    assert {hit.doc.title: hit.snippet for hit in blended} == {"a": "…a…", "m": ""}


def test_weight_zero_or_no_positive_similarity_is_keyword_recall() -> None:
    words = [SearchHit(doc("a"), 2.0, ""), SearchHit(doc("b"), 1.0, "")]
    assert ranked(blend_relevance(words, [(doc("c"), 0.9)], 0.0)) == ["a", "b"]
    assert ranked(blend_relevance(words, [(doc("c"), -0.2), (doc("d"), 0.0)], 0.5)) == ["a", "b"]


def test_meaning_alone_still_ranks_when_no_word_matched() -> None:
    assert ranked(blend_relevance([], [(doc("x"), 0.4), (doc("y"), 0.8)], 0.5)) == ["y", "x"]


names = st.sampled_from("abcdefgh")


@given(
    words=st.dictionaries(names, st.floats(0.01, 50), max_size=8),
    meaning=st.dictionaries(names, st.floats(-1, 1), max_size=8),
    weight=st.floats(0, 2),
)
def test_every_candidate_once_best_first(words, meaning, weight) -> None:
    blended = blend_relevance(
        [SearchHit(doc(n), s, "") for n, s in words.items()],
        [(doc(n), s) for n, s in meaning.items()],
        weight,
    )
    titles = ranked(blended)
    expected = set(words)
    if weight > 0 and any(s > 0 for s in meaning.values()):
        expected |= {n for n, s in meaning.items() if s > 0}
    assert sorted(titles) == sorted(expected)
    scores = [hit.score for hit in blended]
    assert scores == sorted(scores, reverse=True)


def _hit(name: str) -> Hit:
    return Hit(
        file=f"memory/{name}.md",
        line=1,
        date="2026-03-01",
        kind="raw",
        type="project",
        title=name,
        snippet="",
        score=0.0,
    )


def test_a_contexts_candidates_take_the_vector_lists_firsts_in_turn() -> None:
    """Issue 25: two of the fused list, then one of the vector list, each hit once, k in all;
    when one list runs out the other goes on."""
    fused = [_hit(n) for n in "abcdef"]
    meaning = [_hit(n) for n in "xbyz"]
    names = [h.title for h in firsts_of_both(fused, meaning, 8, 2)]
    assert names == ["a", "b", "x", "c", "d", "e", "f", "y"]  # b, already in, is not repeated
    assert [h.title for h in firsts_of_both(fused, meaning, 3, 2)] == ["a", "b", "x"]
    assert [h.title for h in firsts_of_both(fused[:1], meaning, 9, 2)] == ["a", "x", "b", "y", "z"]


@given(
    st.lists(st.sampled_from("abcdefgh"), unique=True),
    st.lists(st.sampled_from("abcdefgh"), unique=True),
    st.integers(1, 10),
    st.integers(1, 4),
)
def test_firsts_of_both_holds_each_hit_of_either_list_once(one, two, k, per) -> None:
    out = [h.title for h in firsts_of_both([_hit(n) for n in one], [_hit(n) for n in two], k, per)]
    assert len(out) == len(set(out)) == min(k, len(set(one) | set(two)))
