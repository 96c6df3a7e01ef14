"""Tiny training setups shared by the trainer, DDP and CLI tests.

    >>> model_dir, corpus = tiny_training_inputs(tmp_path)
    >>> config = tiny_config(model_dir, corpus, tmp_path / "run", max_steps=4)
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from tiny_models import WORDS, make_tiny_bert


def make_sentences(n: int, seed: int = 0) -> list[str]:
    """`n` distinct sentences of 4-9 words from the tiny model's vocabulary."""
    rng = random.Random(seed)
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9)))
        if sentence not in seen:
            seen.add(sentence)
            out.append(sentence)
    return out


def tiny_training_inputs(folder: Path, sentences: int = 32, seed: int = 0) -> tuple[Path, Path]:
    """(tiny BERT folder, one-sentence-a-line corpus file)."""
    model = make_tiny_bert(folder / "tiny-bert", seed=seed)
    # The random 32-wide model is so sensitive that BERT's 0.1 dropout makes two views of
    # one sentence less alike than two different sentences; 0.02 keeps the task learnable.
    config_file = model / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config.update(hidden_dropout_prob=0.02, attention_probs_dropout_prob=0.02)
    config_file.write_text(json.dumps(config, indent=2), encoding="utf-8")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(make_sentences(sentences, seed)) + "\n", encoding="utf-8")
    return model, corpus


def tiny_config(model: Path, corpus: Path, out_dir: Path, **changes):
    """A TrainConfig that trains the tiny BERT fast on CPU (large lr, batch 8)."""
    from trainer.config import TrainConfig

    settings = dict(base=str(model), corpus=(str(corpus),), one_per_line=True, out_dir=out_dir,
                    batch_size=8, max_len=16, lr=1e-3, epochs=20, max_steps=6, eval_steps=100,
                    checkpoint_steps=2, device="cpu", min_chars=5, min_words=2)
    settings.update(changes)
    return TrainConfig(**settings)
