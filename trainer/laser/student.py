"""A LASER-architecture BiLSTM distilled from a registered model: a fast encoder of one's own.

    >>> for event in train_student(StudentConfig(teacher="multilingual-e5-small", corpus=("notes/",))):
    ...     if isinstance(event, TrainStep): print(event.step, event.loss)
    >>> manifest = finish_student(finished, "notes-laser")        # ONNX, family "laser"

The run: read the corpus (and pairs), add random runs of words of its sentences
(trainer.laser.student_data.sentence_spans), learn a SentencePiece vocabulary on it
(trainer.laser.vocab), encode every target text once with the teacher's ONNX encoder (cached
in the run folder), start the student's token embeddings from the teacher's embedding table
(trainer.laser.student_init), then train LaserLstm (embedding, stacked BiLSTM, max-pooling
over time, as LASER) so that its unit vector of a text matches the teacher's vector, centred (the
teacher's mean vector taken out, see `centred`): the loss is 1 - cosine (MSE between unit
vectors is the same up to a factor 2), over the text itself and, with pairs, over its
translation (trainer.laser.student_data). The BiLSTM has teacher dim / 2
units per direction, so its vectors live in the teacher's space without a projection and the
result is an ordinary LASER checkpoint: `finish_student` exports it through the same path as
official LASER files (trainer.laser.bilstm.export_laser).

Events are those of the MixCSE trainer (trainer.mixcse.train: TrainStep, TrainEval, TrainCheckpoint)
plus `StudentStage` (vocabulary, teacher vectors) and `StudentStarted`/`StudentFinished`.
Closing the generator cancels at the next step or teacher batch; `train_student(config,
resume=True)` continues from the last checkpoint with the same data order.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

import numpy as np
import torch

from engine.config import DataPaths, data_paths
from engine.errors import InputError
from trainer import checkpoint as ckpt
from trainer.laser import student_files as files
from trainer.corpus import CorpusFilter, CorpusSource, CorpusStats, load_corpus
from trainer.laser.student_config import StudentConfig
from trainer.laser.student_data import (check_dim, length_batches, pad_batch, read_pairs,
                                        sentence_spans, student_items, teacher_vectors)
from trainer.laser.student_init import teacher_embedding_rows
from trainer.laser.student_model import new_student
from trainer.pairs import PairStats
from trainer.mixcse.train import TrainCheckpoint, TrainEval, TrainingDivergedError, TrainStep, TrainWarning
# the events live where the window unpickles them without torch; re-exported here
from trainer.events import StudentFinished, StudentStage, StudentStarted  # noqa: F401

log = logging.getLogger(__name__)

METRIC = "held-out cosine to the teacher"
WARMUP_SHARE = 0.05


@dataclass(frozen=True)
class _Data:
    texts: list[str]  # distinct texts the student reads
    targets: list[str]  # distinct texts the teacher encodes
    train: np.ndarray  # [n, 2] (text index, target index)
    held_out: np.ndarray  # [m, 2], never trained on
    corpus: CorpusStats | None
    pairs: PairStats | None


def _read_data(config: StudentConfig) -> _Data:
    sentences, corpus_stats, pairs, pair_stats = [], None, [], None
    if config.corpus or config.collection:
        corpus = load_corpus(CorpusSource(tuple(config.corpus), config.collection, config.one_per_line),
                             # min_words=1: Chinese or Japanese sentences have no spaces
                             CorpusFilter(config.min_chars, config.max_chars, min_words=1), config.seed,
                             min_sentences=2)
        sentences, corpus_stats = list(corpus.sentences), corpus.stats
    if config.pairs:
        pairs, pair_stats = read_pairs(config.pairs, config.max_chars)
    # held out: corpus sentences in no pair (the corpus is shuffled with the seed), so the
    # score is on sentences the student never read
    in_pairs = {side for pair in pairs for side in pair}
    keep = min(config.held_out, len(sentences) // 10)
    held = [s for s in sentences if s not in in_pairs][:keep]
    held_set = set(held)
    trained = [s for s in sentences if s not in held_set]
    spans = sentence_spans(dict.fromkeys(trained + sorted(in_pairs)), config.spans_per_sentence,
                           config.seed)
    train_items = student_items(trained + [s for s in spans if s not in held_set], pairs)
    held_items = [(s, s) for s in held]
    texts = list(dict.fromkeys(t for t, _ in train_items + held_items))
    targets = list(dict.fromkeys(t for _, t in train_items + held_items))
    text_id, target_id = {t: i for i, t in enumerate(texts)}, {t: i for i, t in enumerate(targets)}
    index = lambda items: np.array([(text_id[a], target_id[b]) for a, b in items],  # noqa: E731
                                   dtype=np.int64).reshape(-1, 2)
    if len(train_items) < 2 * config.batch_size:
        raise InputError(f"{len(train_items)} training items are too few for batches of "
                         f"{config.batch_size}; give more sentences or a smaller batch")
    return _Data(texts, targets, index(train_items), index(held_items), corpus_stats, pair_stats)


class _Run:
    """One student run's state; `train_student` drives it and yields the events."""

    def __init__(self, config: StudentConfig, data: _Data, dictionary: dict, token_rows: list,
                 targets: np.ndarray, resume: bool, embeddings: np.ndarray | None = None):
        self.config, self.data, self.out = config, data, Path(config.out_dir)
        self.device = "cuda" if config.device == "cuda" or (
            config.device == "auto" and torch.cuda.is_available()) else "cpu"
        self.dictionary, self.rows = dictionary, token_rows
        self.targets = torch.from_numpy(targets)
        self.steps_per_epoch = max(1, len(data.train) // config.batch_size)
        self.total = config.steps or self.steps_per_epoch * config.epochs
        epochs = math.ceil(self.total / self.steps_per_epoch)
        lengths = np.array([len(self.rows[i]) for i in data.train[:, 0]])
        rng = np.random.default_rng(config.seed)
        self.batches = [length_batches(rng, lengths, config.batch_size) for _ in range(epochs)]
        torch.manual_seed(config.seed)
        self.params = files.student_params(len(dictionary), config.embed_dim,
                                           check_dim(targets.shape[1]), config.num_layers)
        self.model = new_student(self.params).to(self.device)
        if embeddings is not None:  # [vocab, embed_dim] from the teacher's table
            with torch.no_grad():
                self.model.embed_tokens.weight.copy_(torch.from_numpy(embeddings))
        self.optimizer = torch.optim.Adam(self._parameter_groups(), lr=config.lr)
        warmup = max(1, int(WARMUP_SHARE * self.total))
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: min(
            (s + 1) / warmup, max(0.0, (self.total - s) / max(1, self.total - warmup))))
        self.fingerprint = files.data_fingerprint(data.texts, data.targets, data.train)
        self.state = ckpt.TrainState(0, config.batch_size, None, None, self.fingerprint)
        self.last_checkpoint = None
        if resume:
            self._restore()

    def _parameter_groups(self) -> list[dict]:
        """The LSTMs at `lr`; the embeddings at lr x embedding_lr_scale, or frozen at 0."""
        embedding = self.model.embed_tokens.weight
        others = [p for p in self.model.parameters() if p is not embedding]
        scale = self.config.embedding_lr_scale
        if scale == 0:
            embedding.requires_grad_(False)
            return [{"params": others}]
        return [{"params": others}, {"params": [embedding], "lr": self.config.lr * scale}]

    def _restore(self) -> None:
        last = ckpt.latest_checkpoint(self.out)
        if last is None:
            raise InputError(f"nothing to resume in {self.out}: no complete checkpoint yet")
        files.load_student_weights(last / files.STUDENT_FILE, self.model, self.params)
        self.state = ckpt.load_checkpoint(last, self.optimizer, self.scheduler)
        if self.state.corpus_fingerprint != self.fingerprint:
            raise InputError("the corpus changed since the checkpoint was written; resuming "
                             "would train on other sentences. Start a new run (another --out).")
        self.last_checkpoint = last
        log.info("resuming from %s (step %d)", last, self.state.step)

    def batch(self, step: int) -> np.ndarray:
        epoch, position = divmod(step, self.steps_per_epoch)
        return self.data.train[self.batches[epoch][position]]

    def vectors(self, text_ids) -> torch.Tensor:
        """The student's unit vectors [b, dim] of texts `text_ids`."""
        tokens, lengths = pad_batch([self.rows[i] for i in text_ids], self.params["padding_idx"])
        return self.model(tokens.to(self.device), lengths.to(self.device))

    def train_step(self, batch: np.ndarray) -> float:
        student = self.vectors(batch[:, 0])
        teacher = self.targets[batch[:, 1]].to(self.device)
        loss = (1.0 - (student * teacher).sum(-1)).mean()
        if self.config.contrastive_weight:
            loss = loss + self.config.contrastive_weight * self._contrastive(student, teacher, batch[:, 1])
        value = float(loss.item())
        if not math.isfinite(value):
            raise TrainingDivergedError(
                f"training stopped at step {self.state.step + 1}: the loss became {value}; "
                f"lower the learning rate. Last good checkpoint: {self.last_checkpoint or 'none'}",
                self.last_checkpoint)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
        if not torch.isfinite(norm):
            raise TrainingDivergedError(
                f"training stopped at step {self.state.step + 1}: the gradient norm is "
                f"{norm.item()}. Last good checkpoint: {self.last_checkpoint or 'none'}",
                self.last_checkpoint)
        self.optimizer.step()
        self.scheduler.step()
        self.state = replace(self.state, step=self.state.step + 1)
        return value

    def _contrastive(self, student: torch.Tensor, teacher: torch.Tensor, target_ids) -> torch.Tensor:
        """In-batch InfoNCE: each student vector must be nearer its own target than the
        batch's other targets (rows sharing a target, a sentence and its translation,
        are not each other's negatives)."""
        ids = torch.as_tensor(target_ids, device=student.device)
        logits = student @ teacher.T / self.config.temperature  # [b, b]
        same = (ids[:, None] == ids[None, :]) & ~torch.eye(len(ids), dtype=torch.bool, device=student.device)
        logits = logits.masked_fill(same, float("-inf"))
        return torch.nn.functional.cross_entropy(logits, torch.arange(len(ids), device=student.device))

    def evaluate(self) -> TrainEval | None:
        """Mean cosine x 100 between student and teacher on the held-out sentences."""
        held = self.data.held_out
        if len(held) == 0:
            return None
        self.model.eval()
        scores = []
        with torch.no_grad():
            for start in range(0, len(held), 256):
                part = held[start:start + 256]
                student = self.vectors(part[:, 0])
                scores.append((student * self.targets[part[:, 1]].to(self.device)).sum(-1).cpu())
        self.model.train()
        score = float(torch.cat(scores).mean()) * 100
        step = self.state.step
        is_best = self.state.best_dev is None or score > self.state.best_dev
        if is_best:
            files.save_student(self.out / files.BEST_FILE, self.model, self.params, self.dictionary)
            self.state = replace(self.state, best_dev=score, best_step=step)
        return TrainEval(step, METRIC, score, self.state.best_dev, self.state.best_step, is_best)

    def save(self) -> TrainCheckpoint:
        path = files.save_checkpoint(self.out, self.config, self.model, self.params,
                                     self.dictionary, self.optimizer, self.scheduler, self.state)
        self.last_checkpoint = path
        return TrainCheckpoint(self.state.step, path)

    def finish(self) -> StudentFinished:
        best = self.out / files.BEST_FILE
        if self.state.best_step is None or not best.is_file():
            files.save_student(best, self.model, self.params, self.dictionary)
            self.state = replace(self.state, best_step=self.state.step)
        return StudentFinished(best, self.state.best_step, self.state.best_dev,
                               METRIC if self.state.best_dev is not None else None,
                               self.state.step, self.out, self.config)


def train_student(config: StudentConfig, *, resume: bool = False, paths: DataPaths | None = None,
                  teacher=None) -> Iterator:
    """Trains a LASER student of `config.teacher`, yielding events; close it to cancel.

    Args:
        resume: continue from OUT/latest.json with the saved config (`config` gives OUT).
        teacher: an Encoder already loaded for `config.teacher` (a benchmark shares one);
            None loads it from the registry.

    Raises:
        InputError: bad settings, too little data, nothing to resume, or a changed corpus.
        ModelError: the teacher is not installed or cannot be loaded.
        TrainingDivergedError: the loss or a gradient became NaN/inf.
    """
    from engine.models import load_encoder

    paths = paths or data_paths()
    out = Path(config.out_dir)
    if resume:
        config = files.saved_config(out)
    if config.threads:
        torch.set_num_threads(config.threads)
    yield StudentStage("reading the corpus", 0, 1)
    data = _read_data(config)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(config.to_json(), encoding="utf-8")
    yield StudentStage("learning the vocabulary", 0, 1)
    vocab = files.vocabulary(out, data.texts, config, resume)
    teacher = teacher or load_encoder(config.teacher, device="cpu", paths=paths)
    check_dim(teacher.dim)
    # "query" vectors: the symmetric kind, the one the app mines and searches with
    targets = yield from _teacher_stages(lambda texts: teacher.encode(texts, kind="query"),
                                         data.targets, out / files.TEACHER_CACHE)
    teacher = None  # its ONNX session is not needed any more
    targets = centred(targets)
    embeddings = None
    if config.init_from_teacher and not resume:  # a resumed run loads its own weights
        yield StudentStage("teacher embeddings", 0, 1)
        embeddings = teacher_embedding_rows(vocab.dictionary, config.teacher, config.embed_dim,
                                            paths=paths, seed=config.seed)
        if embeddings is None:
            yield TrainWarning(f"{config.teacher} has no token embedding table; the student's "
                               "embeddings start random")
    rows = files.tokenize(vocab, data.texts, config.max_len)
    run = _Run(config, data, vocab.dictionary, rows, targets, resume, embeddings)
    yield StudentStarted(config, data.corpus, data.pairs, len(data.train),
                         len(vocab.dictionary) - 4, targets.shape[1], run.total, run.state.step,
                         run.device)
    if run.state.step == 0:
        first_eval = run.evaluate()
        if first_eval is not None:
            yield first_eval
    started, first = time.monotonic(), run.state.step
    limit = config.time_limit_s
    while run.state.step < run.total:
        epoch = run.state.step // run.steps_per_epoch
        loss = run.train_step(run.batch(run.state.step))
        step = run.state.step
        pace = (time.monotonic() - started) / (step - first)
        yield TrainStep(step, run.total, loss, run.scheduler.get_last_lr()[0],
                        pace * (run.total - step), epoch)
        if limit is not None and time.monotonic() - started >= limit and step < run.total:
            yield TrainWarning(f"time limit of {limit:.0f} s reached at step {step} of {run.total}")
            run.total = step
        last = step == run.total
        if step % config.eval_steps == 0 or last:
            result = run.evaluate()
            if result is not None:
                yield result
        if step % config.save_steps == 0 or last:
            yield run.save()
    yield run.finish()


def centred(vectors: np.ndarray) -> np.ndarray:
    """Unit rows of `vectors` minus their mean: what tells the teacher's sentences apart.

    Transformer sentence vectors share one large common direction (e5-small's unit
    vectors of unrelated sentences have cosines around 0.7), so a student that learns only
    that direction already reaches a cosine of ~0.8 to the raw targets while telling no
    two sentences apart. Without it the loss rewards only what differs between sentences.
    The student's own space is then the centred one; it is used on its own (an index is
    re-encoded with it), so nothing needs to map back.
    """
    rows = vectors - vectors.mean(axis=0, keepdims=True)
    return (rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)).astype(np.float32)


def _teacher_stages(encode, texts: list[str], cache: Path) -> Iterator[StudentStage]:
    """StudentStage events while the teacher encodes; returns its vectors [n, dim]."""
    progress = teacher_vectors(encode, texts, cache)
    try:
        while True:
            done, total = next(progress)
            yield StudentStage("teacher vectors", done, total)
    except StopIteration as stop:
        return stop.value


def train_and_register(config: StudentConfig, name: str, *, paths: DataPaths | None = None,
                       activate: bool = False, replace_existing: bool = False) -> Iterator:
    """`train_student`'s events, then StudentStage("exporting", ...), then the ModelManifest.

    What the wizard runs in its worker: one job from the corpus to a registered model.
    """
    from trainer.laser.student_files import finish_student

    paths = paths or data_paths()
    finished = None
    for event in train_student(config, paths=paths):
        if isinstance(event, StudentFinished):
            finished = event
        yield event
    yield StudentStage("exporting", 0, 1)
    yield finish_student(finished, name, activate=activate, paths=paths,
                         replace_existing=replace_existing)
