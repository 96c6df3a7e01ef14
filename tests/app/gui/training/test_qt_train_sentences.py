"""The wizard's classic mode ("Adapt to my sentences") without STS data, on a tiny BERT:
the active model is the base, held-out sentences score the run, the run folder is named."""

from __future__ import annotations

import pytest
from gui_helpers import next_page, start_tiny_run_on_cpu
from PySide6.QtCore import Qt

from app.gui.common import qt_files
from app.gui.training.qt_wizard import QtTrainWizard
from app.gui.common.qt_worker import running_workers
from engine.config import data_paths, save_settings
from engine.library import Library
from helpers import WordEncoder
from tiny_models import register_tiny_model
from train_helpers import tiny_training_inputs

TIMEOUT_MS = 240_000


@pytest.fixture
def library(babelfind_home, tmp_path):
    """An empty library whose active model is a tiny BERT with torch weights."""
    paths = data_paths(babelfind_home)
    model, _ = tiny_training_inputs(tmp_path)
    register_tiny_model(paths, "tiny-base", training={"transformers_dir": str(model)})
    register_tiny_model(paths, "a-tiny-other", seed=1)  # listed first: the default is a choice
    save_settings(paths, active_model="tiny-base")
    lib = Library.open(paths, encoder=WordEncoder())
    yield lib
    lib.close()


def test_without_sts_data_held_out_sentences_score_the_active_model(qtbot, library, tmp_path,
                                                                    monkeypatch):
    _, corpus = tiny_training_inputs(tmp_path / "mine", sentences=240, seed=2)
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    assert wizard.mode_page.within.isChecked()  # one language: the classic mode
    next_page(qtbot, wizard)
    wizard.corpus_page.add_paths([corpus])
    qtbot.mouseClick(wizard.corpus_page.count_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wizard.corpus is not None, timeout=60_000)
    next_page(qtbot, wizard)
    assert wizard.base_page.choice.itemData(0) == "a-tiny-other"
    assert wizard.base_page.base() == "tiny-base"  # the active model, not the first listed
    next_page(qtbot, wizard)
    start_tiny_run_on_cpu(qtbot, wizard, lr=1e-3, batch_size=8, max_len=16, max_steps=4, eval_steps=2)

    run = wizard.run_page
    qtbot.waitUntil(run.isComplete, timeout=TIMEOUT_MS)
    finished = wizard.finished
    assert finished.config.base == "tiny-base" and finished.config.sts_dir is None
    assert run.dev_plot.title == "Held-out sentences told apart (%)"
    assert [x for x, _ in run.dev_plot.points()] == [0, 2, 4]  # the base model first
    assert run.metric_help.text().startswith("Told apart:")
    assert run.run_folder.label.text() == f"Run folder: {finished.run_dir}"
    opened = []
    monkeypatch.setattr(qt_files, "open_file", lambda path: opened.append(path) or True)
    qtbot.mouseClick(run.run_folder.open_button, Qt.MouseButton.LeftButton)
    assert opened == [finished.run_dir]

    next_page(qtbot, wizard)
    results = wizard.results_page
    qtbot.waitUntil(results.isComplete, timeout=10_000)
    labels = [results.table.item(r, 0).text() for r in range(results.table.rowCount())]
    assert labels[0] == "Held-out sentences told apart"
    assert "Nearest neighbours kept from the base model" in labels
    held = finished.held_out_sentences
    assert results.table.item(0, 1).text() == f"{held['base']['separation']:.1f}%"
    assert results.table.item(0, 2).text() == f"{held['best']['separation']:.1f}%"
    assert results.table.item(2, 1).text() == "100%"  # the base keeps its own neighbours
    assert "24 of your sentences were held out" in results.status.text()
    assert "not scored" not in results.status.text()
    assert results.run_folder.label.text() == f"Run folder: {finished.run_dir}"
    wizard.close()
    assert not running_workers()


def test_a_run_folder_that_cannot_be_opened_says_why(qtbot, tmp_path, monkeypatch):
    from app.gui.training.qt_scores import QtRunFolder

    folder = QtRunFolder()
    qtbot.addWidget(folder)
    assert folder.open_button.isHidden() and folder.label.text() == ""
    folder.show_folder(tmp_path / "gone")
    assert folder.label.text() == f"Run folder: {tmp_path / 'gone'}"
    monkeypatch.setattr(qt_files, "open_file", lambda path: pytest.fail("a missing folder was opened"))
    assert not folder.open()
    assert folder.failed.text() == f"Open failed: {tmp_path / 'gone'} no longer exists"
    folder.failed.close()
