"""MixCSE training as a generator of typed events (the CLI and the GUI wizard drive it).

    >>> for event in train(TrainConfig(base="all-minilm-l6-v2", corpus=("notes/",))):
    ...     if isinstance(event, TrainStep): print(event.step, event.loss)

Each optimiser step embeds the batch twice in one forward pass of ``[2n]`` rows (SimCSE's
augmentation: `model.train()`, so each copy gets its own dropout mask) and applies
`trainer.mixcse.losses.mixcse_loss` to the two views. With translation pairs (`config.pairs`)
the two views are a sentence and its translation instead: the other pairs' translations
are the negatives and MixCSE mixes its hard negatives from them, in both directions; a
corpus given as well adds its dropout-view loss (weight `config.mono_weight`) so that
similarity within one language does not drift. Pairs held out of training score the
model at every evaluation when there is no STS data (`trainer.mixcse.pair_eval`); without
pairs either, held-out corpus sentences do (`trainer.mixcse.sentence_eval`). Closing the generator cancels the run at
the next step; the last checkpoint stays on disk and `train(config, resume=True)` continues
from it (weights, optimiser, scheduler, RNG states, step and data order), bit-identical on
CPU. A non-finite or impossible loss, or a non-finite gradient, stops the run with
`TrainingDivergedError` before the bad update is applied; the last good checkpoint remains.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch

from engine.config import DataPaths, data_paths
from engine.errors import InputError
from trainer import checkpoint as ckpt
# what scores a run lives in trainer.config, which front ends import without torch
from trainer.config import PAIR_METRIC, SENTENCE_METRIC, STS_METRIC, TrainConfig
from trainer.corpus import Corpus, CorpusFilter, CorpusSource, load_corpus
from trainer.mixcse.distributed import barrier, gather_with_grad, world
from trainer.mixcse.model import SentenceModel, resolve_base_model, torch_encode
from trainer.pairs import PairFilter, PairSet, batch_order, load_pairs
# the events and errors live where front ends import them without torch; also re-exported here
from trainer.events import (  # noqa: F401
    TrainCheckpoint,
    TrainEval,
    TrainEvent,
    TrainFinished,
    TrainingDivergedError,
    TrainingError,
    TrainPreparing,
    TrainStarted,
    TrainStep,
    TrainWarning,
)

log = logging.getLogger(__name__)

EVAL_MAX_LEN = 256  # STS sentences at evaluation are not cut to the training length
# Held-out corpus sentences: same-language distractors for the bias measure.
HELD_OUT_SENTENCES = 1000
HELD_OUT_FILE = "held_out.json"  # the base model's and the best checkpoint's pair scores
HELD_OUT_SENTENCES_FILE = "held_out_sentences.json"  # same for held-out corpus sentences


# -- setup --------------------------------------------------------------------------------

def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("device 'cuda' was asked for but torch sees no CUDA device")
    return device


def available_devices() -> list[tuple[str, str]]:
    """(device, description) pairs a front end can offer, CPU last."""
    found = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            found.append(("cuda", f"{props.name} ({props.total_memory / 2**30:.0f} GiB)"))
    found.append(("cpu", f"CPU ({torch.get_num_threads()} threads)"))
    return found


def resolve_config(config: TrainConfig, paths: DataPaths | None = None) -> tuple[TrainConfig, Path]:
    """Fills pooling and prefix from the base model; returns (config, torch weights folder)."""
    base = resolve_base_model(config.base, paths)
    pooling = config.pooling
    if pooling == "auto":
        pooling = "mean" if base.pooling == "mean" else "cls_mlp"
    prefix = base.query_prefix if config.text_prefix is None else config.text_prefix
    passage = base.passage_prefix if config.passage_prefix is None else config.passage_prefix
    return replace(config, pooling=pooling, text_prefix=prefix, passage_prefix=passage), base.path


def corpus_for(config: TrainConfig, world_size: int = 1, db_url: str | None = None) -> Corpus:
    """The run's corpus sentences; `db_url`: the library's database, for a collection."""
    source = CorpusSource(tuple(config.corpus), config.collection, config.one_per_line, db_url)
    filt = CorpusFilter(config.min_chars, config.max_chars, config.min_words, config.max_words)
    # with pairs driving the steps, the corpus only has to fill one batch of views
    batches = 1 if config.pairs else 2
    return load_corpus(source, filt, config.seed, min_sentences=batches * config.batch_size * world_size)


def pairs_for(config: TrainConfig, world_size: int = 1) -> PairSet:
    return load_pairs(config.pairs, PairFilter.of(config), config.seed, holdout=config.pair_holdout,
                      min_pairs=2 * config.batch_size * world_size)


@dataclass(frozen=True)
class TrainData:
    """What one run learns from: translation pairs, a corpus, or both (pairs drive the steps)."""

    corpus: Corpus | None
    pairs: PairSet | None
    # corpus sentences kept out: distractors for the pairs' bias, or (no pairs, no STS
    # data) what scores the run
    held_out_sentences: tuple[str, ...] = ()

    @classmethod
    def of(cls, corpus: Corpus | None, pairs: PairSet | None, *, score_on_corpus: bool = False,
           min_train: int = 0) -> TrainData:
        """With `score_on_corpus` and no pairs, 10% of the corpus (at most 1,000 sentences)
        is held out to score the run, when at least 20 can be and `min_train` remain."""
        if corpus is None and pairs is None:
            raise InputError("give training sentences (a corpus or a collection), "
                             "translation pairs, or both")
        if corpus is None or not (pairs.held_out if pairs else score_on_corpus):
            return cls(corpus, pairs)
        from trainer.mixcse.sentence_eval import MIN_SENTENCES

        keep = min(HELD_OUT_SENTENCES, len(corpus.sentences) // 10)
        if not pairs and (keep < MIN_SENTENCES or len(corpus.sentences) - keep < min_train):
            return cls(corpus, pairs)
        held = corpus.sentences[:keep]
        return cls(replace(corpus, sentences=corpus.sentences[keep:]), pairs, tuple(held))

    @property
    def size(self) -> int:
        """Items per epoch: pairs when there are any, else corpus sentences."""
        return len(self.pairs.train) if self.pairs else len(self.corpus.sentences)

    def fingerprint(self) -> str:
        sentences = list(self.corpus.sentences) if self.corpus else []
        if self.pairs:
            sentences += [side for pair in self.pairs.train for side in pair]
        return fingerprint(sentences)


def fingerprint(sentences: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for sentence in sentences:
        digest.update(sentence.encode("utf-8") + b"\n")
    return digest.hexdigest()


def make_loss(config: TrainConfig):
    """(h1, h2) -> scalar; under DDP negatives come from every rank (see trainer.mixcse.distributed)."""
    from trainer.mixcse.losses import mixcse_loss

    def loss_fn(h1: torch.Tensor, h2: torch.Tensor) -> torch.Tensor:
        size = world()[1]
        h1, h2 = gather_with_grad(h1), gather_with_grad(h2)
        loss = mixcse_loss(h1, h2, lam=config.lam, tau=config.tau, bidirectional=config.bidirectional,
                           stop_grad=config.stop_grad, impl=config.loss_impl, variant=config.loss_variant)
        return loss * size  # DDP averages gradients over ranks; this restores their sum

    return loss_fn


def step_batch(order: np.ndarray, step: int, steps_per_epoch: int, batch: int) -> tuple[int, np.ndarray]:
    """(epoch, corpus indices of this step's global batch): epoch e is permutation e of the seed."""
    epoch, position = divmod(step, steps_per_epoch)
    return epoch, order[epoch][position * batch:(position + 1) * batch]


# -- the run ------------------------------------------------------------------------------

class _Run:
    """State of one training run; `train` drives it and turns it into events."""

    def __init__(self, config: TrainConfig, data: TrainData, weights: Path, resume: bool):
        self.rank, self.world_size = world()
        self.config, self.data, self.corpus = config, data, data.corpus
        self.device = resolve_device(config.device)
        self.out = Path(config.out_dir)
        self.global_batch = config.batch_size * self.world_size
        rng = np.random.default_rng(config.seed)
        self.order = [self._epoch_order(rng) for _ in range(config.epochs)]
        self.steps_per_epoch = min(len(order) for order in self.order) // self.global_batch
        if self.steps_per_epoch == 0:
            raise InputError(f"too many of the {data.size:,} pairs share a sentence to fill one batch of "
                             f"{self.global_batch} in which no two do; lower the batch size")
        total = self.steps_per_epoch * config.epochs
        self.total = min(total, config.max_steps) if config.max_steps else total
        self.fingerprint = data.fingerprint()
        last = ckpt.latest_checkpoint(self.out) if resume else None
        if resume and last is None:
            raise InputError(f"nothing to resume in {self.out}: no complete checkpoint yet")
        torch.manual_seed(config.seed)
        self.model = SentenceModel.load(last / "model" if last else weights, config.pooling)
        if last:
            ckpt.load_head(last, self.model)
        self.model.to(self.device).train()
        self.optimizer = torch.optim.AdamW(self.model.trainable_parameters(config.trainable), lr=config.lr,
                                           weight_decay=config.weight_decay)
        # SimCSE's Trainer default: linear decay to 0, no warm-up
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: max(0.0, 1 - s / max(1, self.total)))
        self.state = ckpt.TrainState(0, config.micro_batch, None, None, self.fingerprint)
        if last:
            self._restore(last)
        self.last_checkpoint = last
        self.held_out = _read_json(self.out / HELD_OUT_FILE) if last else {}
        self.held_sentences = _read_json(self.out / HELD_OUT_SENTENCES_FILE) if last else {}
        self.ddp = self._wrap_ddp()
        self.loss_fn = make_loss(config)
        self.anchor = None
        if config.distill > 0:  # the base, also on resume: the term's target never moves
            from trainer.mixcse.distill import BaseAnchor

            self.anchor = BaseAnchor.load(weights, config.pooling, self.device)
        self.mono_order = (rng.permutation(len(data.corpus.sentences))
                           if data.pairs and data.corpus else None)
        self.warnings: list[str] = []

    def _epoch_order(self, rng: np.random.Generator) -> np.ndarray:
        """One epoch's item order: a permutation of the corpus, or of the pairs in global
        batches where no two pairs share a sentence (each would be the other's negative)."""
        if not self.data.pairs:
            return rng.permutation(self.data.size)
        return batch_order(self.data.pairs.train, self.global_batch, rng)

    def _restore(self, last: Path) -> None:
        self.state = ckpt.load_checkpoint(last, self.optimizer, self.scheduler)
        if self.state.corpus_fingerprint != self.fingerprint:
            raise InputError("the corpus changed since the checkpoint was written; resuming "
                             "would train on other sentences. Start a new run (another --out).")
        log.info("resuming from %s (step %d)", last, self.state.step)

    def _wrap_ddp(self):
        if self.world_size == 1:
            return self.model
        from torch.nn.parallel import DistributedDataParallel

        ids = [torch.cuda.current_device()] if self.device == "cuda" else None
        return DistributedDataParallel(self.model, device_ids=ids)

    def local_views(self, step: int) -> tuple[int, list[tuple[list[str], list[str]]]]:
        """(epoch, this rank's (left, right) views of the step): the same sentences twice
        (dropout views), or sources and their translations, plus the corpus's dropout
        views when pairs and a corpus train together (`config.loss_weights` order)."""
        epoch, idx = step_batch(self.order, step, self.steps_per_epoch, self.global_batch)
        mine = self._mine(idx)
        prefix = self.config.text_prefix
        if not self.data.pairs:
            sentences = [prefix + self.corpus.sentences[i] for i in mine]
            return epoch, [(sentences, sentences)]
        pairs = [self.data.pairs.train[i] for i in mine]
        views = [self._pair_view(pairs, step)]
        if len(self.config.loss_weights) > 1:
            # the anchor holds the corpus in the role the step trains: passages too
            own = self.config.passage_prefix if self._passage_step(step) else prefix
            sentences = [own + self.corpus.sentences[i] for i in self._mine(self._mono_batch(step))]
            views.append((sentences, sentences))
        return epoch, views

    def _pair_view(self, pairs: list[tuple[str, str]], step: int) -> tuple[list[str], list[str]]:
        """(left, right) of a batch of pairs, each side with the prefix of its role: with
        query-passage roles the sources ask on even steps, the targets on odd ones."""
        query = self.config.text_prefix
        if self.config.pair_roles == "same":
            return [query + s for s, _ in pairs], [query + t for _, t in pairs]
        if self._passage_step(step):
            pairs = [(t, s) for s, t in pairs]
        passage = self.config.passage_prefix
        return [query + s for s, _ in pairs], [passage + t for _, t in pairs]

    def _passage_step(self, step: int) -> bool:
        """Whether `step` is one where query-passage roles swap: the targets ask, and the
        anchor holds the corpus as passages."""
        return self.config.pair_roles == "query-passage" and step % 2 == 1

    def _mine(self, idx: np.ndarray) -> np.ndarray:
        return idx[self.rank * self.config.batch_size:(self.rank + 1) * self.config.batch_size]

    def _mono_batch(self, step: int) -> np.ndarray:
        """The corpus's global batch for `step`, cycling through one permutation."""
        per_pass = len(self.mono_order) // self.global_batch
        position = step % per_pass
        return self.mono_order[position * self.global_batch:(position + 1) * self.global_batch]

    def train_step(self, views: list[tuple[list[str], list[str]]]) -> float:
        """One optimiser step over `views`, halving the micro-batch on CUDA OOM."""
        while True:
            try:
                return self._accumulate(views)
            except torch.OutOfMemoryError as e:
                self.optimizer.zero_grad(set_to_none=True)
                if self.device == "cuda":
                    torch.cuda.empty_cache()
                half = self.state.micro_batch // 2
                if half < 2:
                    raise TrainingError("out of memory even with micro-batches of 2 sentences; "
                                        "lower max_len or use a smaller model", self.last_checkpoint) from e
                self.state = replace(self.state, micro_batch=half)
                self.warnings.append(f"out of memory: micro-batch halved to {half} sentences "
                                     f"({len(views[0][0]) // half} per step)")

    def _accumulate(self, views: list[tuple[list[str], list[str]]]) -> float:
        """Backward of sum(weight * loss(view)) in micro-batches; each micro-batch is its
        own contrastive batch. With a distillation weight, the corpus's sentences (the last
        view) also add their distance from the base model. Returns the step's loss."""
        micro = self.state.micro_batch
        per_view = -(-len(views[0][0]) // micro)
        chunks = []
        for v, ((left, right), weight) in enumerate(zip(views, self.config.loss_weights)):
            for i in range(0, len(left), micro):
                if weight > 0:
                    chunks.append((self._contrastive, left[i:i + micro], right[i:i + micro], weight))
                if self.anchor is not None and v == len(views) - 1:
                    chunks.append((self._distill, left[i:i + micro], None, self.config.distill))
        total = 0.0
        for i, (term, left, right, weight) in enumerate(chunks):
            sync = i == len(chunks) - 1 or self.world_size == 1
            with self._no_sync(sync), self._autocast():
                loss, value = term(left, right)
                loss = weight * loss / per_view
            self._check_loss(weight * value)
            loss.backward()
            total += weight * value / per_view
        return total

    def _contrastive(self, left: list[str], right: list[str]) -> tuple[torch.Tensor, float]:
        """(loss to back-propagate, its value over all ranks) of one contrastive micro-batch."""
        batch = self.model.tokenize(left + right, self.config.max_len, self.device)
        # [2n, d]: two dropout masks of the same n sentences, or n sentences and their n
        # translations
        h = self.ddp(**batch)
        n = len(left)
        loss = self.loss_fn(h[:n].float(), h[n:].float())
        return loss, loss.item() / self.world_size

    def _distill(self, sentences: list[str], _: None) -> tuple[torch.Tensor, float]:
        """(loss, value) of 1 - cos to the base's vectors, both read without dropout; DDP's
        gradient average makes it the mean over every rank's sentences."""
        from trainer.mixcse.distill import distill_loss, without_dropout

        batch = self.model.tokenize(sentences, self.config.max_len, self.device)
        with without_dropout(self.model):
            loss = distill_loss(self.ddp(**batch), self.anchor.vectors(batch))
        return loss, loss.item()

    def _no_sync(self, sync: bool):
        import contextlib

        return contextlib.nullcontext() if sync else self.ddp.no_sync()

    def _autocast(self):
        enabled = self.device == "cuda" and self.config.bf16
        return torch.autocast(device_type=self.device, dtype=torch.bfloat16, enabled=enabled)

    def _check_loss(self, loss: float) -> None:
        if not math.isfinite(loss) or loss > self.config.loss_bound():
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingDivergedError(
                f"training stopped at step {self.state.step + 1}: the loss became {loss} "
                f"(limit {self.config.loss_bound():.1f}). Lower the learning rate or check the "
                f"corpus; the last good checkpoint is {self.last_checkpoint or 'none (no step was saved)'}",
                self.last_checkpoint)

    def apply_update(self) -> None:
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
        if not torch.isfinite(norm):
            self.optimizer.zero_grad(set_to_none=True)
            raise TrainingDivergedError(
                f"training stopped at step {self.state.step + 1}: the gradient norm is {norm.item()}. "
                f"The last good checkpoint is {self.last_checkpoint or 'none'}", self.last_checkpoint)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.state = replace(self.state, step=self.state.step + 1)

    @property
    def metric(self) -> str | None:
        """What selects the best checkpoint: STS-B dev, else held-out pairs, else nothing."""
        if self.config.sts_dir:
            return STS_METRIC
        if self.data.pairs and len(self.data.pairs.held_out) >= 2:
            return PAIR_METRIC
        if not self.data.pairs and self.data.held_out_sentences:
            return SENTENCE_METRIC
        return None

    def evaluate(self) -> TrainEval | None:
        if self.metric is None:
            return None
        if self.metric == SENTENCE_METRIC:
            return self._evaluate_sentences()
        encode = torch_encode(self.model, self.config.text_prefix, max_len=EVAL_MAX_LEN)
        report = None
        if self.data.pairs and len(self.data.pairs.held_out) >= 2:
            from trainer.mixcse.pair_eval import evaluate_pairs

            report = evaluate_pairs(encode, self.data.pairs.held_out,
                                    self.data.held_out_sentences).to_dict()
        if self.metric == STS_METRIC:
            from trainer.evaluate import stsb_dev_spearman

            score = stsb_dev_spearman(encode, Path(self.config.sts_dir))
        else:
            score = report["retrieval"]
        step = self.state.step
        is_best = self.state.best_dev is None or score > self.state.best_dev
        if is_best and step > 0:  # the base model (step 0) is the baseline, not a result
            ckpt.save_best(self.out, self.model, step, score)
            self.state = replace(self.state, best_dev=score, best_step=step)
        if report is not None and (step == 0 or is_best):
            self.held_out["base" if step == 0 else "best"] = report | {"step": step}
            _write_json(self.out / HELD_OUT_FILE, self.held_out)
        best = self.state.best_dev if self.state.best_dev is not None else score
        return TrainEval(step, self.metric, score, best, self.state.best_step or 0,
                         is_best and step > 0, report)

    def _evaluate_sentences(self) -> TrainEval:
        """Scores on the held-out corpus sentences (`trainer.mixcse.sentence_eval`); the base
        model's nearest neighbours are kept to tell how far later checkpoints moved."""
        from trainer.mixcse.sentence_eval import evaluate_sentences

        step = self.state.step
        # at the training length: the views are scored as training saw such sentences
        report = evaluate_sentences(self.model, self.config.text_prefix,
                                    self.data.held_out_sentences, tau=self.config.tau,
                                    max_len=self.config.max_len,
                                    base_neighbours=self.held_sentences.get("base_neighbours"))
        scores = report.to_dict()
        is_best = step > 0 and (self.state.best_dev is None or report.separation > self.state.best_dev)
        if is_best:
            ckpt.save_best(self.out, self.model, step, report.separation)
            self.state = replace(self.state, best_dev=report.separation, best_step=step)
        if step == 0:
            self.held_sentences |= {"base": scores | {"step": 0}, "base_neighbours": report.neighbours}
        elif is_best:
            self.held_sentences["best"] = scores | {"step": step}
        if step == 0 or is_best:
            _write_json(self.out / HELD_OUT_SENTENCES_FILE, self.held_sentences)
        best = self.state.best_dev if self.state.best_dev is not None else report.separation
        return TrainEval(step, SENTENCE_METRIC, report.separation, best, self.state.best_step or 0,
                         is_best, sentences=scores)

    def save(self) -> TrainCheckpoint:
        path = ckpt.save_checkpoint(self.out, self.config, self.model, self.optimizer,
                                    self.scheduler, self.state)
        self.last_checkpoint = path
        return TrainCheckpoint(self.state.step, path)

    def finish(self) -> TrainFinished:
        if self.state.best_step is None or not (self.out / ckpt.BEST).is_dir():
            ckpt.save_best(self.out, self.model, self.state.step, None)
            self.state = replace(self.state, best_step=self.state.step)
        return TrainFinished(self.out / ckpt.BEST, self.state.best_step, self.state.best_dev,
                             self.metric if self.state.best_dev is not None else None,
                             self.state.step, self.out, self.config, self.held_out or None,
                             _before_after(self.held_sentences))


def train(config: TrainConfig, *, resume: bool = False, corpus: Corpus | None = None,
          pairs: PairSet | None = None, paths: DataPaths | None = None,
          db_url: str | None = None) -> Iterator[TrainEvent]:
    """Runs MixCSE training, yielding events; close the generator to cancel.

    Args:
        config: the run's settings; "auto" fields are resolved from the base model.
        resume: continue from OUT/latest.json (the saved config is used, not `config`).
        corpus: sentences prepared by the caller (else read from config.corpus/collection).
        pairs: translation pairs prepared by the caller (else read from config.pairs).
        db_url: the library's database, read for config.collection (default: the one
            `paths` has configured).
    Raises:
        InputError, CorpusTooSmallError: bad settings or too few sentences or pairs.
        TrainingDivergedError: NaN/inf or impossible loss; `.checkpoint` is the last good one.
    """
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # per-checkpoint "Writing model shards" bars are noise here
    paths = paths or data_paths()
    if resume:
        config = _saved_config(Path(config.out_dir))
    yield TrainPreparing(f"Preparing {Path(config.base).name}")
    config, weights = resolve_config(config, paths)
    if (config.uses_corpus and corpus is None) or (config.pairs and pairs is None):
        yield TrainPreparing("Reading the training sentences")
    data = _data_for(config, corpus, pairs, db_url or paths.db_url)
    yield TrainPreparing(f"Loading {Path(config.base).name} for training")
    run = _Run(config, data, weights, resume)
    if run.rank == 0:
        run.out.mkdir(parents=True, exist_ok=True)
        (run.out / "config.json").write_text(config.to_json(), encoding="utf-8")
    yield TrainStarted(config, data.corpus.stats if data.corpus else None,
                       data.pairs.stats if data.pairs else None, run.total, run.steps_per_epoch,
                       run.state.step, run.device, run.world_size, run.metric)
    pace = _Pace(run.total, config.eval_steps if run.metric else 0, config.save_steps)
    if run.rank == 0 and run.state.step == 0 and run.metric in (PAIR_METRIC, SENTENCE_METRIC):
        yield TrainPreparing("Scoring the model before training, to compare with the result")
        with pace.timing("eval"):
            base_score = run.evaluate()  # the base model's score: what training is measured against
        yield base_score
    while run.state.step < run.total:
        with pace.timing("step"):
            epoch, views = run.local_views(run.state.step)
            loss = run.train_step(views)
            run.apply_update()
        for message in run.warnings:
            yield TrainWarning(message)
        run.warnings.clear()
        step = run.state.step
        yield TrainStep(step, run.total, loss, run.scheduler.get_last_lr()[0], pace.seconds_left(step), epoch,
                        seen=step * run.global_batch)
        yield from _eval_and_save(run, step, pace)
    if run.rank == 0:
        yield run.finish()
    barrier()


class _Pace:
    """Time left from what this run's steps, evaluations and checkpoints cost so far: the
    first evaluation on a CPU can take as long as dozens of steps, so steps alone would
    promise too little."""

    def __init__(self, total: int, eval_steps: int, save_steps: int):
        self.total, self.eval_steps, self.save_steps = total, eval_steps, save_steps
        self.seconds: dict[str, list[float]] = {"step": [], "eval": [], "save": []}

    def timing(self, kind: str):
        import contextlib

        @contextlib.contextmanager
        def timed():
            started = time.monotonic()
            yield
            self.seconds[kind].append(time.monotonic() - started)

        return timed()

    def seconds_left(self, step: int) -> float:
        """After `step` (its own evaluation and checkpoint still to come)."""
        return (self._mean("step") * (self.total - step)
                + self._mean("eval") * steps_ending_with(self.eval_steps, step, self.total)
                + self._mean("save") * steps_ending_with(self.save_steps, step, self.total))

    def _mean(self, kind: str) -> float:
        done = self.seconds[kind]
        return sum(done) / len(done) if done else 0.0


def steps_ending_with(every: int, first: int, total: int) -> int:
    """How many of the steps `first`..`total` end with a piece of work done every N steps
    and after the last one (an evaluation, a checkpoint): steps_ending_with(4, 1, 10) == 3."""
    if every <= 0 or first > total or total <= 0:
        return 0
    start = -(-max(first, 1) // every) * every
    regular = 0 if start > total else (total - start) // every + 1
    return regular + (0 if total % every == 0 else 1)


def _data_for(config: TrainConfig, corpus: Corpus | None, pairs: PairSet | None,
              db_url: str | None = None) -> TrainData:
    size = world()[1]
    if config.uses_corpus and corpus is None:
        corpus = corpus_for(config, size, db_url)
    if config.pairs and pairs is None:
        pairs = pairs_for(config, size)
    data = TrainData.of(corpus, pairs, score_on_corpus=not config.sts_dir,
                        min_train=2 * config.batch_size * size)
    if data.pairs and data.corpus and len(data.corpus.sentences) < config.batch_size * size:
        raise InputError(f"{len(data.corpus.sentences)} corpus sentences are too few for one "
                         f"batch of {config.batch_size} beside the translation pairs")
    if data.size < 2 * config.batch_size * size:
        what = "translation pairs" if data.pairs else "sentences"
        raise InputError(f"{data.size} {what} are too few for batches of {config.batch_size}; "
                         "training needs at least two batches")
    return data


def _eval_and_save(run: _Run, step: int, pace: _Pace) -> Iterator[TrainEvent]:
    last = step == run.total
    if run.rank == 0:
        if step % run.config.eval_steps == 0 or last:
            with pace.timing("eval"):
                result = run.evaluate()
            if result is not None:
                yield result
        if step % run.config.save_steps == 0 or last:
            with pace.timing("save"):
                saved = run.save()
            yield saved
    barrier()


def _before_after(scores: dict) -> dict | None:
    """{"base": ..., "best": ...} of a held-out score file, None until both exist."""
    return {k: scores[k] for k in ("base", "best")} if "base" in scores and "best" in scores else None


def _read_json(path: Path) -> dict:
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_json(path: Path, scores: dict) -> None:
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(scores, indent=2), encoding="utf-8")
    tmp.replace(path)


def _saved_config(out_dir: Path) -> TrainConfig:
    """The run's saved settings, in the folder given: a copied or moved run folder resumes
    (and writes) there, whatever folder its config.json names."""
    path = out_dir / "config.json"
    if not path.is_file():
        raise InputError(f"nothing to resume in {out_dir}: no config.json")
    saved = TrainConfig.from_json(path.read_text(encoding="utf-8"))
    if Path(saved.out_dir).absolute() != out_dir.absolute():
        log.info("resuming the run saved for %s in %s, where it now is", saved.out_dir, out_dir)
    return replace(saved, out_dir=Path(out_dir))
