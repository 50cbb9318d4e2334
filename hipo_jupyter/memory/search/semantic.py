"""Semantic recall inside `Memory`: the vector side of the index, and its fusion with keywords.

`SemanticIndex` owns the embedder and the `VectorStore` of one memory and keeps the vectors in
step with the text index the way the text index keeps in step with the files: per file, by hash.
It is lazy on purpose: `%load_ext hipo` with nothing to do never imports numpy or onnxruntime
nor loads the model. The vectors catch up before their first use (a recall, a write), and from
then on every write is mirrored in the same call (no indexing lag).

Nothing here may break keyword memory: a missing extra, a damaged model file or a failing model
turns semantic recall off for this `Memory`, with the reason kept for `%hipo status`, and the
text index (the one that matters for correctness) is written as before.

Hybrid recall combines the two sides in one of two ways (`MemoryConfig.fusion`):

- "score" (the default): the vector hits' similarities join BM25 as text relevance inside keyword
  recall (`recall.blend_relevance`), so the Topics Index, the day's match, named periods and
  names, recency and neighbouring turns apply to what either side found;
- "rrf": `fuse` here, the keyword ranking (BM25 with the tree, topics, recency and query handling
  of `recall`), the vector ranking, the Topics Index matches and recency, combined by reciprocal
  rank fusion (`fusion`), each list with its weight.

Score fusion measured better on LoCoMo at 2,000 tokens (benchmarks/LOCOMO.md): RRF keeps only
ranks, so a close paraphrase and a distant one count alike, and its vector hits never get the
neighbours and date handling that make keyword recall work on conversations.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import HipoError
from ..recall.ranking import AnsweredPeriods, Hit
from .embed import Embedder, SemanticUnavailable, semantic_available, shared_embedder
from .fts5 import Document, SearchIndex
from .fusion import RRF_K, reciprocal_rank_fusion

if TYPE_CHECKING:
    from ..config import MemoryConfig
    from .vectors import VectorHit, VectorStore

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
ReadFile = Callable[[str], "tuple[str, list[Document]] | None"]
"""relative path -> (sha256 of the bytes read, its documents), or None when it cannot be read."""

MODES = ("keyword", "semantic", "hybrid")
FUSIONS = ("score", "rrf")  # how hybrid recall combines keywords and vectors (MemoryConfig.fusion)
# HIPO_SEMANTIC=0 turns the automatic setting off for a whole process tree (a test run, a CI job
# that has the extra installed for other reasons); an explicit setting still wins.
ENV_SWITCH = "HIPO_SEMANTIC"
OFF_VALUES = ("0", "off", "false", "no")
# Texts a catch-up embeds on its own before a recall or a write (a few seconds at most); a larger
# backlog (the extra installed on an existing memory) waits for `reindex`, with a progress bar.
BACKLOG_LIMIT = 256


class SemanticBacklog(HipoError):
    """More texts wait to be embedded than a recall or a write should take on: run reindex."""

    def __init__(self, count: int) -> None:
        super().__init__(
            f"semantic recall is waiting for {count:,} texts to be embedded; run %hipo reindex "
            "(or `hipo reindex`) once to embed them with a progress bar"
        )
        self.count = count


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


class SemanticIndex:
    """The vectors of one memory: on or off, opened on first use, kept in step by file hash."""

    def __init__(
        self,
        index_dir: Path,
        *,
        setting: bool | None = None,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        """`setting`: True or False forces semantic recall on or off; None (the default) turns it
        on when the extra is installed. `embedder` replaces the model (tests, other models)."""
        self.index_dir = Path(index_dir)
        self.setting = setting
        self.model_path = model_path or None
        self.tokenizer_path = tokenizer_path or None
        self._embedder = embedder
        self._store: VectorStore | None = None
        self._availability: tuple[bool, str] | None = None
        self._failure = ""  # why it turned off while running, if it did
        self._pending = True  # the vectors may lag the text index until `catch_up`
        self._backlog = 0  # texts a limited catch-up found waiting (see SemanticBacklog)
        self._lock = threading.RLock()

    # -- on or off ------------------------------------------------------------------------------

    def status(self) -> tuple[bool, str]:
        """(on, one line saying so, and how to turn it on when it is off)."""
        if self.setting is False:
            return False, (
                "semantic recall is off (turned off in the settings: c.Hipo.semantic = False)"
            )
        if self.setting is None and os.environ.get(ENV_SWITCH, "").lower() in OFF_VALUES:
            return False, f"semantic recall is off ({ENV_SWITCH}={os.environ[ENV_SWITCH]})"
        if self._failure:
            return False, self._failure
        if self._embedder is not None:
            on, message = True, f"semantic recall is on: {self._embedder.model_id}"
        else:
            if self._availability is None:
                self._availability = semantic_available(self.model_path, self.tokenizer_path)
            on, message = self._availability
        if on and self._backlog:
            message += f" ({SemanticBacklog(self._backlog)})"
        return on, message

    @property
    def enabled(self) -> bool:
        return self.status()[0]

    @property
    def is_open(self) -> bool:
        return self._store is not None

    def turn_off(self, reason: str) -> None:
        """Stop using vectors for the life of this object (a model that failed mid-run)."""
        with self._lock:
            self._failure = (
                reason
                if reason.startswith("semantic recall is off")
                else (f"semantic recall is off: {reason}")
            )
            self.close()

    def store(self) -> VectorStore:
        """The open vector store; SemanticUnavailable when semantic recall is off."""
        with self._lock:
            if self._store is not None:
                return self._store
            on, message = self.status()
            if not on:
                raise SemanticUnavailable(message)
            from .vectors import open_vectors  # numpy: imported only when vectors are used

            embedder = self._embedder or shared_embedder(self.model_path, self.tokenizer_path)
            store = open_vectors(self.index_dir, embedder)
            self._store = store
            return store

    # -- keeping in step ----------------------------------------------------------------------

    def catch_up(
        self,
        index: SearchIndex,
        read: ReadFile,
        *,
        progress: Progress | None = None,
        limit: int | None = None,
    ) -> int:
        """Embed what the text index holds and the vectors do not: files whose hash moved (a
        write by a kernel without the extra, a rebuilt node), every file after a model change;
        drop the vectors of files the text index no longer has. Returns how many were embedded.
        With `limit`, more than `limit` texts to embed is a SemanticBacklog and nothing is.
        """
        with self._lock:
            store = self.store()
            wanted = index.file_hashes()
            held = store.file_hashes()
            for path in set(held) - set(wanted):
                store.remove_file(path)
            stale = sorted(path for path, digest in wanted.items() if held.get(path) != digest)
            files = []
            for path in stale:
                found = read(path)
                if found is None:
                    continue
                digest, docs = found
                files.append((path, digest, docs))
            if limit is not None:
                waiting = len(store.unembedded([d for *_, docs in files for d in docs]))
                if waiting > limit:
                    self._backlog = waiting
                    raise SemanticBacklog(waiting)
            embedded = store.replace_files(files, progress=progress)
            self._pending = False
            self._backlog = 0
            return embedded

    def ready(self, index: SearchIndex, read: ReadFile) -> VectorStore:
        """The store, caught up with the text index if it had not been yet (up to
        BACKLOG_LIMIT texts; more is a SemanticBacklog, for `reindex` to clear)."""
        with self._lock:
            store = self.store()
            if self._pending and self._backlog:  # known too large: not read again each call
                raise SemanticBacklog(self._backlog)
            if self._pending:
                self.catch_up(index, read, limit=BACKLOG_LIMIT)
            return store

    def guarded(self, action: Callable[[], object]) -> bool:
        """Run a mirror write; a failure turns semantic recall off instead of failing the
        caller (the text index, already written, is what keeps memory correct)."""
        try:
            action()
        except SemanticBacklog:
            return False  # still on; the status says to run reindex
        except HipoError as error:
            self.turn_off(str(error))
            return False
        except Exception as error:  # a model or runtime bug must not lose a checkpoint
            log.warning("hipo: semantic recall failed and is off: %r", error)
            self.turn_off(f"the vector index failed ({error!r})")
            return False
        return True

    def search(
        self,
        index: SearchIndex,
        read: ReadFile,
        query: str,
        *,
        limit: int,
        kinds: Collection[str] | None = None,
        types: Collection[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> list[VectorHit]:
        store = self.ready(index, read)
        return store.search(query, limit=limit, kinds=kinds, types=types, since=since, until=until)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            self._pending = True
            self._backlog = 0  # looked at again when next opened


# --- fusion ----------------------------------------------------------------------------------


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
