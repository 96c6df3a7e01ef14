"""Move a model folder's word-embedding table out of its graphs, once, crash-safe.

    >>> manifest = ensure_body_format(folder, read_manifest(folder))   # no-op when current

Folders installed by earlier versions hold graphs that look tokens up themselves
(model.onnx, model.int8.onnx: 470 and 407 MB for multilingual-e5-small, 384 MB of each
the same fp32 table). `split_folder` rewrites every variant into the body + table format
(engine.encoders.graph_split) and stores the table once, in the smallest row format whose
vectors stay within PARITY_MIN_COSINE of the graph's own lookup on the parity sentences
(int8 rows, else fp16, else fp32), judged on the fp32 graph. A migration builds the new folder beside the old one
and swaps it in with two renames; `restore_interrupted_swap` puts the old folder back
if a crash fell between them.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from engine.encoders.embedding_table import Q4_0, write_table
from engine.encoders.graph_split import split_embedding_table
from engine.encoders.parity import PARITY_SENTENCES, cosine_rows
from engine.errors import ModelError

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]
PARITY_MIN_COSINE = 0.9999
# smallest first: int8 rows are a quarter of fp32 (96 MB for XLM-R's 250k x 384)
TABLE_DTYPES = ("int8", "float16", "float32")
# Tables up to this size keep exact fp32 rows: mapped, they cost only the rows a batch
# reads, and exact rows keep an int8 graph's vectors as they were (dynamic int8 moves
# with any change of its input). all-MiniLM's 30k x 384 table is 47 MB.
SMALL_TABLE_BYTES = 64 << 20
RETIRED_PREFIX = ".retired-"
MIGRATING_PREFIX = ".migrate-"


def needs_migration(manifest) -> bool:
    """True for a transformer folder whose graphs still hold the embedding table."""
    return manifest.family == "transformer" and not manifest.embeddings


def ensure_body_format(folder: Path, manifest, progress: Progress | None = None):
    """`manifest`, after migrating `folder` to the body + table format when it is older.

    Raises:
        ModelError naming the file when a graph cannot be split or the migrated folder
        would not give the same vectors (the old folder is then left as it was).
    """
    if not needs_migration(manifest):
        return manifest
    log.info("moving the embedding table of %s out of its graphs (once)", folder.name)
    return migrate_folder(Path(folder), manifest, progress)


def migrate_folder(folder: Path, manifest, progress: Progress | None = None):
    """Builds the body + table copy of `folder` beside it, then swaps it in."""
    report = progress or (lambda fraction, message: None)
    restore_interrupted_swap(folder)
    for stale in folder.parent.glob(f"{MIGRATING_PREFIX}{folder.name}-*"):
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f"{MIGRATING_PREFIX}{folder.name}-", dir=folder.parent))
    try:
        migrated = migrated_copy(folder, work, manifest, report)
        _swap_in(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(1.0, "model folder updated")
    return migrated


def migrated_copy(folder: Path, dest: Path, manifest, progress: Progress | None = None):
    """Writes the body + table form of `folder` into the empty folder `dest` (`folder`
    is only read); returns its manifest, with checksums."""
    from engine.model_manifest import write_manifest

    report = progress or (lambda fraction, message: None)
    _link_other_files(folder, dest, manifest)
    migrated = optimise_cpu_variant(dest, split_folder(folder, dest, manifest, report))
    report(0.95, "writing the manifest")
    return write_manifest(dest, migrated)


def split_folder(src: Path, dest: Path, manifest, progress: Progress | None = None,
                 texts=PARITY_SENTENCES, dtypes=None, q4_table=None):
    """Writes every variant of `src` (table in the graph) as a body graph into `dest`,
    plus the table; returns the manifest for `dest` (files not yet checksummed).

    `dtypes`: row formats to try, smallest first; None: fp32 for a table of at most
    SMALL_TABLE_BYTES, else TABLE_DTYPES. `q4_table`: the Q4_0 rows the graph's table
    was dequantised from, for dtype "q4_0" (stored as they are). `src` and `dest` may be
    the same folder.
    Raises ModelError when no table format
    keeps every variant's vectors within PARITY_MIN_COSINE.
    """
    report = progress or (lambda fraction, message: None)
    variants = {v: info["file"] for v, info in manifest.variants.items() if info.get("file")}
    report(0.05, "encoding the check sentences with the current graphs")
    before = {v: _encode(src, manifest, v, texts) for v in variants}
    table = None
    for i, (variant, filename) in enumerate(variants.items()):
        report(0.1 + 0.5 * i / len(variants), f"splitting {filename}")
        found = _split_file(src / filename, dest / filename)
        table = found if table is None else _same_table(table, found, src / filename)
    if dtypes is None:
        dtypes = ("float32",) if table.nbytes <= SMALL_TABLE_BYTES else TABLE_DTYPES
    for dtype in dtypes:
        report(0.65, f"writing the embedding table ({dtype} rows)")
        try:
            spec = write_table(dest, table, dtype, q4_table if dtype == Q4_0 else None)
        except ValueError as e:  # q4_0 without blocks that give exactly this table
            raise ModelError(f"{src}: {e}", src) from e
        candidate = replace(manifest, embeddings=spec)
        cosines = {v: float(cosine_rows(before[v], _encode(dest, candidate, v, texts)).min())
                   for v in variants}
        # Only the float graph isolates the table's precision: int8 graphs quantise their
        # activations per batch, so any change of the input, however small, moves their
        # vectors by about their own int8 error (0.996 measured for e5 with fp16 rows).
        reference = "fp32" if "fp32" in cosines else next(iter(cosines))
        if cosines[reference] >= PARITY_MIN_COSINE:
            spec["parity"] = {"min_cosine": cosines[reference], "variant": reference,
                              "min_cosine_per_variant": cosines, "sentences": len(texts),
                              "threshold": PARITY_MIN_COSINE}
            report(0.85, "preparing the quick-loading tokenizer")
            return prepare_compact_tokenizer(dest, replace(manifest, embeddings=spec))
        log.info("%s table rows: worst cosine %.6f < %s", dtype, cosines[reference],
                 PARITY_MIN_COSINE)
        (dest / spec["file"]).unlink()
        if spec.get("scales"):
            (dest / spec["scales"]).unlink()
    raise ModelError(f"{src}: no embedding table format keeps the vectors within cosine "
                     f"{PARITY_MIN_COSINE}", src)


def prepare_compact_tokenizer(folder: Path, manifest):
    """`manifest` naming the compact tokenizer made in `folder`, when its tokenizer.json
    is of the kind engine.encoders.unigram reproduces exactly."""
    from engine.encoders.unigram import COMPACT_FILE, compile_compact

    made = compile_compact(folder / manifest.tokenizer_file, folder / COMPACT_FILE)
    return replace(manifest, compact_tokenizer=COMPACT_FILE if made else "")


def save_cpu_optimised(src: Path, dest: Path) -> None:
    """Saves `src` as ONNX Runtime optimises it for the CPU provider, once, at install.

    Extended level: operator fusions (attention, GELU, LayerNorm, int8 MatMul + scale)
    that any CPU runs; not the ALL level's layout changes, which ORT ties to the machine.
    Loading the result with the optimiser off gives the same vectors (bench_startup).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(dest)
    try:
        ort.InferenceSession(str(src), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT raises its own Fail/InvalidGraph/... types
        raise ModelError(f"{src} is not a loadable ONNX model: {e}", src) from e


def optimise_cpu_variant(folder: Path, manifest, variant: str = "int8"):
    """Replaces the CPU variant's graph by its CPU-optimised form (session start about a
    third of the time); `manifest` with the variant marked. No-op without that variant."""
    info = manifest.variants.get(variant) or {}
    if not info.get("file") or info.get("cpu_optimised"):
        return manifest
    path = folder / info["file"]
    tmp = path.with_name(path.name + ".opt.tmp")
    save_cpu_optimised(path, tmp)
    os.replace(tmp, path)
    info = info | {"cpu_optimised": "ONNX Runtime extended-level fusions, saved at install"}
    return replace(manifest, variants=manifest.variants | {variant: info})


def _split_file(src: Path, dest: Path) -> np.ndarray:
    import onnx

    try:
        model = onnx.load(str(src))
    except Exception as e:  # onnx raises DecodeError and others for a damaged file
        raise ModelError(f"{src} is not a loadable ONNX model: {e}", src) from e
    body, table = split_embedding_table(model, src)
    tmp = dest.with_name(dest.name + ".tmp")
    onnx.save(body, str(tmp))
    os.replace(tmp, dest)
    return table


def _same_table(table: np.ndarray, other: np.ndarray, path: Path) -> np.ndarray:
    if table.shape != other.shape or not np.array_equal(table, other):
        raise ModelError(f"{path}: its embedding table differs from the fp32 graph's", path)
    return table


def _encode(folder: Path, manifest, variant: str, texts) -> np.ndarray:
    from engine.encoders.onnx import OnnxEncoder

    encoder = OnnxEncoder(folder, manifest, variant=variant, device="cpu", threads=1)
    return encoder.encode(list(texts), kind="passage")


def _link_other_files(folder: Path, work: Path, manifest) -> None:
    """Tokenizer and other files: hard links where possible (no copy of the bytes)."""
    graphs = {info.get("file") for info in manifest.variants.values()}
    for name in manifest.files:
        if name in graphs:
            continue
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(folder / name, target)
        except OSError:  # another file system, or links not allowed
            shutil.copy2(folder / name, target)


def _retired(folder: Path) -> Path:
    return folder.with_name(RETIRED_PREFIX + folder.name)


def _swap_in(work: Path, folder: Path) -> None:
    """`work` becomes `folder`; the old folder is removed once the new one is in place."""
    retired = _retired(folder)
    _remove(retired)
    os.replace(folder, retired)
    os.replace(work, folder)
    _remove(retired)


def restore_interrupted_swap(folder: Path) -> None:
    """Puts the old folder back when a migration stopped between its two renames."""
    retired = _retired(Path(folder))
    if not os.path.lexists(retired):
        return
    if os.path.lexists(folder):
        _remove(retired)  # the swap finished; only the clean-up was missed
    else:
        log.warning("restoring %s after an interrupted migration", folder)
        os.replace(retired, folder)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
