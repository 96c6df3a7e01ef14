"""The model registry: one folder per model in BABELFIND_HOME/models/NAME/.

    >>> encoder = load_encoder()                   # the active model, best variant here
    >>> encoder.encode(["Hallo Welt"], kind="query").shape   # (1, encoder.dim)

Each folder holds ONNX file(s), `tokenizer.json` and `manifest.json` (a `ModelManifest`)
that lists every file with its SHA-256, so a damaged or truncated copy is caught with
an error naming the file. No torch here: exporting lives in `trainer.serving.export`.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path

from engine.config import DataPaths, data_paths, load_settings, save_settings
from engine.errors import InputError, ModelError
from engine.model_archive import unpack_model
from engine.model_files import contained
from engine.model_manifest import (
    MANIFEST_FILE,
    VERIFIED_FILE,
    ModelManifest,
    read_manifest,
    verify_files,
    write_manifest,
)
from engine.encoders.graph_check import GraphRefusedError, check_before_serving, check_model
from engine.private import make_tree_private, private_folder
from engine.repairs import repaired

log = logging.getLogger(__name__)

# The model a new home starts with (trainer.serving.default_models builds it), and the one
# the active model falls back to when it is refused.
DEFAULT_MODEL = "multilingual-e5-small"

VARIANTS = ("fp32", "fp16", "int8")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_name(name: str) -> str:
    """Returns `name` if it can be a folder name in the registry, else InputError."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise InputError(
            f"invalid model name {name!r}: use letters, digits, '.', '_' or '-' (max 64)"
        )
    return name


def _paths(paths: DataPaths | None) -> DataPaths:
    return paths if paths is not None else data_paths()


def model_dir(name: str, paths: DataPaths | None = None) -> Path:
    return _paths(paths).models / check_name(name)


def list_models(paths: DataPaths | None = None) -> list[ModelManifest]:
    """Every registered model, by name; folders without a readable manifest are skipped."""
    root = _paths(paths).models
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        if folder.is_dir() and not folder.name.startswith("."):
            try:
                found.append(read_manifest(folder))
            except ModelError as e:
                log.warning("skipping %s: %s", folder, e)
    return found


def get_manifest(name: str, paths: DataPaths | None = None) -> ModelManifest:
    folder = model_dir(name, paths)
    if not folder.is_dir():
        known = ", ".join(m.name for m in list_models(paths)) or "none"
        raise ModelError(f"no model named '{name}' (installed: {known})", folder)
    return read_manifest(folder)


def active_model_name(paths: DataPaths | None = None) -> str | None:
    return load_settings(_paths(paths)).get("active_model")


def set_active(name: str, paths: DataPaths | None = None) -> ModelManifest:
    """Makes `name` the active model after checking its files; returns its manifest."""
    paths = _paths(paths)
    manifest = get_manifest(name, paths)
    verify_files(model_dir(name, paths), manifest)
    save_settings(paths, active_model=name)
    return manifest


def remove_model(name: str, paths: DataPaths | None = None) -> None:
    """Deletes a model's folder; the active model cannot be removed."""
    paths = _paths(paths)
    folder = model_dir(name, paths)
    if not folder.is_dir():
        raise ModelError(f"no model named '{name}'", folder)
    if active_model_name(paths) == name:
        raise InputError(f"'{name}' is the active model; make another one active first")
    shutil.rmtree(folder)


def export_model(name: str, dest_zip: Path, paths: DataPaths | None = None) -> Path:
    """Writes the model folder to `dest_zip` (files under NAME/) after verifying it."""
    paths = _paths(paths)
    folder = model_dir(name, paths)
    manifest = get_manifest(name, paths)
    verify_files(folder, manifest)
    dest_zip = Path(dest_zip)
    if not dest_zip.parent.is_dir():
        raise InputError(f"cannot write {dest_zip}: the folder {dest_zip.parent} does not exist")
    tmp = dest_zip.with_name(dest_zip.name + ".part")
    with zipfile.ZipFile(tmp, "w", allowZip64=True) as zf:
        for rel in [MANIFEST_FILE, *manifest.files]:
            # ONNX weights barely compress; storing them keeps export fast
            method = zipfile.ZIP_DEFLATED if rel.endswith((".json", ".txt")) else zipfile.ZIP_STORED
            zf.write(contained(folder, rel), f"{name}/{rel}", compress_type=method)
    os.replace(tmp, dest_zip)
    return dest_zip


def import_model(
    source: Path, paths: DataPaths | None = None, *, replace_existing: bool = False,
    built_here: bool = False,
) -> ModelManifest:
    """Adds a model from a folder or a .zip made by `export_model`, verified by checksums,
    its graphs checked for unbounded allocations (engine.encoders.graph_check).

    `built_here`: the folder is one Babelfind built (the bundle's prepared default
    models), so its graphs skip the warm-up; the static check still runs.

    Raises:
        GraphRefusedError: a graph could allocate without bound (a ModelError).
    """
    paths = _paths(paths)
    source = Path(source)
    if not source.exists():
        raise InputError(f"{source} does not exist")
    private_folder(paths.models)
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=paths.models))
    try:
        folder = unpack_model(source, staging)
        manifest = read_manifest(folder)
        check_name(manifest.name)
        verify_files(folder, manifest)
        (folder / VERIFIED_FILE).unlink(missing_ok=True)
        target = model_dir(manifest.name, paths)
        if target.exists():
            if not replace_existing:
                raise InputError(f"a model named '{manifest.name}' is already installed")
            if active_model_name(paths) == manifest.name:
                raise InputError(f"'{manifest.name}' is the active model; cannot replace it")
        check_model(folder, manifest, warm_up=not built_here)
        install_folder(folder, target)
        return manifest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def build_model(name: str, paths: DataPaths, build, progress) -> ModelManifest:
    """Registers model `name` from `build(work) -> ModelManifest`, which fills a scratch
    folder beside the registry. The finished folder replaces an older copy only once its
    manifest is written; a failed build leaves the registry as it was.

    `progress(fraction, message)` hears "registering" (0.95) and "registered" (1.0).
    """
    private_folder(paths.models)
    work = Path(tempfile.mkdtemp(prefix=f".export-{name}-", dir=paths.models))
    try:
        manifest = build(work)
        progress(0.95, "registering")
        manifest = write_manifest(work, manifest)
        check_model(work, manifest, warm_up=False)  # our own graphs: the static check only
        install_folder(work, model_dir(name, paths))
        progress(1.0, "registered")
        return manifest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def install_folder(folder: Path, target: Path) -> None:
    """Moves a finished model folder into the registry, replacing an older copy; its files
    are the user's alone (a model trained on their sentences can repeat them)."""
    make_tree_private(folder)
    if target.exists():
        shutil.rmtree(target)
    os.replace(folder, target)


# Tatoeba languages (LASER's set) an int8 gate must have measured before int8 is served
# by default; trainer.serving.int8_gate runs the gate and records its evidence in the manifest.
INT8_GATE_LANGUAGES = 112


def int8_not_default_reason(manifest: ModelManifest) -> str | None:
    """Why the int8 variant is not served by default on CPU; None when it is.

    It is served only when its file exists and its gate passed with full evidence: Tatoeba
    on every language and STS-B, as `variants["int8"]` records them.

    >>> int8_not_default_reason(manifest)   # 'est +4.45 points Tatoeba error (gate: <= 2 per language)'
    """
    info = manifest.variants.get("int8") or {}
    if not info.get("file"):
        return info.get("reason") or "no int8 variant was made"
    saturating = int8_saturates_here(info)
    if saturating:
        return saturating
    gate = info.get("gate")
    if gate in (None, "not run"):
        return ("its quality gate has not run (no Tatoeba/STS-B evidence); "
                "ask for it with --variant int8")
    if gate != "passed":
        return info.get("reason") or f"its quality gate says {gate}"
    languages = (info.get("tatoeba") or {}).get("languages", 0)
    if languages < INT8_GATE_LANGUAGES:
        return f"its gate measured {languages} Tatoeba languages, not all {INT8_GATE_LANGUAGES}"
    if (info.get("sts_b") or {}).get("int8") is None:
        return "its gate has no STS-B measurement"
    return None


def int8_saturates_here(info: dict) -> str | None:
    """Why the int8 file `info` describes gives wrong sums on this CPU, or None.

    A file made with 8-bit weights (files made before `weight_levels` was recorded all
    were) on a CPU whose int8 kernels add exactly, then used on one that adds pairs of
    products in 16 bits (engine.encoders.int8_kernels), saturates there: a copied home, a
    prepared bundle model, a model imported from another machine.
    """
    from engine.encoders.int8_kernels import FULL_WEIGHT_LEVELS, adds_exactly

    if adds_exactly(info.get("weight_levels", FULL_WEIGHT_LEVELS)):
        return None
    return ("its 8-bit weights saturate this CPU's int8 kernels (x86-64 without VNNI adds "
            "pairs of products in 16 bits)")


def choose_variant(manifest: ModelManifest, device: str, variant: str | None) -> str:
    """The variant to serve: the asked one, else fp16 on GPU; on CPU int8 only when its
    gate passed (`int8_not_default_reason`), else fp32."""
    if variant is not None:
        if variant not in VARIANTS:
            raise InputError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        if not manifest.variant_file(variant):
            reason = (manifest.variants.get(variant) or {}).get("reason", "not produced")
            raise ModelError(f"model '{manifest.name}' has no {variant} variant: {reason}")
        saturating = variant == "int8" and device != "cuda" and int8_saturates_here(manifest.variants["int8"])
        if saturating:
            raise ModelError(f"model '{manifest.name}': int8 would give wrong vectors here: {saturating}")
        return variant
    if device == "cuda":
        preferred = ("fp16", "fp32")
    else:
        preferred = ("fp32", "int8") if int8_not_default_reason(manifest) else ("int8", "fp32")
    for name in preferred:
        if manifest.variant_file(name):
            return name
    raise ModelError(f"model '{manifest.name}' lists no usable ONNX file")


def load_encoder(
    name: str | None = None,
    *,
    device: str = "auto",
    variant: str | None = None,
    paths: DataPaths | None = None,
    threads: int | None = None,
):
    """An `Encoder` for a registered model (the active one when `name` is None).

    The graph that will serve is checked for unbounded allocations first (once per file,
    engine.encoders.graph_check). When the active model is refused, the default model
    becomes the active one and is loaded instead, with one line saying so.

    Args:
        device: "auto" (GPU when onnxruntime-gpu sees one), "cpu" or "cuda".
        variant: "fp32", "fp16" or "int8"; None picks the best one for the device.
        threads: CPU threads to use; None means one per physical core.
    Raises:
        ModelError naming the file when a model file is missing, damaged or not the
        kind of model the manifest says; GraphRefusedError (one) naming the model.
    """
    paths = _paths(paths)
    name = name or active_model_name(paths)
    if not name:
        raise ModelError("no active model; run 'babelfind models use NAME'")
    try:
        return _load_encoder(name, device=device, variant=variant, paths=paths, threads=threads)
    except GraphRefusedError as e:
        if name != active_model_name(paths) or name == DEFAULT_MODEL or not model_dir(DEFAULT_MODEL, paths).is_dir():
            raise
        encoder = _load_encoder(DEFAULT_MODEL, device=device, variant=None, paths=paths, threads=threads)
        save_settings(paths, active_model=DEFAULT_MODEL)
        repaired("%s; the active model is now '%s'", e, DEFAULT_MODEL)
        return encoder


def _load_encoder(name: str, *, device: str, variant: str | None, paths: DataPaths, threads: int | None):
    from engine.encoders.migrate import ensure_body_format, restore_interrupted_swap
    from engine.encoders.onnx import resolve_device

    restore_interrupted_swap(model_dir(name, paths))
    manifest = ensure_body_format(model_dir(name, paths), get_manifest(name, paths))
    device = resolve_device(device)
    chosen = choose_variant(manifest, device, variant)
    folder = model_dir(name, paths)
    files = [manifest.variant_file(chosen), manifest.tokenizer_file, *manifest.serving_files()]
    if manifest.family == "laser":
        from engine.encoders.laser_onnx import LaserOnnxEncoder, laser_vocab_file

        verify_files(folder, manifest, files + [laser_vocab_file(manifest)])
        check_before_serving(folder, manifest, chosen)
        return LaserOnnxEncoder(folder, manifest, variant=chosen, device=device, threads=threads)
    from engine.encoders.onnx import OnnxEncoder

    verify_files(folder, manifest, files)
    check_before_serving(folder, manifest, chosen)
    return OnnxEncoder(folder, manifest, variant=chosen, device=device, threads=threads)
