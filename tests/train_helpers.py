"""Tiny training setups and STS files shared by the trainer, DDP and CLI tests.

    >>> model_dir, corpus = tiny_training_inputs(tmp_path)
    >>> config = tiny_config(model_dir, corpus, tmp_path / "run", max_steps=4)
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from tiny_models import WORDS, make_tiny_bert
from trainer.evaluate import STS_YEARS


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


def tiny_translations(n: int, seed: int = 5) -> list[tuple[float, str, str]]:
    """`n` made-up translation pairs as the finder writes them: (score, source, target),
    the target being the source with every word swapped for its fixed counterpart."""
    rng = random.Random(1)
    counterparts = list(WORDS)
    rng.shuffle(counterparts)
    mapping = dict(zip(WORDS, counterparts))
    return [(1.0, s, " ".join(mapping[w] for w in s.split())) for s in make_sentences(n, seed)]


def tiny_config(model: Path, corpus: Path, out_dir: Path, **changes):
    """A TrainConfig that trains the tiny BERT fast on CPU (large lr, batch 8)."""
    from trainer.config import TrainConfig

    settings = dict(base=str(model), corpus=(str(corpus),), one_per_line=True, out_dir=out_dir,
                    batch_size=8, max_len=16, lr=1e-3, epochs=20, max_steps=6, eval_steps=100,
                    checkpoint_steps=2, device="cpu", min_chars=5, min_words=2)
    settings.update(changes)
    return TrainConfig(**settings)


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _random_sentence(rng, words):
    return " ".join(rng.choice(words, size=rng.integers(3, 8)))


def write_sts_tree(tmp_path):
    """A tiny STS folder in the real formats; returns {task: [(s1, s2, gold)]} of scored pairs.

    12 pairs per subset (STS15/16: every 4th unscored), 40 STS-B pairs per split (some with
    9 fields), 30 SICK pairs after a header.
    """
    rng = np.random.default_rng(7)
    words = np.array("cat dog bird man woman runs eats plays ball red big small house car".split())
    truth = {}
    for task, (folder, stem, subsets) in STS_YEARS.items():
        for subset in subsets:
            inputs, gold = [], []
            for i in range(12):
                a, b = _random_sentence(rng, words), _random_sentence(rng, words)
                # STS16 adds two source columns; keep them to test they are ignored
                extra = "\tsrc1\tsrc2" if stem == "STS2016" else ""
                inputs.append(f"{a}  \t{b}{extra}")
                scored = not (task in ("STS15", "STS16") and i % 4 == 0)
                gold.append(f"{rng.uniform(0, 5):.3f}" if scored else "")
                if scored:
                    truth.setdefault(task, []).append((a, b, float(gold[-1])))
            _write(tmp_path / folder / f"{stem}.input.{subset}.txt", inputs)
            _write(tmp_path / folder / f"{stem}.gs.{subset}.txt", gold)
    for split in ("dev", "test"):
        lines = []
        for i in range(40):
            a, b = _random_sentence(rng, words), _random_sentence(rng, words)
            score = 4.5 if i % 5 == 0 else rng.uniform(0, 4)
            notes = "\tnote\tmore" if i % 7 == 0 else ""
            lines.append(f"main-captions\tMSRvid\t2012test\t{i:04d}\t{score:.3f}\t{a}\t{b}{notes}")
            truth.setdefault(f"stsb-{split}", []).append((a, b, round(score, 3)))
        _write(tmp_path / "STSBenchmark" / f"sts-{split}.csv", lines)
    sick = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"]
    for i in range(30):
        a, b = _random_sentence(rng, words), _random_sentence(rng, words)
        score = round(rng.uniform(1, 5), 1)
        sick.append(f"{i}\t{a}\t{b}\t{score}\tNEUTRAL")
        truth.setdefault("SICKRelatedness", []).append((a, b, score))
    _write(tmp_path / "SICK" / "senteval" / "SICK_test_annotated.txt", sick)
    return truth


def many_to_one_translations(sources: int, languages: int, seed: int = 5) -> list[tuple[float, str, str]]:
    """Each of `sources` sentences with its translations into `languages` made-up languages,
    as one translation memory holds them: (score, translation, sentence) rows, the
    sentence repeated once per language (each language swaps words its own way)."""
    sentences = make_sentences(sources, seed)
    rows = []
    for language in range(languages):
        counterparts = list(WORDS)
        random.Random(100 + language).shuffle(counterparts)
        mapping = dict(zip(WORDS, counterparts))
        rows += [(1.0, " ".join(mapping[w] for w in s.split()), s) for s in sentences]
    return rows


def training_events(events) -> list:
    """A run's events without its TrainPreparing stages (TrainStarted first)."""
    from trainer.events import TrainPreparing

    return [event for event in events if not isinstance(event, TrainPreparing)]
