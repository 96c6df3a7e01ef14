"""File names that are not valid UTF-8 (bytes on Linux, surrogate escapes in Python):
the window opens, shows, previews and forgets them, and a drop carries them intact.

Qt's strings silently drop such bytes, so before this a hit's path went to
QDesktopServices as the name of another file (or of the stored key's escape text).
"""

from __future__ import annotations

import os
import stat
import sys
import urllib.parse
from pathlib import Path

import pytest
from gui_helpers import drop_and_wait, type_query
from PySide6.QtCore import QMimeData, QPointF, Qt
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app.gui.common import qt_files
from engine.scan import key_path, path_key

pytestmark = pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="names there are always Unicode")

TEXT = b"Honey bees collect nectar from flowers. The hive stores honey for the winter."
RECORDER = """#!/bin/sh
# a stand-in for xdg-open: records its argument's bytes, then exits like xdg-open does
printf '%s' "$1" > "$XDG_RECORD.part" && mv "$XDG_RECORD.part" "$XDG_RECORD"
"""


def bytes_named(folder: Path, raw_name: bytes, content: bytes = TEXT) -> Path:
    """A file whose name is `raw_name`; skips where the file system refuses such names."""
    raw = os.path.join(os.fsencode(folder), raw_name)
    try:
        with open(raw, "wb") as f:
            f.write(content)
    except OSError as e:
        pytest.skip(f"this file system refuses names that are not UTF-8: {e}")
    return Path(os.fsdecode(raw))


@pytest.fixture
def corpus(tmp_path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    bytes_named(folder, b"caf\xe9 notes.txt")
    (folder / "wasps.txt").write_text("Wasps build paper nests.", encoding="utf-8")
    return folder


@pytest.fixture
def xdg_open(tmp_path, monkeypatch) -> Path:
    """xdg-open on PATH is the recorder; returns the file its argument lands in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "xdg-open"
    script.write_text(RECORDER, encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    record = tmp_path / "opened"
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))  # mv for the script
    monkeypatch.setenv("XDG_RECORD", str(record))
    return record


class FakeDesktop:
    """Stands in for QDesktopServices: records the URLs instead of launching anything."""

    urls: list = []

    @classmethod
    def openUrl(cls, url) -> bool:
        cls.urls.append(url)
        return True


@pytest.fixture
def desktop(monkeypatch):
    FakeDesktop.urls = []
    monkeypatch.setattr(qt_files, "QDesktopServices", FakeDesktop)
    return FakeDesktop.urls


def recorded(qtbot, record: Path) -> bytes:
    qtbot.waitUntil(record.exists, timeout=5000)
    return record.read_bytes()


def url_bytes(url) -> bytes:
    return urllib.parse.unquote_to_bytes(url.path(url.ComponentFormattingOption.FullyEncoded))


def test_open_hands_xdg_open_the_names_own_bytes(qtbot, window, corpus, xdg_open, desktop):
    drop_and_wait(qtbot, window, [corpus])
    type_query(qtbot, window, "honey nectar")
    hit = window.results.current_hit()
    real = key_path(hit.path)
    assert os.fsencode(real).endswith(b"caf\xe9 notes.txt") and real.is_file()
    window.results.activated_hit.emit(hit)
    assert recorded(qtbot, xdg_open) == os.fsencode(real)
    assert desktop == []  # Qt's string path was not used for this name


def test_show_in_folder_with_a_folder_named_in_bytes(qtbot, window, tmp_path, xdg_open, desktop):
    raw_folder = os.path.join(os.fsencode(tmp_path), b"archiv\xe9")
    try:
        os.mkdir(raw_folder)
    except OSError as e:
        pytest.skip(f"this file system refuses names that are not UTF-8: {e}")
    inside = bytes_named(Path(os.fsdecode(raw_folder)), b"bees.txt")
    window.show_in_folder(path_key(inside))  # the key the engine stores for it
    assert recorded(qtbot, xdg_open) == raw_folder


def test_a_valid_name_still_goes_through_qt(window, tmp_path, xdg_open, desktop):
    path = tmp_path / "café.txt"
    path.write_text("x", encoding="utf-8")
    window.open_path(str(path))
    assert [u.toLocalFile() for u in desktop] == [str(path)]
    assert not xdg_open.exists()


def test_without_xdg_open_the_url_carries_the_bytes(window, corpus, tmp_path, monkeypatch, desktop):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    path = Path(os.fsdecode(os.path.join(os.fsencode(corpus), b"caf\xe9 notes.txt")))
    assert qt_files.open_file(path)
    assert url_bytes(desktop[0]) == os.fsencode(path)
    assert qt_files.local_path(desktop[0]) == path  # and reads back as the same file


def test_preview_card_facts_and_forget_find_the_file(qtbot, window, library, corpus):
    drop_and_wait(qtbot, window, [corpus])
    type_query(qtbot, window, "honey nectar")
    hit = window.results.current_hit()
    assert "Honey bees collect nectar" in window.preview.editor.toPlainText()
    index = window.results.currentIndex()
    assert index.data(window.results_model.SizeRole) == len(TEXT)  # not "file not found"
    window.forget_document(hit.path, confirm=False)
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=10_000)
    assert library.status().documents == 1
    assert window.statusBar().currentMessage() == "Forgot caf\ufffd notes.txt"  # shown, not dropped


def test_copy_path_gives_the_files_name_not_the_stored_key(qtbot, window, corpus):
    drop_and_wait(qtbot, window, [corpus])
    type_query(qtbot, window, "honey nectar")
    hit = window.results.current_hit()
    assert key_path(hit.path).name == os.fsdecode(b"caf\xe9 notes.txt")
    menu = window.results.context_menu(window.results.currentIndex())
    next(a for a in menu.actions() if a.text() == "Copy path").trigger()
    assert QApplication.clipboard().text() == qt_files.display_path(key_path(hit.path))
    assert QApplication.clipboard().text().endswith("caf\ufffd notes.txt")


def test_a_dropped_file_named_in_bytes_is_indexed(qtbot, window, library, corpus):
    path = Path(os.fsdecode(os.path.join(os.fsencode(corpus), b"caf\xe9 notes.txt")))
    mime = QMimeData()
    mime.setUrls([qt_files.raw_file_url(os.fsencode(path))])  # what a file manager sends
    centre = window.rect().center()
    QApplication.sendEvent(window, QDragEnterEvent(centre, Qt.DropAction.CopyAction, mime,
                                                   Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))
    QApplication.sendEvent(window, QDropEvent(QPointF(centre), Qt.DropAction.CopyAction, mime,
                                              Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier))
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=30_000)
    assert window.skipped.model.rowCount() == 0
    assert [key_path(h.path) for h in library.search("honey nectar", 5)] == [path]


def test_open_failed_messages_show_the_name_with_a_replacement_character(window, tmp_path):
    gone = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.txt"))
    assert qt_files.failure_reason(gone, "open").endswith("caf\ufffd.txt no longer exists")
    box = qt_files.open_failed_message(window, gone, "open")
    assert box.informativeText().endswith("caf\ufffd.txt")
    box.close()
