"""Test doubles shared by several test folders.

`WordEncoder` is a real, deterministic encoder (hashed bag of words) that needs no
model files: good for testing indexing logic, and it counts what it encodes.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)


class WordEncoder:
    """Hashed bag-of-words vectors; `calls` and `texts_encoded` count the work done."""

    def __init__(self, name: str = "test-words", dim: int = 256):
        self.name = name
        self.dim = dim
        self.calls = 0
        self.texts_encoded = 0

    def encode(self, texts: Sequence[str], kind: str = "passage") -> np.ndarray:
        self.calls += 1
        self.texts_encoded += len(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, zlib.crc32(word.encode()) % self.dim] += 1.0
        out[:, 0] += 1e-3  # no zero vectors for empty or punctuation-only texts
        return out / np.linalg.norm(out, axis=1, keepdims=True)
