"""What `babelfind doctor` reports about this machine and this library, read-only.

    >>> report = collect(data_paths())
    >>> [c.name for c in report.checks if c.status == "error"]    # [] when all is well

Each `Check` is one line a person can act on: what was looked at, what was found and,
when something is off, what to do. Nothing here creates files, databases or model
folders, and nothing imports torch (its presence is read from package metadata).
"""

from __future__ import annotations

import os
import platform
import shutil
import sys
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Literal

from engine.config import DataPaths

Status = Literal["ok", "info", "warn", "error"]
# Packages whose versions matter when something misbehaves; optional ones say what needs them.
CORE_PACKAGES = ("onnxruntime", "numpy", "faiss-cpu", "tokenizers", "SQLAlchemy", "pypdf",
                 "PySide6-Essentials")
OPTIONAL_PACKAGES = {
    "torch": "training (pip install 'babelfind[train]')",
    "transformers": "training and exporting your own models",
    "onnx": "building the bundled models and exporting",
    "triton": "the fused GPU loss (Linux)",
    "onnxruntime-gpu": "encoding on an NVIDIA GPU",
    "faiss-gpu": "vector search on an NVIDIA GPU",
    "psycopg": "PostgreSQL databases",
}
# Below this, indexing a large folder or installing a model may run out of room.
LOW_DISK_BYTES = 2 << 30


@dataclass(frozen=True)
class Check:
    section: str
    name: str
    status: Status
    value: str
    hint: str = ""


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)

    def add(self, section: str, name: str, status: Status, value: str, hint: str = "") -> None:
        self.checks.append(Check(section, name, status, value, hint))

    @property
    def ok(self) -> bool:
        return all(c.status != "error" for c in self.checks)

    def to_dict(self) -> dict:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def collect(paths: DataPaths, db_url: str | None = None, *, verify_models: bool = False) -> Report:
    """Every check, in the order a person reads them."""
    report = Report()
    check_versions(report)
    check_onnxruntime(report)
    check_faiss(report)
    check_data_folder(report, paths)
    check_models(report, paths, verify=verify_models)
    check_database(report, db_url or paths.db_url)
    check_formats(report, paths)
    return report


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def check_versions(report: Report) -> None:
    report.add("versions", "python", "info", f"{platform.python_version()} ({sys.executable})")
    report.add("versions", "platform", "info", f"{platform.system()} {platform.release()} "
                                               f"{platform.machine()}")
    report.add("versions", "babelfind", "info", package_version("babelfind") or "not installed")
    for name in CORE_PACKAGES:
        version = package_version(name)
        if version is None:
            report.add("versions", name, "error", "not installed",
                       "reinstall Babelfind: pip install -e . (or 'make run')")
        else:
            report.add("versions", name, "ok", version)
    for name, needed_for in OPTIONAL_PACKAGES.items():
        version = package_version(name)
        report.add("versions", name, "ok" if version else "info",
                   version or f"not installed (needed only for {needed_for})")


def check_onnxruntime(report: Report) -> None:
    from engine.encoders.onnx import CUDA_PROVIDER, cuda_device_count, physical_cores

    try:
        import onnxruntime
    except ImportError as e:
        report.add("encoders", "onnxruntime", "error", f"cannot import: {e}")
        return
    providers = onnxruntime.get_available_providers()
    report.add("encoders", "providers", "info", ", ".join(providers))
    report.add("encoders", "cpu cores", "info", f"{physical_cores()} physical cores used")
    gpus = cuda_device_count()
    if CUDA_PROVIDER in providers and gpus:
        report.add("encoders", "device", "ok", f"cuda ({gpus} GPU{'s' * (gpus > 1)})")
    elif CUDA_PROVIDER in providers:
        report.add("encoders", "device", "warn", "cpu: onnxruntime-gpu is installed but no GPU "
                   "is visible", "check the NVIDIA driver (nvidia-smi)")
    elif gpus:
        report.add("encoders", "device", "info", f"cpu ({gpus} GPU{'s' * (gpus > 1)} unused)",
                   "to encode on the GPU, use a separate environment with onnxruntime-gpu")
    else:
        report.add("encoders", "device", "ok", "cpu")


def check_faiss(report: Report) -> None:
    try:
        import faiss
    except ImportError as e:
        report.add("vectors", "faiss", "error", f"cannot import: {e}")
        return
    gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    report.add("vectors", "faiss", "ok", f"{faiss.__version__}, "
               + (f"{gpus} GPU{'s' * (gpus > 1)}" if gpus else "CPU only"))


def check_data_folder(report: Report, paths: DataPaths) -> None:
    home = paths.home
    if not home.exists():
        report.add("data", "folder", "info", f"{home} (not created yet)")
        return
    writable = os.access(home, os.W_OK)
    report.add("data", "folder", "ok" if writable else "error", str(home),
               "" if writable else "the data folder is read-only; set BABELFIND_HOME elsewhere")
    free = shutil.disk_usage(home).free
    report.add("data", "free disk", "warn" if free < LOW_DISK_BYTES else "ok", _size(free),
               "free some space: indexing and model installs need room" if free < LOW_DISK_BYTES
               else "")
    for label, folder in (("models", paths.models), ("indexes", paths.indexes)):
        if folder.is_dir():
            report.add("data", label, "info", f"{_size(_folder_size(folder))} in {folder}")


def check_models(report: Report, paths: DataPaths, *, verify: bool) -> None:
    from engine.encoders.onnx import resolve_device
    from engine.errors import BabelfindError
    from engine.model_manifest import verify_files
    from engine.models import active_model_name, choose_variant, list_models, model_dir

    models = list_models(paths)
    active = active_model_name(paths)
    if not models:
        report.add("models", "registry", "info", "no models installed yet",
                   "the bundled models install on first use (babelfind index, search, ...)")
        return
    device = resolve_device("auto")
    for manifest in models:
        made = [v for v in manifest.variants if manifest.variant_file(v)]
        try:
            served = choose_variant(manifest, device, None)
            if verify:
                verify_files(model_dir(manifest.name, paths), manifest)
            status, note = "ok", f"serves {served} on {device}"
        except BabelfindError as e:
            status, note = "error", str(e)
        mark = " (active)" if manifest.name == active else ""
        report.add("models", manifest.name + mark, status,
                   f"{manifest.family}, {manifest.dim}-d, variants {', '.join(made) or 'none'}; {note}")
    if active is not None and active not in {m.name for m in models}:
        report.add("models", "active model", "error", f"{active} is not installed",
                   "babelfind models use NAME")


def check_database(report: Report, url: str) -> None:
    from sqlalchemy import create_engine, inspect, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    from engine.store.urls import mask_url, one_line, scrub

    try:
        parsed = make_url(url)  # ValueError for a port that is not a number
    except (ArgumentError, ValueError) as e:
        report.add("database", "url", "error", f"not a database URL: {mask_url(url)} ({scrub(one_line(e), url)})")
        return
    shown = mask_url(url)  # SQLAlchemy's own rendering shows a password given as ?password=
    if parsed.get_backend_name() == "sqlite" and parsed.database and not Path(parsed.database).exists():
        report.add("database", "url", "info", f"{shown} (not created yet)")
        return
    try:
        engine = create_engine(parsed)
    except (ImportError, SQLAlchemyError, ValueError, TypeError) as e:
        report.add("database", "url", "error", f"{shown}: {e.__class__.__name__}: {scrub(one_line(e), url)}",
                   "install the database driver named in the URL")
        return
    try:
        with engine.connect() as connection:
            tables = set(inspect(connection).get_table_names())
            if "documents" not in tables:
                report.add("database", "url", "info", f"{shown} (reachable, no library yet)")
                return
            documents = connection.execute(text("SELECT COUNT(*) FROM documents")).scalar_one()
            revision = (connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
                        if "alembic_version" in tables else "none")
        report.add("database", "url", "ok", f"{shown} ({documents} documents, schema {revision})")
    except SQLAlchemyError as e:
        first_line = scrub(str(e).splitlines()[0], url)
        report.add("database", "url", "error", f"{shown}: cannot connect: {first_line}",
                   "check that the server runs and the URL is right")
    finally:
        engine.dispose()


def check_formats(report: Report, paths: DataPaths) -> None:
    """The programs that read some formats, and what OCR can read here (engine, languages)."""
    from engine.config import load_settings
    from engine.extract.ocr import rapidocr_installed
    from engine.extract.tools import TOOLS, find_tool, install_hint, tool_version

    for tool in TOOLS:
        if tool.name == "catdoc" and find_tool("antiword"):
            continue  # only needed when antiword is absent
        version = tool_version(tool.name) if find_tool(tool.name) else None
        if find_tool(tool.name):
            report.add("formats", tool.name, "ok", f"{version or 'installed'}: reads {tool.reads}")
        else:
            report.add("formats", tool.name, "info", f"not installed: {tool.reads} are skipped",
                       f"to read them: {install_hint(tool.name)}")
    rapid = package_version("rapidocr-onnxruntime") if rapidocr_installed() else None
    report.add("formats", "rapidocr", "ok" if rapid else "info",
               f"{rapid}: reads Chinese and English images" if rapid
               else "not installed (reads Chinese and English images)",
               "" if rapid else "pip install 'babelfind[ocr]'")
    languages = _tesseract_languages(find_tool("tesseract"))
    if languages:
        report.add("formats", "OCR languages", "ok", ", ".join(languages),
                   "more: sudo apt-get install tesseract-ocr-LANG (e.g. tesseract-ocr-fra)")
    settings = load_settings(paths)
    enabled = bool(settings.get("ocr", True))
    if not enabled:
        report.add("formats", "OCR", "info", "turned off in the settings: images and scans are skipped")
    elif not languages and not rapid:
        report.add("formats", "OCR", "warn", "no OCR engine: images and scanned PDF pages are skipped",
                   f"{install_hint('tesseract')} (and tesseract-ocr-LANG packs), or pip install 'babelfind[ocr]'")
    else:
        report.add("formats", "OCR", "ok", f"on, engine {settings.get('ocr_engine', 'auto')}")


def _tesseract_languages(program: str | None) -> list[str]:
    if program is None:
        return []
    import subprocess

    try:
        done = subprocess.run([program, "--list-langs"], capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    lines = done.stdout.decode("utf-8", "replace").splitlines()[1:]
    return sorted(line.strip() for line in lines if line.strip() and line.strip() != "osd")


def _folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _size(count: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if count < 1024 or unit == "TB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
