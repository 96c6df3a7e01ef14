"""Translation pairs keep every distinct pair, even where sentences repeat across pairs (one
English sentence with its translations into ten languages), and no training batch holds
two pairs that share a sentence: each would be the other's in-batch negative."""

from __future__ import annotations

import numpy as np
import pytest

from engine.mining.bitext_io import write_pairs
from train_helpers import many_to_one_translations, tiny_translations
from trainer.pairs import PairFilter, batch_order, load_pairs


def test_a_many_to_one_file_keeps_every_distinct_pair(tmp_path):
    rows = many_to_one_translations(100, 10)
    write_pairs(tmp_path / "memory.tsv", rows + rows[:50])  # 50 exact duplicates
    pairs = load_pairs([tmp_path / "memory.tsv"], PairFilter(), seed=3, holdout=0.1)
    stats = pairs.stats
    assert (stats.read, stats.duplicates, stats.kept) == (1050, 50, 1000)
    # held_out_count(100 meanings, 0.1) is the minimum of 20: held out whole, one pair of each scored
    assert stats.held_out == 20 and stats.set_aside == 20 * 9
    assert len(pairs.train) == stats.trained == 800 and len(set(pairs.train)) == 800
    held_sentences = {side for pair in pairs.held_out for side in pair}
    assert not held_sentences & {side for pair in pairs.train for side in pair}, "a held-out meaning trained"
    assert len({t for _, t in pairs.held_out}) == 20 and len({s for s, _ in pairs.held_out}) == 20
    # round robin: the held-out pairs come from several languages, not all from the first
    languages = {rows.index((1.0, s, t)) // 100 for s, t in pairs.held_out}
    assert len(languages) >= 5


def test_meanings_linked_through_either_side_are_held_out_together(tmp_path):
    # a-b, c-b and c-d are one meaning; e-f another
    rows = [(1.0, "alpha one", "beta one"), (1.0, "gamma one", "beta one"), (1.0, "gamma one", "delta one")]
    rows += [(1.0, f"source number {i}", f"target number {i}") for i in range(60)]
    write_pairs(tmp_path / "p.tsv", rows)
    for seed in range(8):
        pairs = load_pairs([tmp_path / "p.tsv"], PairFilter(), seed=seed, holdout=0.3)
        linked = {("alpha one", "beta one"), ("gamma one", "beta one"), ("gamma one", "delta one")}
        trained = linked & set(pairs.train)
        assert trained in (set(), linked), "a meaning was split between training and held out"


def test_a_one_to_one_file_splits_as_it_always_did(tmp_path):
    """No shared sentences: the meanings are the pairs, the order is the seed's shuffle."""
    write_pairs(tmp_path / "p.tsv", tiny_translations(100))
    pairs = load_pairs([tmp_path / "p.tsv"], PairFilter(), seed=1, holdout=0.2)
    assert pairs.stats.set_aside == 0 and len(pairs.held_out) == 20 and len(pairs.train) == 80


@pytest.mark.parametrize("batch_size", [4, 16, 64])
def test_no_batch_holds_two_pairs_sharing_a_sentence(batch_size):
    pairs = [(s, t) for _, s, t in many_to_one_translations(80, 10)]
    order = batch_order(pairs, batch_size, np.random.default_rng(7))
    assert len(order) % batch_size == 0 and len(set(order.tolist())) == len(order)
    for start in range(0, len(order), batch_size):
        sentences = [side for i in order[start:start + batch_size] for side in pairs[i]]
        assert len(sentences) == len(set(sentences)), f"batch at {start} repeats a sentence"
    # almost every pair trains each epoch: the unfilled last batches are few
    assert len(order) >= len(pairs) - 10 * batch_size


def test_a_sentence_on_both_sides_counts_once():
    pairs = [("der Hund", "the dog"), ("the dog", "le chien"), ("die Katze", "the cat"), ("the cat", "le chat")]
    order = batch_order(pairs, 2, np.random.default_rng(0))
    batches = [set(order[i:i + 2].tolist()) for i in range(0, len(order), 2)]
    assert {0, 1} not in batches and {2, 3} not in batches


def test_pairs_with_no_shared_sentence_keep_the_plain_random_order():
    pairs = [(s, t) for _, s, t in tiny_translations(50)]
    order = batch_order(pairs, 8, np.random.default_rng(11))
    assert order.tolist() == np.random.default_rng(11).permutation(50)[:48].tolist()
