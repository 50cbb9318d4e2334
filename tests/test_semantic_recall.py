"""Semantic recall through `Memory`: vectors written with the text, hybrid fusion that finds what
only one list holds, the modes, model changes, backlogs, failures, and both text backends.

Vectors come from `WordHashEmbedder` with synonyms (a word and its synonym share a bucket), so
"same meaning, other words" is staged without a model; the tests need numpy only.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from semantic_helpers import WordHashEmbedder  # noqa: E402

from hipo_jupyter.memory import Memory, MemoryConfig, RecallSettings  # noqa: E402
from hipo_jupyter.memory.errors import HipoError, QueryError  # noqa: E402
from hipo_jupyter.memory.search import semantic as semantic_module  # noqa: E402
from hipo_jupyter.memory.search.embed import SemanticUnavailable  # noqa: E402

TODAY = date(2026, 3, 12)
HAS_WHOOSH = importlib.util.find_spec("whoosh") is not None

# "launch" and "release" mean what "Heron" (the product) is about; "ship" too.
SYNONYMS = {"launch": "release", "ship": "release", "heron": "release", "postponed": "moved"}


@pytest.fixture(autouse=True)
def _semantic_not_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test run may set HIPO_SEMANTIC=0 for the other tests; these test semantic recall."""
    monkeypatch.delenv("HIPO_SEMANTIC", raising=False)


class IgnoresIdentifiers(WordHashEmbedder):
    """A model that cannot see ticket numbers: only BM25 finds them."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed(
            [" ".join(w for w in t.split() if not any(c.isdigit() for c in w)) for t in texts]
        )


def make_memory(root: Path, embedder=None, **config) -> Memory:
    config.setdefault("min_similarity", 0.1)
    return Memory(
        root,
        config=MemoryConfig(**config),
        today=lambda: TODAY,
        embedder=embedder or WordHashEmbedder(synonyms=SYNONYMS),
    )


def fill(memory: Memory) -> None:
    memory.remember("Heron plan", "- decisions: moved Heron to May", on=date(2026, 3, 2))
    memory.remember(
        "Pricing", "- decisions: cut the starter tier by 15% (PRC-1042)", on=date(2026, 3, 5)
    )
    memory.remember("Hiring", "- decisions: open two analyst roles", on=date(2026, 3, 9))


def titles(result) -> list[str]:
    return [hit.title for hit in result]


FUSIONS = pytest.mark.parametrize("fusion", ["score", "rrf"])


@FUSIONS
def test_only_the_vectors_hold_the_answer(memory_root: Path, fusion: str) -> None:
    memory = make_memory(memory_root, fusion=fusion)
    fill(memory)
    question = "when is the launch"
    assert titles(memory.recall(question, mode="keyword")) == []  # no word in common
    hybrid = memory.recall(question, mode="hybrid")
    assert hybrid.mode == "hybrid" and titles(hybrid)[0] == "Heron plan"
    hit = hybrid[0]
    assert hit.file == "memory/2026-03-02.md" and "moved Heron to May" in hit.snippet
    assert hit.path[-1] == "memory/2026-03-02.md#L1"
    assert titles(memory.recall(question, mode="semantic"))[0] == "Heron plan"
    memory.close()


@FUSIONS
def test_only_keywords_hold_the_answer(memory_root: Path, fusion: str) -> None:
    memory = make_memory(memory_root, IgnoresIdentifiers(synonyms=SYNONYMS), fusion=fusion)
    fill(memory)
    assert "Pricing" not in titles(memory.recall("PRC-1042", mode="semantic"))
    hybrid = memory.recall("PRC-1042", mode="hybrid")
    assert titles(hybrid)[0] == "Pricing" and hybrid.mode == "hybrid"
    memory.close()


def test_auto_is_hybrid_when_on_and_keyword_when_off(memory_root: Path) -> None:
    on = make_memory(memory_root)
    fill(on)
    assert on.recall("launch", mode="auto").mode == "hybrid"
    assert on.recall("launch").mode == "hybrid"  # the library defaults as the front ends do
    on.close()
    off = make_memory(memory_root, semantic=False)
    result = off.recall("launch", mode="hybrid")
    assert result.mode == "keyword" and titles(result) == []
    with pytest.raises(SemanticUnavailable, match="c.Hipo.semantic = False"):
        off.recall("launch", mode="semantic")
    with pytest.raises(QueryError, match="mode must be one of"):
        off.recall("launch", mode="vectors")
    off.close()


def test_a_checkpoint_is_embedded_once_by_the_background_worker(memory_root: Path) -> None:
    embedder = WordHashEmbedder(synonyms=SYNONYMS)
    memory = make_memory(memory_root, embedder)
    fill(memory)
    memory.recall("warm up", mode="hybrid")
    embedder.embedded.clear()
    memory.remember("Launch review", "- outcome: the release checklist is done")
    memory.semantic.flush()
    assert [text.splitlines()[0] for text in embedder.embedded] == ["Launch review"]
    store = memory.semantic.store()
    relative = f"memory/{TODAY.isoformat()}.md"
    assert store.file_hash(relative) == memory._open_index().file_hashes()[relative]
    assert titles(memory.recall("release checklist", mode="semantic"))[0] == "Launch review"
    memory.close()


def test_vectors_catch_up_with_what_a_kernel_without_the_extra_wrote(memory_root: Path) -> None:
    without = make_memory(memory_root, semantic=False)
    fill(without)
    without.close()
    embedder = WordHashEmbedder(synonyms=SYNONYMS)
    memory = make_memory(memory_root, embedder)
    assert titles(memory.recall("when is the launch", mode="hybrid"))[0] == "Heron plan"
    embedded = {text.splitlines()[0] for text in embedder.embedded}
    assert {"Heron plan", "Pricing", "Hiring"} <= embedded
    memory.close()


def test_a_new_model_re_embeds_the_memory(memory_root: Path) -> None:
    first = make_memory(memory_root, WordHashEmbedder("word-hash@1", synonyms=SYNONYMS))
    fill(first)
    first.recall("x", mode="hybrid")
    first.close()
    second_model = WordHashEmbedder("word-hash@2", dim=128, synonyms=SYNONYMS)
    second = make_memory(memory_root, second_model)
    assert titles(second.recall("when is the launch", mode="hybrid"))[0] == "Heron plan"
    assert second.semantic.store().models() == {"word-hash@2": second.semantic.store().count()}
    assert {"Heron plan", "Pricing", "Hiring"} <= {t.splitlines()[0] for t in second_model.embedded}
    second.close()


def test_a_large_backlog_catches_up_in_the_background_not_at_the_user(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: a memory written before the model was installed is embedded by the background
    worker; recall answers meanwhile (keywords find what is not embedded yet), never an error."""
    monkeypatch.setattr(semantic_module, "BACKLOG_LIMIT", 2)
    monkeypatch.setattr(semantic_module, "CATCH_UP_STEP", 1)
    without = make_memory(memory_root, semantic=False)
    fill(without)
    without.close()
    memory = make_memory(memory_root)
    result = memory.recall("heron", mode="hybrid")
    assert result.mode == "hybrid" and "Heron plan" in titles(result)
    assert memory.semantic.wait_idle(timeout=30)
    assert "catching up" not in memory.status().semantic
    assert memory.semantic.store().count() >= 3
    assert titles(memory.recall("when is the launch", mode="hybrid"))[0] == "Heron plan"
    memory.close()


def test_reindex_embeds_a_backlog_in_batches_with_progress(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "BACKLOG_LIMIT", 2)
    without = make_memory(memory_root, semantic=False)
    fill(without)
    without.close()
    memory = make_memory(memory_root)
    calls: list[tuple[int, int, str]] = []
    memory.reindex(progress=lambda *args: calls.append(args))
    embedding = [call for call in calls if call[2] == "embedding"]
    assert embedding and embedding[-1][0] == embedding[-1][1] >= 3
    assert "catching up" not in memory.status().semantic
    assert memory.recall("when is the launch", mode="hybrid").mode == "hybrid"
    memory.close()


def test_remember_hands_its_vector_to_the_background_and_recall_waits_for_it(
    memory_root: Path,
) -> None:
    """The cell's path never embeds: the model runs in the worker thread; a recall by meaning
    right after the write still finds it (the recall flushes the worker first)."""
    import threading

    class Watched(WordHashEmbedder):
        threads: dict[str, str] = {}

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            Watched.threads.update((t, threading.current_thread().name) for t in texts)
            return super().embed(texts)

    memory = make_memory(memory_root, Watched(synonyms=SYNONYMS))
    memory.recall("warm up", mode="hybrid")  # the store opens (and catches up) on first use
    memory.remember("Heron plan", "- decisions: moved Heron to May")
    assert titles(memory.recall("when is the launch", mode="hybrid"))[0] == "Heron plan"
    assert Watched.threads["Heron plan\ndecisions: moved Heron to May"] == "hipo-embedder"
    assert Watched.threads["when is the launch"] == "MainThread"  # the query: the caller's
    memory.close()


def test_a_failing_model_never_loses_a_checkpoint(memory_root: Path) -> None:
    class Fails(WordHashEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            raise RuntimeError("onnxruntime exploded")

    memory = make_memory(memory_root, Fails())
    checkpoint = memory.remember("Pricing", "- decisions: cut the starter tier by 15%")
    assert checkpoint.line == 1
    assert titles(memory.recall("starter tier")) == ["Pricing"]
    assert "onnxruntime exploded" in memory.status().semantic
    result = memory.recall("starter tier", mode="auto")
    assert result.mode == "keyword" and titles(result) == ["Pricing"]
    memory.close()


def test_status_says_whether_semantic_recall_is_on(
    memory_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = make_memory(memory_root)
    assert memory.status().semantic == "semantic recall is on: word-hash@1"
    memory.close()
    assert (
        "turned off in the settings" in make_memory(memory_root, semantic=False).status().semantic
    )
    monkeypatch.setenv("HIPO_SEMANTIC", "0")
    assert make_memory(memory_root).status().semantic == "semantic recall is off (HIPO_SEMANTIC=0)"
    assert make_memory(memory_root, semantic=True).semantic.enabled  # an explicit setting wins


def test_nodes_are_embedded_and_a_covered_node_is_not_a_second_hit(memory_root: Path) -> None:
    memory = make_memory(memory_root)
    fill(memory)
    memory.compact()
    memory.semantic.wait_idle()  # compaction's index sync hands the nodes to the worker
    kinds = {hit.kind for hit in memory.semantic.store().search("heron", limit=20)}
    assert "daily" in kinds  # ... which embedded them
    hits = memory.recall("when is the launch", mode="hybrid", k=10)
    heron_days = [hit for hit in hits if hit.date == "2026-03-02"]
    assert [hit.kind for hit in heron_days] == ["raw"]  # its daily node is covered by the raw hit
    memory.close()


def test_knowledge_files_are_embedded_when_saved(memory_root: Path) -> None:
    memory = make_memory(memory_root)
    fill(memory)
    memory.recall("warm up", mode="hybrid")
    memory.save_knowledge("Release notes", "Everything about the launch checklist and timing.")
    hits = memory.recall("ship", mode="semantic", k=10)
    assert "knowledge" in {hit.kind for hit in hits}
    memory.close()


@pytest.mark.skipif(not HAS_WHOOSH, reason="whoosh is not installed")
def test_whoosh_as_text_backend_uses_the_same_vectors(memory_root: Path) -> None:
    memory = make_memory(memory_root, search_backend="whoosh")
    fill(memory)
    result = memory.recall("when is the launch", mode="hybrid")
    assert titles(result)[0] == "Heron plan"
    assert (memory_root / "memory" / ".index" / "fts5.sqlite3").is_file()
    memory.close()


@FUSIONS
def test_weights_from_the_config_steer_the_fusion(memory_root: Path, fusion: str) -> None:
    weight = "similarity_weight" if fusion == "score" else "vector_weight"
    memory = make_memory(memory_root, fusion=fusion, **{weight: 0.0})
    fill(memory)
    assert titles(memory.recall("when is the launch", mode="hybrid")) == []  # vectors off
    memory.close()


def test_score_fusion_gives_a_meaning_hit_its_neighbours(
    memory_root: Path,
) -> None:
    # The reply after a turn found by meaning alone is lifted as a keyword hit's would be:
    # with score fusion the vector hits go through the same query handling. ("Board" is too
    # far from the question to be a vector hit of its own at this similarity floor, with no
    # weak first hits let through below it.)
    no_weak = RecallSettings(weak_vector_hits=0)
    memory = make_memory(memory_root, min_similarity=0.3)
    day = date(2026, 3, 2)
    memory.remember("Heron plan", "- decisions: moved Heron to May", on=day)
    memory.remember("Board", "- outcome: the board agreed on the new date", on=day)
    memory.remember("Hiring", "- decisions: open two analyst roles", on=date(2026, 3, 9))
    question = "when is the launch"
    assert "Board" not in titles(memory.recall(question, k=3, mode="semantic", settings=no_weak))
    score = titles(memory.recall(question, k=3, mode="hybrid", neighbours=True,
                                 settings=no_weak))
    assert score[0] == "Heron plan" and "Board" in score
    memory.close()
    rrf = make_memory(memory_root, fusion="rrf", min_similarity=0.3)
    shown = rrf.recall(question, k=3, mode="hybrid", neighbours=True, settings=no_weak)
    assert "Board" not in titles(shown)
    rrf.close()


def test_an_unknown_fusion_is_a_clear_error(memory_root: Path) -> None:
    memory = make_memory(memory_root, fusion="borda")
    fill(memory)
    assert memory.recall("launch", mode="keyword").mode == "keyword"  # keyword recall does not fuse
    with pytest.raises(HipoError, match="fusion must be one of score, rrf, not 'borda'"):
        memory.recall("launch", mode="hybrid")
    memory.close()


@FUSIONS
def test_two_turns_alike_in_their_snippets_are_both_kept(memory_root: Path, fusion: str) -> None:
    # Hits are shown once per distinct title and *whole* text: a keyword hit's snippet is
    # only a window of it, and two turns that differ after the window are two hits. (No
    # vector hits at this floor: the keyword side alone must carry the whole texts.)
    memory = make_memory(memory_root, fusion=fusion, min_similarity=0.99)
    shared = "- outcome: went to the pottery class again with the kids " * 6
    memory.remember("Caroline", shared + "on Monday", on=date(2026, 3, 2))
    memory.remember("Caroline", shared + "on Friday", on=date(2026, 3, 6))
    hits = memory.recall("pottery class", k=5, mode="hybrid")
    assert len(hits) == 2 and {hit.date for hit in hits} == {"2026-03-02", "2026-03-06"}
    memory.close()
