"""MixCSE contrastive loss (Zhang et al., AAAI 2022) and its SimCSE special case.

Example: ``loss = mixcse_loss(h1, h2)`` with ``h1, h2`` the ``[N, d]`` embeddings of the
same N sentences under two dropout masks.

For anchor ``z_i`` (direction 1) the logits are the positive ``z_i.z'_i / tau``, every
negative ``z_i.z'_j / tau`` and every mixed negative ``z_i.SG(m_ij) / tau`` with
``m_ij = normalize(lam * z'_i + (1 - lam) * z'_j)``, for ``j != i``; the row loss is
``logsumexp(logits) - positive``. Direction 2 swaps the roles of ``z`` and ``z'``.

Three implementations give the same numbers (tested against each other):

* ``"reference"`` materialises the mixed negatives ``[N, N, d]``: obvious, memory-hungry.
* ``"gram"`` uses ``z_i.m_ij = (lam z_i.z'_i + (1-lam) z_i.z'_j) / ||lam z'_i + (1-lam) z'_j||``
  where the norm only needs ``z'_i.z'_j``, so two ``[N, N]`` Gram matrices suffice.
* ``"fused"`` (``trainer.mixcse.fused_loss``) computes the Gram tiles in a Triton kernel with an
  online log-sum-exp; extra memory is O(N) besides the O(N d) gradients.

``impl="auto"`` picks ``"fused"`` for bfloat16/float16 CUDA tensors (and float32 ones of at
most 512 rows, where its exact products are still the faster) when Triton is installed, and
``"gram"`` otherwise (:func:`auto_impl`). The issue suggested ``"reference"`` off-GPU; ``"gram"`` is the same function
(values and gradients agree to 1e-5 in the tests) and needs O(N^2) instead of O(N^2 d)
memory (a batch of 1024 x 768 needs 3 GiB per direction in the reference), so it is the
better default on a CPU. The reference stays available for tests by name.

``variant="official"`` reproduces the loss of the authors' code instead; see
:func:`mixcse_loss_official` for how it differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from engine.errors import InputError

IMPLS = ("auto", "reference", "gram", "fused")
FUSED_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
# In float32 the kernel keeps exact products (no TF32), so it runs on CUDA cores while the
# Gram form's cuBLAS products do not: measured on an H200 (docs/benchmarks.md), fused wins
# up to N = 256 and Gram is 2.6x faster at N = 1024, 10x at 4096. In bf16/fp16 fused wins at
# every N (2x at 4096 and 16384, with 10-40x less memory).
FUSED_FLOAT32_MAX_ROWS = 512
VARIANTS = ("paper", "official")
# F.normalize clamps the norm at this value; the Gram form clamps the same way.
NORM_EPS = 1e-12


@dataclass(frozen=True)
class MixCSELossConfig:
    """Settings of :class:`MixCSELoss`; the defaults are the paper's (lambda 0.2, tau 0.05).

    Attributes:
        lam: weight of the positive in each mixed negative; ``None`` gives plain SimCSE.
        tau: softmax temperature.
        bidirectional: also use ``z'`` as anchor and average both directions.
        stop_grad: detach the mixed negatives (the paper's SG); False is its ablation.
        impl: "auto", "reference", "gram" or "fused" (ignored by the official variant).
        variant: "paper" (all N-1 mixed negatives per anchor) or "official" (the authors' code).
    """

    lam: float | None = 0.2
    tau: float = 0.05
    bidirectional: bool = True
    stop_grad: bool = True
    impl: str = "auto"
    variant: str = "paper"

    def __post_init__(self) -> None:
        _check_settings(self.lam, self.tau, self.impl, self.variant)


class MixCSELoss(nn.Module):
    """``MixCSELoss(MixCSELossConfig())(h1, h2)`` -> scalar loss; see :func:`mixcse_loss`."""

    def __init__(self, config: MixCSELossConfig | None = None):
        super().__init__()
        self.config = config or MixCSELossConfig()

    def forward(self, h1: torch.Tensor, h2: torch.Tensor) -> torch.Tensor:
        c = self.config
        return mixcse_loss(h1, h2, lam=c.lam, tau=c.tau, bidirectional=c.bidirectional,
                           stop_grad=c.stop_grad, impl=c.impl, variant=c.variant)

    def extra_repr(self) -> str:
        return repr(self.config)


def mixcse_loss(h1: torch.Tensor, h2: torch.Tensor, lam: float | None = 0.2, tau: float = 0.05,
                bidirectional: bool = True, stop_grad: bool = True, impl: str = "auto",
                variant: str = "paper") -> torch.Tensor:
    """MixCSE loss of two views of a batch.

    Example: ``mixcse_loss(h1, h2, lam=0.2, tau=0.05).backward()``

    Args:
        h1: ``[N, d]`` un-normalised embeddings, first dropout mask.
        h2: ``[N, d]`` embeddings of the same sentences, second mask.
        lam: weight of the positive in a mixed negative, in (0, 1); None gives SimCSE.
        tau: temperature, > 0.
        bidirectional: average the loss with ``z`` anchors and with ``z'`` anchors.
        stop_grad: the mixed negatives pass no gradient (only the anchor receives it).
        impl: "auto", "reference", "gram" or "fused" (see the module docstring).
        variant: "paper" or "official" (:func:`mixcse_loss_official`; ``impl`` ignored).

    Returns:
        A 0-d tensor, float32 (float64 for float64 inputs) (0 for a batch of one sentence in the paper variant).

    Raises:
        InputError: bad shapes or settings; "fused" without CUDA or the Triton interpreter,
            or with float64 inputs.
    """
    _check_settings(lam, tau, impl, variant)
    _check_inputs(h1, h2)
    if variant == "official":
        return mixcse_loss_official(h1, h2, lam=lam, tau=tau, bidirectional=bidirectional,
                                    stop_grad=stop_grad)
    impl = _resolve_impl(impl, h1)
    if impl == "fused":
        from trainer.mixcse.fused_loss import fused_mixcse_loss

        if h1.dtype not in FUSED_DTYPES:
            raise InputError(f"impl='fused' takes float32, bfloat16 or float16, got {h1.dtype}; "
                             "use impl='gram'")
        z1, z2 = F.normalize(h1, dim=-1), F.normalize(h2, dim=-1)
        return fused_mixcse_loss(z1, z2, lam, tau, bidirectional, stop_grad)
    direction = _reference_direction if impl == "reference" else _gram_direction
    # The PyTorch paths compute in float32 or better (bf16 logits / 0.05 are too coarse).
    z1 = F.normalize(_at_least_fp32(h1), dim=-1)
    z2 = F.normalize(_at_least_fp32(h2), dim=-1)
    loss = direction(z1, z2, lam, tau, stop_grad).mean()
    if bidirectional:
        loss = (loss + direction(z2, z1, lam, tau, stop_grad).mean()) / 2
    return loss


def _reference_direction(a: torch.Tensor, b: torch.Tensor, lam: float | None, tau: float,
                         stop_grad: bool) -> torch.Tensor:
    """Per-anchor losses ``[N]`` with anchors ``a`` and other view ``b`` (unit rows), N x N x d."""
    n = a.shape[0]
    sim = a @ b.T / tau  # [N, N]; sim[i, j] = a_i . b_j / tau
    pos = sim.diagonal()  # [N]
    off = ~torch.eye(n, dtype=torch.bool, device=a.device)  # [N, N], j != i
    logits = [pos[:, None], sim[off].view(n, n - 1)]
    if lam is not None:
        # mixed[i, j] = normalize(lam * b_i + (1 - lam) * b_j): [N, N, d]
        mixed = F.normalize(lam * b[:, None, :] + (1 - lam) * b[None, :, :], dim=-1, eps=NORM_EPS)
        if stop_grad:
            mixed = mixed.detach()
        mix = torch.einsum("id,ijd->ij", a, mixed) / tau  # [N, N]
        logits.append(mix[off].view(n, n - 1))
    return torch.logsumexp(torch.cat(logits, dim=1), dim=1) - pos


def _gram_direction(a: torch.Tensor, b: torch.Tensor, lam: float | None, tau: float,
                    stop_grad: bool) -> torch.Tensor:
    """Same as :func:`_reference_direction` from two ``[N, N]`` Gram matrices (no N x N x d).

    Written as ``softplus(logsumexp(others) - pos)`` rather than ``logsumexp(all) - pos`` so a
    small loss keeps its digits in float32 (both terms are up to 1/tau).
    """
    n = a.shape[0]
    if n == 1:  # no negatives: the loss is 0, and logsumexp of nothing has no gradient
        return (a * b).sum(dim=1) * 0
    sim = a @ b.T  # [N, N] cosines a_i . b_j
    pos = sim.diagonal() / tau  # [N]
    diag = torch.eye(n, dtype=torch.bool, device=a.device)
    others = [(sim / tau).masked_fill(diag, -math.inf)]
    if lam is not None:
        others.append(gram_mixed_cosines(a, b, lam, stop_grad).div(tau).masked_fill(diag, -math.inf))
    return F.softplus(torch.logsumexp(torch.cat(others, dim=1), dim=1) - pos)


def gram_mixed_cosines(a: torch.Tensor, b: torch.Tensor, lam: float, stop_grad: bool) -> torch.Tensor:
    """``[N, N]`` cosines ``a_i . normalize(lam b_i + (1-lam) b_j)`` for unit rows, via Gram matrices.

    Example: ``gram_mixed_cosines(z, z2, 0.2, True)[i, j]`` is anchor i against mix (i, j).

    ``||lam b_i + (1-lam) b_j||^2 = lam^2 + (1-lam)^2 + 2 lam (1-lam) b_i.b_j`` for unit rows;
    under stop-gradient the gradient reaches only the anchor ``a_i``.
    """
    b_mix = b.detach() if stop_grad else b
    s = a @ b_mix.T  # [N, N] a_i . b_j
    g = b_mix @ b_mix.T  # [N, N] b_i . b_j
    sq_norm = lam * lam + (1 - lam) ** 2 + 2 * lam * (1 - lam) * g
    norm = sq_norm.clamp_min(0).sqrt().clamp_min(NORM_EPS)
    return (lam * s.diagonal()[:, None] + (1 - lam) * s) / norm


def simcse_loss(h1: torch.Tensor, h2: torch.Tensor, tau: float = 0.05,
                bidirectional: bool = False) -> torch.Tensor:
    """Unsupervised SimCSE InfoNCE: ``cross_entropy(cos(h1_i, h2_j) / tau, i)``.

    Example: ``simcse_loss(h1, h2)``; with ``bidirectional`` the mean of both directions.
    """
    _check_settings(None, tau, "auto", "paper")
    _check_inputs(h1, h2)
    sim = F.normalize(_at_least_fp32(h1), dim=-1) @ F.normalize(_at_least_fp32(h2), dim=-1).T / tau
    labels = torch.arange(sim.shape[0], device=sim.device)
    loss = F.cross_entropy(sim, labels)
    if bidirectional:
        loss = (loss + F.cross_entropy(sim.T, labels)) / 2
    return loss


def mixcse_loss_official(h1: torch.Tensor, h2: torch.Tensor, lam: float | None = 0.2,
                         tau: float = 0.05, bidirectional: bool = True,
                         stop_grad: bool = True) -> torch.Tensor:
    """The loss of the authors' code (BDBC-KG-NLP/MixCSE_AAAI2022, ``mixcse/models_mix.py``).

    Example: ``mixcse_loss(h1, h2, variant="official")`` calls this.

    Written from a reading of that file (not copied). It differs from the paper's formula,
    which :func:`mixcse_loss` implements, in these ways:

    * One mixed vector per sentence, with the *next* sentence in the batch:
      ``u_k = lam * h2_k + (1 - lam) * h2_{k+1 mod N}`` (and ``w_k`` likewise from ``h1``).
      The mix is of the raw, un-normalised embeddings; the cosine normalises afterwards.
    * All anchors see all N mixed vectors: one cross-entropy with label ``i`` over the
      ``[N, 3N]`` logits ``[S | U | W] / tau`` where ``S[i, j] = cos(h1_i, h2_j)``,
      ``U[i, k] = cos(h1_i, u_k)`` and ``W[i, b] = cos(w_i, h2_b)``. So anchor i's own hard
      negative is ``U[i, i]`` (its positive weighted by lam, plus its successor); the other
      ``U[i, k]`` mix two foreign sentences and are about as easy as plain negatives.
    * The entry of each block whose mix is mostly the anchor's positive (``U[i, i-1]`` and
      ``W[i, i+1]``, weight 1-lam = 0.8 on it) is multiplied by 0, i.e. it stays in the softmax
      as a logit of 0 instead of being removed.
    * The "second direction" is not a second loss with ``z'`` as anchor: the block ``W`` puts
      the detached mix ``w_i`` of ``h1_i, h1_{i+1}`` against every ``z'_b`` into anchor i's row,
      so gradient reaches ``z'_b`` and pushes it from ``w_i``. ``W[i, i]`` is the paper's
      direction-2 mixed logit of anchor ``z'_i``, but it shares anchor ``z_i``'s denominator.
    * With a batch of one the loss is not 0 (the masked zeros remain).

    ``bidirectional=False`` drops the ``W`` block, ``stop_grad=False`` keeps the mixes
    attached and ``lam=None`` drops both mixed blocks (plain SimCSE). The code's
    ``hard_negative_weight`` defaults to 0 there and is left out here.
    """
    _check_settings(lam, tau, "auto", "official")
    _check_inputs(h1, h2)
    h1, h2 = _at_least_fp32(h1), _at_least_fp32(h2)
    z1, z2 = F.normalize(h1, dim=-1), F.normalize(h2, dim=-1)
    n = h1.shape[0]
    blocks = [z1 @ z2.T]  # S: [N, N]
    if lam is not None:
        eye = torch.eye(n, device=h1.device)
        u = _official_mix(h2, lam, stop_grad)  # [N, d], u_k mixes h2_k and h2_{k+1}
        keep_u = 1 - eye.roll(1, dims=0)  # zero at (i, i-1): u_{i-1} is mostly h2_i
        blocks.append((z1 @ u.T) * keep_u)
        if bidirectional:
            w = _official_mix(h1, lam, stop_grad)  # [N, d], w_i mixes h1_i and h1_{i+1}
            keep_w = 1 - eye.roll(1, dims=1)  # zero at (i, i+1): w_i is mostly h1_{i+1}
            blocks.append((w @ z2.T) * keep_w)
    logits = torch.cat(blocks, dim=1) / tau  # [N, N], [N, 2N] or [N, 3N]
    return F.cross_entropy(logits, torch.arange(n, device=h1.device))


def _official_mix(h: torch.Tensor, lam: float, stop_grad: bool) -> torch.Tensor:
    """``normalize(lam * h_k + (1 - lam) * h_{k+1 mod N})``: ``[N, d]``, detached under SG."""
    mixed = F.normalize(lam * h + (1 - lam) * h.roll(-1, dims=0), dim=-1)
    return mixed.detach() if stop_grad else mixed


def _at_least_fp32(h: torch.Tensor) -> torch.Tensor:
    return h.to(torch.promote_types(h.dtype, torch.float32))


def _resolve_impl(impl: str, h: torch.Tensor) -> str:
    if impl != "auto":
        return impl
    return auto_impl(h.is_cuda, h.dtype, h.shape[0], _triton_available())


def auto_impl(is_cuda: bool, dtype: torch.dtype, rows: int, triton_available: bool) -> str:
    """What ``impl="auto"`` runs for a batch: ``"fused"`` where it is the faster one, else ``"gram"``.

    Example: ``auto_impl(True, torch.bfloat16, 4096, True) == "fused"``
    """
    if not (is_cuda and triton_available and dtype in FUSED_DTYPES):
        return "gram"
    if dtype == torch.float32 and rows > FUSED_FLOAT32_MAX_ROWS:
        return "gram"
    return "fused"


def _triton_available() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def _check_settings(lam: float | None, tau: float, impl: str, variant: str) -> None:
    if lam is not None and not 0.0 < lam < 1.0:
        raise InputError(f"lam must be in (0, 1) or None, got {lam}")
    if not tau > 0.0:
        raise InputError(f"tau must be > 0, got {tau}")
    if impl not in IMPLS:
        raise InputError(f"impl must be one of {IMPLS}, got {impl!r}")
    if variant not in VARIANTS:
        raise InputError(f"variant must be one of {VARIANTS}, got {variant!r}")


def _check_inputs(h1: torch.Tensor, h2: torch.Tensor) -> None:
    for name, h in (("h1", h1), ("h2", h2)):
        if not isinstance(h, torch.Tensor):
            raise InputError(f"{name} must be a torch.Tensor, got {type(h).__name__}")
        if h.dim() != 2 or h.shape[0] == 0 or h.shape[1] == 0:
            raise InputError(f"{name} must be a non-empty [N, d] matrix, got shape {tuple(h.shape)}")
        if not h.is_floating_point():
            raise InputError(f"{name} must be floating point, got {h.dtype}")
    if h1.shape != h2.shape:
        raise InputError(f"h1 and h2 must have the same shape, got {tuple(h1.shape)} and {tuple(h2.shape)}")
    if h1.dtype != h2.dtype:
        raise InputError(f"h1 and h2 must have the same dtype, got {h1.dtype} and {h2.dtype}")
    if h1.device != h2.device:
        raise InputError(f"h1 and h2 must be on the same device, got {h1.device} and {h2.device}")
