"""What a training run reports, as typed events; no torch, so front ends import it freely.

    >>> for event in train(config):                   # trainer.mixcse.train
    ...     if isinstance(event, TrainStep): bar.update(event.step)

The MixCSE trainer (trainer.mixcse.train) yields these; the CLI and the wizard read them, and the
window imports this module before torch is known to be installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.errors import BabelfindError
from trainer.config import TrainConfig
from trainer.corpus import CorpusStats
from trainer.laser.student_config import StudentConfig
from trainer.pairs import PairStats


class TrainingError(BabelfindError):
    """Training cannot go on; `checkpoint` is the last good one (or None)."""

    def __init__(self, message: str, checkpoint: Path | None = None):
        self.checkpoint = checkpoint
        super().__init__(message)


class TrainingDivergedError(TrainingError):
    """The loss or a gradient became NaN/inf or impossibly large."""


# -- events -------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrainPreparing:
    """What the run does before its first step (reading the data, loading the model,
    scoring the base model), so a front end says so from the first second."""

    stage: str  # e.g. "Loading multilingual-e5-small"


@dataclass(frozen=True)
class TrainStarted:
    config: TrainConfig  # resolved: pooling, prefix and device filled in
    corpus: CorpusStats | None  # None when training on translation pairs alone
    pairs: PairStats | None
    total_steps: int
    steps_per_epoch: int
    start_step: int  # > 0 when resumed
    device: str
    world_size: int
    metric: str | None = None  # what scores the run: STS_METRIC, PAIR_METRIC, SENTENCE_METRIC


@dataclass(frozen=True)
class TrainStep:
    step: int  # optimiser steps done, 1-based
    total: int
    loss: float
    lr: float
    eta_s: float  # seconds left: the steps, evaluations and checkpoints still to come, at their cost so far
    epoch: int  # 0-based
    seen: int = 0  # sentences (or translation pairs) trained on so far, over every process


@dataclass(frozen=True)
class TrainEval:
    step: int  # 0: the base model, before any update
    metric: str  # STS_METRIC or PAIR_METRIC
    score: float  # x 100: Spearman, or top-1 retrieval accuracy in percent
    best_score: float
    best_step: int
    is_best: bool
    pairs: dict | None = None  # the full `PairReport` on held-out pairs, when there are some
    sentences: dict | None = None  # the `SentenceReport` on held-out corpus sentences, likewise


@dataclass(frozen=True)
class TrainCheckpoint:
    step: int
    path: Path


@dataclass(frozen=True)
class TrainWarning:
    message: str  # e.g. the micro-batch was halved after a CUDA out-of-memory


@dataclass(frozen=True)
class TrainFinished:
    best_checkpoint: Path  # OUT/best: model/ (transformers folder) [+ head.pt]
    best_step: int
    best_score: float | None  # None without STS data or held-out pairs
    metric: str | None
    steps: int
    run_dir: Path
    config: TrainConfig
    # held-out pairs' PairReport of the base model and of the best checkpoint:
    # {"base": {...}, "best": {...}}, or None when no pairs were held out
    held_out: dict | None = None
    # the same for held-out corpus sentences (`SentenceReport`), when they scored the run
    held_out_sentences: dict | None = None


# -- the LASER student's own events (trainer.laser.student) ---------------------------------

@dataclass(frozen=True)
class StudentStage:
    stage: str  # "reading the corpus", "learning the vocabulary", "teacher vectors"
    done: int
    total: int


@dataclass(frozen=True)
class StudentStarted:
    config: StudentConfig
    corpus: CorpusStats | None
    pairs: PairStats | None
    items: int  # (text, target) items trained on
    vocab_size: int  # pieces the vocabulary really has
    dim: int
    total_steps: int
    start_step: int
    device: str


@dataclass(frozen=True)
class StudentFinished:
    best_checkpoint: Path  # a LASER checkpoint file (params, model, dictionary)
    best_step: int
    best_score: float | None  # held-out cosine x 100; None without held-out sentences
    metric: str | None
    steps: int
    run_dir: Path
    config: StudentConfig


TrainEvent = TrainPreparing | TrainStarted | TrainStep | TrainEval | TrainCheckpoint | TrainWarning | TrainFinished
