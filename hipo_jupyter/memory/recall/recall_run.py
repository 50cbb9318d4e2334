"""Running a recall for `Memory`: the mode it runs in, the vectors it asks, the sources it reads.

`Memory.recall_query` and `Memory.context` are thin delegations to this module (`LocalRecall`),
so the write path, team and structured memory in `memory.py` and the recall path here change
apart. What a recall reads besides the index is kept between calls while it holds (the node
paths, a raw log's neighbours, the topics), and the raw logs are listed once per call.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import MemoryConfig
from ..disk.store import NODE_LEVELS, RawStamps, Store
from ..errors import HipoError, QueryError
from ..forget import ForgetLedger
from ..requests import DEFAULT_SETTINGS, MAX_K, RecallQuery, RecallSettings
from ..search.contract import Document, SearchIndex
from ..search.embed import SemanticUnavailable
from ..search.indexing import IndexKeeper, lookup
from ..search.semantic import SemanticBacklog, SemanticIndex
from ..tree.topic_index import Topic, TopicsCache
from . import ranking as recall_module
from .corrections import (
    PROPOSED_CORRECTION,
    PROPOSED_RULE,
    SUPERSEDED,
    Corrections,
    mark_proposals,
)
from .hybrid import FUSIONS, MODES, FusionWeights, fuse, vector_hits_as_hits
from .neighbours import IndexNeighbours, Neighbours
from .ranking import Hit, RecallResult

if TYPE_CHECKING:
    from ..search.vectors import VectorHit  # numpy: imported only when vectors are used

ALL_KINDS = frozenset({"raw", "daily", "weekly", "monthly", "knowledge"})
# A context's hybrid candidates: this many of the fused list, then one of the vector list
# (`firsts_of_both`; 0: the fused list alone, as before). Off until measured on LoCoMo and
# MemAware with the extra (issue 25: not measured in time on the shared 2-core machine).
FUSED_PER_VECTOR_HIT = 0
# The first `RecallSettings.weak_vector_hits` vector hits stay candidates down to a cosine of
# `weak_similarity` (requests.py holds both defaults),
# below `min_similarity`: an everyday question and the note that answers it in other words often
# sit at 0.15-0.3 with MiniLM ("when do we go live?", "Heron ships on 14 May"), while a long tail
# of such weak hits hurt MemAware (a floor of 0.2 for all: 0.583 against 0.600). Chosen by
# leave-one-out on benchmarks/data/everyday-dev.json (issue 35).


@dataclass(frozen=True)
class RecallSources:
    """What one recall reads from its Memory, gathered under the Memory's lock."""

    index: SearchIndex
    topics: Sequence[Topic]
    nodes: Collection[str]
    today: date
    config: MemoryConfig
    neighbours: Neighbours | None  # None: no neighbouring turns lifted
    semantic: SemanticIndex
    file_documents: Callable[[str], tuple[str, list[Document]] | None]
    weights: FusionWeights  # RRF's, when config.fusion == "rrf"
    settings: RecallSettings = DEFAULT_SETTINGS  # stages, weights, limits (`RecallSettings`)


class LocalRecall:
    """A Memory's own recall (the team's is the backend handed in, `backends`): the sources
    each call reads,
    gathered under the Memory's lock."""

    def __init__(
        self,
        store: Store,
        config: MemoryConfig,
        indexer: IndexKeeper,
        topics: TopicsCache,
        today: Callable[[], date],
        lock: threading.RLock,
        forgotten: ForgetLedger,
        proposed_rules: Callable[[RawStamps], Iterable[str]] = lambda stamps: (),
    ) -> None:
        self.store, self.config, self._forgotten = store, config, forgotten
        self._indexer, self._topics, self._today, self._lock = indexer, topics, today, lock
        self._neighbours = IndexNeighbours(indexer.open)  # recall's neighbouring turns
        self._node_paths = NodePaths(store)  # recall's drill-down paths, kept while valid
        self._corrections = Corrections(store)  # what corrections superseded, kept per stamp
        self._proposed_rules = proposed_rules  # where the rules others proposed start (views)

    def recall(
        self,
        request: RecallQuery,
        *,
        neighbours: bool = False,
        snippets: bool = True,
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> RecallResult:
        """`Memory.recall_query`: the ranked hits, raw ones with their provenance (from the
        index, which read it from each checkpoint's comment line)."""
        stamps = self.store.raw_stamps()  # the raw logs listed once: topics and rules
        result = self.ranked(
            request, stamps, neighbours=neighbours, snippets=snippets, settings=settings
        )
        files = {hit.file for hit in result.hits if hit.kind == "raw"}
        if not files:
            return result
        ids = self._corrections.ids(stamps, files)  # each raw hit shows its id, to correct it
        return replace(result, hits=[
            replace(hit, checkpoint_id=ids.get(hit.location, "")) if hit.kind == "raw" else hit
            for hit in result.hits
        ])  # fmt: skip

    def checkpoint_ids(self, hits: Sequence[Hit]) -> list[str]:
        """The ids of the checkpoints among `hits` (raw ones, by where each starts), in
        order: the lineage a call sent these hits records (`Checkpoint.sources`)."""
        files = {hit.file for hit in hits if hit.kind == "raw"}
        ids = self._corrections.ids(self.store.raw_stamps(), files) if files else {}
        found = (hit.checkpoint_id or ids.get(hit.location, "") for hit in hits
                 if hit.kind == "raw")  # fmt: skip
        return list(dict.fromkeys(found for found in found if found))

    def ranked(
        self,
        request: RecallQuery,
        stamps: RawStamps,
        *,
        neighbours: bool = False,
        snippets: bool = True,
        both_lists: bool = False,
        settings: RecallSettings = DEFAULT_SETTINGS,
    ) -> RecallResult:
        """The recall itself (`run`), over what the memory holds now, its raw logs as
        `stamps` (`Store.raw_stamps`) found them; no provenance yet. `both_lists`: a
        context's candidates (see `run`); `settings`: the stages it asked for."""
        semantic = self._indexer.semantic
        mode = resolve_mode(request.mode, semantic)
        superseded = self._corrections.superseded(stamps)
        hidden = set() if request.superseded else superseded
        if hidden:  # room for the hits the superseded ones would take
            shown = request.k
            request = replace(request, k=min(shown + len(hidden), MAX_K))
        with self._lock:
            sources = RecallSources(
                index=self._indexer.ensure(),
                topics=self._topics.index(self._today(), stamps),
                nodes=self._node_paths(),
                today=self._today(),
                config=self.config,
                neighbours=self._neighbours.current() if neighbours else None,
                semantic=semantic,
                file_documents=self._indexer.file_documents,
                weights=FusionWeights.of(self.config),
                settings=settings,
            )
            result = run(sources, request, mode, snippets=snippets, both_lists=both_lists)
        result = without_pending_forgets(result, self._forgotten)
        if hidden:
            kept = [hit for hit in result.hits if hit.location not in hidden]
            result = replace(result, hits=kept[:shown])
        elif superseded:  # asked for with --all: each says it was corrected
            result = replace(result, hits=[
                replace(hit, provenance=f"{hit.provenance}; {SUPERSEDED}".lstrip("; "),
                        superseded=True)
                if hit.location in superseded else hit
                for hit in result.hits
            ])  # fmt: skip
        return mark_proposals(result, self.proposals(stamps))  # never as if in force

    def proposals(self, stamps: RawStamps) -> dict[str, str]:
        """Where each proposal the user has not accepted starts (`Hit.location`), and what it
        is: a rule another writer proposed, or an agent's correction of the user's words."""
        found = dict.fromkeys(self._proposed_rules(stamps), PROPOSED_RULE)
        found.update(dict.fromkeys(self._corrections.proposed(stamps), PROPOSED_CORRECTION))
        return found

    def documents(self, ids: Sequence[str]) -> dict[str, Document]:
        """The full documents of these ids, from the index (a context's pieces)."""
        with self._lock:
            return self._indexer.ensure().documents_by_id(list(ids))


def without_pending_forgets(result: RecallResult, forgotten: ForgetLedger) -> RecallResult:
    """`result` less the hits holding a piece of a forget begun and not finished (a forget
    killed midway): its text is not recalled until the forget is run again."""
    pending = forgotten.pending()
    if not pending:
        return result
    hides = forgotten.hides(pending)
    kept = [hit for hit in result.hits if not hides(f"{hit.title}\n{hit.snippet}")]
    return replace(result, hits=kept) if len(kept) != len(result.hits) else result


def run(
    sources: RecallSources,
    request: RecallQuery,
    mode: str,
    *,
    snippets: bool = True,
    both_lists: bool = False,
) -> RecallResult:
    """The recall of `request` in `mode` (keyword | semantic | hybrid, already resolved by
    `resolve_mode`). Hybrid fuses as `config.fusion` says; when the vectors cannot
    answer (a backlog, a failure) hybrid answers by keyword, semantic raises. `both_lists`
    (a context's candidates, score fusion): the vector list's first hits are taken in turn
    with the fused ones (`firsts_of_both`), so what meaning alone ranks first is not buried
    under what the words found."""
    k = request.k

    def keyword(count: int, similar: Sequence[tuple[Document, float]] = ()) -> RecallResult:
        return keyword_recall(sources, request, count, similar=similar, snippets=snippets)

    if mode == "keyword":
        return keyword(k)
    # Candidates from the vectors: as many as BM25 gives keyword recall for score
    # fusion; twice what is shown for RRF (enough for an answer one list ranks low
    # and the other high, measured on LoCoMo); `k` for semantic recall alone.
    fusion = sources.config.fusion
    if fusion not in FUSIONS:
        raise HipoError(f"fusion must be one of {', '.join(FUSIONS)}, not {fusion!r}")
    rrf = fusion == "rrf"
    limit = recall_module.candidate_count(k)
    if mode == "semantic":
        limit = k
    elif rrf:
        limit = max(2 * k, 10)
    try:
        found = sources.semantic.search(
            sources.index,
            sources.file_documents,
            request.query,
            limit=limit,
            kinds={"raw"} if request.type else set(ALL_KINDS),
            types={request.type} if request.type else None,
            since=_day(request.since),
            until=_day(request.until),
        )
    except SemanticBacklog:
        if mode == "semantic":
            raise
        return keyword(k)  # the status says: run reindex
    except HipoError as error:
        if mode == "semantic":
            raise
        sources.semantic.turn_off(str(error))  # answer by keyword, and keep saying why
        return keyword(k)
    found = vector_candidates(found, sources.config.min_similarity, sources.settings)
    # Documents come from the text index in one query (not by parsing each hit's file:
    # at a year of memory that was most of a hybrid recall's time).
    index, nodes = sources.index, sources.nodes
    if mode == "semantic":
        hits = vector_hits_as_hits(found, lookup(index, found), nodes)
        return RecallResult(query=request.query.strip(), hits=hits, mode="semantic")
    if not rrf:
        docs = index.documents_by_id([hit.id for hit in found])
        similar = [(docs[hit.id], hit.score) for hit in found if hit.id in docs]
        fused = replace(keyword(k, similar), mode="hybrid")
        if not both_lists or FUSED_PER_VECTOR_HIT <= 0:
            return fused
        meaning = vector_hits_as_hits(found[:k], lookup(index, found[:k]), nodes)
        return replace(fused, hits=firsts_of_both(fused.hits, meaning, k, FUSED_PER_VECTOR_HIT))
    ranked = keyword(limit)
    hits = fuse(
        ranked.hits,
        found,
        k=k,
        topic_names=ranked.topic_matches,
        lookup=lookup(index, found, ranked.hits),
        nodes=nodes,
        weights=sources.weights,
    )
    did_you_mean = [] if hits else ranked.did_you_mean
    return replace(ranked, hits=hits, did_you_mean=did_you_mean, mode="hybrid")


def firsts_of_both(fused: Sequence[Hit], meaning: Sequence[Hit], k: int, per: int) -> list[Hit]:
    """`k` hits: `per` of the fused list, then one of the vector list, in turn, each hit
    once. Why: the vector list finds answers BM25 misses (MemAware: an answer in its first 30
    for 0.49 of the questions, BM25's for 0.41), but its similarity added to the keyword
    relevance rarely lifts a hit without the query's words over those with them."""
    out: list[Hit] = []
    seen: set[str] = set()
    lists = (iter(fused), iter(meaning))
    turn = 0
    while len(out) < k:
        source = lists[1] if turn % (per + 1) == per else lists[0]
        hit = next(source, None)
        if hit is None:
            other = lists[0] if source is lists[1] else lists[1]
            hit = next(other, None)
            if hit is None:
                break
        turn += 1
        if hit.location not in seen:
            seen.add(hit.location)
            out.append(hit)
    return out


def keyword_recall(
    sources: RecallSources,
    request: RecallQuery,
    k: int,
    *,
    similar: Sequence[tuple[Document, float]] = (),
    snippets: bool = True,
) -> RecallResult:
    """`ranking.recall` over these sources: BM25 with the tree, topics, recency and (with
    `similar`) the vectors' similarity as more text relevance."""
    return recall_module.recall(
        sources.index,
        sources.topics,
        request.query,
        k=k,
        since=_day(request.since),
        until=_day(request.until),
        type=request.type,
        today=sources.today,
        half_life_days=sources.config.recency_half_life_days,
        nodes=sources.nodes,
        neighbours=sources.neighbours,
        similar=similar,
        similar_weight=sources.config.similarity_weight,
        snippets=snippets,
        settings=sources.settings,
    )


def _day(value: date | None) -> str | None:
    return value.isoformat() if value else None


def vector_candidates(
    found: Sequence[VectorHit], floor: float, settings: RecallSettings = DEFAULT_SETTINGS
) -> list[VectorHit]:
    """The vector hits (best first) that join recall: at least `floor` of cosine, or among the
    first `settings.weak_vector_hits` and at least `settings.weak_similarity`."""
    first, weak = settings.weak_vector_hits, settings.weak_similarity
    return [
        hit
        for rank, hit in enumerate(found)
        if hit.score >= floor or (rank < first and hit.score >= weak)
    ]


def resolve_mode(mode: str | None, semantic: SemanticIndex) -> str:
    """The mode a recall runs in: "auto" and "hybrid" become keyword when semantic recall is
    off; "semantic" then fails with how to turn it on."""
    mode = (mode or "keyword").lower()
    if mode not in (*MODES, "auto"):
        raise QueryError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "keyword":
        return mode
    on, message = semantic.status()
    if mode == "semantic" and not on:
        raise SemanticUnavailable(message)
    if mode in ("auto", "hybrid"):
        return "hybrid" if on else "keyword"
    return mode


class NodePaths:
    """`Store.node_paths()` (the nodes a hit's drill-down may name), kept while the node
    folders and ROOT.md are unchanged: a folder's mtime moves whenever a file is created,
    removed or renamed in it (a node rewrite is a rename), which is all that changes the set.
    At a year of memory, listing ~430 nodes was a tenth of every recall."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._key: tuple[object, ...] | None = None
        self._paths: frozenset[str] = frozenset()

    def __call__(self) -> frozenset[str]:
        key = tuple(
            _folder_stamp(path)
            for path in (
                *(self.store.level_dir(level) for level in NODE_LEVELS),
                self.store.root_node,
            )
        )
        if key != self._key:
            self._paths = frozenset(self.store.node_paths())
            self._key = key
        return self._paths


def _folder_stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_mtime_ns, info.st_mode)
