"""What the window does with a result or a folder: open it, show it in its folder, forget it.

    >>> class QtMainWindow(QtResultActions, QMainWindow): ...
    >>> window.open_path(hit.path)        # or an "Open failed: ..." message with the path
    >>> window.forget_document(hit.path)  # a job: the window stays live while it waits

A mixin of QtMainWindow (it uses the window's `library`, `jobs`, `watch`, `statusBar()`,
`_report` and `refresh_library_view`), kept apart so the window stays readable.

The paths these take are the engine's stored keys (`DocumentHit.path`, `RootInfo.path`):
a name that is not UTF-8 is escaped there, so each is turned back into the exact file
name (engine.scan.key_path) before it reaches the file system or the engine.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from app.gui.common import qt_files
from app.gui.common.qt_jobs import Job
from engine.events import IndexFinished
from engine.scan import key_path


class QtResultActions:
    """Open, Show in folder, Forget and Remove folder, with what happens when they cannot be done."""

    def open_path(self, path: str) -> None:
        """Opens `path` in its usual application, or says why not (with the path to copy)."""
        real = key_path(path)
        if not qt_files.open_file(real):
            self._open_failed(real, "open")

    def show_in_folder(self, path: str) -> None:
        real = key_path(path)
        if not qt_files.show_in_folder(real):
            self._open_failed(real, "folder")

    def _open_failed(self, path, action: str) -> None:
        self.open_failed_box = qt_files.open_failed_message(self, path, action)
        self.statusBar().showMessage(qt_files.failure_reason(path, action), 15_000)

    def forget_document(self, path: str, confirm: bool = True) -> None:
        """Drops one document from the index; re-indexing its folder leaves it out."""
        name = qt_files.display_path(key_path(path).name)
        if confirm and QMessageBox.question(
            self, "Forget document",
            f"Remove {name} from the index?\nThe file itself is not touched, and "
            "re-indexing its folder leaves it out until you add it again.",
        ) != QMessageBox.StandardButton.Yes:
            return
        self._submit_forget(f"Forgetting {name}", path, lambda removed: f"Forgot {name}")

    def remove_root(self, root: str, confirm: bool = True) -> None:
        """Drops an indexed folder and its documents; the files stay on disk."""
        name = qt_files.display_path(key_path(root).name)
        if root in self.jobs.busy_roots():
            self.statusBar().showMessage(f"{name} is being indexed or removed; wait for it, or cancel first", 8000)
            return
        if confirm and QMessageBox.question(
            self, "Remove folder",
            f"Remove {qt_files.display_path(key_path(root))} from the index?\nThe files themselves are not touched.",
        ) != QMessageBox.StandardButton.Yes:
            return
        self._submit_forget(f"Removing {name}", root, lambda removed: f"Removed {name} ({removed:,} documents)",
                            roots=frozenset({root}))

    def _submit_forget(self, label: str, key: str, done_text, roots: frozenset[str] = frozenset()) -> None:
        """One engine forgetting() job: it waits in the worker while another process writes
        (the progress row says who), and Cancel works while it waits."""
        def on_success(last) -> None:
            removed = last.summary.removed if isinstance(last, IndexFinished) else 0
            self.watch.set_watched(key_path(r.path) for r in self.library.roots() if r.watch)
            self.statusBar().showMessage(done_text(removed), 8000)

        self.jobs.submit(Job(label, lambda: self.library.forgetting([key_path(key)]), roots,
                             on_success=on_success, cancel_note="nothing was removed"))
