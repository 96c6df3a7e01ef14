"""Open a file in its usual application, or show it in the system's file manager.

    >>> open_file("/home/me/notes.pdf")
    >>> show_in_folder("/home/me/notes.pdf")     # selects the file where the platform can
    >>> open_failed_message(window, "/home/me/notes.pdf", "open")   # when either says False

On Linux a file name is bytes, and one that is not UTF-8 (an old Latin-1 archive) reaches
Python as surrogate escapes (os.fsdecode). Qt's strings silently drop those, so a
QUrl made from such a path names another file: those names go to xdg-open as their own
bytes instead, or, without xdg-open, in a file URL whose percent-escapes are those bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

from PySide6.QtCore import QByteArray, QProcess, QStandardPaths, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMessageBox

log = logging.getLogger(__name__)


def documents_folder() -> Path:
    """Where file dialogs start: the user's documents folder (home when there is none).

    Example: documents_folder() == Path("/home/me/Documents")
    """
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    folder = Path(location) if location else Path.home()
    return folder if folder.is_dir() else Path.home()


def open_file(path: str | Path) -> bool:
    """Opens `path` with the desktop's default application; False if nothing could."""
    return _open_local(path)


def show_in_folder(path: str | Path) -> bool:
    """Opens the folder holding `path`, with the file selected on Windows and macOS."""
    path = Path(path)
    if sys.platform == "win32" and path.exists():
        return QProcess.startDetached("explorer.exe", [f"/select,{path}"])[0]
    if sys.platform == "darwin" and path.exists():
        return QProcess.startDetached("open", ["-R", str(path)])[0]
    folder = path if path.is_dir() else path.parent
    return _open_local(folder)


def qt_can_name(path: str | Path) -> bool:
    """False for a name Qt's strings cannot carry (bytes that are not UTF-8, as surrogate escapes).

    Example: qt_can_name("/tmp/café.txt") is True; qt_can_name(os.fsdecode(b"/tmp/caf\\xe9.txt")) is False
    """
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_path(path: str | Path) -> str:
    """`path` for a label: bytes that are not UTF-8 shown as U+FFFD instead of vanishing.

    Example: display_path(os.fsdecode(b"/tmp/caf\\xe9.txt")) == "/tmp/caf\ufffd.txt"
    """
    text = str(path)
    if qt_can_name(text):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte (Windows names)
        return text.encode("utf-8", "replace").decode("utf-8")


def raw_file_url(raw: bytes) -> QUrl:
    """A file URL whose percent-escapes are the path's own bytes (QUrl keeps invalid UTF-8 escaped).

    Example: raw_file_url(b"/tmp/caf\\xe9.txt").toString() == "file:///tmp/caf%E9.txt"
    """
    return QUrl.fromEncoded(QByteArray(b"file://" + urllib.parse.quote_from_bytes(raw, safe="/").encode("ascii")))


def local_path(url: QUrl) -> Path:
    """The file a dropped file URL names, bytes that are not UTF-8 included.

    Example: local_path(raw_file_url(b"/tmp/caf\\xe9.txt")) == Path(os.fsdecode(b"/tmp/caf\\xe9.txt"))

    toLocalFile() turns such bytes into U+FFFD, naming a file that does not exist; on
    POSIX the URL's percent-escapes are read as the name's bytes instead.
    """
    if os.name == "nt" or url.host():
        return Path(url.toLocalFile())
    escaped = url.path(QUrl.ComponentFormattingOption.FullyEncoded)
    return Path(os.fsdecode(urllib.parse.unquote_to_bytes(escaped)))


def _open_local(path: str | Path) -> bool:
    if qt_can_name(path):
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
    raw = os.fsencode(path)
    opener = shutil.which("xdg-open")
    if opener is None:
        return QDesktopServices.openUrl(raw_file_url(raw))
    try:
        process = subprocess.Popen([os.fsencode(opener), raw], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        log.warning("xdg-open could not start for %r: %s", raw, e)
        return False
    # xdg-open hands the file over and exits; a daemon thread reaps it so no zombie stays
    threading.Thread(target=process.wait, name="babelfind-open", daemon=True).start()
    return True


def failure_reason(path: str | Path, action: str) -> str:
    """Why opening most likely failed, in words.

    Example: failure_reason("/gone.pdf", "open") == "Open failed: /gone.pdf no longer exists"
    """
    path = Path(path)
    verb = "Open" if action == "open" else "Show in folder"
    if not path.exists():
        return f"{verb} failed: {display_path(path)} no longer exists"
    if action == "open":
        return f"{verb} failed: no application on this desktop is set up to open {display_path(path.name)}"
    return f"{verb} failed: no file manager on this desktop answered for {display_path(path.parent)}"


def open_failed_message(parent, path: str | Path, action: str) -> QMessageBox:
    """A non-blocking message saying why, with the path selectable and a Copy path button.

    Example: open_failed_message(window, hit.path, "open").text().startswith("Open failed:")
    """
    box = QMessageBox(parent)
    box.setObjectName("openFailed")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Open failed")
    box.setText(failure_reason(path, action))
    box.setInformativeText(display_path(path))
    box.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    copy = box.addButton("Copy path", QMessageBox.ButtonRole.ActionRole)
    copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(display_path(path)))
    box.addButton(QMessageBox.StandardButton.Close)
    box.open()
    return box
