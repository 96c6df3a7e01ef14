"""How long a training run will take on this machine, and the disk it needs, measured
before it starts.

    >>> estimate = yield from measure(config, corpus=corpus)   # TrainPreparing stages, then a RunEstimate
    >>> estimate.seconds, estimate.disk_bytes

The base model is loaded as the run will load it, then one optimiser step is timed on a
real batch of the run's own sentences (a small batch, scaled to the run's: a step's time
grows with the number of sentences in it; the step before it warms up), and the encoding
of sentences as the evaluations do. The sum is every step, every evaluation (the base
model's first, as the run scores it) and every checkpoint, written at the pace measured
for one copy of the weights. Nothing is kept: the trial step trains a copy that is
dropped, and the model it read is the run's own base.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from engine.config import DataPaths, data_paths
from trainer.config import PAIR_METRIC, SENTENCE_METRIC, STS_METRIC, TrainConfig
from trainer.corpus import Corpus
from trainer.events import TrainPreparing
from trainer.pairs import PairSet

PROBE_BATCH = 16  # sentences in the timed step; scaled to the run's batch size
ENCODE_SAMPLE = 32  # sentences encoded to time an evaluation
STS_DEV_SENTENCES = 2 * 1500  # STS-B dev: 1,500 pairs
# A checkpoint holds the weights and AdamW's two moments (3 copies), the best model one
# more; while a checkpoint replaces the last one, both are on disk.
CHECKPOINT_COPIES = 3
PEAK_COPIES = 2 * CHECKPOINT_COPIES + 1
KEPT_COPIES = CHECKPOINT_COPIES + 1  # the run folder after training: the last checkpoint and the best


@dataclass(frozen=True)
class RunEstimate:
    device: str  # where it was measured ("cpu", "cuda")
    devices: tuple[tuple[str, str], ...]  # trainer.mixcse.train.available_devices()
    steps: int
    evaluations: int  # the base model's included
    checkpoints: int
    prepare_s: float  # reading the data and loading the model, as measured
    step_s: float  # one step at the run's batch size
    evaluation_s: float  # one evaluation
    checkpoint_s: float
    weights_bytes: int  # one fp32 copy of the weights

    @property
    def seconds(self) -> float:
        """The whole run: preparing, every step, every evaluation and checkpoint."""
        return (self.prepare_s + self.steps * self.step_s + self.evaluations * self.evaluation_s
                + self.checkpoints * self.checkpoint_s)

    @property
    def disk_bytes(self) -> int:
        """The most the run folder holds at once (a checkpoint replacing the last, and the best)."""
        return PEAK_COPIES * self.weights_bytes

    @property
    def kept_bytes(self) -> int:
        """What stays in the run folder after training (resumable and exportable)."""
        return KEPT_COPIES * self.weights_bytes


def measure(config: TrainConfig, *, corpus: Corpus | None = None, pairs: PairSet | None = None,
            paths: DataPaths | None = None, db_url: str | None = None) -> Iterator[TrainPreparing]:
    """Times the run `config` describes on this machine; returns a RunEstimate."""
    from trainer.mixcse.train import _data_for, _Run, available_devices, resolve_config, steps_ending_with

    started = time.monotonic()
    paths = paths or data_paths()
    yield TrainPreparing(f"Preparing {Path(config.base).name}")
    config, weights = resolve_config(config, paths)
    data = _data_for(config, corpus, pairs, db_url or paths.db_url)
    yield TrainPreparing(f"Loading {Path(config.base).name}")
    probe_batch = min(PROBE_BATCH, config.batch_size)
    training = paths.home / "training"  # checkpoints are timed on the disk the run writes to
    training.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="estimate-", dir=training) as scratch:
        run = _Run(replace(config, batch_size=probe_batch, out_dir=Path(scratch) / "run", epochs=1,
                           max_steps=2), data, weights, resume=False)
        prepare_s = time.monotonic() - started
        yield TrainPreparing("Timing a training step on this computer")
        step_s = _time_steps(run) * config.batch_size / probe_batch
        yield TrainPreparing("Timing an evaluation")
        evaluation_s = _evaluation_seconds(run, data, config)
        checkpoint_s = _time_saving(run.model, Path(scratch) / "copy") * CHECKPOINT_COPIES
    total = _total_steps(config, data)
    # the base model is scored before the first step, except against STS (its dev score is known)
    evaluations = (0 if run.metric is None
                   else steps_ending_with(config.eval_steps, 1, total) + (run.metric != STS_METRIC))
    return RunEstimate(
        device=run.device, devices=tuple(available_devices()), steps=total, evaluations=evaluations,
        checkpoints=steps_ending_with(config.save_steps, 1, total), prepare_s=prepare_s, step_s=step_s,
        evaluation_s=evaluation_s, checkpoint_s=checkpoint_s,
        weights_bytes=sum(p.numel() * 4 for p in run.model.parameters()))


def _time_steps(run) -> float:
    """Seconds of the second of two optimiser steps (the first pays for warming up)."""
    seconds = []
    for step in range(2):
        begun = time.monotonic()
        _epoch, views = run.local_views(step)
        run.train_step(views)
        run.apply_update()
        seconds.append(time.monotonic() - begun)
    return seconds[-1]


def _evaluation_seconds(run, data, config: TrainConfig) -> float:
    """One evaluation: the sentences it encodes times the seconds one takes here."""
    from trainer.mixcse.model import torch_encode
    from trainer.mixcse.train import EVAL_MAX_LEN

    if run.metric is None:
        return 0.0
    sample = _sample_sentences(data)
    encode = torch_encode(run.model, config.text_prefix,
                          max_len=config.max_len if run.metric == SENTENCE_METRIC else EVAL_MAX_LEN)
    encode(sample[:4])  # warm up
    begun = time.monotonic()
    encode(sample)
    per_sentence = (time.monotonic() - begun) / len(sample)
    if run.metric == STS_METRIC:
        count = STS_DEV_SENTENCES
    elif run.metric == PAIR_METRIC:
        count = 2 * len(data.pairs.held_out) + len(data.held_out_sentences)
    else:  # two dropout views and the plain vectors of each held-out sentence
        count = 3 * len(data.held_out_sentences)
    return per_sentence * count


def _sample_sentences(data) -> list[str]:
    if data.pairs:
        sentences = [side for pair in data.pairs.train[:ENCODE_SAMPLE] for side in pair]
    else:
        sentences = list(data.held_out_sentences or data.corpus.sentences)
    return sentences[:ENCODE_SAMPLE]


def _time_saving(model, folder: Path) -> float:
    """Seconds to write one copy of the weights where the run writes (checkpoints are 3)."""
    from trainer.checkpoint import save_model

    begun = time.monotonic()
    save_model(model, folder)
    seconds = time.monotonic() - begun
    shutil.rmtree(folder, ignore_errors=True)
    return seconds


def _total_steps(config: TrainConfig, data) -> int:
    """The run's optimiser steps: whole batches per epoch, times the epochs, up to max_steps."""
    per_epoch = data.size // config.batch_size
    total = per_epoch * config.epochs
    return min(total, config.max_steps) if config.max_steps else total
