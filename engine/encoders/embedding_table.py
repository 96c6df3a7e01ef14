"""The token embedding table, kept out of the ONNX graph and memory-mapped.

    >>> table = EmbeddingTable.open(folder, manifest.embeddings)
    >>> table.lookup(np.array([[0, 17, 2]]))      # float32 [1, 3, dim]

A multilingual model's vocabulary is large (XLM-R: 250k rows x 384 = 384 MB in fp32)
while a query touches a few dozen rows. Inside the graph, ONNX Runtime reads the whole
table into memory at session start; as a `.npy` file mapped with `np.load(mmap_mode="r")`
only the pages of the rows a batch uses are read, and the table can be stored in fp16,
as int8 rows with one float32 scale per row (a quarter of the fp32 size), or as the
Q4_0 blocks a 4-bit source model holds (engine.encoders.q4: 18 bytes per 32 weights,
exact values, a seventh of fp32; multilingual-e5-small's table is 54 MB).

`manifest.embeddings` describes the files:
    {"file": "embeddings.npy", "dtype": "q4_0" | "int8" | "float16" | "float32",
     "scales": "embeddings.scales.npy" (int8 only), "rows": V, "dim": D,
     "input": "token_embeddings"}     # the graph input fed with the looked-up rows
A q4_0 file holds uint8 [V, D / 32 * 18], the blocks of each row as stored.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.encoders import q4
from engine.errors import ModelError

TABLE_FILE = "embeddings.npy"
SCALES_FILE = "embeddings.scales.npy"
GRAPH_INPUT = "token_embeddings"
Q4_0 = "q4_0"
DTYPES = ("float32", "float16", "int8", Q4_0)
INT8_MAX = 127
# Rows checked per step when a q4_0 table is written (bounds the float32 temporaries).
_CHECK_ROWS = 1 << 15


@dataclass(frozen=True)
class EmbeddingTable:
    """Rows of a memory-mapped table; `lookup` turns token ids into float32 vectors."""

    path: Path
    rows: np.ndarray  # [V, D] float32 | float16 | int8, or uint8 [V, D / 32 * 18] Q4_0; memory-mapped
    scales: np.ndarray | None  # [V] float32 for int8 rows (row = int8 * scale), else None
    dtype: str = ""  # the manifest's dtype ("" for tables made before it was recorded here)

    @property
    def vocab_size(self) -> int:
        return int(self.rows.shape[0])

    @property
    def dim(self) -> int:
        width = int(self.rows.shape[1])
        return width // q4.BLOCK_BYTES * q4.BLOCK if self.dtype == Q4_0 else width

    @classmethod
    def open(cls, folder: Path, spec: dict) -> EmbeddingTable:
        """Maps the table `spec` (a manifest's `embeddings`) describes, checked against it.

        Raises:
            ModelError naming the file when it is missing, truncated, or not of the
            dtype and shape the manifest says.
        """
        folder = Path(folder)
        dtype = spec.get("dtype")
        if dtype not in DTYPES:
            raise ModelError(f"{folder}: unknown embedding table dtype {dtype!r} in the manifest",
                             folder)
        shape = (int(spec.get("rows", -1)), int(spec.get("dim", -1)))
        path = folder / spec.get("file", TABLE_FILE)
        if dtype == Q4_0:
            if shape[1] % q4.BLOCK:
                raise ModelError(f"{folder}: a q4_0 table's dim must be a multiple of "
                                 f"{q4.BLOCK}, the manifest says {shape[1]}", folder)
            return cls(path, _map(path, "uint8", _q4_shape(shape)), None, dtype)
        rows = _map(path, dtype, shape)
        scales = None
        if dtype == "int8":
            scales_path = folder / spec.get("scales", SCALES_FILE)
            scales = np.asarray(_map(scales_path, "float32", shape[:1]))
        return cls(path, rows, scales, dtype)

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """float32 [*ids.shape, D] rows for int ids (any shape); reads only those rows."""
        ids = np.asarray(ids)
        if ids.size and (ids.min() < 0 or ids.max() >= self.vocab_size):
            raise ModelError(f"{self.path}: token id {int(ids.max())} is outside the table's "
                             f"{self.vocab_size} rows (tokenizer and table do not match)", self.path)
        if self.dtype == Q4_0:
            return q4.dequantise_rows(self.rows[ids])  # reads and unpacks only these rows
        vectors = self.rows[ids].astype(np.float32)  # fancy indexing copies only these rows
        if self.scales is not None:
            vectors *= self.scales[ids][..., None]
        return vectors


def _map(path: Path, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """`path` memory-mapped, or a ModelError naming it."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as e:
        raise ModelError(f"embedding table file is missing: {path}", path) from e
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:  # truncated, not a .npy
        raise ModelError(f"embedding table file is damaged or truncated: {path} ({e})", path) from e
    if not isinstance(array, np.ndarray):  # an .npz archive under the table's name
        raise ModelError(f"{path} is not a single-array .npy file", path)
    if array.dtype != np.dtype(dtype) or array.shape != shape:
        raise ModelError(f"{path}: holds {array.dtype} {list(array.shape)}, the manifest says "
                         f"{dtype} {list(shape)}", path)
    return array


def quantise_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 [V, D], float32 scales [V]): symmetric per-row quantisation, row ~ q * scale.

    >>> q, s = quantise_rows(np.array([[0.5, -1.0]], np.float32))   # q [[64, -127]], s [1/127]
    """
    table = np.asarray(table, dtype=np.float32)
    peak = np.abs(table).max(axis=1)
    scales = np.where(peak > 0, peak / INT8_MAX, 1.0).astype(np.float32)
    quantised = np.empty(table.shape, dtype=np.int8)
    for start in range(0, len(table), 1 << 15):  # bounded temporaries for a 250k-row table
        block = slice(start, start + (1 << 15))
        quantised[block] = np.clip(np.rint(table[block] / scales[block, None]), -INT8_MAX, INT8_MAX)
    return quantised, scales


def _q4_shape(shape: tuple[int, int]) -> tuple[int, int]:
    return shape[0], q4.blocks_per_row(shape[1]) * q4.BLOCK_BYTES


def write_table(folder: Path, table: np.ndarray, dtype: str,
                q4_blocks: np.ndarray | None = None) -> dict:
    """Writes `table` (float32 [V, D]) to `folder` as `dtype`; returns the manifest spec.

    `q4_blocks`: for dtype q4_0, the Q4_0 rows the table was dequantised from (uint8
    [V, D / 32 * 18]); they are stored as they are, after checking that they give
    exactly `table`, so nothing is requantised.
    Raises:
        ValueError for an unknown dtype, or q4_0 without blocks that give `table`.
    """
    if dtype not in DTYPES:
        raise ValueError(f"unknown embedding table dtype {dtype!r}; use one of {DTYPES}")
    folder = Path(folder)
    spec = {"file": TABLE_FILE, "dtype": dtype, "rows": int(table.shape[0]),
            "dim": int(table.shape[1]), "input": GRAPH_INPUT}
    if dtype == Q4_0:
        _check_q4(table, q4_blocks)
        np.save(folder / TABLE_FILE, np.ascontiguousarray(q4_blocks, dtype=np.uint8))
    elif dtype == "int8":
        quantised, scales = quantise_rows(table)
        np.save(folder / TABLE_FILE, quantised)
        np.save(folder / SCALES_FILE, scales)
        spec["scales"] = SCALES_FILE
    else:
        np.save(folder / TABLE_FILE, np.ascontiguousarray(table, dtype=dtype))
    return spec


def write_q4_table(folder: Path, blocks: np.ndarray) -> dict:
    """Writes Q4_0 rows (uint8 [V, D / 32 * 18]) as they are; returns the manifest spec.

    For a table that only ever existed as these blocks (a 4-bit source): no float32 copy
    of it is made to check against, the blocks define it.
    """
    blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
    if blocks.ndim != 2 or blocks.shape[1] % q4.BLOCK_BYTES:
        raise ValueError(f"Q4_0 rows must be uint8 [rows, k * {q4.BLOCK_BYTES}], got {list(blocks.shape)}")
    np.save(Path(folder) / TABLE_FILE, blocks)
    return {"file": TABLE_FILE, "dtype": Q4_0, "rows": int(blocks.shape[0]),
            "dim": int(blocks.shape[1] // q4.BLOCK_BYTES * q4.BLOCK), "input": GRAPH_INPUT}


def _check_q4(table: np.ndarray, blocks: np.ndarray | None) -> None:
    if blocks is None or blocks.shape != _q4_shape(table.shape):
        raise ValueError("a q4_0 table needs the Q4_0 blocks it was dequantised from "
                         f"(uint8 {list(_q4_shape(table.shape))})")
    for start in range(0, len(table), _CHECK_ROWS):
        rows = slice(start, start + _CHECK_ROWS)
        if not np.array_equal(q4.dequantise_rows(blocks[rows]), table[rows]):
            raise ValueError(f"the Q4_0 blocks do not give the table's rows {start}..")


def table_files(spec: dict) -> list[str]:
    """The file names a table spec uses (for checksums and verification)."""
    if not spec:
        return []
    return [spec.get("file", TABLE_FILE)] + ([spec.get("scales", SCALES_FILE)]
                                              if spec.get("dtype") == "int8" else [])
