"""Issue 25: any local ONNX sentence model, with its pooling, normalisation and prefixes
declared in hipo-embedding.json. The test builds a tiny model itself (onnx, no download): token
ids -> a fixed embedding table, so every expected vector can be worked out with numpy."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from hipo_jupyter.memory import Memory, MemoryConfig
from hipo_jupyter.memory.search.embed import MiniLMEmbedder, SemanticUnavailable
from hipo_jupyter.memory.search.embed_settings import EmbeddingSettingsError, parse_settings

onnx = pytest.importorskip("onnx")
np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
tokenizers = pytest.importorskip("tokenizers")

WORDS = ["[UNK]", "[CLS]", "query:", "passage:", "cat", "dog", "pricing", "launch", "may"]
DIM = 6


def table() -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.normal(size=(len(WORDS), DIM)).astype(np.float32)


def build_model(folder: Path, settings: dict | None = None) -> Path:
    """folder/onnx/model.onnx (Gather of a fixed table: (batch, tokens, dim)), tokenizer.json
    (word level, [CLS] first) and, if given, hipo-embedding.json: a downloaded model's layout."""
    from onnx import TensorProto, helper, numpy_helper

    (folder / "onnx").mkdir(parents=True)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["out"], axis=0)],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "t"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "t"]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["b", "t", DIM])],
        [numpy_helper.from_array(table(), "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, folder / "onnx" / "model.onnx")
    tokenizer = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A", special_tokens=[("[CLS]", 1)]
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    if settings is not None:
        (folder / "hipo-embedding.json").write_text(json.dumps(settings))
    return folder


def expected(text: str, pooling: str = "mean", normalize: bool = True) -> np.ndarray:
    ids = [1] + [WORDS.index(w) if w in WORDS else 0 for w in text.split()]
    rows = table()[ids]
    vector = rows[0] if pooling == "cls" else rows.mean(axis=0)
    return vector / np.linalg.norm(vector) if normalize else vector


def test_a_folder_without_settings_runs_mean_pooled_and_normalised(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder(build_model(tmp_path / "tiny-mean"))
    vectors = embedder.embed(["cat dog", "pricing"])
    assert embedder.name == "tiny-mean" and embedder.dim == DIM
    assert np.allclose(vectors[0], expected("cat dog"), atol=1e-5)
    assert np.allclose(embedder.embed_query(["pricing"]), vectors[1:], atol=1e-5)


def test_cls_pooling_prefixes_and_normalisation_are_as_declared(tmp_path: Path) -> None:
    e5 = {"pooling": "mean", "query_prefix": "query: ", "passage_prefix": "passage: "}
    embedder = MiniLMEmbedder(build_model(tmp_path / "e5", e5))
    assert np.allclose(embedder.embed(["cat"])[0], expected("passage: cat"), atol=1e-5)
    assert np.allclose(embedder.embed_query(["cat"])[0], expected("query: cat"), atol=1e-5)
    raw = MiniLMEmbedder(build_model(tmp_path / "bge", {"pooling": "cls", "normalize": False}))
    assert np.allclose(raw.embed(["launch may"])[0], table()[1], atol=1e-5)  # [CLS]'s row
    plain = MiniLMEmbedder(build_model(tmp_path / "plain", {}))
    assert raw.model_id.split("@")[0] == "bge"
    assert len({raw.model_id, plain.model_id, embedder.model_id}) == 3


def test_semantic_recall_on_a_users_model(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "mine", {"query_prefix": "query: "})
    memory = Memory(
        tmp_path / "notes",
        config=MemoryConfig(semantic=True, embedding_model=str(folder)),
        today=lambda: date(2026, 3, 20),
    )
    memory.remember("Launch", "the launch moved to may")
    memory.remember("Pets", "a cat and a dog")
    on, message = memory.semantic.status()
    assert on, message
    assert "mine" in message
    hits = memory.recall("dog cat", k=1, mode="semantic").hits
    assert hits and hits[0].title == "Pets"
    memory.close()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], "JSON object"),
        ({"pooling": "max"}, "pooling"),
        ({"normalize": "yes"}, "normalize"),
        ({"query_prefix": 3}, "query_prefix"),
        ({"max_tokens": 4}, "max_tokens"),
        ({"poolin": "cls"}, "unknown key 'poolin'"),
    ],
)
def test_bad_settings_are_one_line_errors(data, words: str) -> None:
    with pytest.raises(EmbeddingSettingsError, match=words) as caught:
        parse_settings(data, "hipo-embedding.json")
    assert "\n" not in str(caught.value)


def test_a_broken_settings_file_turns_semantic_recall_off_with_why(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "broken")
    (folder / "hipo-embedding.json").write_text("{pooling: cls")
    with pytest.raises(SemanticUnavailable, match="hipo-embedding.json"):
        MiniLMEmbedder(folder)
    with pytest.raises(SemanticUnavailable, match="no ONNX model"):
        MiniLMEmbedder(tmp_path)


HOSTILE_SETTINGS = {
    "huge-int": '{"max_tokens": ' + "1" * 5000 + "}",
    "deep": "[" * 100_000 + "]" * 100_000,
    "overflow": '{"max_tokens": 1e400}',
    "fifo": None,
}


@pytest.mark.parametrize("kind", HOSTILE_SETTINGS)
def test_hostile_settings_leave_plain_recall_working_in_a_real_shell(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """A 5,000-digit number, 100,000-deep nesting, 1e400 or a FIFO as hipo-embedding.json: plain
    `%recall` answers (keywords), `%hipo status` says why semantic recall is off, naming the
    file; no traceback (was a ValueError or RecursionError in every `%recall`)."""
    import os

    from claude_helpers import new_shell

    folder = build_model(tmp_path / "model")
    settings = folder / "hipo-embedding.json"
    if HOSTILE_SETTINGS[kind] is None:
        os.mkfifo(settings)
    else:
        settings.write_text(HOSTILE_SETTINGS[kind])
    notes = tmp_path / "notes"
    notes.mkdir()
    monkeypatch.chdir(notes)
    monkeypatch.setenv("HIPO_TODAY", "2026-03-20")
    monkeypatch.delenv("HIPO_ROOT", raising=False)
    shell = new_shell()
    shell.run_cell(f"%config Hipo.embedding_model = {str(folder)!r}")
    shell.run_cell("%config Hipo.semantic = True")
    shell.run_cell("%load_ext hipo")
    shell.run_cell("%%remember Pets\n- outcome: a cat and a dog")
    capsys.readouterr()
    shell.run_cell("%recall dog")
    out = capsys.readouterr().out
    assert "Pets" in out and "Traceback" not in out
    shell.run_cell("%hipo status")
    out = capsys.readouterr().out
    assert "hipo-embedding.json" in out and "Traceback" not in out
