"""One writer at a time per library home, across processes.

    >>> lock = WriteLock(paths.home / WRITE_LOCK_FILE)
    >>> with lock.hold("indexing", timeout=None, on_wait=print): ...   # waits its turn

The window, the CLI and folder watching all write through `engine.library.Library`,
which takes this lock around every change to the vectors: two processes indexing at
once would otherwise each save a FAISS file that lacks the other's passages. The lock
is an OS file lock (`fcntl.flock` on POSIX, `msvcrt.locking` on Windows), so it is
released when its holder dies, even by `kill -9`; the file itself stays and only
records who holds it ("pid 123, indexing") for the waiting message.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from engine.errors import LibraryBusyError
from engine.private import private_file

log = logging.getLogger(__name__)

WRITE_LOCK_FILE = "write.lock"
MIGRATE_LOCK_FILE = "migrate.lock"
POLL_S = 0.2  # how often a waiting process retries; short next to any write


@dataclass(frozen=True)
class LockHolder:
    """Who holds a lock, as its file says (either may be unknown while it is written)."""

    pid: int | None
    activity: str

    def describe(self) -> str:
        pid = f"pid {self.pid}" if self.pid else "pid unknown"
        return f"{pid}, {self.activity}" if self.activity else pid


class WriteLock:
    """A cross-process lock on one file; within a process, one holder at a time.

    Not re-entrant on purpose: a library's public write methods take it, the private
    steps they share do not. A plain `threading.Lock` (not an RLock) guards the
    process's side, so a generator that holds the lock may be closed from any thread.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._thread_lock = threading.Lock()
        self._fd: int | None = None

    @property
    def held_here(self) -> bool:
        """True while this object holds the lock (some thread of this process writes)."""
        return self._fd is not None

    def try_acquire(self, activity: str) -> bool:
        """Takes the lock if it is free now; True on success."""
        if not self._thread_lock.acquire(blocking=False):
            return False
        try:
            fd = _open(self.path)
            if not _os_try_lock(fd):
                os.close(fd)
                self._thread_lock.release()
                return False
        except BaseException:
            self._thread_lock.release()
            raise
        self._fd = fd
        _write_holder(fd, activity)
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            _os_unlock(fd)
            os.close(fd)
        self._thread_lock.release()

    def held_elsewhere(self) -> bool:
        """True while another process holds the lock. Tests it without waiting and writes
        nothing; a process that tries the lock in that instant retries (POLL_S later)."""
        if self.held_here:
            return False
        fd = _open(self.path)
        try:
            if not _os_try_lock(fd):
                return True
            _os_unlock(fd)
            return False
        finally:
            os.close(fd)

    def holder(self) -> LockHolder:
        """What the lock file says about its holder (pid None when unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
            return LockHolder(int(data["pid"]), str(data.get("activity", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return LockHolder(None, "")

    def wait_steps(self, activity: str, timeout: float | None) -> Iterator[LockHolder]:
        """Acquires the lock; yields the holder each time it has to wait.

        A generator so that callers which yield progress (indexing) stay cancellable
        while they wait. Raises LibraryBusyError once `timeout` seconds have passed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.try_acquire(activity):
            holder = self.holder()
            if deadline is not None and time.monotonic() >= deadline:
                raise LibraryBusyError(self.path.parent, holder.describe(), timeout)
            yield holder
            time.sleep(POLL_S)

    @contextmanager
    def hold(self, activity: str, *, timeout: float | None = None,
             on_wait: Callable[[LockHolder], None] | None = None) -> Iterator[None]:
        """Holds the lock for a block; `on_wait(holder)` is called once if it must wait."""
        told = False
        for holder in self.wait_steps(activity, timeout):
            if on_wait is not None and not told:
                on_wait(holder)
                told = True
        try:
            yield
        finally:
            self.release()


def waiting_message(holder: LockHolder) -> str:
    """The line shown while another process writes to the same library."""
    return (f"another Babelfind process ({holder.describe()}) is writing to this library; "
            "waiting...")


def _open(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    private_file(path)  # it names the holder's activity
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def _write_holder(fd: int, activity: str) -> None:
    """Records pid and activity; best effort, the lock itself is what matters."""
    data = json.dumps({"pid": os.getpid(), "activity": activity}).encode()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0) if hasattr(os, "pwrite") else _write_at_start(fd, data)
    except OSError as e:
        log.debug("cannot record the lock holder: %s", e)


def _write_at_start(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)


if os.name == "nt":  # pragma: no cover - exercised on Windows only
    import msvcrt

    # msvcrt locks a byte range; a range far beyond the holder text leaves the text
    # readable by waiting processes (Windows locks are mandatory).
    _LOCK_OFFSET = 1 << 30

    def _os_try_lock(fd: int) -> bool:
        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _os_unlock(fd: int) -> None:
        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _os_try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _os_unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
