"""Watch indexed folders and report changed files in quiet, debounced batches.

    >>> watcher = FolderWatcher(lambda batch: print(batch.changed, batch.deleted))
    >>> watcher.watch(Path("~/Documents").expanduser())
    ...                                  # later, from any thread
    >>> watcher.stop()

A save in an editor fires several file-system events (create a temp file, write,
rename over the original); the watcher waits until a folder has been quiet for
`debounce_s` before it reports, so one save gives one batch. It knows nothing about
indexing: the front end decides what to do with a batch (the GUI re-indexes it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer

from engine.errors import InputError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChangeBatch:
    """Files under one watched root that changed during one quiet period.

    Attributes:
        root: the watched folder the files belong to.
        changed: files created or modified (or moved in) that exist now.
        deleted: files removed (or moved out) that no longer exist.
    """

    root: Path
    changed: frozenset[Path] = field(default_factory=frozenset)
    deleted: frozenset[Path] = field(default_factory=frozenset)


@dataclass
class _Pending:
    paths: set[Path] = field(default_factory=set)
    last_event: float = 0.0


class FolderWatcher:
    """A watchdog Observer over several folders, calling `on_changes` once per quiet batch.

    Args:
        on_changes: called from the watcher's own thread with one ChangeBatch per root.
        debounce_s: how long a root must be quiet before its changes are reported.
    """

    def __init__(self, on_changes: Callable[[ChangeBatch], None], debounce_s: float = 1.0):
        if debounce_s < 0:
            raise InputError(f"debounce_s must be >= 0, got {debounce_s}")
        self._on_changes = on_changes
        self._debounce_s = debounce_s
        self._observer = Observer()
        self._observer.daemon = True
        self._watches: dict[Path, object] = {}
        self._pending: dict[Path, _Pending] = {}
        self._wake = threading.Condition()
        self._stopping = False
        self._observer.start()
        self._flusher = threading.Thread(target=self._flush_loop, name="babelfind-watch", daemon=True)
        self._flusher.start()

    def watched(self) -> list[Path]:
        """The folders being watched."""
        with self._wake:
            return sorted(self._watches)

    def watch(self, root: Path) -> None:
        """Start watching `root` and everything below it (no-op when already watched)."""
        root = Path(root).resolve()
        if not root.is_dir():
            raise InputError(f"{root} is not a folder; only folders can be watched")
        with self._wake:
            if root in self._watches:
                return
            handler = _Handler(self, root)
            self._watches[root] = self._observer.schedule(handler, str(root), recursive=True)

    def unwatch(self, root: Path) -> None:
        """Stop watching `root`; changes not yet reported for it are dropped."""
        root = Path(root).resolve()
        with self._wake:
            watch = self._watches.pop(root, None)
            self._pending.pop(root, None)
        if watch is not None:
            self._observer.unschedule(watch)

    def stop(self) -> None:
        """Stop every watch and both threads; safe to call twice."""
        with self._wake:
            if self._stopping:
                return
            self._stopping = True
            self._wake.notify_all()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._flusher.join(timeout=5)

    def _record(self, root: Path, path: Path) -> None:
        with self._wake:
            if root not in self._watches:
                return
            pending = self._pending.setdefault(root, _Pending())
            pending.paths.add(path)
            pending.last_event = time.monotonic()
            self._wake.notify_all()

    def _flush_loop(self) -> None:
        while True:
            with self._wake:
                due = self._take_due_batches()
                if self._stopping:
                    return
                if not due:
                    self._wake.wait(timeout=self._next_wait())
                    continue
            for root, paths in due:
                self._report(root, paths)

    def _take_due_batches(self) -> list[tuple[Path, set[Path]]]:
        # called with the lock held
        now = time.monotonic()
        due = [root for root, p in self._pending.items() if now - p.last_event >= self._debounce_s]
        return [(root, self._pending.pop(root).paths) for root in due]

    def _next_wait(self) -> float | None:
        # called with the lock held; None waits until the next event
        if not self._pending:
            return None
        oldest = min(p.last_event for p in self._pending.values())
        return max(0.01, oldest + self._debounce_s - time.monotonic())

    def _report(self, root: Path, paths: set[Path]) -> None:
        # existence is checked at report time: a file created then deleted is just gone;
        # a folder moved in brings its files with it
        changed = frozenset(p for p in paths if p.is_file()) | frozenset(
            f for p in paths if p.is_dir() for f in p.rglob("*") if f.is_file()
        )
        deleted = frozenset(p for p in paths if not p.exists())
        if not changed and not deleted:
            return
        try:
            self._on_changes(ChangeBatch(root, changed, deleted))
        except Exception:  # a failing callback must not kill the watcher thread
            log.exception("folder watch callback failed for %s", root)


class _Handler(FileSystemEventHandler):
    """Turns watchdog events for one root into recorded file paths."""

    def __init__(self, watcher: FolderWatcher, root: Path):
        super().__init__()
        self._watcher = watcher
        self._root = root

    def on_any_event(self, event) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return  # reads change nothing
        if event.is_directory and event.event_type == "modified":
            return  # a folder's mtime changes whenever a file in it does
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                path = Path(raw.decode() if isinstance(raw, bytes) else raw)
                if not _is_hidden_temp(path):
                    self._watcher._record(self._root, path)


def _is_hidden_temp(path: Path) -> bool:
    """Editor lock and swap files (.~lock.x#, x.swp, x~) are never documents."""
    name = path.name
    return name.startswith((".~lock", "~$", ".#")) or name.endswith(("~", ".swp", ".tmp"))
