"""MixCSE loss: the Gram form and the fused Triton kernel against the N x N x d reference.

Without CUDA the kernel runs under the Triton interpreter (see conftest.py), in float32.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch
import torch.nn.functional as F

from engine.errors import InputError
from trainer.mixcse.losses import MixCSELoss, MixCSELossConfig, auto_impl, mixcse_loss, mixcse_loss_official, simcse_loss

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SIZES_N = [1, 2, 7, 64, 257]
SIZES_D = [8, 384, 768]
FLAGS = [(True, True), (True, False), (False, True), (False, False)]  # (bidirectional, stop_grad)
FLAG_IDS = ["bi-sg", "bi-nosg", "single-sg", "single-nosg"]


def _views(n: int, d: int, seed: int, dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Two views whose positives have cosine ~0.3, so losses are O(0.01-1), not vanishing."""
    g = torch.Generator().manual_seed(seed)
    h1 = torch.randn(n, d, generator=g, dtype=torch.float64)
    h2 = h1 + 3.0 * torch.randn(n, d, generator=g, dtype=torch.float64)
    return h1.to(dtype), h2.to(dtype)


def _seed(*params) -> int:
    return sum((i + 1) * 7919 * int(p) for i, p in enumerate(params)) % (2**31)


def _loss_and_grads(h1, h2, device="cpu", **kwargs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x1 = h1.to(device).requires_grad_()
    x2 = h2.to(device).requires_grad_()
    loss = mixcse_loss(x1, x2, **kwargs)
    g1, g2 = torch.autograd.grad(loss, (x1, x2))
    return loss.detach().cpu(), g1.cpu(), g2.cpu()


@functools.lru_cache(maxsize=None)
def _reference(n: int, d: int, bidirectional: bool, stop_grad: bool, lam: float | None = 0.2):
    """Reference loss and gradients in float32, shared by the fused and the Gram tests."""
    h1, h2 = _views(n, d, _seed(n, d, bidirectional, stop_grad))
    return _loss_and_grads(h1, h2, lam=lam, bidirectional=bidirectional, stop_grad=stop_grad,
                           impl="reference")


def _assert_close(actual: torch.Tensor, expected: torch.Tensor, rtol: float = 1e-4) -> None:
    """rtol per entry; entries near 0 (gradients cancel) get a floor of rtol x the largest entry."""
    floor = rtol * expected.abs().max().item() + 1e-12
    torch.testing.assert_close(actual.to(expected.dtype), expected, rtol=rtol, atol=floor)


def _check_against_reference(impl: str, n: int, d: int, bidirectional: bool, stop_grad: bool) -> None:
    expected = _reference(n, d, bidirectional, stop_grad)
    h1, h2 = _views(n, d, _seed(n, d, bidirectional, stop_grad))
    actual = _loss_and_grads(h1, h2, device=DEVICE if impl == "fused" else "cpu",
                             bidirectional=bidirectional, stop_grad=stop_grad, impl=impl)
    for got, want in zip(actual, expected):
        _assert_close(got, want)


@pytest.mark.parametrize(("bidirectional", "stop_grad"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("d", SIZES_D)
@pytest.mark.parametrize("n", SIZES_N)
def test_fused_matches_reference(n, d, bidirectional, stop_grad):
    _check_against_reference("fused", n, d, bidirectional, stop_grad)


@pytest.mark.parametrize(("bidirectional", "stop_grad"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("d", SIZES_D)
@pytest.mark.parametrize("n", SIZES_N)
def test_gram_matches_reference(n, d, bidirectional, stop_grad):
    _check_against_reference("gram", n, d, bidirectional, stop_grad)


@pytest.mark.parametrize("lam", [0.2, 0.5, 0.9])
@pytest.mark.parametrize(("bidirectional", "stop_grad"), FLAGS, ids=FLAG_IDS)
def test_gram_equals_reference_in_float64(bidirectional, stop_grad, lam):
    h1, h2 = _views(13, 24, _seed(13, 24, bidirectional, stop_grad), dtype=torch.float64)
    kwargs = dict(lam=lam, bidirectional=bidirectional, stop_grad=stop_grad)
    gram = _loss_and_grads(h1, h2, impl="gram", **kwargs)
    reference = _loss_and_grads(h1, h2, impl="reference", **kwargs)
    for got, want in zip(gram, reference):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-13)


def _infonce(h1: torch.Tensor, h2: torch.Tensor, tau: float, bidirectional: bool) -> torch.Tensor:
    """SimCSE written out independently: cross-entropy over the cosine-similarity matrix."""
    sim = (h1 / h1.norm(dim=1, keepdim=True)) @ (h2 / h2.norm(dim=1, keepdim=True)).T / tau  # [N, N]
    labels = torch.arange(h1.shape[0])
    if not bidirectional:
        return F.cross_entropy(sim, labels)
    return (F.cross_entropy(sim, labels) + F.cross_entropy(sim.T, labels)) / 2


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bi", "single"])
@pytest.mark.parametrize("n", SIZES_N)
@pytest.mark.parametrize("impl", ["reference", "gram", "fused"])
def test_lam_none_is_simcse_infonce(impl, n, bidirectional):
    h1, h2 = _views(n, 384, _seed(n, bidirectional, 5))
    x1, x2 = h1.clone().requires_grad_(), h2.clone().requires_grad_()
    want = _infonce(x1, x2, 0.05, bidirectional)
    want_grads = torch.autograd.grad(want, (x1, x2))
    device = DEVICE if impl == "fused" else "cpu"
    for stop_grad in (True, False):  # no mixed negatives: stop_grad must not matter
        got = _loss_and_grads(h1, h2, device=device, lam=None, bidirectional=bidirectional,
                              stop_grad=stop_grad, impl=impl)
        for g, w in zip(got, (want.detach(), *want_grads)):
            _assert_close(g, w)


@pytest.mark.parametrize("bidirectional", [True, False], ids=["bi", "single"])
def test_simcse_loss_is_infonce(bidirectional):
    h1, h2 = _views(33, 16, 4)
    torch.testing.assert_close(simcse_loss(h1, h2, tau=0.1, bidirectional=bidirectional),
                               _infonce(h1, h2, 0.1, bidirectional))


@pytest.mark.parametrize("lam", [0.2, None])
@pytest.mark.parametrize(("bidirectional", "stop_grad"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("impl", ["reference", "gram", "fused", "auto"])
def test_batch_of_one_gives_zero(impl, bidirectional, stop_grad, lam):
    h1, h2 = _views(1, 32, 9)
    loss, g1, g2 = _loss_and_grads(h1, h2, device=DEVICE if impl in ("fused", "auto") else "cpu",
                                   lam=lam, bidirectional=bidirectional, stop_grad=stop_grad, impl=impl)
    assert loss.item() == 0.0
    assert torch.count_nonzero(g1) == 0 and torch.count_nonzero(g2) == 0


def test_mixed_negatives_raise_the_loss():
    """The mixed negatives are extra, hard terms in the denominator: MixCSE > SimCSE."""
    h1, h2 = _views(16, 64, 2)
    assert mixcse_loss(h1, h2, impl="gram") > mixcse_loss(h1, h2, lam=None, impl="gram")


@pytest.mark.parametrize("variant", ["paper", "official"])
@pytest.mark.parametrize("impl", ["gram", "fused"])
def test_loss_decreases_on_free_embeddings(impl, variant):
    h1, h2 = _views(16, 32, 11)
    params = [h1.to(DEVICE).requires_grad_(), h2.to(DEVICE).requires_grad_()]
    optimiser = torch.optim.SGD(params, lr=1.0)
    losses = []
    for _ in range(8):
        optimiser.zero_grad()
        loss = mixcse_loss(*params, impl=impl, variant=variant)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0], losses


def test_fused_keeps_the_digits_of_a_small_loss():
    """Views nearly equal: loss ~1e-4, far below the logits (~20); fp32 must not cancel it away."""
    h1, h2 = _views(5, 384, 21)
    h2 = h1 + 0.05 * (h2 - h1) / 3.0
    want = _loss_and_grads(h1.double(), h2.double(), impl="reference")
    got = _loss_and_grads(h1, h2, device=DEVICE, impl="fused")
    assert 0 < want[0].item() < 1e-3
    for g, w in zip(got, want):
        _assert_close(g, w, rtol=1e-3)


def test_fused_takes_bfloat16():
    h1, h2 = _views(40, 64, 8)
    want = _loss_and_grads(h1, h2, impl="reference")
    got = _loss_and_grads(h1.bfloat16(), h2.bfloat16(), device=DEVICE, impl="fused")
    assert got[1].dtype == torch.bfloat16
    for g, w in zip(got, want):
        _assert_close(g.float(), w, rtol=3e-2)


@pytest.mark.skipif(DEVICE == "cuda", reason="auto picks the fused kernel on CUDA")
def test_auto_is_gram_on_cpu():
    h1, h2 = _views(9, 16, 3)
    assert torch.equal(mixcse_loss(h1, h2), mixcse_loss(h1, h2, impl="gram"))


@pytest.mark.parametrize(("is_cuda", "dtype", "rows", "triton", "expected"), [
    (False, torch.float32, 64, True, "gram"),        # a CPU: no kernel without the interpreter
    (True, torch.float64, 64, True, "gram"),         # the kernel takes no float64
    (True, torch.bfloat16, 64, False, "gram"),       # no Triton installed
    (True, torch.bfloat16, 16384, True, "fused"),    # half precision: fused at every size
    (True, torch.float16, 64, True, "fused"),
    (True, torch.float32, 256, True, "fused"),       # float32: fused while it is the faster
    (True, torch.float32, 1024, True, "gram"),       # ... and cuBLAS's Gram products beyond
])
def test_auto_picks_the_faster_implementation(is_cuda, dtype, rows, triton, expected):
    assert auto_impl(is_cuda, dtype, rows, triton) == expected


def _official_by_loops(h1, h2, lam, tau, bidirectional, stop_grad):
    """The authors' loss spelled out anchor by anchor (see mixcse_loss_official's docstring)."""
    n = h1.shape[0]
    cos = lambda x, y: F.cosine_similarity(x, y, dim=0)  # noqa: E731
    keep = (lambda v: v.detach()) if stop_grad else (lambda v: v)
    u = [keep(lam * h2[k] + (1 - lam) * h2[(k + 1) % n]) for k in range(n)]
    w = [keep(lam * h1[i] + (1 - lam) * h1[(i + 1) % n]) for i in range(n)]
    total = 0.0
    for i in range(n):
        row = [cos(h1[i], h2[j]) for j in range(n)]
        row += [cos(h1[i], u[k]) * (k != (i - 1) % n) for k in range(n)]
        if bidirectional:
            row += [cos(w[i], h2[b]) * (b != (i + 1) % n) for b in range(n)]
        logits = torch.stack(row) / tau
        total = total - torch.log_softmax(logits, dim=0)[i]
    return total / n


@pytest.mark.parametrize(("bidirectional", "stop_grad"), FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("n", [1, 2, 6])
def test_official_variant_matches_loops(n, bidirectional, stop_grad):
    h1, h2 = _views(n, 12, _seed(n, bidirectional, stop_grad, 3), dtype=torch.float64)
    x1, x2 = h1.clone().requires_grad_(), h2.clone().requires_grad_()
    want = _official_by_loops(x1, x2, 0.2, 0.05, bidirectional, stop_grad)
    want_grads = torch.autograd.grad(want, (x1, x2))
    got = _loss_and_grads(h1, h2, variant="official", bidirectional=bidirectional, stop_grad=stop_grad)
    for g, w in zip(got, (want.detach(), *want_grads)):
        torch.testing.assert_close(g, w, rtol=1e-9, atol=1e-12)


def test_official_variant_without_lam_is_simcse():
    h1, h2 = _views(10, 16, 6)
    torch.testing.assert_close(mixcse_loss_official(h1, h2, lam=None), _infonce(h1, h2, 0.05, False))


def test_official_variant_differs_from_paper():
    h1, h2 = _views(16, 32, 12)
    paper = mixcse_loss(h1, h2, impl="gram")
    official = mixcse_loss(h1, h2, variant="official")
    assert abs(paper.item() - official.item()) > 1e-3


def test_module_uses_its_config():
    config = MixCSELossConfig(lam=0.3, tau=0.1, bidirectional=False, stop_grad=False, impl="gram")
    h1, h2 = _views(8, 16, 13)
    want = mixcse_loss(h1, h2, lam=0.3, tau=0.1, bidirectional=False, stop_grad=False, impl="gram")
    assert torch.equal(MixCSELoss(config)(h1, h2), want)
    assert torch.equal(MixCSELoss()(h1, h2), mixcse_loss(h1, h2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.tau = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("settings", [
    dict(lam=0.0), dict(lam=1.0), dict(lam=-0.1), dict(tau=0.0), dict(tau=-1.0),
    dict(impl="cuda"), dict(variant="simcse"),
])
def test_bad_settings_raise(settings):
    h1, h2 = _views(4, 8, 1)
    with pytest.raises(InputError):
        mixcse_loss(h1, h2, **settings)
    with pytest.raises(InputError):
        MixCSELossConfig(**settings)


@pytest.mark.parametrize(("h1", "h2"), [
    (torch.zeros(4, 8), torch.zeros(4, 9)),
    (torch.zeros(4, 8), torch.zeros(5, 8)),
    (torch.zeros(8), torch.zeros(8)),
    (torch.zeros(0, 8), torch.zeros(0, 8)),
    (torch.zeros(4, 8, dtype=torch.long), torch.zeros(4, 8, dtype=torch.long)),
    (torch.zeros(4, 8), torch.zeros(4, 8, dtype=torch.float64)),
    ([[1.0]], [[1.0]]),
], ids=["dims", "rows", "1d", "empty", "integer", "dtypes", "list"])
def test_bad_inputs_raise(h1, h2):
    for variant in ("paper", "official"):
        with pytest.raises(InputError):
            mixcse_loss(h1, h2, variant=variant)


def test_fused_rejects_float64():
    h1, h2 = _views(4, 8, 1, dtype=torch.float64)
    with pytest.raises(InputError, match="float64"):
        mixcse_loss(h1.to(DEVICE), h2.to(DEVICE), impl="fused")


@pytest.mark.skipif(DEVICE == "cuda", reason="CUDA tensors need no interpreter")
def test_fused_on_cpu_without_interpreter_raises(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    h1, h2 = _views(4, 8, 1)
    with pytest.raises(InputError, match="TRITON_INTERPRET"):
        mixcse_loss(h1, h2, impl="fused")
