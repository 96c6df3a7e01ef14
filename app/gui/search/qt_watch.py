"""Folder watching for the window: engine.watch batches delivered as a Qt signal.

    >>> watch = QtFolderWatch(debounce_s=2.0)
    >>> watch.changes.connect(reindex_batch)     # runs in the GUI thread
    >>> watch.set_watched({"/home/me/Documents"})
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engine.errors import InputError
from engine.watch import FolderWatcher


class QtFolderWatch(QObject):
    """Owns one FolderWatcher, created when the first folder is watched."""

    # emitted from the watcher's thread; Qt queues it to the receivers' (GUI) thread
    changes = Signal(object)  # ChangeBatch
    failed = Signal(str, str)  # folder, reason

    def __init__(self, debounce_s: float = 2.0, parent=None):
        super().__init__(parent)
        self._debounce_s = debounce_s
        self._watcher: FolderWatcher | None = None

    def watched(self) -> set[str]:
        return {str(p) for p in self._watcher.watched()} if self._watcher else set()

    def set_watched(self, folders: Iterable[str]) -> None:
        """Watches exactly `folders` (starting and stopping watches as needed)."""
        wanted = {str(Path(f).resolve()) for f in folders}
        current = self.watched()
        if not wanted and self._watcher is None:
            return
        watcher = self._ensure()
        for folder in current - wanted:
            watcher.unwatch(Path(folder))
        for folder in wanted - current:
            try:
                watcher.watch(Path(folder))
            except InputError as e:  # the folder vanished or is on a drive not mounted now
                self.failed.emit(folder, str(e))

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def _ensure(self) -> FolderWatcher:
        if self._watcher is None:
            self._watcher = FolderWatcher(self.changes.emit, debounce_s=self._debounce_s)
        return self._watcher

