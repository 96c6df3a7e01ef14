"""A model folder's `manifest.json`: what the model is, and the SHA-256 of every file in it.

    >>> manifest = read_manifest(folder)           # ModelError naming the file when unreadable
    >>> write_manifest(folder, replace(manifest, notes="..."))   # checksums of the files now there
    >>> verify_files(folder, manifest)             # ModelError naming a damaged or missing file

Below the registry (engine.models) and the encoder builders (engine.encoders.migrate), which
both read and write manifests.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from engine.errors import ModelError
from engine.model_files import contained, validate_manifest
from engine.private import open_private

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
# size + mtime of files whose checksum was verified, so loading skips re-hashing 470 MB
VERIFIED_FILE = ".verified.json"
# Which graph files passed engine.encoders.graph_check (by SHA-256); like VERIFIED_FILE a
# note the folder keeps about itself, not a file of the model.
GRAPH_CHECKS_FILE = ".graph-checks.json"
STAMP_FILES = frozenset({MANIFEST_FILE, VERIFIED_FILE, GRAPH_CHECKS_FILE})
FAMILIES = ("transformer", "laser")


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
    # the adapter folded into the weights at install (trainer.serving.adapter): its file,
    # SHA-256, kind, training data and measured effect; empty for a model without one
    adapter: dict = field(default_factory=dict)

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
        if p.is_file() and p.name not in STAMP_FILES
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
