"""Unpacking a model to import, from a folder or a .zip, without trusting either.

    >>> folder = unpack_model(Path("mymodel.zip"), staging)    # staging/model/manifest.json ...

Only the manifest and the files it lists are copied; symbolic links are refused (a link
to /etc/shadow would otherwise be copied into the registry); archive members must lie
inside the model folder, be listed, and stay within their declared sizes, a size bound
and the free disk space (a zip bomb stops before it fills the disk). The compression
ratio is bounded for each large member and for the archive as a whole: 64 members of
16 MiB of zeros each pass any per-member bound that lets real files through, but
together they are 1 GiB from 1 MB.
"""

from __future__ import annotations

import json
import logging
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath

from engine.errors import ModelError
from engine.model_files import contained, validate_manifest

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
MAX_MANIFEST_BYTES = 4 << 20  # a manifest is a few kB; bigger is not ours
MAX_MODEL_BYTES = 32 << 30  # far above any model Babelfind serves
MAX_RATIO = 200  # uncompressed / compressed: ONNX weights ~1.1, tokenizer JSON ~4, zeros ~1000
_RATIO_FROM = 16 << 20  # small files may compress well (a JSON of padding); allow them
# The whole archive: a real model is mostly weights (~1.1), so even a large vocabulary
# file next to small weights stays far below this.
MAX_ARCHIVE_RATIO = 20
_ARCHIVE_RATIO_FROM = 64 << 20  # a small model may be mostly JSON; allow it
# Only these: zipfile decompresses bzip2 and LZMA members without bounding the output.
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
_CHUNK = 1 << 20


def unpack_model(source: Path, staging: Path) -> Path:
    """Copies or extracts `source` into `staging / "model"`; returns that folder."""
    dest = staging / "model"
    dest.mkdir(parents=True)
    if source.is_dir():
        _copy_folder(source.resolve(), dest)
    else:
        _extract_zip(source, dest)
    return dest


# -- folders -------------------------------------------------------------------


def _copy_folder(source: Path, dest: Path) -> None:
    manifest_path = source / MANIFEST_FILE
    _refuse_link(manifest_path, source)
    data = _manifest_data(_read_bounded(manifest_path), manifest_path)
    listed = set(data.get("files") or {})
    for path in sorted(source.rglob("*")):
        if path.is_symlink():
            _refuse_link(path, source)
        elif path.is_file() and path.relative_to(source).as_posix() not in listed | {MANIFEST_FILE}:
            log.info("not importing %s: not listed in the model manifest", path)
    for name in [MANIFEST_FILE, *sorted(listed)]:
        src = contained(source, name)
        if not src.is_file():
            raise ModelError(f"model file is missing: {src}", src)
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target, follow_symlinks=False)


def _refuse_link(path: Path, source: Path) -> None:
    if path.is_symlink():
        raise ModelError(f"{path}: is a symbolic link (to {path.readlink()}); model folders "
                         f"to import must hold the files themselves", source)


def _read_bounded(path: Path) -> bytes:
    if not path.is_file():
        raise ModelError(f"model manifest is missing: {path}", path)
    if path.stat().st_size > MAX_MANIFEST_BYTES:
        raise ModelError(f"{path}: too large for a model manifest", path)
    return path.read_bytes()


def _manifest_data(raw: bytes, path: Path) -> dict:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ModelError(f"model manifest is unreadable: {path} ({e})", path) from e
    validate_manifest(data, path)
    return data


# -- archives -----------------------------------------------------------------


def _extract_zip(source: Path, dest: Path) -> None:
    try:
        with zipfile.ZipFile(source) as zf:
            members = [m for m in zf.infolist() if not m.is_dir()]
            for member in members:
                _check_member(source, member)
            manifest = _manifest_member(source, members)
            prefix = manifest.filename[: -len(MANIFEST_FILE)]
            data = _manifest_data(_read_member(zf, manifest, MAX_MANIFEST_BYTES, source),
                                  source / manifest.filename)
            wanted = {prefix + name for name in data.get("files") or {}} | {manifest.filename}
            unlisted = [m.filename for m in members if m.filename not in wanted]
            if unlisted:
                raise ModelError(f"{source}: the archive holds files its manifest does not list: "
                                 f"{', '.join(unlisted[:3])}", source)
            absent = sorted(wanted - {m.filename for m in members})
            if absent:
                raise ModelError(f"{source}: the archive lacks listed file(s): {', '.join(absent[:3])}",
                                 source)
            _check_sizes(source, members, dest)
            for member in members:
                _extract_member(zf, member, contained(dest, member.filename[len(prefix):]), source)
    except zipfile.BadZipFile as e:
        raise ModelError(f"{source} is not a model archive (.zip): {e}", source) from e


def _check_member(source: Path, member: zipfile.ZipInfo) -> None:
    name = PurePosixPath(member.filename)
    if name.is_absolute() or ".." in name.parts or "\\" in member.filename or ":" in member.filename:
        raise ModelError(f"{source}: unsafe path in archive: {member.filename}", source)
    if stat.S_ISLNK(member.external_attr >> 16):
        raise ModelError(f"{source}: the archive holds a symbolic link: {member.filename}", source)
    if member.compress_type not in _METHODS:
        raise ModelError(f"{source}: {member.filename} uses compression method {member.compress_type}; "
                         "model archives are stored or deflated", source)
    if member.file_size > _RATIO_FROM and member.file_size > MAX_RATIO * max(member.compress_size, 1):
        raise ModelError(f"{source}: {member.filename} expands {member.file_size} bytes from "
                         f"{member.compress_size} (a zip bomb?)", source)


def _manifest_member(source: Path, members: list[zipfile.ZipInfo]) -> zipfile.ZipInfo:
    found = [m for m in members if PurePosixPath(m.filename).name == MANIFEST_FILE
             and len(PurePosixPath(m.filename).parts) <= 2]
    if len(found) != 1:
        raise ModelError(f"{source}: expected one {MANIFEST_FILE}, found {len(found)}", source)
    return found[0]


def _check_sizes(source: Path, members: list[zipfile.ZipInfo], dest: Path) -> None:
    declared = sum(m.file_size for m in members)
    if declared > MAX_MODEL_BYTES:
        raise ModelError(f"{source}: the archive unpacks to {declared / 2**30:.1f} GiB, more "
                         f"than a model may take ({MAX_MODEL_BYTES / 2**30:.0f} GiB)", source)
    compressed = max(sum(m.compress_size for m in members), 1)
    if declared > _ARCHIVE_RATIO_FROM and declared > MAX_ARCHIVE_RATIO * compressed:
        raise ModelError(f"{source}: the archive expands {declared / 2**20:.0f} MiB from "
                         f"{compressed / 2**20:.1f} MiB ({declared / compressed:.0f}:1; a zip bomb?)", source)
    free = shutil.disk_usage(dest).free
    if declared > free:
        raise ModelError(f"{source}: unpacking needs {declared / 2**20:.0f} MiB but only "
                         f"{free / 2**20:.0f} MiB are free in {dest.parent}", source)


def _read_member(zf: zipfile.ZipFile, member: zipfile.ZipInfo, limit: int, source: Path) -> bytes:
    if member.file_size > limit:
        raise ModelError(f"{source}: {member.filename} is too large for a model manifest", source)
    with zf.open(member) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ModelError(f"{source}: {member.filename} is larger than it declares", source)
    return data


def _extract_member(zf: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, source: Path) -> None:
    """Streams one member to disk, stopping once it passes its declared size."""
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with zf.open(member) as src, open(target, "xb") as out:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > member.file_size:
                raise ModelError(f"{source}: {member.filename} is larger than it declares", source)
            out.write(chunk)
