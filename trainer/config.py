"""The one settings object of a MixCSE training run, saved with every checkpoint.

    >>> config = TrainConfig(base="all-minilm-l6-v2", corpus=("notes/",), out_dir=Path("runs/a"))
    >>> TrainConfig.from_json(config.to_json()) == config
    True

The defaults are the paper's (Zhang et al., AAAI 2022, Knowl 9, which follows SimCSE):
AdamW at 3e-5 (1e-5 for large models), batch 64, 32 tokens, tau 0.05, lambda 0.2, one
epoch, STS-B dev every 125 steps keeping the best checkpoint.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from engine.errors import InputError

POOLINGS = ("auto", "cls_mlp", "cls", "mean")
# What scores a run and selects its best checkpoint (`trainer.mixcse.train`): STS-B dev when there
# is STS data, else held-out translation pairs, else held-out corpus sentences.
STS_METRIC = "STS-B dev Spearman"
PAIR_METRIC = "held-out translation retrieval"
SENTENCE_METRIC = "held-out sentence separation"  # trainer.mixcse.sentence_eval
DEVICES = ("auto", "cpu", "cuda")
# Which parameters a run updates (`trainer.adapter.freeze_for`): "all"; "body" (everything
# but the embeddings, whose 250k-row table would dominate the optimiser's memory and which
# an adapter never ships); "bitfit" (only biases and layer norms: Ben Zaken et al., 2022).
TRAINABLE = ("all", "body", "bitfit")
# How a translation pair's two sides are encoded: "same" (the query prefix on both, the
# symmetric task), or "query-passage" (one side as a search query, the other as a passage,
# which side alternating step by step: the cross-lingual search the pair is an example of).
PAIR_ROLES = ("same", "query-passage")
# The default anchor to the base beside translation pairs is this / tau (100 at tau 0.05):
# the contrastive logits are cosines / tau, so it scales with them. Chosen on STS-B dev and
# its cross-lingual stand-in, where 5/tau beat 1/tau on all three signals
# (docs/benchmarks.md "Holding STS-B").
DISTILL_PER_TAU = 5.0


@dataclass(frozen=True)
class TrainConfig:
    """Everything that decides what a run does; `resolved()` fills the "auto" fields."""

    # -- what to train, on what ------------------------------------------------------------
    base: str = "multilingual-e5-small"  # registry name or transformers folder to start from
    corpus: tuple[str, ...] = ()  # files/folders of the user's documents (any format we read)
    collection: str | None = None  # or an indexed collection (root path, its folder name, or "*": all)
    one_per_line: bool | None = None  # corpus .txt files hold one sentence a line; None: guess
    out_dir: Path = Path("mixcse-run")  # checkpoints, best model and run log go here
    # -- translation pairs (training across languages) ----------------------------------------
    pairs: tuple[str, ...] = ()  # TSV/TMX files of the parallel-sentence finder: positives
    pair_holdout: float = 0.1  # share of pairs (20 to 2,000) kept apart to score the model
    pair_min_score: float | None = None  # drop pairs the finder scored below this margin
    pair_roles: str = "same"  # PAIR_ROLES
    mono_weight: float = 1.0  # with pairs AND a corpus: weight of the corpus's dropout views
    # with a corpus: weight of 1 - cos(trained, base vector) of its sentences (learning
    # without forgetting: the base's monolingual similarities stay); 0 turns it off. None:
    # DISTILL_PER_TAU / tau beside translation pairs, 0 for a corpus alone (MixCSE is meant
    # to move it)
    distill_weight: float | None = None
    # -- the paper's hyper-parameters -------------------------------------------------------
    lam: float | None = 0.2  # mixing weight of the positive in a mixed negative; None: SimCSE
    tau: float = 0.05  # softmax temperature of the contrastive loss
    lr: float = 3e-5  # AdamW learning rate (1e-5 for large models, as the paper)
    batch_size: int = 64  # sentences per contrastive batch per device (negatives = the rest)
    max_len: int = 32  # tokens per sentence; Wikipedia sentences rarely need more
    epochs: int = 1  # passes over the corpus; MixCSE trains one
    max_steps: int | None = None  # stop earlier than the epochs say (benchmarks, tests)
    weight_decay: float = 0.0  # SimCSE's Trainer default
    max_grad_norm: float = 1.0  # gradient clipping, SimCSE's Trainer default
    trainable: str = "all"  # which parameters are updated: TRAINABLE (an adapter: body/bitfit)
    # -- model shape ----------------------------------------------------------------------
    pooling: str = "auto"  # cls_mlp (paper: CLS + MLP in training only), cls, mean (e5); auto
    text_prefix: str | None = None  # prepended to every sentence; None: the base's query prefix
    passage_prefix: str | None = None  # a pair's passage side ("query-passage"); None: the base's
    # -- loss ---------------------------------------------------------------------------
    loss_variant: str = "paper"  # "paper" (all mixed negatives) or "official" (authors' code)
    loss_impl: str = "auto"  # reference | gram | fused | auto (fused on CUDA)
    bidirectional: bool = True  # mix negatives for both views (ablation: MixCSE_single)
    stop_grad: bool = True  # detach mixed negatives (ablation: MixCSE_wo_sg)
    # -- schedule, evaluation, checkpoints ------------------------------------------------------
    eval_steps: int = 125  # STS-B dev every N optimiser steps (SimCSE); the best is kept
    checkpoint_steps: int | None = None  # resumable checkpoint every N steps; None: eval_steps
    sts_dir: str | None = None  # STS data (…/sts/original) for dev evaluation; None: no eval
    grad_accum: int = 1  # micro-batches per step; each micro-batch is its own contrastive batch
    # -- reproducibility and hardware -------------------------------------------------------
    seed: int = 42  # shuffling, dropout masks and the MLP head start from this
    device: str = "auto"  # auto (CUDA when present), cpu or cuda
    bf16: bool = True  # bf16 autocast on CUDA (ignored on CPU, where it is slower)
    max_loss: float | None = None  # stop above this loss; None: the loss's own upper bound + 1
    # -- corpus filters ---------------------------------------------------------------------
    min_chars: int = 10  # shorter "sentences" are headings, numbers, list markers
    max_chars: int = 1000  # longer ones are tables or run-on text the splitter could not cut
    min_words: int = 3  # a sentence needs a few words to carry meaning
    max_words: int = 200  # long lists read as one sentence are noise for STS-style training

    def __post_init__(self) -> None:
        if self.corpus and self.collection:
            raise InputError("give a corpus or a collection, not both")
        if not 0.0 <= self.pair_holdout < 1.0:
            raise InputError(f"pair_holdout must be in [0, 1), got {self.pair_holdout}")
        if not self.mono_weight >= 0:
            raise InputError(f"mono_weight must be >= 0, got {self.mono_weight}")
        if self.distill_weight is not None and not self.distill_weight >= 0:
            raise InputError(f"distill_weight must be >= 0, got {self.distill_weight}")
        if self.distill_weight and not self.uses_corpus:
            raise InputError("distill_weight needs corpus sentences to keep near the base model "
                             "(a corpus or a collection)")
        if self.lam is not None and not 0.0 < self.lam < 1.0:
            raise InputError(f"lambda must be in (0, 1), got {self.lam}")
        if not self.tau > 0:
            raise InputError(f"tau must be > 0, got {self.tau}")
        if not self.lr > 0:
            raise InputError(f"the learning rate must be > 0, got {self.lr}")
        for name in ("batch_size", "max_len", "epochs", "eval_steps", "grad_accum"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise InputError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if self.batch_size < 2:
            raise InputError("batch_size must be at least 2 (a batch needs negatives)")
        if self.batch_size % self.grad_accum or self.batch_size // self.grad_accum < 2:
            raise InputError(f"batch_size {self.batch_size} must split into {self.grad_accum} "
                             "micro-batches of at least 2 sentences")
        if self.max_steps is not None and self.max_steps < 1:
            raise InputError(f"max_steps must be >= 1, got {self.max_steps}")
        if self.pooling not in POOLINGS:
            raise InputError(f"pooling must be one of {POOLINGS}, got {self.pooling!r}")
        if self.pair_roles not in PAIR_ROLES:
            raise InputError(f"pair_roles must be one of {PAIR_ROLES}, got {self.pair_roles!r}")
        if self.trainable not in TRAINABLE:
            raise InputError(f"trainable must be one of {TRAINABLE}, got {self.trainable!r}")
        if self.device not in DEVICES:
            raise InputError(f"device must be one of {DEVICES}, got {self.device!r}")
        if self.min_chars > self.max_chars or self.min_words > self.max_words:
            raise InputError("the minimum sentence length is above the maximum")

    @property
    def micro_batch(self) -> int:
        return self.batch_size // self.grad_accum

    @property
    def save_steps(self) -> int:
        return self.checkpoint_steps or self.eval_steps

    @property
    def uses_corpus(self) -> bool:
        return bool(self.corpus or self.collection)

    @property
    def distill(self) -> float:
        """The distillation weight in effect (`distill_weight`, or what None stands for)."""
        if self.distill_weight is not None:
            return self.distill_weight
        return DISTILL_PER_TAU / self.tau if self.pairs and self.uses_corpus else 0.0

    @property
    def loss_weights(self) -> tuple[float, ...]:
        """Weight of each contrastive term per step: pairs and/or the corpus's dropout views.

        With pairs, the corpus's views are a step's second entry whenever a term needs
        corpus sentences (the distillation alone may use them, at contrastive weight 0)."""
        if not self.pairs:
            return (1.0,)
        wanted = self.uses_corpus and (self.mono_weight > 0 or self.distill > 0)
        return (1.0, self.mono_weight) if wanted else (1.0,)

    def loss_bound(self) -> float:
        """Largest loss unit vectors allow: log(#logits) + 2/tau per contrastive term, 2 per
        distillation weight (1 - cos <= 2), plus 1 of slack."""
        import math

        logits = (3 if self.lam is not None else 2) * self.micro_batch
        one = math.log(logits) + 2 / self.tau
        bound = one * sum(self.loss_weights) + 2 * self.distill + 1
        return self.max_loss if self.max_loss is not None else bound

    def to_dict(self) -> dict:
        data = asdict(self)
        data["corpus"] = list(self.corpus)
        data["pairs"] = list(self.pairs)
        data["out_dir"] = str(self.out_dir)
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["corpus"] = tuple(kwargs.get("corpus", ()))
        kwargs["pairs"] = tuple(kwargs.get("pairs", ()))
        kwargs["out_dir"] = Path(kwargs.get("out_dir", "mixcse-run"))
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> TrainConfig:
        try:
            return cls.from_dict(json.loads(text))
        except (ValueError, TypeError) as e:
            raise InputError(f"not a training config: {e}") from e

    def with_changes(self, **changes) -> TrainConfig:
        return replace(self, **changes)


# One line per setting a front end shows (the wizard puts lam and tau on an advanced page).
FIELD_HELP = {
    "base": "the model to start from: an installed model or a transformers folder",
    "lr": "how big each update is; 3e-5 suits base-size models, 1e-5 large ones",
    "batch_size": "sentences compared with each other per step; more gives harder negatives",
    "max_len": "tokens kept per sentence while training; longer is slower",
    "epochs": "how many times the corpus is read; MixCSE needs one",
    "max_steps": "stop after this many steps even if the epochs are not done",
    "eval_steps": "how often the model is scored on STS-B dev; the best score is kept",
    "pooling": "how a sentence vector is read out: [CLS] (+ MLP while training) or the mean",
    "device": "where training runs: a CUDA GPU when there is one, else the CPU",
    "seed": "the same seed and settings repeat a run exactly",
    "pairs": "translation pairs (TSV or TMX from Find parallel sentences) to learn from",
    "trainable": "advanced: which weights change: all, all but the word table (body), or only "
                 "biases and layer norms (bitfit: a small adapter)",
    "distill_weight": "advanced: how strongly your sentences' vectors are held near the base "
                      "model's, so similarity within a language does not drift (0: off; auto: 5/tau "
                      "beside translation pairs)",
    "pair_roles": "advanced: how each translation pair is read: as two sentences alike (same), or "
                  "as a search query and the passage that answers it (query-passage)",
    "lam": "advanced: share of the positive in each mixed hard negative (0.2 in the paper)",
    "tau": "advanced: temperature; lower makes the model separate sentences more sharply",
}
ADVANCED_FIELDS = ("lam", "tau", "distill_weight", "loss_variant", "loss_impl", "bidirectional", "stop_grad",
                   "grad_accum", "weight_decay", "max_grad_norm", "bf16", "trainable", "pair_roles")
