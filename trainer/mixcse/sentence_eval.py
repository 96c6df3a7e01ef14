"""Did training help, without STS data or translations? Scores on held-out corpus sentences.

    >>> report = evaluate_sentences(model, prefix, held_out, tau=0.05)
    >>> report.separation, report.neighbours_kept    # (41.3, 100.0): both in percent

A classic MixCSE run on the user's own sentences has no labels to score against, so a
share of those sentences is kept out of training and the model is scored on them:

* Separation (selects the best checkpoint): every held-out sentence is embedded twice
  with dropout on, SimCSE's two "views", under a fixed seed so each evaluation sees the
  same masks. Separation is 100 x exp(-InfoNCE) over those views, the geometric mean of
  the probability the model gives each unseen sentence's own second view among all the
  held-out views, at the run's temperature. It rises when the model tells sentences it
  never trained on apart more surely, and falls when training overfits the sentences it
  saw or collapses the space; it does not show whether search answers got better (only
  labelled data can: STS, or held-out translations).
* View retrieval: top-1 accuracy of finding a sentence's other view first (saturates
  near 100 on most models, so it is shown but does not select).
* Neighbours kept: share of each sentence's 10 nearest held-out neighbours (dropout off)
  that were its neighbours under the base model: how much search results would change.
* Alignment of the two views and uniformity of the sentences (Wang & Isola, 2020).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np
import torch

from trainer.evaluate import alignment, uniformity

NEIGHBOURS = 10  # nearest neighbours compared with the base model's
VIEW_SEED = 1234  # dropout masks of the evaluation views (the training RNG is left alone)
MIN_SENTENCES = 20  # fewer held-out sentences make the scores noise


@dataclass(frozen=True)
class SentenceReport:
    sentences: int
    separation: float  # percent: 100 x exp(-InfoNCE of the dropout views)
    view_retrieval: float  # percent: top-1 of the other view, both directions
    neighbours_kept: float  # percent of the base model's 10 nearest neighbours still nearest
    alignment: float
    uniformity: float
    neighbours: list[list[int]]  # each sentence's nearest held-out neighbours (for the next)

    def to_dict(self) -> dict:
        """The scores, without the neighbour lists (those only serve the next report)."""
        return {k: v for k, v in asdict(self).items() if k != "neighbours"}


def evaluate_sentences(model, prefix: str, sentences: Sequence[str], *, tau: float,
                       max_len: int = 128, base_neighbours: Sequence[Sequence[int]] | None = None,
                       batch_size: int = 64) -> SentenceReport:
    """Scores `model` (a `trainer.mixcse.model.SentenceModel`) on held-out `sentences`.

    `base_neighbours` is the base model's report's `neighbours`; without it (the base
    model itself) every neighbour counts as kept.
    """
    if len(sentences) < MIN_SENTENCES:
        raise ValueError(f"scoring needs at least {MIN_SENTENCES} held-out sentences")
    first, second = dropout_views(model, [prefix + s for s in sentences], max_len, batch_size)
    plain = _plain_vectors(model, prefix, sentences, max_len)
    return score_views(first, second, plain, tau=tau, base_neighbours=base_neighbours)


def score_views(first: np.ndarray, second: np.ndarray, plain: np.ndarray, *, tau: float,
                base_neighbours: Sequence[Sequence[int]] | None = None) -> SentenceReport:
    """The report from two dropout views [n, d] and the dropout-free vectors [n, d]."""
    first, second, plain = _unit(first), _unit(second), _unit(plain)
    logits = first @ second.T / tau  # [n, n]: row i is view 1 of i against every view 2
    infonce = (_cross_entropy(logits) + _cross_entropy(logits.T)) / 2
    retrieval = (_top1(logits) + _top1(logits.T)) / 2
    neighbours = _nearest(plain, NEIGHBOURS)
    kept = 100.0 if base_neighbours is None else _overlap(neighbours, np.asarray(base_neighbours))
    return SentenceReport(
        sentences=len(first),
        separation=float(100 * np.exp(-infonce)),
        view_retrieval=100 * retrieval,
        neighbours_kept=kept,
        alignment=alignment(first, second),
        uniformity=uniformity(plain),
        neighbours=neighbours.tolist(),
    )


def dropout_views(model, texts: Sequence[str], max_len: int, batch_size: int = 64):
    """Two embeddings of each text with dropout on, as in training, from fixed-seed masks;
    the global RNG (training's shuffles and masks) is as it was afterwards."""
    device = next(model.parameters()).device
    was_training = model.training
    devices = [device] if device.type == "cuda" else []
    out = []
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        torch.manual_seed(VIEW_SEED)
        model.train()
        try:
            for start in range(0, len(texts), batch_size):
                chunk = list(texts[start:start + batch_size])
                batch = model.tokenize(chunk + chunk, max_len, device)
                out.append(model.embed(**batch, with_head=False).float().cpu().numpy())
        finally:
            model.train(was_training)
    views = np.concatenate([np.stack(np.split(h, 2)) for h in out], axis=1)  # [2, n, d]
    return views[0], views[1]


def _plain_vectors(model, prefix: str, sentences: Sequence[str], max_len: int) -> np.ndarray:
    from trainer.mixcse.model import torch_encode

    return torch_encode(model, prefix, max_len=max_len)(list(sentences))


def _cross_entropy(logits: np.ndarray) -> float:
    """Mean -log softmax(row)[i] of the diagonal: InfoNCE with the other rows' views as negatives."""
    top = logits.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    return float(np.mean(log_norm - np.diag(logits)))


def _top1(similarity: np.ndarray) -> float:
    return float(np.mean(similarity.argmax(1) == np.arange(len(similarity))))


def _nearest(vectors: np.ndarray, k: int) -> np.ndarray:
    """[n, k] indices of each row's nearest other rows, nearest first."""
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    k = min(k, len(vectors) - 1)
    return np.argsort(-similarity, axis=1, kind="stable")[:, :k]


def _overlap(now: np.ndarray, before: np.ndarray) -> float:
    if now.shape != before.shape:
        raise ValueError(f"neighbour lists differ in shape: {now.shape} vs {before.shape}")
    shared = [len(set(a) & set(b)) for a, b in zip(now.tolist(), before.tolist())]
    return float(100 * np.sum(shared) / now.size)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
