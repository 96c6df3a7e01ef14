"""Test double for mining: a fake encoder that knows which sentences translate each other."""

from __future__ import annotations

import zlib

import numpy as np

from engine.encoders.base import l2_normalise

DIM = 48
GERMAN = [
    "Der Hund schläft im Garten.",
    "Morgen regnet es in Berlin.",
    "Ich trinke gern schwarzen Kaffee.",
    "Das Museum öffnet um neun Uhr.",
    "Unsere Katze jagt keine Mäuse.",
    "Der Zug nach Hamburg hat Verspätung.",
    "Sie liest jeden Abend ein Buch.",
    "Im Winter fahren wir in die Berge.",
]
ENGLISH = [
    "The dog is sleeping in the garden.",
    "Tomorrow it will rain in Berlin.",
    "I like drinking black coffee.",
    "The museum opens at nine o'clock.",
    "Our cat does not hunt mice.",
    "The train to Hamburg is late.",
    "She reads a book every evening.",
    "In winter we go to the mountains.",
]


class TranslationEncoder:
    """Fake encoder: a sentence and its translation share a meaning vector (plus a little
    per-text noise); any other text gets its own random vector. All vectors share one
    common direction, as real sentence embeddings do."""

    name = "fake"
    dim = DIM

    def __init__(self, pairs=None):
        self.meaning = {}
        for i, (a, b) in enumerate(pairs if pairs is not None else zip(GERMAN, ENGLISH)):
            self.meaning[a] = self.meaning[b] = f"meaning {i}"
        self.encoded: list[str] = []
        self.kinds: set[str] = set()

    def _vector(self, text: str) -> np.ndarray:
        key = self.meaning.get(text, text)
        base = np.random.default_rng(zlib.crc32(key.encode())).standard_normal(DIM)
        noise = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(DIM)
        common = np.eye(DIM)[0] * 2.5
        return common + l2_normalise(base[None])[0] * 2 + 0.3 * noise / np.sqrt(DIM)

    def encode(self, texts, kind="passage"):
        self.encoded.extend(texts)
        self.kinds.add(kind)
        return l2_normalise(np.stack([self._vector(t) for t in texts]))


def document_texts(encoder: TranslationEncoder) -> list[str]:
    """What `encoder` encoded, less the reference sentences the language means are measured
    from (mining in the neutral space encodes those first)."""
    from engine.index.language_means import reference_sentences

    references = {text for texts in reference_sentences().values() for text in texts}
    return [text for text in encoder.encoded if text not in references]
