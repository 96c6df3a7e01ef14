"""Tiny LASER checkpoints in the official format, written by tests.

    >>> files = make_tiny_laser(tmp_path)     # LaserFiles(checkpoint, spm, cvocab)
    >>> torch.load(files.checkpoint).keys()  # params, model, dictionary (as laser2.pt)

The SentencePiece model is trained here on a few hundred multilingual sentences; the
`.cvocab` lists its pieces fairseq-style ("piece count", ids from 4); the BiLSTM weights
are random but large enough that different sentences get different vectors.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

WORDS = {
    "en": "the cat sits on a mat where is station train house tree red blue green fast slow".split(),
    "de": "der die das hund katze haus baum ist und schnell langsam über den fuchs".split(),
    "fr": "le la les chat maison arbre est et rapide lent pour deux personnes ce soir".split(),
    "es": "el la los gato casa árbol es y rápido dónde está biblioteca municipal".split(),
    "ru": "мы встретимся завтра утром у входа в музей кошка дом".split(),
    "el": "η θάλασσα είναι ήρεμη σήμερα το σπίτι".split(),
    "zh": ["我明天要去北京出差", "东京是首都", "天气很好"],
}


@dataclass(frozen=True)
class LaserFiles:
    checkpoint: Path
    spm: Path
    cvocab: Path


def training_sentences(count: int = 400, seed: int = 0) -> list[str]:
    """Seeded random sentences over WORDS, with punctuation and capitals."""
    rng = random.Random(seed)
    langs = sorted(WORDS)
    out = []
    for i in range(count):
        words = rng.choices(WORDS[langs[i % len(langs)]], k=rng.randint(3, 10))
        out.append(" ".join(words).capitalize() + rng.choice([".", "?", "!", ",", " 42."]))
    return out


_SPM_CACHE: dict[int, bytes] = {}  # vocab size -> model bytes; trained once per process


def train_spm(folder: Path, vocab_size: int = 180) -> Path:
    """A unigram SentencePiece model trained on `training_sentences()`; returns the .spm."""
    import io

    import sentencepiece

    if vocab_size not in _SPM_CACHE:
        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(training_sentences()), model_writer=model,
            vocab_size=vocab_size, character_coverage=1.0, model_type="unigram",
            num_threads=1, minloglevel=2)
        _SPM_CACHE[vocab_size] = model.getvalue()
    spm = folder / "tiny.spm"
    spm.write_bytes(_SPM_CACHE[vocab_size])
    return spm


def spm_pieces(spm: Path) -> list[str]:
    """The model's normal pieces (not <unk>/<s>/</s>), in id order."""
    import sentencepiece

    proc = sentencepiece.SentencePieceProcessor(model_file=str(spm))
    return [proc.id_to_piece(i) for i in range(proc.get_piece_size())
            if not (proc.is_unknown(i) or proc.is_control(i))]


def make_tiny_laser(folder: Path, *, embed_dim: int = 12, hidden_size: int = 8,
                    num_layers: int = 2, seed: int = 0, spm: Path | None = None) -> LaserFiles:
    """Writes tiny.pt (params/model/dictionary), tiny.spm and tiny.cvocab to `folder`."""
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spm = spm or train_spm(folder)
    pieces = spm_pieces(spm)
    cvocab = folder / "tiny.cvocab"
    cvocab.write_text("".join(f"{p} {1000 - i}\n" for i, p in enumerate(pieces)), encoding="utf-8")
    dictionary = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    dictionary |= {p: i + 4 for i, p in enumerate(pieces)}
    params = {"num_embeddings": len(dictionary), "padding_idx": 1, "embed_dim": embed_dim,
              "hidden_size": hidden_size, "num_layers": num_layers, "bidirectional": True,
              "left_pad": False, "padding_value": 0.0}
    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(embed_dim, hidden_size, num_layers=num_layers, bidirectional=True)
    embed = torch.nn.Embedding(len(dictionary), embed_dim, padding_idx=1)
    with torch.no_grad():  # spread the weights so sentences differ clearly
        for p in lstm.parameters():
            p.uniform_(-0.8, 0.8)
    model = {"embed_tokens.weight": embed.weight.detach().clone()}
    model |= {f"lstm.{k}": v.detach().clone() for k, v in lstm.state_dict().items()}
    checkpoint = folder / "tiny.pt"
    torch.save({"params": params, "model": model, "dictionary": dictionary}, checkpoint)
    return LaserFiles(checkpoint, spm, cvocab)
