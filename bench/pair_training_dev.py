"""Dev signals for choosing pair-training settings without looking at a test set.

    scores = dev_scores(encoder, stride=3)   # {"sts-b dev": 84.1, "cross dev": 80.3, ...}

Both come from STS-B's dev split, which the data README reserves for model selection:

* "sts-b dev": English STS-B dev, every `stride`-th pair. The file is sorted by genre
  (captions, forums, news), so a stride keeps every genre where the first N pairs would
  all be video captions.
* "cross dev": the same rows of stsb-multi-mt dev as cross-lingual pairs, the English
  first sentence against the machine-translated second one, Spearman x 100 per language
  and their mean over PUD languages ("cross dev seen") and over languages never trained
  on ("cross dev unseen").
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MULTI_MT = DATA / "multilingual-sts" / "stsb-multi-mt"
# stsb-multi-mt languages that PUD trains on, and the ones it never sees
SEEN = ("de", "es", "fr", "ru", "zh")
UNSEEN = ("ja", "nl", "pl")


def _rows(language: str, stride: int) -> list[tuple[str, str, float]]:
    with (MULTI_MT / f"stsb-{language}-dev.csv").open(encoding="utf-8") as f:
        rows = [(r[0], r[1], float(r[2])) for r in csv.reader(f)]
    return rows[::stride]


def _unit(encoder, sentences: list[str]) -> np.ndarray:
    vectors = encoder.encode(sentences)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def dev_scores(encoder, stride: int = 3) -> dict:
    """Spearman x 100 on STS-B dev (English) and on its cross-lingual stand-in (see above)."""
    from trainer.evaluate import spearman

    english = _rows("en", stride)
    gold = np.array([g for _, _, g in english])
    # the English first sentences are encoded once: every cross-lingual pair starts with one
    first = _unit(encoder, [a for a, _, _ in english])
    second = _unit(encoder, [b for _, b, _ in english])
    scores = {"sts-b dev": 100 * spearman((first * second).sum(1), gold)}
    for language in SEEN + UNSEEN:
        other = _unit(encoder, [b for _, b, _ in _rows(language, stride)])
        scores[f"en-{language}"] = 100 * spearman((first * other).sum(1), gold)
    scores["cross dev seen"] = float(np.mean([scores[f"en-{lang}"] for lang in SEEN]))
    scores["cross dev unseen"] = float(np.mean([scores[f"en-{lang}"] for lang in UNSEEN]))
    scores["pairs"] = len(english)
    return scores
