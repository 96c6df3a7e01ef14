"""Open a file in its usual application, or show it in the system's file manager.

    >>> open_file("/home/me/notes.pdf")
    >>> show_in_folder("/home/me/notes.pdf")     # selects the file where the platform can
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices


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
