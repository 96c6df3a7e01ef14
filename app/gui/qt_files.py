"""Open a file in its usual application, or show it in the system's file manager.

    >>> open_file("/home/me/notes.pdf")
    >>> show_in_folder("/home/me/notes.pdf")     # selects the file where the platform can
    >>> open_failed_message(window, "/home/me/notes.pdf", "open")   # when either says False
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QStandardPaths, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMessageBox


def documents_folder() -> Path:
    """Where file dialogs start: the user's documents folder (home when there is none).

    Example: documents_folder() == Path("/home/me/Documents")
    """
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    folder = Path(location) if location else Path.home()
    return folder if folder.is_dir() else Path.home()


def open_file(path: str | Path) -> bool:
    """Opens `path` with the desktop's default application; False if nothing could."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


def show_in_folder(path: str | Path) -> bool:
    """Opens the folder holding `path`, with the file selected on Windows and macOS."""
    path = Path(path)
    if sys.platform == "win32" and path.exists():
        return QProcess.startDetached("explorer.exe", [f"/select,{path}"])[0]
    if sys.platform == "darwin" and path.exists():
        return QProcess.startDetached("open", ["-R", str(path)])[0]
    folder = path if path.is_dir() else path.parent
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


def failure_reason(path: str | Path, action: str) -> str:
    """Why opening most likely failed, in words.

    Example: failure_reason("/gone.pdf", "open") == "Open failed: /gone.pdf no longer exists"
    """
    path = Path(path)
    verb = "Open" if action == "open" else "Show in folder"
    if not path.exists():
        return f"{verb} failed: {path} no longer exists"
    if action == "open":
        return f"{verb} failed: no application on this desktop is set up to open {path.name}"
    return f"{verb} failed: no file manager on this desktop answered for {path.parent}"


def open_failed_message(parent, path: str | Path, action: str) -> QMessageBox:
    """A non-blocking message saying why, with the path selectable and a Copy path button.

    Example: open_failed_message(window, hit.path, "open").text().startswith("Open failed:")
    """
    box = QMessageBox(parent)
    box.setObjectName("openFailed")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Open failed")
    box.setText(failure_reason(path, action))
    box.setInformativeText(str(path))
    box.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    copy = box.addButton("Copy path", QMessageBox.ButtonRole.ActionRole)
    copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(str(path)))
    box.addButton(QMessageBox.StandardButton.Close)
    box.open()
    return box
