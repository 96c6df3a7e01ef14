"""Margin-based mining: hand-checked small cases, and the fast path against a naive loop."""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoders.base import l2_normalise
from engine.mining.margin import (
    MODES,
    MiningConfig,
    Pair,
    increasing_fraction,
    knn,
    mine_vectors,
)

# Three source and two target vectors in 2-d; cosines (rows: source, columns: target):
#   x0: .8  0     x1: .6  1     x2: .96  .8
SRC = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
TGT = np.array([[0.8, 0.6], [0.0, 1.0]], dtype=np.float32)
# With k=2: avg_k(x) = .4, .8, .88 ; avg_k(y0) = (.96 + .8)/2 = .88, avg_k(y1) = (1 + .8)/2 = .9
RATIO = {(0, 0): 0.8 / 0.64, (1, 1): 1 / 0.85, (2, 0): 0.96 / 0.88}


def as_tuples(pairs: list[Pair]) -> set[tuple[int, int]]:
    return {(p.src_index, p.tgt_index) for p in pairs}


def test_forward_takes_the_best_target_of_every_source():
    pairs = mine_vectors(SRC, TGT, k=2, margin="ratio", mode="forward")
    assert [(p.src_index, p.tgt_index) for p in pairs] == [(0, 0), (1, 1), (2, 0)]
    assert [p.score for p in pairs] == pytest.approx([RATIO[0, 0], RATIO[1, 1], RATIO[2, 0]])


def test_backward_takes_the_best_source_of_every_target():
    pairs = mine_vectors(SRC, TGT, k=2, margin="ratio", mode="backward")
    assert as_tuples(pairs) == {(0, 0), (1, 1)}


@pytest.mark.parametrize("mode", ["intersect", "max"])
def test_intersect_and_max_drop_the_pair_whose_target_prefers_another_source(mode):
    pairs = mine_vectors(SRC, TGT, k=2, margin="ratio", mode=mode)
    assert as_tuples(pairs) == {(0, 0), (1, 1)}


def test_threshold_keeps_pairs_strictly_above_it():
    pairs = mine_vectors(SRC, TGT, k=2, margin="ratio", mode="max", threshold=1.2)
    assert as_tuples(pairs) == {(0, 0)}
    assert mine_vectors(SRC, TGT, k=2, mode="max", threshold=RATIO[0, 0] + 1e-6) == []


def test_distance_and_absolute_margins_by_hand():
    dist = mine_vectors(SRC, TGT, k=2, margin="distance", mode="forward")
    # cos - (avg_x + avg_y)/2: .8 - .64, 1 - .85, .96 - .88
    assert {(p.src_index, p.tgt_index): p.score for p in dist} == pytest.approx(
        {(0, 0): 0.16, (1, 1): 0.15, (2, 0): 0.08}
    )
    absolute = mine_vectors(SRC, TGT, k=2, margin="absolute", mode="forward")
    assert {(p.src_index, p.tgt_index): p.score for p in absolute} == pytest.approx(
        {(0, 0): 0.8, (1, 1): 1.0, (2, 0): 0.96}
    )


def test_margin_prefers_a_pair_that_is_close_relative_to_its_neighbourhood():
    # x0 is close to everything (a "hub"); x1 is close only to y1. Absolute cosine ranks
    # the hub pair first, the ratio margin ranks the distinctive pair first.
    src = l2_normalise(np.array([[1, 1, 1, 0.2], [0, 0, 1, 1]], dtype=np.float32))
    tgt = l2_normalise(np.array([[1, 1, 0.9, 0.3], [0, 0.1, 1, 0.8], [1, 0.9, 1, 0]]))
    absolute = mine_vectors(src, tgt, k=2, margin="absolute", mode="intersect")
    ratio = mine_vectors(src, tgt, k=2, margin="ratio", mode="intersect")
    assert absolute[0].src_index == 0
    assert ratio[0].src_index == 1


# ---- the fast path against a plain loop --------------------------------------------


def naive_mine(src, tgt, k, margin, mode, threshold):
    """Direct transcription of the definitions with Python loops over a full matrix."""
    sims = src.astype(np.float64) @ tgt.astype(np.float64).T
    n, m = sims.shape
    kf, kb = min(k, m), min(k, n)
    fwd_nn = [sorted(range(m), key=lambda j: -sims[i, j])[:kf] for i in range(n)]
    bwd_nn = [sorted(range(n), key=lambda i: -sims[i, j])[:kb] for j in range(m)]
    avg_x = [sum(sims[i, j] for j in fwd_nn[i]) / kf for i in range(n)]
    avg_y = [sum(sims[i, j] for i in bwd_nn[j]) / kb for j in range(m)]

    def score(i, j):
        avg = avg_x[i] / 2 + avg_y[j] / 2
        return {"ratio": sims[i, j] / avg, "distance": sims[i, j] - avg}.get(margin, sims[i, j])

    fwd = {i: max(fwd_nn[i], key=lambda j: score(i, j)) for i in range(n)}
    bwd = {j: max(bwd_nn[j], key=lambda i: score(i, j)) for j in range(m)}
    if mode == "forward":
        found = [(i, fwd[i]) for i in range(n)]
    elif mode == "backward":
        found = [(bwd[j], j) for j in range(m)]
    elif mode == "intersect":
        found = [(i, fwd[i]) for i in range(n) if bwd[fwd[i]] == i]
    else:
        candidates = [(i, fwd[i]) for i in range(n)] + [(bwd[j], j) for j in range(m)]
        candidates.sort(key=lambda p: -score(*p))
        found, used_s, used_t = [], set(), set()
        for i, j in candidates:
            if i not in used_s and j not in used_t:
                used_s.add(i), used_t.add(j), found.append((i, j))
    return {(i, j): score(i, j) for i, j in found if threshold is None or score(i, j) > threshold}


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_matches_naive_loop(margin, mode, seed):
    rng = np.random.default_rng(seed)
    # Half the targets are noisy copies of sources, so real pairs exist among random ones.
    src = rng.standard_normal((40, 16))
    tgt = np.concatenate([src[:20] + 0.5 * rng.standard_normal((20, 16)), rng.standard_normal((13, 16))])
    src, tgt = l2_normalise(src), l2_normalise(tgt[rng.permutation(33)])
    threshold = {"ratio": 1.0, "distance": 0.0, "absolute": 0.3}[margin] if seed else None
    got = mine_vectors(src, tgt, k=4, margin=margin, mode=mode, threshold=threshold)
    want = naive_mine(src, tgt, 4, margin, mode, threshold)
    assert {(p.src_index, p.tgt_index): p.score for p in got} == pytest.approx(want, rel=1e-5, abs=1e-6)
    assert [p.score for p in got] == sorted((p.score for p in got), reverse=True)


def test_k_larger_than_a_side_uses_the_whole_side():
    pairs = mine_vectors(SRC, TGT[:1], k=4, mode="forward")
    assert len(pairs) == 3 and {p.tgt_index for p in pairs} == {0}


def test_empty_side_mines_nothing():
    assert mine_vectors(SRC[:0], TGT) == []


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="margin"):
        mine_vectors(SRC, TGT, margin="cosine")
    with pytest.raises(ValueError, match="mode"):
        mine_vectors(SRC, TGT, mode="union")
    with pytest.raises(ValueError, match="same d"):
        mine_vectors(SRC, np.ones((2, 3), dtype=np.float32))


def test_ivf_search_finds_the_planted_neighbours():
    # Above the exact limit the IVF index is used; with clustered data it still finds
    # the noisy copies that an exact search finds.
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((50, 32))
    base = l2_normalise(centres[rng.integers(0, 50, 4000)] + 0.3 * rng.standard_normal((4000, 32)))
    queries = l2_normalise(base[:500] + 0.05 * rng.standard_normal((500, 32)))
    exact_sims, exact_ids = knn(queries, base, 4)
    ivf_sims, ivf_ids = knn(queries, base, 4, MiningConfig(exact_max_products=0, ivf_nprobe=8))
    assert np.mean(ivf_ids[:, 0] == exact_ids[:, 0]) > 0.95
    assert np.mean(ivf_ids[:, 0] == np.arange(500)) > 0.95


@pytest.mark.parametrize(
    "pairs, expected",
    [
        ([(0, 0), (1, 1), (2, 2), (3, 3)], 1.0),
        ([(0, 0), (1, 5), (2, 1), (3, 2)], 0.75),
        ([(0, 3), (1, 2), (2, 1), (3, 0)], 0.25),
        ([], 0.0),
    ],
)
def test_increasing_fraction(pairs, expected):
    assert increasing_fraction(pairs) == pytest.approx(expected)


def clustered_pairs(seed: int, n_src=3000, n_copies=1500, n_other=1000, dim=32):
    """Topic-clustered vectors; the target holds noisy copies of the first sources."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, dim))
    draw = lambda n: centres[rng.integers(0, 40, n)] + 0.4 * rng.standard_normal((n, dim))  # noqa: E731
    src = l2_normalise(draw(n_src))
    tgt = l2_normalise(np.concatenate([src[:n_copies] + 0.05 * rng.standard_normal((n_copies, dim)), draw(n_other)]))
    return src, tgt


def test_clustered_search_matches_exact_search_on_clustered_data():
    from engine.mining.knn_clusters import clustered_neighbours_steps
    from engine.mining.margin import run_steps

    src, tgt = clustered_pairs(5)
    fwd_sims, fwd_ids, bwd_sims, bwd_ids = run_steps(clustered_neighbours_steps(src, tgt, 4, nprobe=8))
    exact_fwd = knn(src, tgt, 4)
    exact_bwd = knn(tgt, src, 4)
    assert fwd_ids.shape == (3000, 4) and bwd_ids.shape == (2500, 4)
    assert np.mean(fwd_ids[:, 0] == exact_fwd[1][:, 0]) > 0.95
    assert np.mean(bwd_ids[:, 0] == exact_bwd[1][:, 0]) > 0.95
    # The copies' nearest neighbours (what mining needs) are found as the exact search finds them.
    assert np.mean(fwd_ids[:1500, 0] == exact_fwd[1][:1500, 0]) > 0.99
    # Cosines of whatever was found are exact, and rows are sorted best first.
    assert np.allclose(fwd_sims, np.einsum("id,ikd->ik", src, tgt[fwd_ids]), atol=1e-5)
    assert np.all(np.diff(bwd_sims, axis=1) <= 1e-7)


def test_large_inputs_on_cpu_use_the_clustered_search_and_still_mine_the_pairs():
    src, tgt = clustered_pairs(6)
    config = MiningConfig(exact_max_products=1000, use_gpu=False)
    approx = {(p.src_index, p.tgt_index) for p in mine_vectors(src, tgt, threshold=1.0, config=config)}
    exact = {(p.src_index, p.tgt_index) for p in mine_vectors(src, tgt, threshold=1.0)}
    assert len(exact) > 700
    assert len(approx & exact) >= 0.97 * len(exact)
    assert len(approx - exact) <= 0.03 * len(exact)
