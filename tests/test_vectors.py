"""The vector store beside the text index: writes mirrored from the index, filters, model changes,
several connections, both text backends.

Most tests use `WordHashEmbedder`, a real `Embedder` (hashed bag of words, deterministic, no
model), so they need only numpy; the last one runs the real MiniLM and skips without the extra.
"""

from __future__ import annotations

import importlib.util
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from semantic_helpers import WordHashEmbedder  # noqa: E402

from hipo_jupyter.memory.errors import HipoError  # noqa: E402
from hipo_jupyter.memory.search.contract import Document  # noqa: E402
from hipo_jupyter.memory.search.embed import Embedder  # noqa: E402
from hipo_jupyter.memory.search.fts5 import FTS5_FILENAME, MIGRATIONS  # noqa: E402
from hipo_jupyter.memory.search.indexing import open_index  # noqa: E402
from hipo_jupyter.memory.search.vectors import (  # noqa: E402
    VectorStore,
    embedding_text,
    open_vectors,
)

HAS_WHOOSH = importlib.util.find_spec("whoosh") is not None


def doc(
    path: str,
    line: int,
    title: str,
    text: str,
    *,
    kind: str = "raw",
    date: str | None = None,
    type: str = "project",
) -> Document:
    day = date or path[len("memory/") : len("memory/") + 10]
    return Document(
        f"{path}#L{line}", path, line, kind, day, type if kind == "raw" else "", title, text
    )


RAW = "memory/2026-03-12.md"
RAW_EARLY = "memory/2026-03-02.md"
DAILY = "memory/daily/2026-03-12.md"

HERON = doc(RAW, 1, "Heron", "moved the heron launch to may")
PRICING = doc(RAW, 8, "Pricing", "cut the starter tier price by fifteen percent")
DOG = doc(RAW_EARLY, 1, "Dog", "took the dog to the vet", type="user")
DAY = doc(
    DAILY,
    1,
    "daily 2026-03-12",
    "heron launch moved; starter tier price cut",
    kind="daily",
    date="2026-03-12",
)


@pytest.fixture
def embedder() -> WordHashEmbedder:
    return WordHashEmbedder()


@pytest.fixture
def store(tmp_path: Path, embedder: WordHashEmbedder):
    vectors = open_vectors(tmp_path / ".index", embedder)
    yield vectors
    vectors.close()


def ids(hits) -> list[str]:
    return [hit.id for hit in hits]


def add(store: VectorStore, *docs: Document) -> int:
    """Append `docs` file by file, as a raw-log append does (the hash names the file)."""
    by_path: dict[str, list[Document]] = {}
    for d in docs:
        by_path.setdefault(d.path, []).append(d)
    return sum(store.add(path, f"hash-{path}", group) for path, group in by_path.items())


def test_the_fake_embedder_is_an_embedder(embedder: WordHashEmbedder) -> None:
    assert isinstance(embedder, Embedder)


def test_nearest_first_with_location_and_cosine(store: VectorStore) -> None:
    assert add(store, HERON, PRICING) == 2
    add(store, DOG)
    hits = store.search("when is the heron launch", limit=3)
    assert ids(hits)[0] == HERON.id
    assert hits[0].path == RAW and hits[0].line == 1 and hits[0].kind == "raw"
    assert hits[0].date == "2026-03-12" and hits[0].type == "project"
    assert 0 < hits[0].score <= 1 and hits[0].score > hits[1].score
    assert ids(store.search("the dog at the vet", limit=1)) == [DOG.id]
    assert store.search("", limit=3) == [] and store.search("dog", limit=0) == []


def test_filters_match_the_text_index_filters(store: VectorStore) -> None:
    add(store, HERON, PRICING, DOG, DAY)
    assert set(ids(store.search("heron", kinds={"daily"}))) == {DAY.id}
    assert set(ids(store.search("heron", types={"user"}))) == {DOG.id}
    assert set(ids(store.search("heron", since="2026-03-10"))) == {HERON.id, PRICING.id, DAY.id}
    assert set(ids(store.search("heron", until="2026-03-09"))) == {DOG.id}
    assert ids(store.search("heron", since="2026-03-13")) == []
    with pytest.raises(HipoError, match="since="):
        store.search("heron", since="last week")


def test_a_document_of_another_file_is_refused(store: VectorStore) -> None:
    with pytest.raises(ValueError, match="belongs to"):
        store.add(RAW_EARLY, "h", [HERON])


def test_file_hashes_record_what_the_vectors_were_made_from(store: VectorStore) -> None:
    store.add(RAW, "h1", [HERON])
    store.add(RAW, "h2", [PRICING])  # the append moves the file's hash
    store.replace_file(DAILY, "d1", [DAY])
    assert store.file_hashes() == {RAW: "h2", DAILY: "d1"}
    store.remove_file(DAILY)
    assert store.file_hashes() == {RAW: "h2"}


def test_replace_file_keeps_unchanged_texts_and_drops_the_rest(
    store: VectorStore, embedder: WordHashEmbedder
) -> None:
    add(store, HERON, PRICING)
    embedder.embedded.clear()
    edited = doc(RAW, 8, "Pricing", "keep the starter tier price as it is")
    assert store.replace_file(RAW, "h2", [HERON, edited]) == 1
    assert embedder.embedded == [embedding_text(edited)]  # HERON was not embedded again
    assert store.replace_file(RAW, "h3", [edited]) == 0
    assert set(ids(store.search("heron launch starter"))) == {PRICING.id}
    assert ids(store.search("keep it as it is", limit=1)) == [PRICING.id]
    assert store.count() == 1 and store.file_hashes() == {RAW: "h3"}


def test_remove_file_and_clear(store: VectorStore) -> None:
    add(store, HERON, PRICING, DOG)
    store.remove_file(RAW)
    assert ids(store.search("heron pricing dog")) == [DOG.id]
    store.clear()
    assert store.count() == 0 and store.search("dog") == [] and store.file_hashes() == {}


def test_replace_files_embeds_in_batches_across_files_with_progress(
    store: VectorStore, embedder: WordHashEmbedder
) -> None:
    files = [
        (
            f"memory/2026-03-{day:02d}.md",
            f"h{day}",
            [
                doc(f"memory/2026-03-{day:02d}.md", line, f"note {day} {line}", f"w{day}x{line}")
                for line in (1, 5, 9)
            ],
        )
        for day in range(1, 5)
    ]  # 4 files of 3 documents
    calls: list[tuple[int, int, str]] = []
    assert store.replace_files(files, progress=lambda *args: calls.append(args), batch=5) == 12
    # Files are never split: 3 + 3 >= 5, then the next two files.
    assert calls == [(0, 12, "embedding"), (6, 12, "embedding"), (12, 12, "embedding")]
    assert store.count() == 12 and len(store.file_hashes()) == 4
    embedder.embedded.clear()
    assert store.replace_files(files) == 0 and embedder.embedded == []


def test_replace_files_holds_one_batch_of_files_at_a_time(
    store: VectorStore, embedder: WordHashEmbedder
) -> None:
    """Issue 25: given a generator, the files are read as they are embedded, not all first (a
    reindex of a year held every document before embedding one); `total` feeds the progress."""
    read: list[str] = []

    def files():
        for day in range(1, 7):
            path = f"memory/2026-03-{day:02d}.md"
            read.append(path)
            yield path, f"h{day}", [doc(path, line, "n", f"w{day}x{line}") for line in (1, 5)]

    read_at_embed: list[int] = []
    embed = embedder.embed

    def watching(texts):
        read_at_embed.append(len(read))
        return embed(texts)

    embedder.embed = watching
    calls: list[tuple[int, int, str]] = []
    done = store.replace_files(files(), progress=lambda *a: calls.append(a), batch=4, total=12)
    assert done == 12 and store.count() == 12 and len(store.file_hashes()) == 6
    assert read_at_embed == [2, 4, 6]  # two files (four texts) read before each batch
    assert calls == [
        (0, 12, "embedding"),
        (4, 12, "embedding"),
        (8, 12, "embedding"),
        (12, 12, "embedding"),
    ]


def test_an_interrupted_rebuild_keeps_the_batches_it_finished(tmp_path: Path) -> None:
    class FailsOnThirdCall(WordHashEmbedder):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            if len(self.embedded) >= 4:
                raise HipoError("the model stopped")
            return super().embed(texts)

    store = open_vectors(tmp_path, FailsOnThirdCall())
    files = [
        (
            f"memory/2026-03-0{day}.md",
            f"h{day}",
            [
                doc(f"memory/2026-03-0{day}.md", 1, "n", f"text {day} a"),
                doc(f"memory/2026-03-0{day}.md", 2, "n", f"text {day} b"),
            ],
        )
        for day in range(1, 5)
    ]
    with pytest.raises(HipoError, match="stopped"):
        store.replace_files(files, batch=2)
    assert sorted(store.file_hashes()) == ["memory/2026-03-01.md", "memory/2026-03-02.md"]
    assert store.count() == 4
    store.close()


def test_a_new_model_id_means_a_re_embed(tmp_path: Path) -> None:
    old = WordHashEmbedder("word-hash@1")
    store = open_vectors(tmp_path, old)
    store.replace_files([(RAW, "h1", [HERON, PRICING]), (RAW_EARLY, "h2", [DOG])])
    store.close()
    new = WordHashEmbedder("word-hash@2", dim=32)
    store = open_vectors(tmp_path, new)
    assert store.count() == 0 and store.models() == {"word-hash@1": 3}
    assert store.search("heron") == []  # vectors of another model are never compared
    # Every file looks changed, so a caller that compares hashes sends them all again.
    assert store.file_hashes() == {RAW: "", RAW_EARLY: ""}
    assert store.replace_files([(RAW, "h1", [HERON, PRICING]), (RAW_EARLY, "h2", [DOG])]) == 3
    assert store.models() == {"word-hash@2": 3}
    assert store.file_hashes() == {RAW: "h1", RAW_EARLY: "h2"}
    assert ids(store.search("heron launch", limit=1)) == [HERON.id]
    store.close()


def test_vectors_persist_and_live_in_the_text_index_file(tmp_path: Path) -> None:
    text_index = open_index(tmp_path)  # the FTS5 backend, the default
    text_index.add(RAW, "h1", [HERON])
    store = open_vectors(tmp_path, WordHashEmbedder())
    store.add(RAW, "h1", [HERON])
    store.close()
    text_index.close()
    with sqlite3.connect(tmp_path / FTS5_FILENAME) as db:
        applied = [row[0] for row in db.execute("select name from _migrations order by rowid")]
        assert applied == [fn.__name__ for fn in MIGRATIONS] and "m002_vectors" in applied
        assert db.execute("select id, model, dim from vectors").fetchall() == [
            (HERON.id, "word-hash@1", 64)
        ]
        assert db.execute("select count(*) from documents").fetchone()[0] == 1
    reopened = open_vectors(tmp_path, WordHashEmbedder())
    assert ids(reopened.search("heron")) == [HERON.id]
    reopened.close()


@pytest.mark.skipif(not HAS_WHOOSH, reason="whoosh is not installed")
def test_the_whoosh_backend_gets_the_same_vectors(tmp_path: Path) -> None:
    text_index = open_index(tmp_path, "whoosh")
    text_index.add(RAW, "h1", [HERON, PRICING])
    store = open_vectors(tmp_path, WordHashEmbedder())
    store.add(RAW, "h1", [HERON, PRICING])
    assert ids(store.search("heron launch", limit=1)) == [HERON.id]
    assert [h.doc.id for h in text_index.search("heron")] == [HERON.id]
    store.close()
    text_index.close()
    assert (tmp_path / FTS5_FILENAME).is_file() and (tmp_path / "whoosh").is_dir()


def test_a_second_connection_sees_writes_and_the_cache_follows(tmp_path: Path) -> None:
    """Two kernels on one memory: each store's cached matrix notices the other's writes."""
    first = open_vectors(tmp_path, WordHashEmbedder())
    second = open_vectors(tmp_path, WordHashEmbedder())
    add(first, HERON)
    assert ids(second.search("heron")) == [HERON.id]  # loads the matrix
    add(first, DOG)
    assert set(ids(second.search("heron dog"))) == {HERON.id, DOG.id}
    add(second, PRICING)  # in-place update of second's cache, a reload for first
    first.remove_file(RAW_EARLY)
    assert set(ids(first.search("heron dog starter"))) == {HERON.id, PRICING.id}
    assert set(ids(second.search("heron dog starter"))) == {HERON.id, PRICING.id}
    first.close()
    second.close()


def test_many_writes_and_removals_keep_search_exact(store: VectorStore) -> None:
    """The cached matrix grows, blanks removed rows and squeezes them out: after any of it a
    search still equals a brute force over what the table holds."""
    docs = [
        doc(f"memory/note-{i}.md", 1, f"note {i}", f"topic{i % 7} item{i}", date="2026-02-01")
        for i in range(160)  # enough removals (106) to pass the squeeze threshold
    ]
    store.search("warm the cache")
    for d in docs:
        add(store, d)
    for i, d in enumerate(docs):
        if i % 3:
            store.remove_file(d.path)
    add(store, docs[1])
    kept = [docs[1], *docs[::3]]
    embedder = WordHashEmbedder()
    query = "topic3 item10"
    expected = embedder.embed([embedding_text(d) for d in kept]) @ embedder.embed([query])[0]
    hits = store.search(query, limit=len(kept) + 5)
    assert sorted(ids(hits)) == sorted(d.id for d in kept)
    assert {h.id: round(h.score, 5) for h in hits} == {
        d.id: round(float(score), 5) for d, score in zip(kept, expected, strict=True)
    }
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_damaged_index_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / FTS5_FILENAME).write_bytes(b"not a database at all" * 100)
    store = open_vectors(tmp_path, WordHashEmbedder())
    add(store, HERON)
    assert ids(store.search("heron")) == [HERON.id]
    store.close()


def test_a_foreign_database_is_not_ours_and_is_replaced(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / FTS5_FILENAME) as db:
        db.execute("create table accounts (name text)")
    store = open_vectors(tmp_path, WordHashEmbedder())
    assert store.count() == 0
    store.close()


def test_real_minilm_vectors_find_the_paraphrase(tmp_path: Path) -> None:
    from hipo_jupyter.memory.search.embed import MiniLMEmbedder, semantic_available

    on, message = semantic_available()
    if not on:
        pytest.skip(message)
    store = open_vectors(tmp_path, MiniLMEmbedder())
    add(
        store,
        doc(RAW, 1, "Release", "The Heron release was postponed until May."),
        doc(RAW, 5, "Pets", "Took the puppy to the vet for its vaccines."),
        doc(RAW, 9, "Sales", "Revenue grew fifteen percent this quarter."),
    )
    assert ids(store.search("when do we ship Heron now?", limit=1)) == [f"{RAW}#L1"]
    assert ids(store.search("how is the dog", limit=1)) == [f"{RAW}#L5"]
    assert ids(store.search("did sales go up", limit=1)) == [f"{RAW}#L9"]
    store.close()
