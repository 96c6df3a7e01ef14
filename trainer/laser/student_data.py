"""What a LASER student learns from: (text, teacher vector) items, and their token batches.

    >>> items = student_items(corpus_sentences, pairs)        # [(text, teacher text), ...]
    >>> vectors = teacher_vectors(encoder, texts, cache)       # computed once, kept on disk

Every corpus sentence is paired with the teacher's vector of itself. A translation pair
(a, b) adds a -> teacher(b) and b -> teacher(a) as well, as LASER3's teacher-student
training does: the student puts a sentence where the teacher puts its translation, so
translations meet even where the teacher itself keeps them apart.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import torch

from engine.errors import InputError
from trainer.pairs import PairStats

log = logging.getLogger(__name__)

TEACHER_BATCH = 256  # sentences per teacher call: progress and cancel between calls
Item = tuple[str, str]  # (text the student reads, text whose teacher vector is its target)
SPAN_WORDS = (3, 10)  # a span's length in words
SPAN_CHARACTERS = (5, 15)  # ... in characters, for scripts written without spaces (Chinese)


def student_items(sentences: Sequence[str], pairs: Iterable[tuple[str, str]] = ()) -> list[Item]:
    """Distinct (text, target text) items: each sentence to itself, each pair side to both."""
    items: dict[Item, None] = {(s, s): None for s in sentences}
    for a, b in pairs:
        for item in ((a, a), (b, b), (a, b), (b, a)):
            items.setdefault(item, None)
    return list(items)


def sentence_spans(sentences: Iterable[str], per_sentence: int, seed: int) -> list[str]:
    """Up to `per_sentence` random runs of consecutive words of each sentence, distinct.

    A span is shorter than its sentence (SPAN_WORDS words, or SPAN_CHARACTERS characters
    of a sentence without spaces), so sentences of fewer than SPAN_WORDS + 2 units give
    none. Each span learns the teacher's vector of itself: more targets than sentences
    to generalise from, and short texts like the queries and chat lines the student will
    meet, where ~20k whole sentences teach only their own length.
    """
    rng = np.random.default_rng(seed)
    spans: dict[str, None] = {}
    for sentence in sentences:
        text = sentence.strip()
        spaced = " " in text
        units = text.split() if spaced else list(text)
        low, high = SPAN_WORDS if spaced else SPAN_CHARACTERS
        if len(units) < low + 2:
            continue
        for _ in range(per_sentence):
            size = int(rng.integers(low, min(high, len(units) - 1) + 1))
            start = int(rng.integers(0, len(units) - size + 1))
            spans.setdefault((" " if spaced else "").join(units[start:start + size]), None)
    return list(spans)


def read_pairs(files: Iterable[str | Path], max_chars: int = 1000) -> tuple[list[tuple[str, str]], PairStats]:
    """Translation pairs of TSV/TMX files, whitespace-normalised, exact duplicates dropped.

    Unlike contrastive training (trainer.pairs), a sentence may appear in several pairs:
    one English sentence with its ten translations is ten good lessons here, not nine
    false negatives.

    Raises:
        InputError: a file cannot be read, or no pair is left.
    """
    from trainer.pairs import read_pair_file

    rows = [row for path in files for row in read_pair_file(Path(path))]
    kept: dict[tuple[str, str], None] = {}
    filtered = 0
    for _score, source, target in rows:
        pair = (" ".join(source.split()), " ".join(target.split()))
        if not all(1 <= len(side) <= max_chars for side in pair):
            filtered += 1
        else:
            kept.setdefault(pair, None)
    if not kept:
        raise InputError(f"no usable translation pairs: read {len(rows)}, {filtered} empty or "
                         f"longer than {max_chars} characters")
    duplicates = len(rows) - filtered - len(kept)
    return list(kept), PairStats(len(rows), duplicates, filtered, len(kept), 0)


def fingerprint(texts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()


def teacher_vectors(encode: Callable[[list[str]], np.ndarray], texts: Sequence[str],
                    cache: Path) -> Iterator[tuple[int, int]]:
    """Generator: yields (done, total) while the teacher encodes `texts`; returns [n, dim].

    `cache` is a .npy file with a .json beside it naming the texts' fingerprint, so a
    resumed run (or a second run on the same corpus) does not encode again. Use it as
    `vectors = yield from teacher_vectors(...)`; closing it between batches cancels.
    """
    cache = Path(cache)
    key = fingerprint(texts)
    cached = _read_teacher_cache(cache, key, len(texts))
    if cached is not None:
        return cached
    out = []
    for start in range(0, len(texts), TEACHER_BATCH):
        out.append(np.asarray(encode(list(texts[start:start + TEACHER_BATCH])), dtype=np.float32))
        yield min(len(texts), start + TEACHER_BATCH), len(texts)
    vectors = np.concatenate(out)
    save_teacher_cache(cache, vectors, key)
    return vectors


def _read_teacher_cache(cache: Path, key: str, rows: int) -> np.ndarray | None:
    meta = cache.with_suffix(".json")
    if not (cache.is_file() and meta.is_file()):
        return None
    try:
        if json.loads(meta.read_text(encoding="utf-8")).get("fingerprint") != key:
            return None
        vectors = np.load(cache)
    except (OSError, ValueError) as e:
        log.warning("teacher cache %s unreadable (%s); encoding again", cache, e)
        return None
    return vectors if vectors.ndim == 2 and vectors.shape[0] == rows else None


def save_teacher_cache(cache: Path, vectors: np.ndarray, key: str) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.stem + ".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(cache)
    cache.with_suffix(".json").write_text(json.dumps({"fingerprint": key, "rows": len(vectors)}),
                                          encoding="utf-8")


def pad_batch(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens [b, longest] right-padded with `pad_id`, lengths [b]) for LaserLstm."""
    lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)
    tokens = torch.full((len(rows), int(lengths.max())), pad_id, dtype=torch.long)
    for i, row in enumerate(rows):
        tokens[i, :len(row)] = torch.tensor(row, dtype=torch.long)
    return tokens, lengths


def length_batches(rng: np.random.Generator, lengths: np.ndarray, batch_size: int,
                   window: int = 50) -> list[np.ndarray]:
    """One epoch's batches of item positions: shuffled, then sorted by length within windows
    of `window` batches, so that a batch pads little; the batches' order is shuffled again.
    A last partial batch is dropped (as the MixCSE trainer does)."""
    order = rng.permutation(len(lengths))
    span = batch_size * window
    batches = []
    for start in range(0, len(order) - batch_size + 1, span):
        chunk = order[start:start + span]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk) - batch_size + 1, batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def check_dim(teacher_dim: int) -> int:
    """Hidden units per direction so that the BiLSTM's max-pooled output has the teacher's dim."""
    if teacher_dim % 2:
        raise InputError(f"the teacher's vectors have {teacher_dim} dimensions; a BiLSTM student "
                         "needs an even number (half per direction)")
    return teacher_dim // 2
