"""The official LASER files: find them in a folder, or download them (no torch here).

    >>> found = find_laser_files(Path("~/Downloads/laser"))    # LaserFolder(checkpoint, spm, cvocab, name)
    >>> folder = download_laser("laser2", Path("/tmp/x"))       # laser2.pt, laser2.spm, laser2.cvocab

LASER2 is `laser2.pt` + `laser2.spm` + `laser2.cvocab`; a LASER3 encoder is
`laser3-xxx.v1.pt` (xxx: its focus language) read with LASER2's spm and cvocab. The files
live under https://dl.fbaipublicfiles.com/nllb/laser/ (as laser_encoders downloads them);
BABELFIND_LASER_URL replaces that base (a mirror, or a test server).
"""

from __future__ import annotations

import os
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from engine.errors import InputError, ModelError

LASER_URL = "https://dl.fbaipublicfiles.com/nllb/laser"
URL_ENV = "BABELFIND_LASER_URL"
CONNECT_TIMEOUT_S = 5.0  # offline machines fail at once: no DNS or a refused connection
READ_TIMEOUT_S = 60.0
LASER3 = re.compile(r"^laser3-([a-z]{3})$")
CHUNK = 1 << 20
# (file, bytes done, bytes in all or None when the server does not say)
DownloadProgress = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class LaserFolder:
    checkpoint: Path
    spm: Path
    cvocab: Path | None  # None: not in the folder (the cross-check is skipped)
    name: str  # registry name from the file names: "laser2", "laser3-xxx"


def model_name(checkpoint: Path) -> str:
    """laser2.pt -> laser2, laser3-wol.v1.pt -> laser3-wol, My Model.pt -> my-model."""
    stem = checkpoint.name[:-len(".pt")] if checkpoint.name.endswith(".pt") else checkpoint.stem
    stem = re.sub(r"\.v\d+$", "", stem)
    return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._") or "laser"


def find_laser_files(folder: Path) -> LaserFolder:
    """The checkpoint, SentencePiece model and vocabulary in `folder`, and the model's name.

    Raises:
        InputError: `folder` is not a folder; no .pt or no .spm in it; several candidates
            for one role, so that which belongs together is a guess.
    """
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder")
    checkpoint = _one(folder, ".pt", preferred=("laser2.pt",), role="LASER checkpoint",
                      expected="laser2.pt or laser3-xxx.v1.pt")
    stem = checkpoint.name[:-len(".pt")]
    preferred = (f"{stem}.spm", f"{model_name(checkpoint)}.spm", "laser2.spm")
    spm = _one(folder, ".spm", preferred=preferred, role="SentencePiece model",
               expected="laser2.spm (LASER3 encoders use LASER2's)")
    cvocab = _one(folder, ".cvocab", preferred=(f"{stem}.cvocab", f"{model_name(checkpoint)}.cvocab",
                                                  "laser2.cvocab"),
                  role="vocabulary", expected="laser2.cvocab", required=False)
    return LaserFolder(checkpoint, spm, cvocab, model_name(checkpoint))


def _one(folder: Path, suffix: str, *, preferred: tuple[str, ...], role: str, expected: str,
         required: bool = True) -> Path | None:
    found = sorted(p for p in folder.iterdir() if p.suffix.lower() == suffix and p.is_file())
    if not found:
        if not required:
            return None
        raise InputError(f"no {role} in {folder}: expected {expected}")
    if len(found) == 1:
        return found[0]
    by_name = {p.name: p for p in found}
    for name in preferred:
        if name in by_name:
            return by_name[name]
    names = ", ".join(p.name for p in found)
    raise InputError(f"{folder} holds several {role}s ({names}); keep one, or name the files: "
                     f"babelfind models import-laser FILE.pt --spm FILE.spm --cvocab FILE.cvocab")


def laser_file_names(model: str) -> tuple[str, ...]:
    """The files that make `model` ("laser2" or "laser3-xxx"), checkpoint first.

    Raises:
        InputError: another name.
    """
    if model == "laser2":
        return ("laser2.pt", "laser2.spm", "laser2.cvocab")
    if LASER3.match(model):
        return (f"{model}.v1.pt", "laser2.spm", "laser2.cvocab")
    raise InputError(f"unknown LASER model {model!r}: use laser2 or laser3-xxx (xxx: a language "
                     "code as in LASER's list, e.g. laser3-wol)")


def base_url() -> str:
    return os.environ.get(URL_ENV, LASER_URL).rstrip("/")


def download_laser(model: str, dest: Path, *, url: str | None = None,
                   progress: DownloadProgress | None = None) -> Path:
    """Downloads `model`'s files into folder `dest`; returns `dest`.

    Raises:
        InputError: an unknown model name.
        ModelError: the server cannot be reached (at once, within CONNECT_TIMEOUT_S), a file
            is missing there, or the transfer breaks off; the message says what to do
            instead. A partly downloaded file is removed.
    """
    names = laser_file_names(model)
    url = (url or base_url()).rstrip("/")
    check_reachable(url, model)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        _fetch(f"{url}/{name}", dest / name, progress)
    return dest


def offline_hint(model: str) -> str:
    files = ", ".join(laser_file_names(model))
    return (f"download {files} from {LASER_URL}/ on a connected machine, put them in one "
            f"folder and run: babelfind models import-laser FOLDER")


def check_reachable(url: str, model: str) -> None:
    """Opens (and closes) a TCP connection to `url`'s host: fails fast when offline."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"not an http(s) URL: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise ModelError(f"cannot reach {parts.hostname}:{port} ({e.strerror or e}); "
                         f"{offline_hint(model)}") from e


def _fetch(url: str, target: Path, progress: DownloadProgress | None) -> None:
    part = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=READ_TIMEOUT_S) as response, part.open("wb") as out:
            total = response.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else None
            done = 0
            while chunk := response.read(CHUNK):
                out.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(target.name, done, total)
        if total is not None and done != total:
            raise ModelError(f"{url}: the transfer stopped at {done:,} of {total:,} bytes", target)
        part.replace(target)
    except urllib.error.HTTPError as e:
        raise ModelError(f"{url}: the server answered {e.code} {e.reason}", target) from e
    except (urllib.error.URLError, OSError) as e:
        raise ModelError(f"{url}: download failed ({getattr(e, 'reason', e)})", target) from e
    finally:
        part.unlink(missing_ok=True)
