"""Settings of a LASER student run (`babelfind train-laser`), saved in the run folder.

    >>> config = StudentConfig(teacher="multilingual-e5-small", corpus=("notes/",), out_dir=Path("run"))
    >>> StudentConfig.from_json(config.to_json()) == config
    True

The defaults are sized for two CPU cores and about 20,000 sentences (under 30 minutes
with the teacher's encoding): one BiLSTM layer, 256-dim embeddings, 32,000 pieces (or as
many as the corpus gives: SentencePiece's limit is soft). LASER2 itself has five layers
of 512 units per direction and 50,000 pieces; a student of one model's vectors on one
user's documents needs less depth, but not fewer pieces: whole words keep the teacher's
rows (trainer.laser.student_init), while pieces of words carry little of their meaning
(docs/benchmarks.md: 8,000 -> 30,000 pieces took the Tatoeba error from 81.5 to 70.4).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from engine.errors import InputError

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class StudentConfig:
    """Everything that decides what a student run does."""

    teacher: str = "multilingual-e5-small"  # registered model whose vectors the student learns
    corpus: tuple[str, ...] = ()  # files/folders of sentences (any format Babelfind reads)
    collection: str | None = None  # or an indexed collection
    one_per_line: bool | None = None  # corpus .txt files hold one sentence a line; None: guess
    pairs: tuple[str, ...] = ()  # translation pairs (TSV/TMX): each side learns the other's vector
    out_dir: Path = Path("laser-student-run")
    vocab_size: int = 32000  # SentencePiece pieces (fewer when the corpus is small)
    embed_dim: int = 256
    num_layers: int = 1  # stacked BiLSTM layers; hidden units = teacher dim / 2 per direction
    batch_size: int = 64
    lr: float = 2e-3  # Adam; warm-up over the first 5% of steps, then linear decay to 0
    steps: int | None = None  # optimiser steps; None: `epochs` passes over the items
    epochs: int = 8  # 3 -> 8: held-out cosine 44.9 -> 52.7; ~15 min on 20k sentences, 2 cores
    time_limit_s: float | None = None  # end training (eval, save, finish) after this long
    max_len: int = 64  # tokens per text in training (</s> included)
    eval_steps: int = 200  # held-out cosine to the teacher every N steps; the best is kept
    checkpoint_steps: int | None = None  # resumable checkpoint every N steps; None: eval_steps
    held_out: int = 500  # corpus sentences kept out of training to score the student
    # random runs of words of each training sentence, each learning the teacher's vector
    # of itself (trainer.laser.student_data.sentence_spans); 0: whole sentences only
    spans_per_sentence: int = 2
    # + weight x in-batch InfoNCE against the teacher's vectors: cosine alone lets a small
    # student settle near the targets' shared directions without telling sentences apart
    contrastive_weight: float = 1.0
    # start the token embeddings from the teacher's table (trainer.laser.student_init):
    # ~20k sentences are too few to learn which pieces of two languages mean the same
    init_from_teacher: bool = True
    # the embeddings' learning rate as a share of `lr` (0: frozen). Below 1 the teacher's
    # rows of pieces the corpus shows rarely stay where the teacher put them
    embedding_lr_scale: float = 1.0
    temperature: float = 0.05
    max_grad_norm: float = 5.0  # LSTMs need clipping against exploding gradients
    seed: int = 42
    device: str = "cpu"  # the teacher's vectors are the slow part; a GPU helps little
    threads: int | None = None  # torch CPU threads; None: torch's default
    min_chars: int = 10
    max_chars: int = 1000

    def __post_init__(self) -> None:
        if self.corpus and self.collection:
            raise InputError("give a corpus or a collection, not both")
        if not (self.corpus or self.collection or self.pairs):
            raise InputError("give sentences (a corpus or a collection), translation pairs, or both")
        if self.device not in DEVICES:
            raise InputError(f"unknown device {self.device!r}; use one of {', '.join(DEVICES)}")
        for name in ("vocab_size", "embed_dim", "num_layers", "batch_size", "epochs", "max_len",
                     "eval_steps"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.steps is not None and self.steps < 1:
            raise InputError(f"steps must be at least 1, got {self.steps}")
        if self.batch_size < 2:
            raise InputError("batch_size must be at least 2")
        if not self.lr > 0:
            raise InputError(f"lr must be > 0, got {self.lr}")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise InputError(f"time_limit_s must be > 0, got {self.time_limit_s}")
        if self.contrastive_weight < 0 or not self.temperature > 0:
            raise InputError("contrastive_weight must be >= 0 and temperature > 0")
        if not 0 <= self.embedding_lr_scale <= 1:
            raise InputError(f"embedding_lr_scale must be in [0, 1], got {self.embedding_lr_scale}")
        if self.spans_per_sentence < 0:
            raise InputError(f"spans_per_sentence must be >= 0, got {self.spans_per_sentence}")
        if self.held_out < 0:
            raise InputError(f"held_out must be >= 0, got {self.held_out}")

    @property
    def save_steps(self) -> int:
        return self.checkpoint_steps or self.eval_steps

    def to_dict(self) -> dict:
        data = asdict(self)
        data["out_dir"] = str(self.out_dir)
        data["corpus"], data["pairs"] = list(self.corpus), list(self.pairs)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> StudentConfig:
        try:
            data = json.loads(text)
        except ValueError as e:
            raise InputError(f"not a student run configuration: {e}") from e
        known = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or not set(data) <= known:
            raise InputError("not a student run configuration (unknown or missing fields)")
        data["out_dir"] = Path(data.get("out_dir", "laser-student-run"))
        data["corpus"] = tuple(data.get("corpus", ()))
        data["pairs"] = tuple(data.get("pairs", ()))
        return cls(**data)

    def with_out_dir(self, out_dir: Path) -> StudentConfig:
        return replace(self, out_dir=Path(out_dir))
