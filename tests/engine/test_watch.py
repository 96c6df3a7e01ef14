"""FolderWatcher: real watchdog events on a temp folder, debounced into batches."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from engine.errors import InputError
from engine.watch import ChangeBatch, FolderWatcher


@pytest.fixture
def batches():
    got: queue.Queue[ChangeBatch] = queue.Queue()
    watcher = FolderWatcher(got.put, debounce_s=0.3)
    yield watcher, got
    watcher.stop()


def _merged(got: queue.Queue, until: float = 3.0) -> tuple[set[Path], set[Path]]:
    """Everything reported within `until` seconds after the first batch arrives."""
    first = got.get(timeout=10)
    changed, deleted = set(first.changed), set(first.deleted)
    deadline = time.monotonic() + until
    while time.monotonic() < deadline:
        try:
            batch = got.get(timeout=0.2)
        except queue.Empty:
            continue
        changed |= batch.changed
        deleted |= batch.deleted
    return changed, deleted


def test_new_changed_and_deleted_files_are_reported(tmp_path, batches):
    watcher, got = batches
    old = tmp_path / "old.txt"
    old.write_text("old")
    watcher.watch(tmp_path)
    (tmp_path / "new.txt").write_text("new")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.md").write_text("# deep")
    old.unlink()
    changed, deleted = _merged(got, until=1.0)
    assert changed == {tmp_path / "new.txt", tmp_path / "sub" / "deep.md"}
    assert deleted == {old}


def test_many_writes_in_a_burst_give_one_batch(tmp_path, batches):
    watcher, got = batches
    watcher.watch(tmp_path)
    target = tmp_path / "note.txt"
    for i in range(20):
        target.write_text(f"version {i}")
    first = got.get(timeout=10)
    assert first.root == tmp_path.resolve()
    assert first.changed == frozenset({target})
    with pytest.raises(queue.Empty):
        got.get(timeout=1.0)


def test_editor_temp_files_are_ignored(tmp_path, batches):
    watcher, got = batches
    watcher.watch(tmp_path)
    (tmp_path / ".~lock.report.odt#").write_text("lock")
    (tmp_path / "report.txt.swp").write_text("swap")
    (tmp_path / "report.txt").write_text("real")
    changed, _ = _merged(got, until=0.8)
    assert changed == {tmp_path / "report.txt"}


def test_unwatched_folder_reports_nothing(tmp_path, batches):
    watcher, got = batches
    watcher.watch(tmp_path)
    assert watcher.watched() == [tmp_path.resolve()]
    watcher.unwatch(tmp_path)
    assert watcher.watched() == []
    (tmp_path / "late.txt").write_text("late")
    with pytest.raises(queue.Empty):
        got.get(timeout=1.0)


def test_a_failing_callback_does_not_stop_the_watcher(tmp_path):
    got: queue.Queue[ChangeBatch] = queue.Queue()
    calls = []

    def flaky(batch: ChangeBatch) -> None:
        calls.append(batch)
        if len(calls) == 1:
            raise RuntimeError("boom")
        got.put(batch)

    watcher = FolderWatcher(flaky, debounce_s=0.2)
    try:
        watcher.watch(tmp_path)
        (tmp_path / "a.txt").write_text("a")
        deadline = time.monotonic() + 10
        while not calls and time.monotonic() < deadline:
            time.sleep(0.05)
        (tmp_path / "b.txt").write_text("b")
        assert (tmp_path / "b.txt") in got.get(timeout=10).changed
    finally:
        watcher.stop()


def test_watching_a_file_or_missing_folder_is_an_input_error(tmp_path, batches):
    watcher, _ = batches
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InputError):
        watcher.watch(tmp_path / "file.txt")
    with pytest.raises(InputError):
        watcher.watch(tmp_path / "missing")
    with pytest.raises(InputError):
        FolderWatcher(lambda b: None, debounce_s=-1)
