"""Fused MixCSE loss in Triton: Gram tiles + online log-sum-exp, no N x N x d, no N x N.

Example: ``fused_mixcse_loss(F.normalize(h1, dim=-1), F.normalize(h2, dim=-1), 0.2, 0.05, True, True)``

One direction has anchors ``a`` and the other view ``b`` (unit rows, ``[N, d]``). For a tile
of anchors i and columns j the kernels compute ``S = a_i . b_j`` and (for the mixed logits)
``G = b_i . b_j`` with fp32 accumulation, then

    pos_i  = S_ii / tau,  neg_ij = S_ij / tau,
    mix_ij = (lam S_ii + (1 - lam) S_ij) / (r_ij tau),  r_ij = sqrt(lam^2 + (1-lam)^2 + 2 lam (1-lam) G_ij)

for ``j != i``; a running max and sum (as in flash attention) give the row's logsumexp. The
forward stores only ``lse`` and ``S_ii`` (``[N]`` each). The positive's exp-sum is kept
apart from the others' so the loss comes out as ``log1p(...)``, not as ``lse - pos``, which
would lose all digits of a small loss in fp32 (pos is up to 1/tau = 20). The backward
recomputes the tiles: with ``p = exp(logit - lse)`` and the row's upstream gradient ``g_i``,

    dS_ij = g_i (p_neg_ij + (1-lam) p_mix_ij / r_ij) / tau            (j != i)
    dS_ii = g_i (p_pos_i - 1 + lam sum_j p_mix_ij / r_ij) / tau,  p_pos_i - 1 = -sum_j (p_neg_ij + p_mix_ij)
    dG_ij = -g_i p_mix_ij mix_ij lam (1-lam) / r_ij^2                  (no stop-gradient only)

and ``da = dS b``, ``db = dS^T a + (dG + dG^T) b``. Under stop-gradient the mixed terms feed
only ``da`` (the mixed negative is a constant, the anchor gets ``m_ij / tau``). A row kernel
writes ``da`` and the ``dG b`` part of ``db``; a column kernel writes ``dS^T a + dG^T b``.

The kernels assume unit rows (``G_ii = 1``): the gradient they return for ``a, b`` then differs
from the exact one only along the rows themselves, which ``F.normalize``'s backward removes,
so gradients with respect to the un-normalised embeddings are exact.

On a CPU the kernels run under the Triton interpreter (``TRITON_INTERPRET=1`` set before
Triton is imported), which the tests use.
"""

from __future__ import annotations

import contextlib
import os

import torch
import triton
import triton.language as tl

from engine.errors import InputError

# Same clamp as F.normalize; a constexpr so the kernels may read it.
NORM_EPS = tl.constexpr(1e-12)


@triton.jit
def _dot(x, y, acc, PRECISION: tl.constexpr):
    """``acc + x @ y`` in fp32. "upcast": the interpreter's bf16 dot reads raw bits, so convert
    first; a bf16 x bf16 product is exact in fp32, so this matches a tensor-core dot."""
    if PRECISION == "upcast":
        return tl.dot(x.to(tl.float32), y.to(tl.float32), acc, input_precision="ieee")
    return tl.dot(x, y, acc, input_precision=PRECISION)


@triton.jit
def _gram_tiles(a_ptr, b_ptr, rows, cols, N, D, stride_a, stride_b,
                HAS_MIX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    """``S = a[rows] b[cols]^T`` and ``G = b[rows] b[cols]^T``: fp32 ``[BLOCK_M, BLOCK_N]``."""
    s = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    row_ok = rows < N
    col_ok = cols < N
    for k0 in range(0, D, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < D
        b_cols = tl.load(b_ptr + cols[:, None] * stride_b + ks[None, :],
                         mask=col_ok[:, None] & k_ok[None, :], other=0.0)
        a_rows = tl.load(a_ptr + rows[:, None] * stride_a + ks[None, :],
                         mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        s = _dot(a_rows, tl.trans(b_cols), s, PRECISION)
        if HAS_MIX:
            b_rows = tl.load(b_ptr + rows[:, None] * stride_b + ks[None, :],
                             mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            g = _dot(b_rows, tl.trans(b_cols), g, PRECISION)
    return s, g


@triton.jit
def _mixed_cosines(s, g, s_ii, lam):
    """Cosines of anchor i with ``normalize(lam b_i + (1-lam) b_j)``, and the norms ``r_ij``."""
    mlam = 1.0 - lam
    sq_norm = lam * lam + mlam * mlam + 2.0 * lam * mlam * g
    r = tl.maximum(tl.sqrt(tl.maximum(sq_norm, 0.0)), NORM_EPS)
    return (lam * s_ii[:, None] + mlam * s) / r, r


@triton.jit
def _row_dots(a_ptr, b_ptr, rows, N, D, stride_a, stride_b, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """``S_ii = a_i . b_i`` for the rows: fp32 ``[BLOCK_M]``."""
    acc = tl.zeros((BLOCK_M,), dtype=tl.float32)
    row_ok = rows < N
    for k0 in range(0, D, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        mask = row_ok[:, None] & (ks < D)[None, :]
        a = tl.load(a_ptr + rows[:, None] * stride_a + ks[None, :], mask=mask, other=0.0)
        b = tl.load(b_ptr + rows[:, None] * stride_b + ks[None, :], mask=mask, other=0.0)
        acc += tl.sum(a.to(tl.float32) * b.to(tl.float32), axis=1)
    return acc


@triton.jit
def _fwd_kernel(a_ptr, b_ptr, loss_ptr, lse_ptr, sii_ptr, N, D, stride_a, stride_b, lam, inv_tau,
                HAS_MIX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < N
    s_ii = _row_dots(a_ptr, b_ptr, rows, N, D, stride_a, stride_b, BLOCK_M, BLOCK_K)
    pos = s_ii * inv_tau
    # Running max m (seeded with the positive, so always finite) and the sums of exp(logit - m)
    # of the positive and of all other logits, kept apart so the loss needs no lse - pos.
    m = pos
    l_pos = tl.full((BLOCK_M,), 1.0, dtype=tl.float32)
    l_oth = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        s, g = _gram_tiles(a_ptr, b_ptr, rows, cols, N, D, stride_a, stride_b,
                           HAS_MIX, BLOCK_M, BLOCK_N, BLOCK_K, PRECISION)
        valid = row_ok[:, None] & (cols < N)[None, :] & (rows[:, None] != cols[None, :])
        neg = tl.where(valid, s * inv_tau, float("-inf"))
        m_new = tl.maximum(m, tl.max(neg, axis=1))
        if HAS_MIX:
            mix_cos, r = _mixed_cosines(s, g, s_ii, lam)
            mix = tl.where(valid, mix_cos * inv_tau, float("-inf"))
            m_new = tl.maximum(m_new, tl.max(mix, axis=1))
        scale = tl.exp(m - m_new)
        l_pos = l_pos * scale
        l_oth = l_oth * scale + tl.sum(tl.exp(neg - m_new[:, None]), axis=1)
        if HAS_MIX:
            l_oth += tl.sum(tl.exp(mix - m_new[:, None]), axis=1)
        m = m_new
    # While the positive is the largest logit l_pos is exactly 1 and the loss is log1p(l_oth),
    # accurate for tiny losses; otherwise the loss exceeds log 2 and the direct form is fine.
    loss = tl.where(m > pos, m - pos + tl.log(l_pos + l_oth), _log1p(l_oth))
    tl.store(lse_ptr + rows, pos + loss, mask=row_ok)
    tl.store(sii_ptr + rows, s_ii, mask=row_ok)
    tl.store(loss_ptr + rows, loss, mask=row_ok)


@triton.jit
def _log1p(x):
    """log(1 + x) accurate for small x (Goldberg's trick; Triton has no log1p)."""
    u = 1.0 + x
    return tl.where(u == 1.0, x, tl.log(u) * (x / tl.where(u == 1.0, 1.0, u - 1.0)))


@triton.jit
def _tile_grads(s, g, s_ii, lse, gout, valid, lam, inv_tau, HAS_MIX: tl.constexpr):
    """Per tile: anchor-side ``dS`` (negatives, mixed part), ``dG``, and per-row sums for ``dS_ii``.

    The row sums are those of the probabilities of all non-positive logits (1 - p_pos, summed
    without cancellation) and of ``lam g p_mix / (r tau)``.
    """
    p = tl.where(valid, tl.exp(s * inv_tau - lse[:, None]), 0.0)
    ds_neg = p * (gout * inv_tau)[:, None]
    ds_mix = tl.zeros_like(ds_neg)
    dg = tl.zeros_like(ds_neg)
    prob_rowsum = tl.sum(p, axis=1)
    mix_rowsum = tl.zeros_like(prob_rowsum)
    if HAS_MIX:
        mix_cos, r = _mixed_cosines(s, g, s_ii, lam)
        p_mix = tl.where(valid, tl.exp(mix_cos * inv_tau - lse[:, None]), 0.0)
        prob_rowsum += tl.sum(p_mix, axis=1)
        q = p_mix * gout[:, None]
        ds_mix = q * ((1.0 - lam) * inv_tau) / r
        mix_rowsum = tl.sum(q * (lam * inv_tau) / r, axis=1)
        dg = -q * mix_cos * (inv_tau * lam * (1.0 - lam)) / (r * r)
    return ds_neg, ds_mix, dg, prob_rowsum, mix_rowsum


@triton.jit
def _bwd_rows_kernel(a_ptr, b_ptr, lse_ptr, sii_ptr, gout_ptr, da_ptr, db_ptr, N, D, stride_a, stride_b,
                     lam, inv_tau, HAS_MIX: tl.constexpr, STOP_GRAD: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     BLOCK_D: tl.constexpr, PRECISION: tl.constexpr):
    """``da[rows, dblock]`` and the row part of ``db``: dS_ii a_i + (dG b)_i."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    dims = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_ok = rows < N
    dim_ok = dims < D
    lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
    s_ii = tl.load(sii_ptr + rows, mask=row_ok, other=0.0)
    gout = tl.load(gout_ptr + rows, mask=row_ok, other=0.0)
    acc_a = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    mix_rowsum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    prob_rowsum = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        s, g = _gram_tiles(a_ptr, b_ptr, rows, cols, N, D, stride_a, stride_b,
                           HAS_MIX, BLOCK_M, BLOCK_N, BLOCK_K, PRECISION)
        valid = row_ok[:, None] & (cols < N)[None, :] & (rows[:, None] != cols[None, :])
        ds_neg, ds_mix, dg, probs, mixes = _tile_grads(s, g, s_ii, lse, gout, valid, lam, inv_tau, HAS_MIX)
        prob_rowsum += probs
        mix_rowsum += mixes
        b_cols = tl.load(b_ptr + cols[:, None] * stride_b + dims[None, :],
                         mask=(cols < N)[:, None] & dim_ok[None, :], other=0.0)
        acc_a = _dot((ds_neg + ds_mix).to(b_cols.dtype), b_cols, acc_a, PRECISION)
        if HAS_MIX and not STOP_GRAD:
            acc_b = _dot(dg.to(b_cols.dtype), b_cols, acc_b, PRECISION)
    mask = row_ok[:, None] & dim_ok[None, :]
    a_rows = tl.load(a_ptr + rows[:, None] * stride_a + dims[None, :], mask=mask, other=0.0).to(tl.float32)
    b_rows = tl.load(b_ptr + rows[:, None] * stride_b + dims[None, :], mask=mask, other=0.0).to(tl.float32)
    ds_ii = -gout * prob_rowsum * inv_tau  # g (p_pos - 1) / tau
    acc_a += (ds_ii + mix_rowsum)[:, None] * b_rows
    if HAS_MIX and not STOP_GRAD:
        ds_ii += mix_rowsum
    acc_b += ds_ii[:, None] * a_rows
    out = rows[:, None] * D + dims[None, :]
    tl.store(da_ptr + out, acc_a, mask=mask)
    tl.store(db_ptr + out, acc_b, mask=mask)


@triton.jit
def _bwd_cols_kernel(a_ptr, b_ptr, lse_ptr, sii_ptr, gout_ptr, db_ptr, N, D, stride_a, stride_b,
                     lam, inv_tau, HAS_MIX: tl.constexpr, STOP_GRAD: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     BLOCK_D: tl.constexpr, PRECISION: tl.constexpr):
    """Column part of ``db[cols, dblock]``: (dS^T a)_j + (dG^T b)_j over all anchor rows."""
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dims = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_ok = cols < N
    dim_ok = dims < D
    acc = tl.zeros((BLOCK_N, BLOCK_D), dtype=tl.float32)
    for start in range(0, N, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        row_ok = rows < N
        lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
        s_ii = tl.load(sii_ptr + rows, mask=row_ok, other=0.0)
        gout = tl.load(gout_ptr + rows, mask=row_ok, other=0.0)
        s, g = _gram_tiles(a_ptr, b_ptr, rows, cols, N, D, stride_a, stride_b,
                           HAS_MIX, BLOCK_M, BLOCK_N, BLOCK_K, PRECISION)
        valid = row_ok[:, None] & col_ok[None, :] & (rows[:, None] != cols[None, :])
        ds_neg, ds_mix, dg, _, _ = _tile_grads(s, g, s_ii, lse, gout, valid, lam, inv_tau, HAS_MIX)
        mask = row_ok[:, None] & dim_ok[None, :]
        a_rows = tl.load(a_ptr + rows[:, None] * stride_a + dims[None, :], mask=mask, other=0.0)
        if HAS_MIX and not STOP_GRAD:
            b_rows = tl.load(b_ptr + rows[:, None] * stride_b + dims[None, :], mask=mask, other=0.0)
            acc = _dot(tl.trans(dg).to(b_rows.dtype), b_rows, acc, PRECISION)
            ds_neg += ds_mix
        acc = _dot(tl.trans(ds_neg).to(a_rows.dtype), a_rows, acc, PRECISION)
    out = cols[:, None] * D + dims[None, :]
    tl.store(db_ptr + out, acc, mask=col_ok[:, None] & dim_ok[None, :])


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _next_pow2(x: int) -> int:
    return 1 << max(x - 1, 0).bit_length()


def _blocks(n: int, d: int) -> dict[str, int]:
    """Tile sizes. The interpreter pays per op, so it gets whole rows; a GPU gets register-sized tiles."""
    if _interpreting():
        full_d = max(16, _next_pow2(d))
        side = min(128, max(16, _next_pow2(n)))
        return {"BLOCK_M": side, "BLOCK_N": side, "BLOCK_K": full_d, "BLOCK_D": full_d}
    side = min(64, max(16, _next_pow2(n)))
    return {"BLOCK_M": side, "BLOCK_N": side, "BLOCK_K": 64, "BLOCK_D": min(128, max(16, _next_pow2(d)))}


def _precision(dtype: torch.dtype) -> str:
    """fp32: exact products (no TF32), as the 1e-4 tests need; bf16/fp16 use tensor cores anyway."""
    if dtype == torch.float32:
        return "ieee"
    return "upcast" if _interpreting() else "tf32"


class _FusedDirection(torch.autograd.Function):
    """Per-anchor losses ``[N]`` (fp32) for anchors ``a`` and other view ``b``, unit rows ``[N, d]``."""

    @staticmethod
    def forward(ctx, a, b, lam, tau, stop_grad):
        a, b = a.contiguous(), b.contiguous()
        n, d = a.shape
        loss, lse, s_ii = (torch.empty(n, device=a.device, dtype=torch.float32) for _ in range(3))
        blocks = _blocks(n, d)
        grid = (triton.cdiv(n, blocks["BLOCK_M"]),)
        _fwd_kernel[grid](a, b, loss, lse, s_ii, n, d, a.stride(0), b.stride(0),
                          lam if lam is not None else 0.0, 1.0 / tau, HAS_MIX=lam is not None,
                          BLOCK_M=blocks["BLOCK_M"], BLOCK_N=blocks["BLOCK_N"],
                          BLOCK_K=blocks["BLOCK_K"], PRECISION=_precision(a.dtype))
        ctx.save_for_backward(a, b, lse, s_ii)
        ctx.settings = (lam, tau, stop_grad)
        return loss

    @staticmethod
    def backward(ctx, gout):
        a, b, lse, s_ii = ctx.saved_tensors
        lam, tau, stop_grad = ctx.settings
        n, d = a.shape
        gout = gout.float().contiguous()
        da, db_rows, db_cols = (torch.empty(n, d, device=a.device, dtype=torch.float32) for _ in range(3))
        blocks = _blocks(n, d)
        # Two [BLOCK_M, BLOCK_D] fp32 accumulators per program: give them 8 warps' registers.
        common = dict(HAS_MIX=lam is not None, STOP_GRAD=stop_grad, PRECISION=_precision(a.dtype),
                      num_warps=8, **blocks)
        args = (n, d, a.stride(0), b.stride(0), lam if lam is not None else 0.0, 1.0 / tau)
        d_blocks = triton.cdiv(d, blocks["BLOCK_D"])
        _bwd_rows_kernel[(triton.cdiv(n, blocks["BLOCK_M"]), d_blocks)](
            a, b, lse, s_ii, gout, da, db_rows, *args, **common)
        _bwd_cols_kernel[(triton.cdiv(n, blocks["BLOCK_N"]), d_blocks)](
            a, b, lse, s_ii, gout, db_cols, *args, **common)
        return da.to(a.dtype), (db_rows + db_cols).to(b.dtype), None, None, None


def fused_mixcse_loss(z1: torch.Tensor, z2: torch.Tensor, lam: float | None, tau: float,
                      bidirectional: bool, stop_grad: bool) -> torch.Tensor:
    """MixCSE loss of unit-row views ``z1, z2`` (``[N, d]``, fp32/bf16/fp16) via the Triton kernels.

    Example: ``fused_mixcse_loss(z1, z2, 0.2, 0.05, bidirectional=True, stop_grad=True)``

    Same contract as ``trainer.mixcse.losses.mixcse_loss(impl="fused")`` after normalisation; returns
    a 0-d float32 tensor.

    Raises:
        InputError: the tensors are on a CPU and the Triton interpreter is off.
    """
    if not z1.is_cuda and not _interpreting():
        raise InputError("the fused MixCSE kernel needs CUDA tensors, or TRITON_INTERPRET=1 set "
                         "before Triton is imported; use impl='gram' on a CPU")
    # Triton launches on the current CUDA device; make it the tensors' one.
    with torch.cuda.device(z1.device) if z1.is_cuda else contextlib.nullcontext():
        loss = _FusedDirection.apply(z1, z2, lam, tau, stop_grad).mean()
        if bidirectional:
            loss = (loss + _FusedDirection.apply(z2, z1, lam, tau, stop_grad).mean()) / 2
    return loss
