"""Semantic recall's engine side: on/off, catching up with the text index, failures that turn it
off without breaking memory, and the fusion of keyword and vector rankings.

Vectors come from `WordHashEmbedder` (numpy only); the tests skip without numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from semantic_helpers import WordHashEmbedder  # noqa: E402

from hipo_jupyter.memory.recall.hybrid import FusionWeights, fuse  # noqa: E402
from hipo_jupyter.memory.recall.ranking import Hit  # noqa: E402
from hipo_jupyter.memory.search.contract import Document  # noqa: E402
from hipo_jupyter.memory.search.embed import SemanticUnavailable  # noqa: E402
from hipo_jupyter.memory.search.indexing import open_index  # noqa: E402
from hipo_jupyter.memory.search.semantic import SemanticIndex  # noqa: E402
from hipo_jupyter.memory.search.vectors import VectorHit  # noqa: E402

RAW = "memory/2026-03-12.md"
RAW_EARLY = "memory/2026-03-02.md"


def doc(path: str, line: int, title: str, text: str, tags: tuple[str, ...] = ()) -> Document:
    day = path[len("memory/") : len("memory/") + 10]
    return Document(f"{path}#L{line}", path, line, "raw", day, "project", title, text, tags)


HERON = doc(RAW, 1, "Heron", "moved the heron launch to may")
PRICING = doc(RAW, 8, "Pricing", "cut the starter tier price", ("pricing",))
DOG = doc(RAW_EARLY, 1, "Dog", "took the dog to the vet")


@pytest.fixture(autouse=True)
def _semantic_not_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test run may set HIPO_SEMANTIC=0 for the other tests; these test semantic recall."""
    monkeypatch.delenv("HIPO_SEMANTIC", raising=False)


class Files:
    """The Markdown side, as `SemanticIndex.catch_up` reads it: path -> (hash, documents)."""

    def __init__(self, files: dict[str, tuple[str, list[Document]]]) -> None:
        self.files = files
        self.reads: list[str] = []

    def __call__(self, path: str) -> tuple[str, list[Document]] | None:
        self.reads.append(path)
        return self.files.get(path)


@pytest.fixture
def index(tmp_path: Path):
    text_index = open_index(tmp_path)
    text_index.replace_file(RAW, "r1", [HERON, PRICING])
    text_index.replace_file(RAW_EARLY, "e1", [DOG])
    yield text_index
    text_index.close()


def semantic(tmp_path: Path, embedder: WordHashEmbedder | None = None, **kwargs) -> SemanticIndex:
    return SemanticIndex(tmp_path, embedder=embedder or WordHashEmbedder(), **kwargs)


def test_turned_off_in_the_settings_says_so(tmp_path: Path) -> None:
    off = semantic(tmp_path, setting=False)
    on, message = off.status()
    assert on is False and "c.Hipo.semantic" in message
    with pytest.raises(SemanticUnavailable):
        off.store()


def test_catch_up_embeds_what_the_text_index_has_and_the_vectors_lack(
    tmp_path: Path, index
) -> None:
    embedder = WordHashEmbedder()
    files = Files({RAW: ("r1", [HERON, PRICING]), RAW_EARLY: ("e1", [DOG])})
    vectors = semantic(tmp_path, embedder)
    assert vectors.catch_up(index, files) == 3
    assert vectors.store().file_hashes() == {RAW: "r1", RAW_EARLY: "e1"}
    files.reads.clear()
    assert vectors.catch_up(index, files) == 0 and files.reads == []  # nothing moved: no reads
    # Another kernel (without the extra) appended to RAW and deleted RAW_EARLY.
    later = doc(RAW, 15, "Heron", "the heron beta opens in april")
    index.add(RAW, "r2", [later])
    index.remove_file(RAW_EARLY)
    files.files = {RAW: ("r2", [HERON, PRICING, later])}
    embedder.embedded.clear()
    assert vectors.catch_up(index, files) == 1
    assert embedder.embedded == ["Heron\nthe heron beta opens in april"]
    assert vectors.store().file_hashes() == {RAW: "r2"}
    assert {h.id for h in vectors.store().search("dog vet heron", limit=10)} == {
        HERON.id,
        PRICING.id,
        later.id,
    }
    vectors.close()


def test_search_catches_up_first(tmp_path: Path, index) -> None:
    files = Files({RAW: ("r1", [HERON, PRICING]), RAW_EARLY: ("e1", [DOG])})
    vectors = semantic(tmp_path)
    hits = vectors.search(index, files, "the dog at the vet", limit=1)
    assert [h.id for h in hits] == [DOG.id]
    vectors.close()


def test_a_failing_model_turns_semantic_off_with_its_reason(tmp_path: Path, index) -> None:
    class Broken(WordHashEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            raise SemanticUnavailable("the embedding model x.onnx failed on its input: boom")

    vectors = semantic(tmp_path, Broken())
    assert vectors.enabled
    files = Files({RAW: ("r1", [HERON, PRICING])})
    assert vectors.guarded(lambda: vectors.catch_up(index, files)) is False
    on, message = vectors.status()
    assert on is False and message.startswith("semantic recall is off") and "boom" in message
    with pytest.raises(SemanticUnavailable, match="boom"):
        vectors.store()


# --- fusion ----------------------------------------------------------------------------------


def keyword_hit(d: Document, score: float, topics: tuple[str, ...] = ()) -> Hit:
    return Hit(d.path, d.line, d.date, d.kind, d.type, d.title, d.text, score, (d.path,), topics)


def vector_hit(d: Document, score: float) -> VectorHit:
    return VectorHit(d.id, d.path, d.line, d.kind, d.date, d.type, score)


def lookup_of(*docs: Document):
    table = {(d.path, d.line): d for d in docs}
    return lambda path, line: table.get((path, line))


def test_fusion_puts_what_both_lists_found_first_and_keeps_vector_only_hits(
    tmp_path: Path,
) -> None:
    hits = fuse(
        [keyword_hit(PRICING, 2.0), keyword_hit(HERON, 1.0)],
        [vector_hit(DOG, 0.9), vector_hit(HERON, 0.8)],
        k=5,
        topic_names=set(),
        lookup=lookup_of(HERON, PRICING, DOG),
        nodes={"memory/ROOT.md"},
        weights=FusionWeights(vector=1.0),
    )
    assert [h.title for h in hits] == ["Heron", "Pricing", "Dog"]
    dog = hits[2]
    assert dog.file == RAW_EARLY and dog.snippet == DOG.text and dog.kind == "raw"
    assert dog.path == ("memory/ROOT.md", f"{RAW_EARLY}#L1")  # drill-down as recall builds it
    assert hits[0].score > hits[1].score == hits[2].score > 0  # first in one list each


def test_the_keyword_list_leads_at_the_default_weights() -> None:
    hits = fuse(
        [keyword_hit(PRICING, 2.0), keyword_hit(HERON, 1.0)],
        [vector_hit(HERON, 0.9), vector_hit(PRICING, 0.1)],
        k=5,
        topic_names=set(),
        lookup=lookup_of(HERON, PRICING),
        nodes=set(),
    )
    assert [h.title for h in hits] == ["Pricing", "Heron"]


def test_an_answer_only_one_list_holds_is_found() -> None:
    only_vector = fuse(
        [], [vector_hit(DOG, 0.4)], k=3, topic_names=set(), lookup=lookup_of(DOG), nodes=set()
    )
    assert [h.title for h in only_vector] == ["Dog"]
    only_keyword = fuse(
        [keyword_hit(DOG, 1.0)], [], k=3, topic_names=set(), lookup=lookup_of(DOG), nodes=set()
    )
    assert [h.title for h in only_keyword] == ["Dog"]


def test_topics_and_recency_are_lists_of_their_own() -> None:
    tagged_later = doc(RAW, 20, "Pricing 2", "tier prices again", ("pricing",))
    common = dict(lookup=lookup_of(HERON, DOG, tagged_later), nodes=set(), k=3)
    plain = fuse(
        [],
        [vector_hit(DOG, 0.9), vector_hit(tagged_later, 0.5)],
        topic_names={"pricing"},
        weights=FusionWeights(topics=0.0),
        **common,
    )
    assert [h.title for h in plain] == ["Dog", "Pricing 2"]
    topical = fuse(
        [],
        [vector_hit(DOG, 0.9), vector_hit(tagged_later, 0.5)],
        topic_names={"pricing"},
        weights=FusionWeights(topics=1.0),
        **common,
    )
    assert [h.title for h in topical] == ["Pricing 2", "Dog"]
    assert topical[0].topics == ("pricing",)
    recent = fuse(
        [],
        [vector_hit(DOG, 0.9), vector_hit(HERON, 0.5)],
        topic_names=set(),
        weights=FusionWeights(recency=1.0),
        **common,
    )
    assert [h.title for h in recent] == ["Heron", "Dog"]  # 2026-03-12 after 2026-03-02


def test_fusion_cuts_at_k_and_shows_the_same_words_once() -> None:
    copy = doc(RAW_EARLY, 9, "Heron", "moved the heron launch to may")
    hits = fuse(
        [keyword_hit(HERON, 1.0)],
        [vector_hit(copy, 0.9), vector_hit(DOG, 0.8), vector_hit(PRICING, 0.7)],
        k=2,
        topic_names=set(),
        lookup=lookup_of(HERON, copy, DOG, PRICING),
        nodes=set(),
    )
    assert [(h.title, h.file) for h in hits] == [("Heron", RAW), ("Dog", RAW_EARLY)]
