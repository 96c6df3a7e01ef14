"""Debian packages of documentation for the dev sets, downloaded once and unpacked.

    >>> root = unpacked("maint-guide-fr")      # bench/out/debs/maint-guide-fr_1.2.53/
    >>> (root / "usr/share/doc/maint-guide-fr/html/start.fr.html").is_file()
    True

Each package is pinned to the version the dev sets were written against (the questions
name passages of that text): `apt-get download NAME=VERSION` into bench/out/debs/, then
`dpkg-deb -x`. A pinned version the archive no longer has is an error that says so,
never a silent change of the documents under the questions.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CACHE = Path(__file__).resolve().parent / "out" / "debs"

# Debian 12 (bookworm) versions.
VERSIONS = {
    "debian-handbook": "11.20220922",
    "maint-guide": "1.2.53",
    "maint-guide-de": "1.2.53",
    "maint-guide-es": "1.2.53",
    "maint-guide-fr": "1.2.53",
    "maint-guide-it": "1.2.53",
    "maint-guide-ru": "1.2.53",
    "groff": "1.22.4-10",
    "debian-faq-de": "11.1",
    "debian-faq-fr": "11.1",
    "debian-faq-it": "11.1",
    "debian-faq-ja": "11.1",
    **{f"debian-reference-{language}": "2.100" for language in ("de", "es", "fr", "it", "ja", "pt")},
}


def unpacked(name: str, cache: Path = CACHE) -> Path:
    """The root of the package's unpacked files (usr/share/...), downloading it if missing."""
    version = VERSIONS[name]
    root = cache / f"{name}_{version}"
    if (root / ".complete").is_file():
        return root
    archive = _download(name, version, cache)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    _run(["dpkg-deb", "-x", str(archive), str(root)], f"could not unpack {archive}")
    (root / ".complete").write_text(version + "\n")
    return root


def _download(name: str, version: str, cache: Path) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"{name}_{version.replace(':', '%3a')}_*.deb"))
    if found:
        return found[0]
    _run(["apt-get", "download", f"{name}={version}"],
         f"apt-get could not download {name} {version} (run 'apt-get update'; the dev sets need "
         f"exactly this version, bench/debian_packages.py)", cwd=cache)
    found = sorted(cache.glob(f"{name}_*_*.deb"))
    if not found:
        raise SystemExit(f"apt-get download {name}={version} wrote no .deb into {cache}")
    return found[0]


def _run(command: list[str], failure: str, cwd: Path | None = None) -> None:
    if shutil.which(command[0]) is None:
        raise SystemExit(f"{failure}: {command[0]} is not installed (a Debian or Ubuntu machine is needed)")
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{failure}:\n{done.stderr.strip()}")
