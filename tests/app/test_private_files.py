"""Private by default: the home is 0700 and every file Babelfind writes in it 0600, whatever
the umask; another user of the machine cannot read the indexed text (issue 24: under umask
022 `grep` as `nobody` found document words in babelfind.db and keywords.sqlite)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from app.cli import main

SECRET_WORD = "quokkaxylophone"
posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture(params=[0o022, 0o000], ids=["umask022", "umask000"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


@pytest.fixture
def open_home(monkeypatch):
    """A home inside a folder every user may enter (pytest's own tmp folders are 0700,
    which would hide any mistake), removed afterwards."""
    outer = Path(tempfile.mkdtemp(prefix="babelfind-private-"))
    outer.chmod(0o755)
    home = outer / "home"
    monkeypatch.setenv("BABELFIND_HOME", str(home))
    yield home
    shutil.rmtree(outer, ignore_errors=True)


def index_a_secret(home: Path, tiny_registry, tmp_path: Path) -> None:
    assert main(["status"]) == 0  # makes the home
    shutil.copytree(tiny_registry.models, home / "models", dirs_exist_ok=True)
    assert main(["models", "use", "tiny"]) == 0
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "diary.txt").write_text(f"My private note about the {SECRET_WORD} in the garden.", encoding="utf-8")
    assert main(["index", str(corpus)]) == 0
    assert main(["search", SECRET_WORD]) == 0


def loose(home: Path) -> list[str]:
    """Everything under `home` (itself included) that a group or other user may use."""
    found = []
    for path in [home, *home.rglob("*")]:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077:
            found.append(f"{path.relative_to(home.parent)} {oct(mode)}")
    return found


@posix_only
def test_everything_in_the_home_is_owner_only(open_home, umask, tiny_registry, tmp_path):
    index_a_secret(open_home, tiny_registry, tmp_path)
    written = {p.name for p in open_home.rglob("*")}
    assert {"babelfind.db", "keywords.sqlite", "babelfind.log", "settings.json"} <= written, written
    assert loose(open_home) == []


@posix_only
def test_an_older_home_is_tightened(open_home, tiny_registry, tmp_path, monkeypatch):
    import engine.private

    index_a_secret(open_home, tiny_registry, tmp_path)
    for path in [open_home, *open_home.rglob("*")]:  # as an earlier version left them
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setattr(engine.private, "_homes_tightened", set())  # as in a new process
    assert main(["search", SECRET_WORD]) == 0
    assert not [p for p in loose(open_home) if "models" not in p]


@posix_only
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="no setpriv (util-linux)")
def test_another_user_cannot_read_the_indexed_text(open_home, tiny_registry, tmp_path):
    old = os.umask(0o022)
    try:
        index_a_secret(open_home, tiny_registry, tmp_path)
    finally:
        os.umask(old)
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # The same command as root (through the same folders) does find it: the check can fail.
    assert subprocess.run(["grep", "-rl", SECRET_WORD, str(open_home)], capture_output=True).stdout
    found = subprocess.run([*nobody, "grep", "-rl", SECRET_WORD, str(open_home)], capture_output=True, text=True)
    assert found.stdout == "" and found.returncode != 0, found
    assert "Permission denied" in found.stderr
