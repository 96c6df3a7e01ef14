"""Libraries whose vector index re-scores: 8-bit IVF codes above 100 passages, with a
random unit vector per text so that no two passages tie.

    index_folder(home, write_folder(tmp_path / "docs"))   # 400 one-passage files
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
from helpers import WordEncoder

from engine.config import data_paths
from engine.index.vector_config import VectorIndexConfig
from engine.library import Library

# IVF above 100 passages, every list scanned: the codes then hold every candidate, so
# exact re-scoring must give exactly the brute-force ranking
COMPRESSED = VectorIndexConfig(exact_max=100, nprobe=10**6, min_scanned=0, use_gpu="never")
QUERIES = ["harbour lantern copper", "violet engine river", "quiet meadow", "salt bridge winter"]


class SeededEncoder(WordEncoder):
    """A random unit vector per text, seeded by the text: no two passages tie, as hashed
    bags of words would when they share one word with the query."""

    def __init__(self):
        super().__init__("test-seeded", dim=64)

    def encode(self, texts, kind="passage"):
        self.calls += 1
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim) for t in texts]
        out = np.asarray(rows, np.float32).reshape(len(texts), self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _word(rng: np.random.Generator) -> str:
    return "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), 6))


def write_folder(folder: Path, documents: int = 400, seed: int = 0) -> Path:
    """`documents` one-passage text files of random words (distinct vectors, no ties)."""
    rng = np.random.default_rng(seed)
    vocabulary = [_word(rng) for _ in range(1500)] + " ".join(QUERIES).split()
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(documents):
        words = rng.choice(vocabulary, 14)
        (folder / f"doc{i:04d}.txt").write_text(" ".join(words) + ".", encoding="utf-8")
    return folder


def index_folder(home: Path, folder: Path) -> None:
    library = Library.open(data_paths(home), encoder=SeededEncoder())
    try:
        *_, finished = library.index_paths([folder])
    finally:
        library.close()
