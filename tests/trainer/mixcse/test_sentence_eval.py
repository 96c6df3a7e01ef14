"""Scoring a classic MixCSE run on held-out corpus sentences when there is no STS data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from train_helpers import tiny_config, tiny_training_inputs, training_events
from trainer.mixcse.model import SentenceModel
from trainer.mixcse.sentence_eval import dropout_views, evaluate_sentences, score_views
from trainer.mixcse.train import SENTENCE_METRIC, TrainEval, TrainFinished, TrainStarted, TrainStep, train


def test_scores_of_known_views():
    # 3 sentences in 3 orthogonal directions; sentence 2's second view leans towards 0
    first = np.eye(3)
    second = np.array([[1.0, 0, 0], [0, 1, 0], [1, 0, 1]])
    plain = np.array([[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1]])
    report = score_views(first, second, plain, tau=0.5)
    s = second / np.linalg.norm(second, axis=1, keepdims=True)
    logits = first @ s.T / 0.5

    def infonce(z):
        return np.mean([np.log(np.exp(row).sum()) - row[i] for i, row in enumerate(z)])

    expected = 100 * math.exp(-(infonce(logits) + infonce(logits.T)) / 2)
    assert report.separation == pytest.approx(expected)
    # view 2 of sentence 2 is found first from sentence 2; from view 2 of sentence 2,
    # view 1 of sentences 0 and 2 tie (argmax takes 0): 5 of 6
    assert report.view_retrieval == pytest.approx(100 * 5 / 6)
    assert report.neighbours == [[1, 2], [0, 2], [0, 1]]
    assert report.neighbours_kept == 100.0  # no base model to compare with
    assert report.alignment == pytest.approx(np.mean(np.sum((first - s) ** 2, axis=1)))
    assert "neighbours" not in report.to_dict()
    assert score_views(first, second, plain[[2, 1, 0]], tau=0.5,
                       base_neighbours=report.neighbours).neighbours_kept == 100.0  # 2 of 2


def test_neighbours_kept_counts_the_base_models_neighbours_still_nearest():
    rng = np.random.default_rng(3)
    base = rng.normal(size=(15, 4))  # 10 neighbours out of 14 others
    before = score_views(base, base, base, tau=0.05)
    assert len(before.neighbours[0]) == 10 and 0 not in before.neighbours[0]
    assert score_views(base, base, base, tau=0.05, base_neighbours=before.neighbours).neighbours_kept == 100.0
    moved = score_views(base, base, rng.normal(size=(15, 4)), tau=0.05, base_neighbours=before.neighbours)
    shared = sum(len(set(a) & set(b)) for a, b in zip(moved.neighbours, before.neighbours))
    assert moved.neighbours_kept == pytest.approx(100 * shared / 150) and shared < 150


def test_views_have_fixed_masks_and_leave_the_training_rng_alone(tmp_path):
    model_dir, _ = tiny_training_inputs(tmp_path)
    model = SentenceModel.load(model_dir, "mean").eval()
    texts = ["cat dog bird", "red big house car", "man runs ball"]
    import torch

    torch.manual_seed(0)
    a1, b1 = dropout_views(model, texts, 16)
    after_first = torch.rand(1)
    torch.manual_seed(0)
    a2, b2 = dropout_views(model, texts, 16)
    assert torch.rand(1) == after_first  # as if no views had been drawn
    np.testing.assert_array_equal(a1, a2)
    assert not np.allclose(a1, b1)  # two masks: two different views
    assert not model.training  # the mode it was in


def test_too_few_sentences_to_score_is_an_error(tmp_path):
    model_dir, _ = tiny_training_inputs(tmp_path)
    with pytest.raises(ValueError, match="at least 20"):
        evaluate_sentences(SentenceModel.load(model_dir, "mean"), "", ["a b c"] * 5, tau=0.05)


@pytest.fixture
def big_corpus(tmp_path):
    return tiny_training_inputs(tmp_path, sentences=240)


def test_without_sts_data_held_out_sentences_score_the_run(tmp_path, big_corpus):
    model, corpus = big_corpus
    config = tiny_config(model, corpus, tmp_path / "run", max_steps=12, eval_steps=6, epochs=5)
    events = training_events(train(config))
    started = events[0]
    assert isinstance(started, TrainStarted) and started.metric == SENTENCE_METRIC
    assert started.corpus.kept == 240 and started.steps_per_epoch == 216 // 8  # 24 held out
    evals = [e for e in events if isinstance(e, TrainEval)]
    assert [e.step for e in evals] == [0, 6, 12]
    assert all(e.metric == SENTENCE_METRIC and e.sentences["sentences"] == 24 for e in evals)
    base = evals[0].sentences
    assert base["neighbours_kept"] == 100.0 and not evals[0].is_best
    assert evals[-1].sentences["neighbours_kept"] < 100.0  # training moved the neighbours
    best = max(evals[1:], key=lambda e: e.score)
    finished = events[-1]
    assert isinstance(finished, TrainFinished) and finished.metric == SENTENCE_METRIC
    assert finished.best_step == best.step and finished.best_score == pytest.approx(best.score)
    assert finished.held_out is None
    assert finished.held_out_sentences["base"]["separation"] == pytest.approx(evals[0].score)
    assert finished.held_out_sentences["best"]["separation"] == pytest.approx(best.score)
    assert (finished.run_dir / "best" / "model" / "config.json").is_file()


def test_scoring_does_not_change_what_training_does(tmp_path, big_corpus):
    model, corpus = big_corpus
    settings = dict(max_steps=6, epochs=5)
    scored = training_events(train(tiny_config(model, corpus, tmp_path / "a", eval_steps=2, **settings)))
    unscored = training_events(train(tiny_config(model, corpus, tmp_path / "b", eval_steps=100, **settings)))
    assert len([e for e in scored if isinstance(e, TrainEval)]) == 4
    losses = [[e.loss for e in run if isinstance(e, TrainStep)] for run in (scored, unscored)]
    assert losses[0] == losses[1]


def test_a_small_corpus_or_sts_data_leaves_every_sentence_to_training(tmp_path):
    model, corpus = tiny_training_inputs(tmp_path, sentences=32)
    events = training_events(train(tiny_config(model, corpus, tmp_path / "run", max_steps=2)))
    assert events[0].metric is None and events[0].corpus.kept == 32
    assert not [e for e in events if isinstance(e, TrainEval)]
    assert events[-1].held_out_sentences is None and events[-1].best_score is None


def test_a_resumed_run_compares_with_the_same_base(tmp_path, big_corpus):
    model, corpus = big_corpus
    settings = dict(max_steps=6, eval_steps=3, checkpoint_steps=2, epochs=5)
    run = train(tiny_config(model, corpus, tmp_path / "run", **settings))
    for event in run:
        if isinstance(event, TrainStep) and event.step == 5:
            break
    run.close()
    resumed = training_events(train(tiny_config(model, corpus, tmp_path / "run", **settings), resume=True))
    straight = training_events(train(tiny_config(model, corpus, tmp_path / "straight", **settings)))
    assert resumed[0].start_step == 4
    assert [e.step for e in resumed if isinstance(e, TrainEval)] == [6]  # no second base score
    last = [[e.sentences for e in run if isinstance(e, TrainEval)][-1] for run in (resumed, straight)]
    assert last[0] == last[1]  # bit-identical on CPU; neighbours_kept uses the same base
    assert resumed[-1].held_out_sentences == straight[-1].held_out_sentences
