"""Forget and Remove folder run as jobs: the window stays live while another process
holds the library's write lock, says who holds it, and can cancel."""

from __future__ import annotations

import pytest
from gui_helpers import drop_and_wait, type_query, write_files

from engine.locking import WRITE_LOCK_FILE, WriteLock

CORPUS = {
    "bees.txt": "Honey bees collect nectar from flowers. The hive stores honey for the winter.",
    "wasps.txt": "Wasps build paper nests and hunt other insects in the summer.",
}


@pytest.fixture
def indexed(qtbot, window, tmp_path):
    corpus = write_files(tmp_path / "corpus", CORPUS)
    drop_and_wait(qtbot, window, [corpus])
    return corpus


@pytest.fixture
def other_writer(babelfind_home):
    """The write lock held as another process would (a second open file description)."""
    lock = WriteLock(babelfind_home / WRITE_LOCK_FILE)
    assert lock.try_acquire("indexing")
    yield lock
    if lock.held_here:
        lock.release()


def waiting_shown(window) -> bool:
    return "another Babelfind process" in window.progress.detail.text()


def test_forget_waits_in_the_background_while_another_process_writes(qtbot, window, library, indexed, other_writer):
    type_query(qtbot, window, "honey nectar")
    hit = window.results.current_hit()
    window.forget_document(hit.path, confirm=False)  # returns at once: the lock is waited for in the worker
    assert window.jobs.busy() and window.progress.title.text() == "Forgetting bees.txt"
    qtbot.waitUntil(lambda: waiting_shown(window), timeout=5000)  # the event loop runs meanwhile
    assert "indexing" in window.progress.detail.text()  # the holder's own words
    assert library.status().documents == 2
    with qtbot.waitSignal(window.searched, timeout=10_000):  # the results refresh after the job
        other_writer.release()
    assert library.status().documents == 1
    assert hit.path not in [h.path for h in window.results_model.hits()]
    assert window.statusBar().currentMessage() == "Forgot bees.txt"


def test_cancel_while_waiting_removes_nothing(qtbot, window, library, indexed, other_writer):
    root = library.roots()[0].path
    window.remove_root(root, confirm=False)
    assert window.jobs.busy_roots() == {root}  # the sidebar marks it busy
    window.remove_root(root, confirm=False)  # a second click is refused, not queued
    assert len(window.jobs.pending()) == 0 and "is being indexed or removed" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: waiting_shown(window), timeout=5000)
    window.progress.cancel_button.click()
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=5000)
    assert library.status().documents == 2 and len(library.roots()) == 1
    assert window.statusBar().currentMessage() == f"Removing {indexed.name}: cancelled; nothing was removed"
    assert not library.lock.held_here


def test_a_wait_limit_ends_in_the_engines_busy_message(qtbot, window, library, indexed, other_writer):
    library.lock_timeout = 0.3
    window.remove_root(library.roots()[0].path, confirm=False)
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=5000)
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Removing {indexed.name}: another Babelfind process (pid ")
    assert "try again when it has finished after waiting 0.3 s" in message
    assert library.status().documents == 2


def test_forgetting_twice_reports_the_second_as_not_indexed(qtbot, window, library, indexed):
    path = str(indexed / "bees.txt")
    window.forget_document(path, confirm=False)
    window.forget_document(path, confirm=False)  # queued behind the first
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=5000)
    assert library.status().documents == 1
    assert window.statusBar().currentMessage() == f"Forgetting bees.txt: {path} is not indexed"


def test_a_watched_folder_drops_deleted_files_in_the_worker(qtbot, window, library, indexed, other_writer):
    """The watcher's deletions used to call forget() on the GUI thread and froze it."""
    window.set_watch(library.roots()[0].path, True)
    (indexed / "wasps.txt").unlink()
    qtbot.waitUntil(lambda: window.jobs.busy(), timeout=10_000)
    qtbot.waitUntil(lambda: waiting_shown(window), timeout=5000)
    other_writer.release()
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=10_000)
    assert library.status().documents == 1
    assert window.statusBar().currentMessage() == "Removed 1 document"
