"""Several processes writing to one home: every document stays searchable.

Before the write lock, two `babelfind index` runs each saved a FAISS file lacking the
other's passages but stamped with the database's version, so documents were counted
but never found. Each test ends by comparing database and vector file exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers import WordEncoder, assert_database_matches_vector_file

from engine.config import data_paths
from engine.errors import LibraryBusyError
from engine.events import IndexFinished, IndexProgress
from engine.library import Library
from engine.locking import WRITE_LOCK_FILE, WriteLock

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO = TESTS_DIR.parent

# Indexes argv[2:] into home argv[1]; with PAUSE=1 it stops after its first file,
# holding the lock, until a line arrives on stdin. START names a file to wait for, so
# several workers open a fresh home at the same moment.
WORKER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from helpers import WordEncoder, assert_database_matches_vector_file
    from engine.config import data_paths
    from engine.events import IndexProgress
    from engine.indexer import IndexerConfig
    from engine.library import Library

    home, folders = Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]
    start = os.environ.get("START")
    while start and not Path(start).exists():
        time.sleep(0.005)
    library = Library.open(data_paths(home), encoder=WordEncoder(),
                           config=IndexerConfig(batch_passages=4, save_every_s=0))
    paused = os.environ.get("PAUSE") != "1"
    for event in library.index_paths(folders):
        if isinstance(event, IndexProgress) and event.waiting:
            print("waiting", flush=True)
        elif isinstance(event, IndexProgress) and event.files_done and not paused:
            print("holding", flush=True)
            sys.stdin.readline()
            paused = True
    print("done", flush=True)
    """
)


def make_folder(root: Path, name: str, n: int) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    for i in range(n):
        text = f"{name} document {i} about topic{name}{i}. " + f"Second sentence {name} {i}. " * 3
        (folder / f"{name}-{i:03d}.txt").write_text(text, encoding="utf-8")
    return folder


def start_worker(home: Path, *folders: Path, pause: bool = False, start: Path | None = None):
    env = os.environ | {"PYTHONPATH": f"{TESTS_DIR}{os.pathsep}{REPO}", "OMP_NUM_THREADS": "1",
                        "PAUSE": "1" if pause else "0", "START": str(start or "")}
    return subprocess.Popen([sys.executable, "-c", WORKER, str(home), *map(str, folders)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def read_until(proc, wanted: str) -> None:
    for line in proc.stdout:
        if line.strip() == wanted:
            return
    raise AssertionError(f"worker ended before printing {wanted!r}: {proc.stderr.read()}")


def finish(proc) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return out


def test_a_second_process_waits_then_both_folders_are_searchable(babelfind_home, tmp_path):
    a, b = make_folder(tmp_path, "alpha", 12), make_folder(tmp_path, "beta", 12)
    first = start_worker(babelfind_home, a, pause=True)
    read_until(first, "holding")  # mid-run, holding the lock
    second = start_worker(babelfind_home, b)
    read_until(second, "waiting")
    first.stdin.write("go\n")
    first.stdin.flush()
    finish(first), finish(second)

    assert assert_database_matches_vector_file(babelfind_home) == 24
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    found = {Path(library.search(f"topic{name}{i}", k=1)[0].path).name
             for name in ("alpha", "beta") for i in range(12)}
    assert found == {f"{name}-{i:03d}.txt" for name in ("alpha", "beta") for i in range(12)}


@pytest.mark.parametrize("same_folder", [False, True])
def test_processes_starting_together_on_a_fresh_home(babelfind_home, tmp_path, same_folder):
    """Migrations, the first generation and (same folder) the same documents, all at once."""
    a = make_folder(tmp_path, "alpha", 8)
    b = a if same_folder else make_folder(tmp_path, "beta", 8)
    go = tmp_path / "go"
    workers = [start_worker(babelfind_home, folder, start=go) for folder in (a, b, a)]
    time.sleep(1.5)  # every worker has imported and now spins on the start file
    go.touch()
    for worker in workers:
        finish(worker)
    expected = 8 * (1 if same_folder else 2)
    assert assert_database_matches_vector_file(babelfind_home) == expected


def test_search_in_an_open_library_sees_another_process_documents(babelfind_home, tmp_path):
    """The window stays open while the CLI indexes; afterwards it finds the new documents,
    and its own next indexing run keeps them (it reloads before writing)."""
    a, b = make_folder(tmp_path, "alpha", 5), make_folder(tmp_path, "beta", 5)
    window = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    *_, last = window.index_paths([a])
    assert isinstance(last, IndexFinished)
    finish(start_worker(babelfind_home, b))
    assert Path(window.search("topicbeta3", k=1)[0].path).name == "beta-003.txt"
    (a / "alpha-new.txt").write_text("A new alpha file about topicnew.", encoding="utf-8")
    list(window.index_paths([a]))
    window.close()
    assert assert_database_matches_vector_file(babelfind_home) == 11


def test_no_wait_gives_a_busy_error_naming_the_holder(babelfind_home, tmp_path):
    folder = make_folder(tmp_path, "alpha", 2)
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder(), lock_timeout=0)
    other = WriteLock(babelfind_home / WRITE_LOCK_FILE)  # another "process": its own file handle
    assert other.try_acquire("indexing")
    try:
        with pytest.raises(LibraryBusyError, match=rf"pid {os.getpid()}, indexing"):
            list(library.index_paths([folder]))
        with pytest.raises(LibraryBusyError):
            library.forget(folder)
    finally:
        other.release()
    *_, last = library.index_paths([folder])
    assert last.summary.indexed == 2


def test_a_waiting_run_yields_waiting_progress_and_can_be_cancelled(babelfind_home, tmp_path):
    folder = make_folder(tmp_path, "alpha", 2)
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    other = WriteLock(babelfind_home / WRITE_LOCK_FILE)
    assert other.try_acquire("re-encoding with big-model")
    try:
        events = library.index_paths([folder])
        first = next(events)
        assert isinstance(first, IndexProgress)
        assert "another Babelfind process" in first.waiting and "re-encoding with big-model" in first.waiting
        events.close()  # cancel while waiting: nothing held, nothing written
        assert not library.lock.held_here
    finally:
        other.release()
    assert library.status().documents == 0


def test_forget_waits_for_the_writer_to_finish(babelfind_home, tmp_path):
    folder = make_folder(tmp_path, "alpha", 3)
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(library.index_paths([folder]))
    other = WriteLock(babelfind_home / WRITE_LOCK_FILE)
    assert other.try_acquire("indexing")
    told = []
    library.on_busy = told.append
    threading.Timer(0.5, other.release).start()
    assert library.forget(folder) == 3
    assert len(told) == 1 and told[0].activity == "indexing"


def test_a_lagging_index_never_stamps_the_database_version(babelfind_home, tmp_path):
    """The root cause: a process saved its FAISS file stamped with whatever version the
    database had reached, claiming passages another process had added."""
    from engine.index.live_index import LiveIndex
    from engine.index.vector_file import read_trailer

    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(library.index_paths([make_folder(tmp_path, "alpha", 3)]))
    lagging = LiveIndex.open(library.store, library.live.generation, data_paths(babelfind_home).indexes)
    list(library.index_paths([make_folder(tmp_path, "beta", 3)]))  # the other writer moves on
    newer = library.live.version
    lagging.save()
    saved = read_trailer(LiveIndex.file_for(lagging.folder, lagging.generation.id))
    assert saved["generation"] == newer and saved["count"] == len(library.live)  # kept
    assert lagging.stale() is not None and lagging.version < newer
    assert lagging.refresh() and lagging.version == newer and len(lagging) == len(library.live)
    assert lagging.stale() is None and not lagging.refresh()


def test_a_file_from_a_newer_timeline_is_replaced(babelfind_home, tmp_path):
    """A database restored from a backup is older than the vector file: the file goes."""
    from engine.index.live_index import LiveIndex
    from engine.index.vector_file import read_trailer

    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(library.index_paths([make_folder(tmp_path, "alpha", 3)]))
    path = LiveIndex.file_for(library.live.folder, library.live.generation.id)
    library.live.index.save(path, generation=library.live.version + 50)
    library.close()
    reopened = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    assert read_trailer(path)["generation"] == reopened.live.version
    assert Path(reopened.search("topicalpha1", k=1)[0].path).name == "alpha-001.txt"


def test_an_open_library_follows_a_model_switch_made_elsewhere(babelfind_home, tmp_path,
                                                               monkeypatch):
    import engine.library as library_module

    switched = WordEncoder("words-2", dim=128)
    loaded = []
    monkeypatch.setattr(library_module, "_set_registry_active", lambda name, paths: None)
    monkeypatch.setattr(library_module, "_load_encoder",
                        lambda name, paths: loaded.append(name) or switched)
    window = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(window.index_paths([make_folder(tmp_path, "alpha", 3)]))
    other = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(other.switch_model("words-2", encoder=switched))
    other.close()
    hits = window.search("topicalpha2", k=1)
    assert loaded == ["words-2"] and window.live.generation.model_name == "words-2"
    assert Path(hits[0].path).name == "alpha-002.txt"


def test_forgetting_yields_the_waiting_message_and_can_be_cancelled_while_waiting(babelfind_home, tmp_path):
    """The window's Forget job: no blocking call, the holder named, Cancel leaves all."""
    folder = make_folder(tmp_path, "alpha", 3)
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(library.index_paths([folder]))
    other = WriteLock(babelfind_home / WRITE_LOCK_FILE)
    assert other.try_acquire("indexing")
    try:
        events = library.forgetting([folder])
        first = next(events)
        assert isinstance(first, IndexProgress) and "another Babelfind process" in first.waiting
        assert "indexing" in first.waiting
        events.close()  # cancelled while waiting
        assert not library.lock.held_here
    finally:
        other.release()
    assert assert_database_matches_vector_file(babelfind_home) == 3
    *_, last = list(library.forgetting([folder]))
    assert isinstance(last, IndexFinished) and last.summary.removed == 3
    assert library.status().documents == 0 and library.roots() == []
