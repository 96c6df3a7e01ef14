"""Learning without forgetting: keep corpus sentences' vectors near the frozen base model's.

    anchor = BaseAnchor.load(base_weights, "mean", "cpu")
    loss = distill_loss(student_vectors, anchor.vectors(batch))   # 0 while nothing moved

Training on translation pairs moves similarities within one language too (STS-B falls by
several points after 30 steps on PUD pairs, docs/benchmarks.md). The dropout-view loss of
monolingual sentences only asks that a sentence stay near *itself*; this term asks that it
stay where the base model put it, so every monolingual similarity the base knew is kept
while the pairs pull translations together. ``TrainConfig.distill_weight`` weighs it.

Both sides are read without dropout (the trained model in eval mode for that forward), so
the term and its gradient are exactly 0 at step 0 and grow only as the model drifts. The
base's vectors need no gradient; the frozen base lives beside the trained model (one more
copy of the weights in memory) and encodes each step's corpus sentences once.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch
import torch.nn.functional as F

from trainer.mixcse.model import SentenceModel


def distill_loss(student: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean ``1 - cos(student_i, target_i)`` over the rows, in float32 or better.

    Example: ``distill_loss(h, h.detach())`` is 0 with a zero gradient.
    """
    dtype = torch.promote_types(student.dtype, torch.float32)
    return (1 - F.cosine_similarity(student.to(dtype), target.to(dtype), dim=-1)).mean()


class BaseAnchor:
    """The frozen base model whose vectors the corpus sentences are held near."""

    def __init__(self, model: SentenceModel):
        self.model = model.eval().requires_grad_(False)

    @classmethod
    def load(cls, weights: Path, pooling: str, device: str) -> BaseAnchor:
        """The base at `weights`, read out as the trained model is without its training head.

        Loading draws no random numbers from the run's generators (the trained model's
        dropout masks and a resumed run stay as they were without the anchor)."""
        with torch.random.fork_rng(devices=[]):
            model = SentenceModel.load(weights, "cls" if pooling == "cls_mlp" else pooling)
        return cls(model.to(device))

    def vectors(self, batch: dict) -> torch.Tensor:
        """``[n, d]`` float32 base vectors of a tokenised batch (`SentenceModel.tokenize`)."""
        with torch.no_grad():
            return self.model.embed(**batch, with_head=False).float()


@contextlib.contextmanager
def without_dropout(model: torch.nn.Module):
    """The model in eval mode for one forward (gradients still flow), then as it was."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)
