"""Reciprocal rank fusion: ranks, not scores; weights; agreement between lists wins."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hipo_jupyter.memory.search.fusion import RRF_K, reciprocal_rank_fusion


def test_each_list_votes_weight_over_k_plus_rank() -> None:
    fused = dict(reciprocal_rank_fusion({"bm25": ["a", "b"], "vector": ["b", "c"]}))
    assert fused["a"] == pytest.approx(1 / (RRF_K + 1))
    assert fused["b"] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert fused["c"] == pytest.approx(1 / (RRF_K + 2))


def test_found_by_two_lists_beats_first_in_one() -> None:
    fused = reciprocal_rank_fusion({"bm25": ["only-words", "both"], "vector": ["x", "both"]})
    assert fused[0][0] == "both"


def test_an_answer_only_one_list_has_is_still_ranked() -> None:
    """Where the query shares no word with the answer, BM25 finds nothing and the vector list
    alone decides; and the other way round."""
    assert [key for key, _ in reciprocal_rank_fusion({"bm25": [], "vector": ["ans"]})] == ["ans"]
    assert [key for key, _ in reciprocal_rank_fusion({"bm25": ["ans"], "vector": []})] == ["ans"]


def test_weights_scale_a_list_and_zero_turns_it_off() -> None:
    lists = {"bm25": ["a", "b"], "vector": ["b", "a"]}
    assert reciprocal_rank_fusion(lists, {"bm25": 2.0})[0][0] == "a"
    assert reciprocal_rank_fusion(lists, {"vector": 2.0})[0][0] == "b"
    assert [key for key, _ in reciprocal_rank_fusion(lists, {"vector": 0.0})] == ["a", "b"]
    assert reciprocal_rank_fusion({"bm25": ["a"]}, {"bm25": 0.0}) == []


def test_a_key_repeated_in_one_list_counts_once_at_its_best_rank() -> None:
    fused = dict(reciprocal_rank_fusion({"bm25": ["a", "a", "b"]}))
    assert fused == {"a": pytest.approx(1 / (RRF_K + 1)), "b": pytest.approx(1 / (RRF_K + 2))}


def test_k_sets_how_much_the_top_ranks_dominate() -> None:
    """With k = 0 a first place outweighs two middling places; with k = 60 agreement wins."""
    lists = {"bm25": ["a", "x", "b"], "vector": ["y", "b"]}
    assert reciprocal_rank_fusion(lists, k=0)[0][0] in {"a", "y"}  # 1 > 1/3 + 1/2
    assert reciprocal_rank_fusion(lists)[0][0] == "b"  # 1/63 + 1/62 > 1/61
    with pytest.raises(ValueError):
        reciprocal_rank_fusion(lists, k=-1)


@given(
    st.dictionaries(
        st.sampled_from(["bm25", "vector", "topics", "recency"]),
        st.lists(st.sampled_from("abcdefgh"), max_size=8),
    )
)
def test_scores_are_positive_sorted_and_cover_every_key(lists: dict[str, list[str]]) -> None:
    fused = reciprocal_rank_fusion(lists)
    assert {key for key, _ in fused} == {key for keys in lists.values() for key in keys}
    scores = [score for _, score in fused]
    assert all(score > 0 for score in scores) and scores == sorted(scores, reverse=True)
