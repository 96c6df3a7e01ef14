"""Translation pairs as MixCSE views: the loss training uses (`mixcse_loss(sources,
translations)`) equals a loop written from the definition, in values and gradients.

For source i the positive is its translation t_i, the negatives are the other pairs'
translations t_j, and the mixed negatives are SG(normalise(lam t_i + (1 - lam) t_j));
the second direction swaps sources and translations. Without CUDA the fused kernel
runs under the Triton interpreter (see conftest.py).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from trainer.mixcse.losses import mixcse_loss


def loop_pair_loss(sources: torch.Tensor, targets: torch.Tensor, lam: float, tau: float,
                   bidirectional: bool, stop_grad: bool) -> torch.Tensor:
    """The pair objective, one anchor and one logit at a time."""

    def direction(anchors, partners):
        z, t = F.normalize(anchors, dim=-1), F.normalize(partners, dim=-1)
        rows = []
        for i in range(len(z)):
            logits = [z[i] @ t[i] / tau]
            for j in range(len(z)):
                if j == i:
                    continue
                mixed = F.normalize(lam * t[i] + (1 - lam) * t[j], dim=-1)
                if stop_grad:
                    mixed = mixed.detach()
                logits += [z[i] @ t[j] / tau, z[i] @ mixed / tau]
            rows.append(torch.logsumexp(torch.stack(logits), 0) - logits[0])
        return torch.stack(rows).mean()

    loss = direction(sources, targets)
    if bidirectional:
        loss = (loss + direction(targets, sources)) / 2
    return loss


def pairs(n: int, d: int, seed: int):
    """Sources and translations that are related (cosine ~0.5) but not equal."""
    g = torch.Generator().manual_seed(seed)
    sources = torch.randn(n, d, generator=g, dtype=torch.float64)
    targets = sources + 1.5 * torch.randn(n, d, generator=g, dtype=torch.float64)
    return sources, targets


def loss_and_grads(fn, sources, targets):
    s, t = sources.clone().requires_grad_(), targets.clone().requires_grad_()
    loss = fn(s, t)
    return (loss.detach(), *torch.autograd.grad(loss, (s, t)))


@pytest.mark.parametrize("bidirectional, stop_grad", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("impl", ["reference", "gram"])
def test_pair_loss_equals_the_loop_in_values_and_gradients(impl, bidirectional, stop_grad):
    sources, targets = pairs(6, 16, seed=3)
    settings = dict(lam=0.2, tau=0.05, bidirectional=bidirectional, stop_grad=stop_grad)
    expected = loss_and_grads(lambda s, t: loop_pair_loss(s, t, **settings), sources, targets)
    actual = loss_and_grads(lambda s, t: mixcse_loss(s, t, impl=impl, **settings), sources, targets)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n", [2, 9])
def test_fused_pair_loss_agrees_with_the_reference(n):
    sources, targets = (x.float() for x in pairs(n, 32, seed=n))
    settings = dict(lam=0.2, tau=0.05, bidirectional=True, stop_grad=True)
    expected = loss_and_grads(lambda s, t: mixcse_loss(s, t, impl="reference", **settings),
                              sources, targets)
    actual = loss_and_grads(lambda s, t: mixcse_loss(s, t, impl="fused", **settings),
                            sources, targets)
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, rtol=1e-4, atol=1e-4 * e.abs().max().item())


def test_stop_gradient_keeps_mixed_negatives_out_of_the_translations_gradient():
    sources, targets = pairs(5, 8, seed=1)
    settings = dict(lam=0.2, tau=0.05, bidirectional=False)
    _, _, with_sg = loss_and_grads(lambda s, t: mixcse_loss(s, t, stop_grad=True, **settings),
                                   sources, targets)
    _, _, without = loss_and_grads(lambda s, t: mixcse_loss(s, t, stop_grad=False, **settings),
                                   sources, targets)
    assert not torch.allclose(with_sg, without)
