"""The model registry: one folder per model in BABELFIND_HOME/models/NAME/.

    >>> encoder = load_encoder()                   # the active model, best variant here
    >>> encoder.encode(["Hallo Welt"], kind="query").shape   # (1, encoder.dim)

Each folder holds ONNX file(s), `tokenizer.json` and `manifest.json` (a `ModelManifest`)
that lists every file with its SHA-256, so a damaged or truncated copy is caught with
an error naming the file. No torch here: exporting lives in `trainer.export`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from engine.config import DataPaths, data_paths, load_settings, save_settings
from engine.errors import InputError, ModelError
from engine.model_archive import unpack_model
from engine.private import make_tree_private, open_private, private_folder
from engine.model_files import contained, validate_manifest

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
# size + mtime of files whose checksum was verified, so loading skips re-hashing 470 MB
VERIFIED_FILE = ".verified.json"
FAMILIES = ("transformer", "laser")
VARIANTS = ("fp32", "fp16", "int8")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class ModelManifest:
    """What `manifest.json` says about one registered model.

    `variants` maps "fp32"/"fp16"/"int8" to {"file": name or None, "reason": why not
    produced, plus quality numbers}; `files` maps every file name to its SHA-256.
    """

    name: str
    family: str  # "transformer" | "laser"
    dim: int
    pooling: str  # "mean" | "cls"
    max_length: int
    prefixes: dict = field(default_factory=lambda: {"query": "", "passage": ""})
    languages: tuple[str, ...] = ()
    source: str = ""
    licence: str = ""
    files: dict = field(default_factory=dict)
    export_parity: dict = field(default_factory=dict)
    variants: dict = field(default_factory=dict)
    training: dict | None = None
    notes: str = ""
    pad_token_id: int = 0
    tokenizer_file: str = "tokenizer.json"
    # family-specific text preparation (LASER: vocab file, punctuation language, case)
    preprocessing: dict = field(default_factory=dict)
    # the memory-mapped token embedding table beside the graph (engine.encoders.embedding_table);
    # empty in folders of earlier versions, whose graphs hold the table (migrated on load)
    embeddings: dict = field(default_factory=dict)
    # quick-loading form of the tokenizer (engine.encoders.unigram), "" when not made
    compact_tokenizer: str = ""

    def variant_file(self, variant: str) -> str | None:
        """The ONNX file of `variant`, or None when that variant was not produced."""
        return (self.variants.get(variant) or {}).get("file")

    def serving_files(self) -> list[str]:
        """Files every variant reads besides its graph and tokenizer.json (the embedding
        table, the compact tokenizer)."""
        from engine.encoders.embedding_table import table_files

        return table_files(self.embeddings) + ([self.compact_tokenizer] if self.compact_tokenizer else [])

    def to_json(self) -> str:
        data = asdict(self)
        data["languages"] = list(self.languages)
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict) -> ModelManifest:
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["languages"] = tuple(kwargs.get("languages", ()))
        return cls(**kwargs)


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


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(folder: Path) -> ModelManifest:
    """The manifest in `folder`; ModelError naming the file when absent or unreadable."""
    path = Path(folder) / MANIFEST_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise ModelError(f"model manifest is missing: {path}", path) from e
    except (OSError, ValueError) as e:
        raise ModelError(f"model manifest is unreadable: {path} ({e})", path) from e
    validate_manifest(data, path)  # types, ranges, and every file name kept inside `folder`
    try:
        manifest = ModelManifest.from_dict(data)
    except (TypeError, ValueError) as e:
        raise ModelError(f"model manifest is unreadable: {path} ({e})", path) from e
    if manifest.family not in FAMILIES:
        raise ModelError(f"{path}: unknown model family {manifest.family!r}", path)
    return manifest


def write_manifest(folder: Path, manifest: ModelManifest) -> ModelManifest:
    """Writes `manifest` with the checksums of every file now in `folder`."""
    folder = Path(folder)
    files = {
        p.relative_to(folder).as_posix(): sha256_file(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in (MANIFEST_FILE, VERIFIED_FILE)
    }
    manifest = replace(manifest, files=files)
    tmp = folder / (MANIFEST_FILE + ".tmp")
    tmp.write_text(manifest.to_json(), encoding="utf-8")
    os.replace(tmp, folder / MANIFEST_FILE)
    return manifest


def verify_files(folder: Path, manifest: ModelManifest, names=None) -> None:
    """Raises ModelError naming the first file that is missing or fails its checksum.

    A file whose size and mtime match the last successful check is not re-hashed.
    """
    folder = Path(folder)
    stamps = _read_stamps(folder)
    changed = False
    for name in names if names is not None else manifest.files:
        path = contained(folder, name)
        expected = manifest.files.get(name)
        if expected is None:
            raise ModelError(f"{path}: not listed in the model manifest", path)
        if not path.is_file():
            raise ModelError(f"model file is missing: {path}", path)
        stat = path.stat()
        stamp = [stat.st_size, stat.st_mtime_ns, expected]
        if stamps.get(name) == stamp:
            continue
        if sha256_file(path) != expected:
            raise ModelError(
                f"model file is damaged or truncated (checksum mismatch): {path}", path
            )
        stamps[name], changed = stamp, True
    if changed:
        _write_stamps(folder, stamps)


def _read_stamps(folder: Path) -> dict:
    try:
        return json.loads((folder / VERIFIED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_stamps(folder: Path, stamps: dict) -> None:
    try:
        with open_private(folder / VERIFIED_FILE, "w") as f:
            f.write(json.dumps(stamps))
    except OSError:  # a read-only registry still works, it just re-hashes next time
        log.debug("cannot record verified checksums in %s", folder)


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
    source: Path, paths: DataPaths | None = None, *, replace_existing: bool = False
) -> ModelManifest:
    """Adds a model from a folder or a .zip made by `export_model`, verified by checksums."""
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
# by default; trainer.int8_gate runs the gate and records its evidence in the manifest.
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


def choose_variant(manifest: ModelManifest, device: str, variant: str | None) -> str:
    """The variant to serve: the asked one, else fp16 on GPU; on CPU int8 only when its
    gate passed (`int8_not_default_reason`), else fp32."""
    if variant is not None:
        if variant not in VARIANTS:
            raise InputError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        if not manifest.variant_file(variant):
            reason = (manifest.variants.get(variant) or {}).get("reason", "not produced")
            raise ModelError(f"model '{manifest.name}' has no {variant} variant: {reason}")
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

    Args:
        device: "auto" (GPU when onnxruntime-gpu sees one), "cpu" or "cuda".
        variant: "fp32", "fp16" or "int8"; None picks the best one for the device.
        threads: CPU threads to use; None means one per physical core.
    Raises:
        ModelError naming the file when a model file is missing, damaged or not the
        kind of model the manifest says.
    """
    from engine.encoders.onnx import resolve_device

    from engine.encoders.migrate import ensure_body_format, restore_interrupted_swap

    paths = _paths(paths)
    name = name or active_model_name(paths)
    if not name:
        raise ModelError("no active model; run 'babelfind models use NAME'")
    restore_interrupted_swap(model_dir(name, paths))
    manifest = ensure_body_format(model_dir(name, paths), get_manifest(name, paths))
    device = resolve_device(device)
    chosen = choose_variant(manifest, device, variant)
    folder = model_dir(name, paths)
    files = [manifest.variant_file(chosen), manifest.tokenizer_file, *manifest.serving_files()]
    if manifest.family == "laser":
        from engine.encoders.laser_onnx import LaserOnnxEncoder, laser_vocab_file

        verify_files(folder, manifest, files + [laser_vocab_file(manifest)])
        return LaserOnnxEncoder(folder, manifest, variant=chosen, device=device, threads=threads)
    from engine.encoders.onnx import OnnxEncoder

    verify_files(folder, manifest, files)
    return OnnxEncoder(folder, manifest, variant=chosen, device=device, threads=threads)
