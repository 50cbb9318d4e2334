"""A real `Embedder` for tests that need vectors but not a model: hashed bag of words."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np


class WordHashEmbedder:
    """Each word hashed into one of `dim` buckets, L2-normalised: texts sharing words are near.
    Records every text it embeds, so tests can see what was (re-)embedded. `synonyms` maps a
    word to another before hashing, to stage "same meaning, other words" without a model."""

    def __init__(
        self,
        model_id: str = "word-hash@1",
        dim: int = 64,
        synonyms: dict[str, str] | None = None,
    ) -> None:
        self.model_id = model_id
        self.dim = dim
        self.synonyms = synonyms or {}
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                word = word.strip(".,?!:;'\"")
                word = self.synonyms.get(word, word)
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
