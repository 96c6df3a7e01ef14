"""Ordered alignment: merges, skips, banding and the auto-align rule, on controlled vectors."""

from __future__ import annotations

import numpy as np
import pytest

from engine.mining.alignment import AlignConfig, align, align_vectors, should_align
from engine.encoders.base import l2_normalise

DIM = 64


class DictEncoder:
    """Fake encoder: each known sentence has a fixed vector; "a b" (two sentences joined)
    gets the normalised sum of theirs, so the joined vector is under the test's control."""

    name = "dict"
    dim = DIM

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors
        self.calls: list[str] = []

    def vector(self, text: str) -> np.ndarray:
        if text in self.vectors:
            return self.vectors[text]
        left, right = text.split(" ", 1)
        return self.vector(left) + self.vector(right)

    def encode(self, texts, kind="passage"):
        self.calls.append(kind)
        return l2_normalise(np.stack([self.vector(t) for t in texts]))


def meanings(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors sharing one common direction, as real sentence embeddings do (unrelated
    sentences have cosine ~0.6 rather than 0), plus a random part that carries the meaning."""
    rng = np.random.default_rng(seed)
    common = np.zeros(DIM)
    common[0] = 1.0
    return l2_normalise(0.8 * common + 0.6 * l2_normalise(rng.standard_normal((n, DIM))))


def noisy(v: np.ndarray, rng, scale=0.15) -> np.ndarray:
    v = v / np.linalg.norm(v)
    return v + scale * rng.standard_normal(v.shape) / np.sqrt(DIM)


def test_recovers_a_one_to_two_merge_and_a_skipped_sentence():
    rng = np.random.default_rng(1)
    m = meanings(8)
    # Target: t0..t7 one meaning each. Source: s2 says t2 and t3 in one sentence, and the
    # target has an extra sentence t6 that the source lacks.
    tgt = {f"t{j}": m[j] for j in range(8)}
    src_meanings = [m[0], m[1], m[2] + m[3], m[4], m[5], m[7]]
    src = {f"s{i}": noisy(v, rng) for i, v in enumerate(src_meanings)}
    encoder = DictEncoder(src | tgt)
    beads = align(list(src), list(tgt), encoder)
    assert [(b.src_indices, b.tgt_indices) for b in beads] == [
        ((0,), (0,)), ((1,), (1,)), ((2,), (2, 3)), ((3,), (4,)), ((4,), (5,)), ((5,), (7,)),
    ]
    assert all(b.score > 1.0 for b in beads)
    assert set(encoder.calls) == {"query"}


def test_recovers_a_two_to_one_merge():
    rng = np.random.default_rng(2)
    m = meanings(5, seed=3)
    src = {f"s{i}": m[i] for i in range(5)}
    tgt_meanings = [m[0], m[1] + m[2], m[3], m[4]]
    tgt = {f"t{j}": noisy(v, rng) for j, v in enumerate(tgt_meanings)}
    beads = align(list(src), list(tgt), DictEncoder(src | tgt))
    assert [(b.src_indices, b.tgt_indices) for b in beads] == [
        ((0,), (0,)), ((1, 2), (1,)), ((3,), (2,)), ((4,), (3,)),
    ]


def test_unrelated_sentences_are_skipped_not_forced_into_pairs():
    rng = np.random.default_rng(4)
    m = meanings(12, seed=5)
    src = {f"s{i}": noisy(m[i], rng) for i in range(6)}
    # Target: translations of s0, s1, then three unrelated sentences, then s4, s5 (s2, s3 dropped).
    tgt_meanings = [m[0], m[1], m[9], m[10], m[11], m[4], m[5]]
    tgt = {f"t{j}": noisy(v, rng) for j, v in enumerate(tgt_meanings)}
    beads = align(list(src), list(tgt), DictEncoder(src | tgt))
    assert [(b.src_indices, b.tgt_indices) for b in beads] == [
        ((0,), (0,)), ((1,), (1,)), ((4,), (5,)), ((5,), (6,)),
    ]


def planted_document(n: int, seed: int):
    """n source meanings; the target drops every 10th and merges every 7th with its next."""
    rng = np.random.default_rng(seed)
    m = meanings(n, seed=seed)
    src, tgt, truth = [], [], []
    i = 0
    while i < n:
        src.append(noisy(m[i], rng))
        if i % 10 == 9:
            i += 1
            continue
        if i % 7 == 3 and i + 1 < n and (i + 1) % 10 != 9:
            src.append(noisy(m[i + 1], rng))
            tgt.append(noisy(m[i] + m[i + 1], rng))
            truth.append(((len(src) - 2, len(src) - 1), (len(tgt) - 1,)))
            i += 2
            continue
        tgt.append(noisy(m[i], rng))
        truth.append(((len(src) - 1,), (len(tgt) - 1,)))
        i += 1
    return l2_normalise(np.stack(src)), l2_normalise(np.stack(tgt)), truth


def joined(v: np.ndarray) -> np.ndarray:
    return l2_normalise(v[:-1] + v[1:])


@pytest.mark.parametrize("anchors", [False, True])
def test_banded_alignment_matches_the_full_matrix(anchors):
    src, tgt, truth = planted_document(400, seed=6)
    full = align_vectors(src, tgt, joined(src), joined(tgt))
    assert [(b.src_indices, b.tgt_indices) for b in full] == truth
    config = AlignConfig(band=15, full_matrix_cells=0)
    given = [(s[0], t[0]) for s, t in truth[::25]] if anchors else ()
    banded = align_vectors(src, tgt, joined(src), joined(tgt), config, anchors=given)
    assert banded == full


def test_tiny_and_empty_documents():
    v = meanings(3)
    # One sentence a side: every margin is exactly 1 (the pair is its own neighbourhood),
    # so nothing is evidence of a translation; the call must still finish cleanly.
    assert len(align_vectors(v[:1], v[:1], None, None)) <= 1
    assert align([], ["x"], DictEncoder({"x": v[0]})) == []
    assert align(["x"], [], DictEncoder({"x": v[0]})) == []


def test_reported_score_follows_the_margin():
    src, tgt, _ = planted_document(30, seed=7)
    ratio = align_vectors(src, tgt, joined(src), joined(tgt))
    absolute = align_vectors(src, tgt, joined(src), joined(tgt), AlignConfig(margin="absolute"))
    assert [(b.src_indices, b.tgt_indices) for b in ratio] == [
        (b.src_indices, b.tgt_indices) for b in absolute
    ]
    b = absolute[0]
    assert b.score == pytest.approx(float(src[b.src_indices[0]] @ tgt[b.tgt_indices[0]]), abs=1e-5)


@pytest.mark.parametrize(
    "pairs, n, expected",
    [
        ([(i, i) for i in range(20)], 20, True),
        ([(i, i + 1) for i in range(18)] + [(18, 3)], 20, True),  # 18/19 increasing
        ([(i, (7 * i) % 20) for i in range(20)], 20, False),  # shuffled
        ([(0, 0), (5, 5), (9, 9)], 100, False),  # ordered but covers 3% of the document
        ([(0, 0), (1, 1)], 2, False),  # too few to judge
    ],
)
def test_should_align(pairs, n, expected):
    assert should_align(pairs, n, n) is expected


@pytest.mark.data
@pytest.mark.slow
def test_real_model_aligns_pud_with_gaps_and_merges(default_models, shared_data):
    """300 PUD German-English sentences in order; every 10th English sentence deleted and
    every 15th German sentence joined with the next (the English stays two sentences)."""
    from engine.models import load_encoder

    def pud(lang):
        path = shared_data / "corpus" / "pud-parallel" / f"pud.{lang}.tsv"
        return [line.split("\t", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()][:300]

    german, english = pud("de"), pud("en")
    src, tgt, truth = [], [], []
    en_pos = {}
    for j, sentence in enumerate(english):
        if j % 10 != 9:
            en_pos[j] = len(tgt)
            tgt.append(sentence)
    i = 0
    while i < len(german):
        if i % 15 == 14 and i + 1 < len(german) and i in en_pos and i + 1 in en_pos:
            src.append(f"{german[i]} {german[i + 1]}")
            truth.append(((len(src) - 1,), (en_pos[i], en_pos[i + 1])))
            i += 2
            continue
        src.append(german[i])
        if i in en_pos:
            truth.append(((len(src) - 1,), (en_pos[i],)))
        i += 1
    beads = align(src, tgt, load_encoder())
    found = {(b.src_indices, b.tgt_indices) for b in beads}
    hits = len(found & set(truth))
    assert hits / len(truth) >= 0.9, (hits / len(truth), hits / len(found))
    assert hits / len(found) >= 0.9, (hits / len(truth), hits / len(found))
