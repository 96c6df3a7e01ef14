"""GUI test fixtures: QSettings in a temp folder, no thread may outlive its test, and
`opened` records what the window would open instead of launching it."""

from __future__ import annotations

import threading

import pytest
from helpers import WordEncoder
from PySide6.QtCore import QSettings

from app.gui.common import qt_files
from app.gui.common.qt_worker import running_workers
from app.gui.qt_tools import install_tools
from app.gui.search.qt_main_window import QtMainWindow
from engine.config import data_paths
from engine.library import Library


@pytest.fixture(autouse=True)
def temp_qsettings(tmp_path_factory):
    """Window geometry, splitters and recent queries go to a per-test INI folder."""
    folder = tmp_path_factory.mktemp("qsettings")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(folder))
    return folder


@pytest.fixture(autouse=True)
def no_thread_left_running():
    """Fails a test that leaves a worker QThread or a folder-watch thread running."""
    yield
    leftover = running_workers()
    for worker in leftover:  # stop them so the next test starts clean
        worker.cancel()
        worker.wait(10_000)
    watchers = [t.name for t in threading.enumerate() if t.name == "babelfind-watch"]
    assert not leftover, f"{len(leftover)} worker thread(s) still running after the test"
    assert not watchers, "a folder watcher was not stopped"


@pytest.fixture
def library(babelfind_home):
    """A library on the hashed-words test encoder; a module may define its own."""
    lib = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    yield lib
    lib.close()


@pytest.fixture
def window(qtbot, library):
    """The main window over the `library` fixture (the module's own, where it has one)."""
    win = QtMainWindow(library, QSettings(), watch_debounce_s=0.2)
    install_tools(win)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.shutdown()


@pytest.fixture
def opened(monkeypatch):
    """(action, path) of every file the window opens or shows in its folder, launching nothing."""
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(qt_files, "open_file", lambda p: calls.append(("open", str(p))) or True)
    monkeypatch.setattr(qt_files, "show_in_folder", lambda p: calls.append(("folder", str(p))) or True)
    return calls
