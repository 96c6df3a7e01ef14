"""What the window does with one result: open it, show it in its folder, forget it.

    >>> class QtMainWindow(QtResultActions, QMainWindow): ...
    >>> window.open_path(hit.path)        # or an "Open failed: ..." message with the path

A mixin of QtMainWindow (it uses the window's `library`, `statusBar()`, `_report`,
`refresh_library_view` and `run_search`), kept apart so the window stays readable.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from app.gui import qt_files
from engine.errors import BabelfindError


class QtResultActions:
    """Open, Show in folder and Forget, with what happens when they cannot be done."""

    def open_path(self, path: str) -> None:
        """Opens `path` in its usual application, or says why not (with the path to copy)."""
        if not qt_files.open_file(path):
            self._open_failed(path, "open")

    def show_in_folder(self, path: str) -> None:
        if not qt_files.show_in_folder(path):
            self._open_failed(path, "folder")

    def _open_failed(self, path: str, action: str) -> None:
        self.open_failed_box = qt_files.open_failed_message(self, path, action)
        self.statusBar().showMessage(qt_files.failure_reason(path, action), 15_000)

    def forget_document(self, path: str, confirm: bool = True) -> None:
        """Drops one document from the index; re-indexing its folder leaves it out."""
        if confirm and QMessageBox.question(
            self, "Forget document",
            f"Remove {Path(path).name} from the index?\nThe file itself is not touched, and "
            "re-indexing its folder leaves it out until you add it again.",
        ) != QMessageBox.StandardButton.Yes:
            return
        try:
            self.library.forget(Path(path))
        except BabelfindError as e:
            self._report(e)
            return
        self.statusBar().showMessage(f"Forgot {Path(path).name}", 8000)
        self.refresh_library_view()
        self.run_search()
