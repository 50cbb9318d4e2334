"""Reciprocal rank fusion: several ranked lists of the same documents made into one.

Each list (BM25, vector similarity, Topics Index matches, recency) votes for a document with
`weight / (k + rank)`, rank counted from 1. Only ranks count, never raw scores, so lists whose
scores live on different scales (BM25 is unbounded, cosine is -1..1, recency is a date) fuse
without calibration, and a document found by two lists beats one found high by a single list.
k = 60 is the constant of Cormack, Clarke and Büttcher (SIGIR 2009), and what the LoCoMo
measurement in issue 7 used: large enough that the first few ranks do not drown the rest.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

RRF_K = 60

Key = TypeVar("Key", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[Key]],
    weights: Mapping[str, float] | None = None,
    *,
    k: float = RRF_K,
) -> list[tuple[Key, float]]:
    """(key, fused score) best first; ties keep the order in which keys were first seen.

    `rankings` maps a list's name to its keys, best first (a key repeated in one list counts at
    its best rank); `weights` maps names to weights (missing names weigh 1, a weight of 0 turns
    a list off).
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, not {k}")
    weights = weights or {}
    scores: dict[Key, float] = {}
    for name, keys in rankings.items():
        weight = float(weights.get(name, 1.0))
        if weight == 0.0:
            continue
        seen: set[Key] = set()
        rank = 0
        for key in keys:
            if key in seen:
                continue
            seen.add(key)
            rank += 1
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])
