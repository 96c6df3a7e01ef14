"""engine.atomic: whole-file replacement that crashes and concurrent writers cannot tear."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.atomic import STALE_TEMP_S, atomic_file, remove_stale_temps

REPO = Path(__file__).resolve().parents[2]


def test_content_is_replaced_whole(tmp_path):
    path = tmp_path / "settings.json"
    with atomic_file(path, "w", encoding="utf-8") as f:
        f.write("new")
    assert path.read_text(encoding="utf-8") == "new"
    assert os.listdir(tmp_path) == ["settings.json"]


def test_an_error_while_writing_keeps_the_old_content_and_no_temp(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_file(path, "w", encoding="utf-8") as f:
        f.write("half")
        raise RuntimeError("killed")
    assert path.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["settings.json"]


def test_only_temps_nobody_writes_any_more_are_removed(tmp_path):
    path = tmp_path / "index.faiss"
    dead, live = tmp_path / ".index.faiss.dead.tmp", tmp_path / ".index.faiss.live.tmp"
    other = tmp_path / ".other.faiss.dead.tmp"  # another file's temp: not ours to judge
    for temp in (dead, live, other):
        temp.write_bytes(b"x")
    for temp in (dead, other):
        old = time.time() - STALE_TEMP_S - 60
        os.utime(temp, (old, old))
    remove_stale_temps(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, other.name]


WRITER = """
import sys
from engine.atomic import atomic_file
path, mark = sys.argv[1], sys.argv[2]
for _ in range(200):
    with atomic_file(path, "w", encoding="utf-8") as f:
        f.write(mark * 50_000)
"""


def test_processes_saving_one_file_at_once_all_succeed_and_leave_it_whole(tmp_path):
    """Two first starts on a fresh home both save the vector file: neither may fail, and
    the file must be one writer's complete content (a shared temp name broke both)."""
    path = tmp_path / "generation-1.faiss"
    env = os.environ | {"PYTHONPATH": str(REPO)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), mark], env=env,
                                stderr=subprocess.PIPE, text=True) for mark in "ab"]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    content = path.read_text(encoding="utf-8")
    assert content in ("a" * 50_000, "b" * 50_000)
    assert os.listdir(tmp_path) == [path.name]
