"""Training on translation pairs: reading TSV/TMX, held-out scores, the loop, cancel/resume."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from engine.errors import InputError
from engine.mining.bitext_io import write_pairs
from train_helpers import many_to_one_translations, tiny_config, tiny_training_inputs, tiny_translations, training_events
from trainer.mixcse.pair_eval import evaluate_pairs, same_language_bias
from trainer.pairs import PairFilter, held_out_count, load_pairs
from trainer.mixcse.train import TrainEval, TrainFinished, TrainStarted, TrainStep, train


@pytest.fixture
def model(tmp_path):
    return tiny_training_inputs(tmp_path)[0]


def pair_config(model, pairs_file, out_dir, **changes):
    """tiny_config's fast CPU settings, learning from `pairs_file` alone unless told."""
    settings = dict(corpus=(), one_per_line=None, pairs=(str(pairs_file),), batch_size=16,
                    lr=5e-3, epochs=50, max_steps=30, eval_steps=15, checkpoint_steps=10,
                    pair_holdout=0.15)
    return replace(tiny_config(model, pairs_file, out_dir), **(settings | changes))


def test_pairs_come_from_tsv_and_tmx_deduplicated_filtered_and_held_out(tmp_path):
    rows = tiny_translations(60)
    write_pairs(tmp_path / "a.tsv", rows[:40])
    write_pairs(tmp_path / "b.tmx", rows[30:] + [(0.1, "low score pair", "x y z")],
                src_lang="xx", tgt_lang="yy")
    pairs = load_pairs([tmp_path / "a.tsv", tmp_path / "b.tmx"], PairFilter(min_score=0.5),
                       seed=1, holdout=0.5)
    assert pairs.stats.read == 71
    assert pairs.stats.duplicates == 10 and pairs.stats.filtered == 1 and pairs.stats.kept == 60
    assert len(pairs.held_out) == 30 and len(pairs.train) == 30
    assert set(pairs.train).isdisjoint(pairs.held_out)
    assert {p[0] for p in pairs.train + pairs.held_out} == {r[1] for r in rows}
    again = load_pairs([tmp_path / "a.tsv", tmp_path / "b.tmx"], PairFilter(min_score=0.5),
                       seed=1, holdout=0.5)
    assert again.train == pairs.train  # the seed decides the split


def test_held_out_share_is_bounded():
    assert held_out_count(1000, 0.1) == 100
    assert held_out_count(100, 0.1) == 20  # enough to measure
    assert held_out_count(30, 0.1) == 15  # but never more than half
    assert held_out_count(10**6, 0.1) == 2000
    assert held_out_count(1000, 0.0) == 0


def test_bad_pair_files_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="no such pairs file"):
        load_pairs([tmp_path / "missing.tsv"], PairFilter(), seed=0)
    (tmp_path / "pairs.csv").write_text("a,b\n")
    with pytest.raises(InputError, match=r"\.tsv .* or \.tmx"):
        load_pairs([tmp_path / "pairs.csv"], PairFilter(), seed=0)
    (tmp_path / "two.tsv").write_text("1.0\tonly two\n")
    with pytest.raises(InputError, match="expected 3 tab-separated fields"):
        load_pairs([tmp_path / "two.tsv"], PairFilter(), seed=0)
    write_pairs(tmp_path / "few.tsv", tiny_translations(3))
    with pytest.raises(InputError, match="too few to train on"):
        load_pairs([tmp_path / "few.tsv"], PairFilter(), seed=0, holdout=0.0, min_pairs=16)


def test_held_out_report_on_known_vectors():
    # sources s0..s2 ("de"), translations t0..t2 ("en"); t2 is closer to t0's source
    vectors = {"s0": [1, 0, 0], "s1": [0, 1, 0], "s2": [0, 0, 1],
               "t0": [1, 0.1, 0], "t1": [0, 1, 0.1], "t2": [0.9, 0, 0.5],
               # a German sentence close to s1 (closer than s1's translation t1 is)
               "d1": [0.05, 1, 0]}
    encode = lambda texts: np.array([vectors[t] for t in texts], dtype=float)  # noqa: E731
    language = lambda texts: ["de" if t[0] in "sd" else "en" for t in texts]  # noqa: E731
    report = evaluate_pairs(encode, [("s0", "t0"), ("s1", "t1"), ("s2", "t2")], ["d1"], language)
    assert report.source_to_target == 100.0  # every source finds its translation first
    assert report.target_to_source == pytest.approx(200 / 3)  # t2 finds s0, not s2
    assert report.retrieval == pytest.approx(250 / 3)
    # beaten: s1 (by d1), t2 (by t0: both English)
    assert report.bias_queries == 6
    assert report.same_language_bias == pytest.approx(100 * 2 / 6)


def test_pairs_in_one_language_show_no_bias():
    vectors = np.eye(4)
    bias, queries = same_language_bias(vectors, ["en"] * 4, 2)
    assert (bias, queries) == (0.0, 0)


def test_training_on_pairs_lowers_the_held_out_retrieval_error(tmp_path, model):
    write_pairs(tmp_path / "pairs.tmx", tiny_translations(240), src_lang="xx", tgt_lang="yy")
    events = training_events(train(pair_config(model, tmp_path / "pairs.tmx", tmp_path / "run")))
    started = events[0]
    assert isinstance(started, TrainStarted) and started.corpus is None
    assert started.pairs.kept == 240 and started.pairs.held_out == 36
    evals = [e for e in events if isinstance(e, TrainEval)]
    assert [e.step for e in evals] == [0, 15, 30]
    before, after = evals[0], max(evals[1:], key=lambda e: e.score)
    assert before.metric == "held-out translation retrieval" and not before.is_best
    assert after.score > before.score + 3  # points of top-1 accuracy, both directions
    assert after.pairs["pairs"] == 36
    finished = events[-1]
    assert isinstance(finished, TrainFinished) and finished.best_step == after.step
    assert finished.metric == before.metric and finished.best_score == pytest.approx(after.score)
    assert finished.held_out["base"]["retrieval"] == pytest.approx(before.score)
    assert finished.held_out["best"]["retrieval"] == pytest.approx(after.score)


def test_pairs_and_a_corpus_train_together(tmp_path, model):
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(64))
    _, corpus = tiny_training_inputs(tmp_path / "corpus", sentences=48, seed=3)
    config = pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", corpus=(str(corpus),),
                         one_per_line=True, batch_size=8, max_steps=4, eval_steps=4,
                         pair_holdout=0.0)
    assert config.loss_weights == (1.0, 1.0)
    events = training_events(train(config))
    assert events[0].corpus.kept == 48 and events[0].pairs.kept == 64
    losses = [e.loss for e in events if isinstance(e, TrainStep)]
    assert len(losses) == 4 and all(math.isfinite(x) for x in losses)
    pairs_only = training_events(train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "alone",
                                        batch_size=8, max_steps=4, pair_holdout=0.0)))
    # two contrastive terms per step: the corpus's dropout views add their own loss
    assert losses[0] > [e.loss for e in pairs_only if isinstance(e, TrainStep)][0]


def test_a_cancelled_pair_run_resumes_where_it_stopped(tmp_path, model):
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(96))
    settings = dict(batch_size=8, max_steps=6, eval_steps=100, checkpoint_steps=2, pair_holdout=0.0)
    run = train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", **settings))
    for event in run:
        if isinstance(event, TrainStep) and event.step == 3:
            break
    run.close()  # cancel: the step-2 checkpoint stays
    resumed = training_events(train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", **settings),
                         resume=True))
    straight = training_events(train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "straight",
                                      **settings)))
    assert resumed[0].start_step == 2
    steps = [e for e in resumed if isinstance(e, TrainStep)]
    assert [e.step for e in steps] == [3, 4, 5, 6]
    assert [e.loss for e in steps] == [e.loss for e in straight if isinstance(e, TrainStep)][2:]


def test_a_resumed_pair_run_keeps_its_base_scores_and_finishes_as_an_uninterrupted_one(tmp_path, model):
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(120))
    settings = dict(batch_size=8, max_steps=8, eval_steps=3, checkpoint_steps=2, pair_holdout=0.2)
    run = train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", **settings))
    before_cancel = []
    for event in run:
        before_cancel.append(event)
        if isinstance(event, TrainStep) and event.step == 5:
            break
    run.close()  # cancelled after the step-3 evaluation; the step-4 checkpoint stays
    resumed = training_events(train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", **settings),
                         resume=True))
    straight = training_events(train(pair_config(model, tmp_path / "pairs.tsv", tmp_path / "straight",
                                      **settings)))
    assert resumed[0].start_step == 4 and resumed[0].metric == "held-out translation retrieval"
    # the held-out pairs are the same ones: the base is not scored again
    assert [e.step for e in resumed if isinstance(e, TrainEval)] == [6, 8]
    assert [e.step for e in before_cancel if isinstance(e, TrainEval)] == [0, 3]
    finished, expected = resumed[-1], straight[-1]
    assert isinstance(finished, TrainFinished)
    assert finished.held_out["base"] == expected.held_out["base"]  # written before the cancel
    assert (finished.best_step, finished.best_score) == (expected.best_step, expected.best_score)
    assert finished.held_out == expected.held_out  # bit-identical on CPU


def test_a_resume_with_other_pairs_is_refused(tmp_path, model):
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(96))
    settings = dict(batch_size=8, max_steps=4, eval_steps=100, checkpoint_steps=2, pair_holdout=0.0)
    config = pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", **settings)
    run = train(config)
    for event in run:
        if isinstance(event, TrainStep) and event.step == 3:
            break
    run.close()
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(96, seed=9))  # the file changed
    with pytest.raises(InputError, match="changed since the checkpoint"):
        training_events(train(config, resume=True))


def test_a_many_to_one_file_trains_on_every_pair_and_no_step_repeats_a_sentence(tmp_path, model, monkeypatch):
    """`babelfind train --pairs` on a translation memory: 30 sentences in 8 languages."""
    from trainer.mixcse import train as train_module

    write_pairs(tmp_path / "memory.tmx", many_to_one_translations(30, 8), src_lang="xx", tgt_lang="en")
    steps: list[list[str]] = []
    local_views = train_module._Run.local_views

    def recorded(run, step):
        epoch, views = local_views(run, step)
        left, right = views[0]
        steps.append(left + right)
        return epoch, views

    monkeypatch.setattr(train_module._Run, "local_views", recorded)
    config = pair_config(model, tmp_path / "memory.tmx", tmp_path / "run", batch_size=8, max_steps=12,
                         epochs=2, eval_steps=6, pair_holdout=0.1)
    events = training_events(train(config))
    started = events[0]
    # 240 pairs kept; 15 meanings (the held-out minimum, at most half) out, one pair of each scored
    assert started.pairs.kept == 240 and started.pairs.held_out == 15 and started.pairs.set_aside == 15 * 7
    # each batch takes one pair of a meaning at most: with 15 meanings and batches of 8 the
    # last batch of an epoch may stay unfilled
    assert started.pairs.trained == 120 and started.steps_per_epoch in (120 // 8 - 1, 120 // 8)
    assert len(steps) == 12
    for sentences in steps:
        assert len(sentences) == len(set(sentences)), "two pairs of one step share a sentence"
    assert isinstance(events[-1], TrainFinished) and events[-1].held_out["base"]["pairs"] == 15


def test_query_passage_roles_alternate_which_side_asks_and_the_model_serves_both_prefixes(tmp_path, model, monkeypatch):
    """--pair-roles query-passage: each step reads one side as a query, the other as a
    passage, taking turns, so that both languages learn to ask and to answer; the corpus
    the anchor holds near the base is read in the step's two roles too."""
    from trainer.mixcse import train as train_module

    translations = tiny_translations(64)
    write_pairs(tmp_path / "pairs.tsv", translations)
    _, corpus = tiny_training_inputs(tmp_path / "corpus", sentences=48, seed=3)
    views_of_step: dict[int, list[tuple[list[str], list[str]]]] = {}
    local_views = train_module._Run.local_views

    def recorded(run, step):
        epoch, views = local_views(run, step)
        views_of_step[step] = views
        return epoch, views

    monkeypatch.setattr(train_module._Run, "local_views", recorded)
    config = pair_config(model, tmp_path / "pairs.tsv", tmp_path / "run", max_steps=4, eval_steps=4,
                         corpus=(str(corpus),), one_per_line=True, distill_weight=1.0,
                         pair_roles="query-passage", text_prefix="query: ", passage_prefix="passage: ")
    events = training_events(train(config))
    assert isinstance(events[-1], TrainFinished)
    sources = {source for _, source, _ in translations}
    assert sorted(views_of_step) == [0, 1, 2, 3]
    for step, ((left, right), (anchored, _)) in views_of_step.items():
        assert all(s.startswith("query: ") for s in left) and all(t.startswith("passage: ") for t in right)
        asking = [s.removeprefix("query: ") for s in left]
        assert all((s in sources) == (step % 2 == 0) for s in asking), step
        role = "passage: " if step % 2 else "query: "
        assert all(s.startswith(role) for s in anchored), step
    from engine.config import DataPaths
    from trainer.mixcse.finish import finish_training

    manifest = finish_training(events[-1], "roles", paths=DataPaths(tmp_path / "home"), variants=())
    assert manifest.prefixes == {"query": "query: ", "passage": "passage: "}
