"""How to run a sentence model the user brings: `hipo-embedding.json` beside its ONNX file.

`c.Hipo.embedding_model` may name an ONNX file or a folder (a model downloaded from the
Hugging Face hub: `model.onnx` or `onnx/model.onnx` and `tokenizer.json` in it). Sentence
models differ in how a vector is made of the token outputs, and the vectors only compare well
when made the way the model was trained, so the folder may declare it (every key optional):

    {"pooling": "cls", "normalize": true, "max_tokens": 512,
     "query_prefix": "Represent this sentence for searching relevant passages: ",
     "passage_prefix": ""}

- ``pooling``: "mean" (over the real tokens; all-MiniLM, e5, arctic-embed-m) or "cls" (the
  first token; bge); a graph whose output is already one vector per text is taken as it is.
- ``normalize``: scale each vector to unit length, so the dot product the search uses is the
  cosine (true for every model named here; false only for a model trained for dot products).
- ``query_prefix`` / ``passage_prefix``: text put before a query or a stored passage (e5:
  "query: " and "passage: "; bge: the query instruction above). Asymmetric models need them.
- ``max_tokens``: texts are cut there (the model's window; default 256).

Without the file the model runs as all-MiniLM does (mean, normalised, no prefixes). A file that
is not valid is a one-line `SemanticUnavailable`: recall answers by keyword and says why.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from ..disk import read_settings_file
from ..errors import HipoError, ParseError

SETTINGS_FILE = "hipo-embedding.json"
POOLINGS = ("mean", "cls")
MODEL_FILES = ("model.onnx", "onnx/model.onnx")  # where a downloaded folder keeps its graph
DEFAULT_MAX_TOKENS = 256
MAX_PREFIX_CHARS = 200


class EmbeddingSettingsError(HipoError):
    """hipo-embedding.json cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class EmbeddingSettings:
    """How a model's token outputs become one vector per text."""

    pooling: str = "mean"
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    max_tokens: int = DEFAULT_MAX_TOKENS

    def fingerprint(self) -> str:
        """A stable text of the settings: part of the model id, so a change re-embeds."""
        return json.dumps(asdict(self), sort_keys=True)


def model_file(path: Path) -> Path:
    """The ONNX file of `path`: itself, or the first of MODEL_FILES in a folder."""
    if not path.is_dir():
        return path
    for name in MODEL_FILES:
        if (path / name).is_file():
            return path / name
    raise EmbeddingSettingsError(
        f"no ONNX model in {path} (looked for {' and '.join(MODEL_FILES)})"
    )


def settings_path(model: Path) -> Path | None:
    """hipo-embedding.json in the model's folder (or the folder above `onnx/`), if any."""
    for folder in (model.parent, model.parent.parent):
        candidate = folder / SETTINGS_FILE
        if candidate.is_file() or (candidate.is_symlink() or candidate.exists()):
            return candidate  # anything else there than a file is refused by name on reading
    return None


def load_settings(model: Path) -> EmbeddingSettings:
    """The settings declared beside `model` (an ONNX file), or the defaults."""
    path = settings_path(model)
    if path is None:
        return EmbeddingSettings()
    try:
        data = read_settings_file(path)
    except OSError as error:
        raise EmbeddingSettingsError(f"cannot read {path}: {error.strerror or error}") from None
    except ParseError as error:  # not a regular file, too large, not bounded JSON
        raise EmbeddingSettingsError(str(error)) from None
    return parse_settings(data, str(path))


def parse_settings(data: object, where: str) -> EmbeddingSettings:
    """The settings of a decoded hipo-embedding.json; one-line errors naming the key."""
    if not isinstance(data, dict):
        raise EmbeddingSettingsError(f"{where}: expected a JSON object")
    known = set(EmbeddingSettings.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise EmbeddingSettingsError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    pooling = data.get("pooling", "mean")
    if pooling not in POOLINGS:
        raise EmbeddingSettingsError(f"{where}: pooling must be 'mean' or 'cls', not {pooling!r}")
    normalize = data.get("normalize", True)
    if not isinstance(normalize, bool):
        raise EmbeddingSettingsError(f"{where}: normalize must be true or false")
    prefixes = {}
    for key in ("query_prefix", "passage_prefix"):
        value = data.get(key, "")
        if not isinstance(value, str) or len(value) > MAX_PREFIX_CHARS:
            raise EmbeddingSettingsError(
                f"{where}: {key} must be a string of at most {MAX_PREFIX_CHARS} characters"
            )
        prefixes[key] = value
    max_tokens = data.get("max_tokens", DEFAULT_MAX_TOKENS)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not max_tokens >= 8:
        raise EmbeddingSettingsError(f"{where}: max_tokens must be a whole number >= 8")
    return EmbeddingSettings(pooling, normalize, max_tokens=max_tokens, **prefixes)
