"""The term that keeps corpus sentences near the frozen base model (trainer.mixcse.distill)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from engine.errors import InputError
from engine.mining.bitext_io import write_pairs
from train_helpers import tiny_config, tiny_training_inputs, tiny_translations
from trainer.config import DISTILL_PER_TAU, TrainConfig
from trainer.mixcse.distill import distill_loss
from trainer.mixcse.model import SentenceModel
from trainer.mixcse.train import TrainStep, _data_for, _Run, resolve_config, train


@pytest.fixture
def inputs(tmp_path):
    return tiny_training_inputs(tmp_path, sentences=48, seed=3)


def fresh_run(config) -> _Run:
    config, weights = resolve_config(config)
    return _Run(config, _data_for(config, None, None), weights, resume=False)


def pairs_and_corpus(tmp_path, inputs, **changes):
    model, corpus = inputs
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(64))
    settings = dict(pairs=(str(tmp_path / "pairs.tsv"),), pair_holdout=0.0, lr=5e-3)
    return tiny_config(model, corpus, tmp_path / "run", **(settings | changes))


def test_distill_loss_is_one_minus_cosine_with_its_gradient():
    torch.manual_seed(0)
    h = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
    t = torch.randn(5, 7, dtype=torch.float64)
    loss = distill_loss(h, t)
    cos = (h * t).sum(1) / (h.norm(dim=1) * t.norm(dim=1))
    assert loss.item() == pytest.approx((1 - cos).mean().item(), abs=1e-12)
    loss.backward()
    # d(1 - cos)/dh = -(t/|t| - cos h/|h|) / |h|, averaged over the 5 rows
    unit_h, unit_t = F.normalize(h.detach(), dim=1), F.normalize(t, dim=1)
    expected = -(unit_t - cos.detach()[:, None] * unit_h) / h.detach().norm(dim=1, keepdim=True) / 5
    assert torch.allclose(h.grad, expected, atol=1e-12)
    same = h.detach().clone().requires_grad_(True)
    distill_loss(same, same.detach()).backward()
    assert distill_loss(same, same.detach()).item() == pytest.approx(0, abs=1e-12)
    assert same.grad.abs().max().item() < 1e-8


def test_the_term_is_zero_at_step_zero_and_its_gradient_matches_an_independent_one(tmp_path, inputs):
    model, corpus = inputs
    run = fresh_run(tiny_config(model, corpus, tmp_path / "run", distill_weight=1.0))
    sentences = list(run.corpus.sentences[:8])
    loss, value = run._distill(sentences, None)
    loss.backward()
    assert value == pytest.approx(0, abs=1e-6)  # nothing has moved yet, and no dropout
    assert max(p.grad.abs().max().item() for p in run.model.parameters() if p.grad is not None) < 1e-5
    assert run.model.training  # the eval-mode forward left the model training

    torch.manual_seed(1)
    with torch.no_grad():
        for p in run.model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    run.optimizer.zero_grad(set_to_none=True)
    loss, value = run._distill(sentences, None)
    loss.backward()
    # the same term computed apart: a copy of the moved model against the base read anew
    moved = SentenceModel.load(model, run.config.pooling)
    moved.load_state_dict(run.model.state_dict())
    base = SentenceModel.load(model, "cls").eval()
    moved.eval()
    batch = moved.tokenize(sentences, run.config.max_len, "cpu")
    with torch.no_grad():
        target = F.normalize(base.embed(**batch, with_head=False), dim=-1)
    vectors = F.normalize(moved.embed(**batch, with_head=False), dim=-1)
    expected = 1 - (vectors * target).sum(1).mean()
    expected.backward()
    assert value > 1e-4 and value == pytest.approx(expected.item(), rel=1e-5)
    grads = dict(moved.named_parameters())
    for name, p in run.model.named_parameters():
        if p.grad is not None and grads[name].grad is not None:
            assert torch.allclose(p.grad, grads[name].grad, atol=1e-6, rtol=1e-4), name


def test_pairs_with_the_distillation_alone_start_as_pairs_alone_then_differ(tmp_path, inputs):
    config = pairs_and_corpus(tmp_path, inputs, mono_weight=0.0, distill_weight=5.0, max_steps=4)
    assert config.loss_weights == (1.0, 0.0)  # the corpus's views only feed the distillation
    held = [e.loss for e in train(config) if isinstance(e, TrainStep)]
    alone = replace(config, corpus=(), one_per_line=None, mono_weight=1.0, distill_weight=0.0,
                    out_dir=tmp_path / "alone")
    plain = [e.loss for e in train(alone) if isinstance(e, TrainStep)]
    assert all(math.isfinite(x) for x in held) and len(held) == 4
    assert held[0] == pytest.approx(plain[0], abs=1e-6)  # the term is 0 at step 0
    assert held[1:] != pytest.approx(plain[1:], abs=1e-6)  # and acts once the model moved


def test_a_cancelled_distill_run_resumes_as_an_uninterrupted_one(tmp_path, inputs):
    config = pairs_and_corpus(tmp_path, inputs, distill_weight=2.0, max_steps=6, checkpoint_steps=2)
    run = train(config)
    for event in run:
        if isinstance(event, TrainStep) and event.step == 3:
            break
    run.close()  # cancel: the step-2 checkpoint stays
    resumed = [e for e in train(config, resume=True) if isinstance(e, TrainStep)]
    straight = [e for e in train(replace(config, out_dir=tmp_path / "straight"))
                if isinstance(e, TrainStep)]
    assert [e.step for e in resumed] == [3, 4, 5, 6]
    assert [e.loss for e in resumed] == [e.loss for e in straight][2:]


def test_bad_distill_settings_are_clear_errors(tmp_path, inputs):
    model, corpus = inputs
    with pytest.raises(InputError, match="distill_weight must be >= 0"):
        tiny_config(model, corpus, tmp_path / "run", distill_weight=-1.0)
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(64))
    with pytest.raises(InputError, match="needs corpus sentences"):
        TrainConfig(base=str(model), pairs=(str(tmp_path / "pairs.tsv"),), distill_weight=1.0)


def test_the_default_weight_scales_with_one_over_tau_beside_pairs_and_is_off_otherwise(tmp_path, inputs):
    model, corpus = inputs
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(64))
    pairs = (str(tmp_path / "pairs.tsv"),)
    both = tiny_config(model, corpus, tmp_path / "run", pairs=pairs)
    assert both.distill_weight is None and both.distill == pytest.approx(DISTILL_PER_TAU / both.tau)
    assert tiny_config(model, corpus, tmp_path / "run", pairs=pairs, tau=0.1).distill == pytest.approx(50)
    assert tiny_config(model, corpus, tmp_path / "run").distill == 0  # classic MixCSE moves the space
    assert TrainConfig(base=str(model), pairs=pairs).distill == 0  # nothing to hold
    assert tiny_config(model, corpus, tmp_path / "run", pairs=pairs, distill_weight=0.0).distill == 0
    assert fresh_run(both).anchor is not None
    assert fresh_run(tiny_config(model, corpus, tmp_path / "run")).anchor is None
