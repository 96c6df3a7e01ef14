"""The training wizard's LASER mode on a tiny teacher: corpus -> train -> registered student."""

from __future__ import annotations

from gui_helpers import next_page
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from app.gui.training.qt_laser import student_name
from app.gui.training.qt_wizard import QtTrainWizard
from app.gui.common.qt_worker import running_workers
from engine.models import get_manifest, set_active
from laser_models import training_sentences
from tiny_models import register_tiny_model

TRAIN_TIMEOUT_MS = 240_000


def open_laser_page(qtbot, library, tmp_path) -> QtTrainWizard:
    register_tiny_model(library.paths, "tiny")
    set_active("tiny", library.paths)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(training_sentences(300)) + "\n", encoding="utf-8")
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    mode = wizard.mode_page
    assert mode.laser.isEnabled() and "faster model" in mode.laser.text()
    mode.laser.setChecked(True)
    next_page(qtbot, wizard)
    page = wizard.corpus_page
    page.add_paths([corpus])
    qtbot.mouseClick(page.count_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wizard.corpus is not None, timeout=60_000)
    next_page(qtbot, wizard)
    assert wizard.currentPage() is wizard.laser_page
    return wizard


def test_laser_mode_trains_and_registers_a_student(qtbot, library, tmp_path):
    wizard = open_laser_page(qtbot, library, tmp_path)
    page = wizard.laser_page
    try:
        assert page.name.text() == student_name("tiny") == "tiny-laser"
        finish = wizard.button(QWizard.WizardButton.FinishButton)
        assert not finish.isEnabled()  # nothing registered yet
        page.epochs.setValue(1)
        with qtbot.waitSignal(wizard.registered, timeout=TRAIN_TIMEOUT_MS) as registered:
            qtbot.mouseClick(page.train_button, Qt.MouseButton.LeftButton)
        assert registered.args[0].name == "tiny-laser"
        qtbot.waitUntil(page.isComplete, timeout=10_000)
        assert page.loss_plot.points(), "the loss curve stayed empty"
        assert "Registered 'tiny-laser'" in page.status.text()
        manifest = get_manifest("tiny-laser", library.paths)
        assert (manifest.family, manifest.dim, manifest.training["teacher"]) == ("laser", 32, "tiny")
        assert finish.isEnabled()
    finally:
        wizard.shutdown()
    assert not running_workers()


def test_laser_mode_cancels_and_refuses_a_bad_name(qtbot, library, tmp_path):
    wizard = open_laser_page(qtbot, library, tmp_path)
    page = wizard.laser_page
    try:
        page.name.setText("bad/name")
        qtbot.mouseClick(page.train_button, Qt.MouseButton.LeftButton)
        assert page.worker is None and page.status.text()  # the name's error, nothing started
        page.name.setText("tiny-laser-2")
        qtbot.mouseClick(page.train_button, Qt.MouseButton.LeftButton)
        assert page.worker is not None and not page.train_button.isEnabled()
        qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: page.worker is None, timeout=TRAIN_TIMEOUT_MS)
        assert page.manifest is None and page.train_button.isEnabled()
        assert page.status.text().startswith("Stopped")
    finally:
        wizard.shutdown()
    assert not running_workers()
