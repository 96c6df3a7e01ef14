"""The write lock and the URL masking that messages rely on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from engine.errors import LibraryBusyError
from engine.locking import WriteLock, waiting_message
from engine.store.urls import mask_url, one_line, scrub, sqlite_database_file, sqlite_plain_file

REPO = Path(__file__).resolve().parents[2]

HOLDER = textwrap.dedent(
    """
    import sys, time
    from engine.locking import WriteLock
    lock = WriteLock(sys.argv[1])
    assert lock.try_acquire("indexing")
    print("held", flush=True)
    time.sleep(600)
    """
)


def test_a_killed_holder_releases_the_lock(tmp_path):
    path = tmp_path / "write.lock"
    env = os.environ | {"PYTHONPATH": str(REPO)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        lock = WriteLock(path)
        assert not lock.try_acquire("checking")
        assert lock.holder().pid == holder.pid and lock.holder().activity == "indexing"
        assert waiting_message(lock.holder()) == (
            f"another Babelfind process (pid {holder.pid}, indexing) is writing to this "
            "library; waiting...")
        with pytest.raises(LibraryBusyError, match=f"pid {holder.pid}, indexing"):
            with lock.hold("checking", timeout=0.3):
                pass
        before = path.read_bytes()
        assert lock.held_elsewhere() and lock.held_elsewhere()
        assert path.read_bytes() == before  # asking wrote nothing over the holder's note
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        holder.stdout.close()
    assert not lock.held_elsewhere()
    assert lock.try_acquire("checking")  # the OS dropped the dead process's lock
    assert not lock.held_elsewhere() and lock.held_here  # this process holds it, and still does
    lock.release()


def test_one_holder_per_process_and_release_from_another_thread(tmp_path):
    lock = WriteLock(tmp_path / "write.lock")
    assert lock.try_acquire("indexing") and lock.held_here
    assert not lock.try_acquire("indexing")  # not re-entrant: a second writer waits
    thread = threading.Thread(target=lock.release)  # a generator closed elsewhere
    thread.start()
    thread.join()
    assert not lock.held_here and lock.try_acquire("indexing")
    lock.release()


def test_hold_tells_once_while_waiting(tmp_path):
    path = tmp_path / "write.lock"
    first, second = WriteLock(path), WriteLock(path)
    assert first.try_acquire("indexing")
    told = []
    threading.Timer(0.7, first.release).start()
    with second.hold("forgetting", on_wait=told.append):
        assert second.held_here
    assert len(told) == 1 and told[0].pid == os.getpid()


@pytest.mark.parametrize("url, masked", [
    ("postgresql://me:s3cret@db:5432/lib", "postgresql://me:***@db:5432/lib"),
    ("postgresql://db/lib?password=s3cret&sslmode=require", "postgresql://db/lib?password=***&sslmode=require"),
    ("postgresql://db/lib?sslmode=require&PASSWORD=s3cret", "postgresql://db/lib?sslmode=require&PASSWORD=***"),
    ("mysql+pymysql://me:p%40ss@db/lib?token=abc", "mysql+pymysql://me:***@db/lib?token=***"),
    ("sqlite:////home/me/babelfind.db", "sqlite:////home/me/babelfind.db"),
    ("not a url", "not a url"),
])
def test_mask_url_hides_every_secret(url, masked):
    assert mask_url(url) == masked


@pytest.mark.parametrize("url, file", [
    ("sqlite:////home/me/babelfind.db", "/home/me/babelfind.db"),
    ("sqlite:///:memory:", None),
    ("sqlite://", None),
    ("sqlite:///file:lib?mode=memory&uri=true", None),
    ("postgresql://me@db/lib", None),
])
def test_the_file_of_a_sqlite_database(url, file):
    assert sqlite_database_file(make_url(url)) == file


def test_a_uri_name_is_no_plain_file():
    assert sqlite_plain_file(make_url("sqlite:////home/me/babelfind.db")) == "/home/me/babelfind.db"
    assert sqlite_plain_file(make_url("sqlite:///file:/home/me/babelfind.db?mode=ro&uri=true")) is None


def test_scrub_removes_secrets_from_driver_messages():
    url = "postgresql://me:p%40ss@db/lib?password=other"
    message = 'connection to "db" failed for user me with password p@ss (other)\n(Background on this error at: x)'
    cleaned = scrub(one_line(message), url)
    assert "p@ss" not in cleaned and "other" not in cleaned and "Background" not in cleaned
    assert scrub("nothing to hide", "") == "nothing to hide"
