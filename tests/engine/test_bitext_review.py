"""Reviewing mined pairs: histogram, threshold counts, rejected pairs, indexed documents."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import WordEncoder

from engine.mining.bitext import MinedPair
from engine.mining.bitext_review import (
    count_above,
    indexed_documents,
    kept_indices,
    kept_pairs,
    score_histogram,
    slider_steps,
    slider_value,
)
from engine.config import data_paths
from engine.errors import InputError
from engine.library import Library


def _slow_histogram(values, bins, lo, hi):
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        if lo <= v <= hi:
            counts[min(int((v - lo) / width), bins - 1)] += 1
    return counts


def test_histogram_matches_a_plain_loop_on_seeded_scores():
    rng = np.random.default_rng(3)
    scores = rng.normal(1.05, 0.1, size=500)
    counts, edges = score_histogram(scores, bins=17)
    assert len(edges) == 18 and edges[0] == scores.min() and edges[-1] == scores.max()
    assert counts.tolist() == _slow_histogram(scores, 17, scores.min(), scores.max())
    assert counts.sum() == 500


def test_histogram_of_nothing_or_one_value_has_increasing_edges():
    counts, edges = score_histogram([], bins=4)
    assert counts.tolist() == [0, 0, 0, 0] and np.all(np.diff(edges) > 0)
    counts, edges = score_histogram([1.2, 1.2, float("nan")], bins=3)
    assert counts.sum() == 2 and np.all(np.diff(edges) > 0)
    with pytest.raises(InputError):
        score_histogram([1.0], bins=0)


def test_threshold_and_rejections_pick_the_kept_pairs_in_order():
    pairs = [MinedPair(s, f"s{i}", f"t{i}", (i,), (i,)) for i, s in enumerate([1.3, 1.0, 1.2, 1.1])]
    assert count_above([p.score for p in pairs], 1.1) == 2
    assert kept_indices([p.score for p in pairs], 1.05, rejected={2}) == [0, 3]
    assert [p.src_text for p in kept_pairs(pairs, 1.05, rejected={2})] == ["s0", "s3"]
    assert kept_pairs(pairs, 2.0) == []


def test_slider_round_trip_and_lowest_position_keeps_everything():
    lo, hi = 0.9, 1.4
    assert slider_steps(lo, hi, 100, 1.15) == 50
    assert slider_value(lo, hi, 100, 50) == pytest.approx(1.15)
    assert count_above([0.9, 1.0, 1.4], slider_value(lo, hi, 100, 0)) == 3
    assert count_above([0.9, 1.0, 1.4], slider_value(lo, hi, 100, 100)) == 0
    assert slider_steps(1.0, 1.0, 100, 1.0) == 0


def test_indexed_documents_lists_paths_and_languages(babelfind_home, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "en.txt").write_text("The weather is fine today and the sun is shining over the hills.", encoding="utf-8")
    (folder / "de.txt").write_text("Das Wetter ist heute schön und die Sonne scheint über den Hügeln.", encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    try:
        for _ in library.index_paths([folder]):
            pass
        documents = indexed_documents(library.store)
    finally:
        library.close()
    assert [(d.path.rsplit("/", 1)[-1], d.language) for d in documents] == [("de.txt", "de"), ("en.txt", "en")]
