"""Hybrid recall: keyword hits and vector hits made into one ranking.

Hybrid recall combines the two sides in one of two ways (`MemoryConfig.fusion`):

- "score" (the default): the vector hits' similarities join BM25 as text relevance inside keyword
  recall (`ranking.blend_relevance`), so the Topics Index, the day's match, named periods and
  names, recency and neighbouring turns apply to what either side found;
- "rrf": `fuse` here, the keyword ranking (BM25 with the tree, topics, recency and query handling
  of `ranking`), the vector ranking, the Topics Index matches and recency, combined by reciprocal
  rank fusion (`fusion`), each list with its weight.

Score fusion measured better on LoCoMo at 2,000 tokens (benchmarks/LOCOMO.md): RRF keeps only
ranks, so a close paraphrase and a distant one count alike, and its vector hits never get the
neighbours and date handling that make keyword recall work on conversations.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..search.contract import Document
from ..search.fusion import RRF_K, reciprocal_rank_fusion
from .ranking import AnsweredPeriods, Hit

if TYPE_CHECKING:
    from ..config import MemoryConfig
    from ..search.vectors import VectorHit

MODES = ("keyword", "semantic", "hybrid")
FUSIONS = ("score", "rrf")  # how hybrid recall combines keywords and vectors (MemoryConfig.fusion)


@dataclass(frozen=True)
class FusionWeights:
    """How much each ranked list counts in hybrid recall (0 turns one off), and RRF's k."""

    keyword: float = 1.0
    vector: float = 0.3
    topics: float = 0.3
    recency: float = 0.0
    k: float = RRF_K

    @classmethod
    def of(cls, config: MemoryConfig) -> FusionWeights:
        """RRF's weights as a memory's config sets them (`config.fusion == "rrf"`)."""
        return cls(
            keyword=config.keyword_weight,
            vector=config.vector_weight,
            topics=config.topics_weight,
            recency=config.recency_weight,
            k=config.rrf_k,
        )


def vector_hits_as_hits(
    found: Sequence[VectorHit],
    lookup: Callable[[str, int], Document | None],
    nodes: Collection[str],
) -> list[Hit]:
    """Vector search results as recall hits (semantic mode): best first, cosine as the score."""
    hits = []
    for vector_hit in found:
        doc = lookup(vector_hit.path, vector_hit.line)
        if doc is not None:
            hits.append(
                Hit.of(doc, snippet="", score=round(vector_hit.score, 6), topics=(), nodes=nodes)
            )
    return hits


def fuse(
    keyword: Sequence[Hit],
    vector: Sequence[VectorHit],
    *,
    k: int,
    topic_names: Collection[str],
    lookup: Callable[[str, int], Document | None],
    nodes: Collection[str],
    weights: FusionWeights = FusionWeights(),  # noqa: B008 - frozen, so shared safely
) -> list[Hit]:
    """The `k` best of the keyword and vector rankings fused by RRF, with two more lists drawn
    from the candidates of both: those carrying a Topics Index entry the query names (in keyword
    order, then vector order) and all of them newest first. A hit keeps the keyword snippet and
    topics when it has them; hits with the same title and text are shown once."""
    by_key: dict[tuple[str, int], Hit | VectorHit] = {}
    for hit in keyword:
        by_key.setdefault((hit.file, hit.line), hit)
    vector_keys = []
    for vector_hit in vector:
        key = (vector_hit.path, vector_hit.line)
        vector_keys.append(key)
        by_key.setdefault(key, vector_hit)
    keyword_keys = [(hit.file, hit.line) for hit in keyword]
    # As in keyword recall, a node is no hit when a raw checkpoint of its period already is.
    answered = AnsweredPeriods({item.date for item in by_key.values() if item.kind == "raw"})
    vector_keys = [
        key
        for key in vector_keys
        if isinstance(by_key[key], Hit) or not answered.answered(by_key[key].kind, by_key[key].date)
    ]
    candidates = list(dict.fromkeys(keyword_keys + vector_keys))
    docs: dict[tuple[str, int], Document] = {}

    def tags_of(key: tuple[str, int]) -> tuple[str, ...]:
        item = by_key[key]
        if isinstance(item, Hit):
            return item.topics
        doc = docs.get(key) or lookup(*key)
        if doc is None:
            return ()
        docs[key] = doc
        return tuple(sorted(set(doc.tags) & set(topic_names)))

    rankings: dict[str, list[tuple[str, int]]] = {"keyword": keyword_keys, "vector": vector_keys}
    if weights.topics and topic_names:
        rankings["topics"] = [key for key in candidates if tags_of(key)]
    if weights.recency:
        dates = {key: by_key[key].date for key in candidates}
        rankings["recency"] = sorted(candidates, key=lambda key: dates[key], reverse=True)
    fused = reciprocal_rank_fusion(
        rankings, {name: getattr(weights, name) for name in rankings}, k=weights.k
    )
    hits: list[Hit] = []
    seen_texts: set[str] = set()
    for key, score in fused:
        item = by_key[key]
        doc = docs.get(key) or lookup(*key)
        if isinstance(item, Hit):
            hit = replace(item, score=round(score, 6))
            text = doc.text if doc is not None else item.snippet
        elif doc is None:  # the file changed since it was embedded: skip, it catches up
            continue
        else:
            hit = Hit.of(doc, snippet="", score=round(score, 6), topics=tags_of(key), nodes=nodes)
            text = doc.text
        fingerprint = " ".join(f"{hit.title}\n{text}".split()).casefold()
        if fingerprint in seen_texts:  # the same words twice (a repeated import, a copy)
            continue
        seen_texts.add(fingerprint)
        hits.append(hit)
        if len(hits) == k:
            break
    return hits
