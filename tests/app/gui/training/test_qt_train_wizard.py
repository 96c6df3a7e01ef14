"""The training wizard end to end on a tiny BERT: corpus -> train -> results -> export -> active."""

from __future__ import annotations

import pytest
from gui_helpers import next_page, start_tiny_run_on_cpu
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QWizard

from app.gui.search.qt_main_window import QtMainWindow
from app.gui.qt_tools import open_train_wizard
from app.gui.training.qt_pages import corpus_counts_text, field_help
from app.gui.training.qt_results import eta_text, score_rows
from app.gui.training.qt_wizard import QtTrainWizard
from app.gui.common.qt_worker import running_workers
from engine.models import active_model_name, get_manifest
from train_helpers import make_sentences, tiny_training_inputs, write_sts_tree
from trainer.corpus import CorpusStats

TRAIN_TIMEOUT_MS = 240_000


@pytest.fixture
def inputs(tmp_path):
    model, corpus = tiny_training_inputs(tmp_path, sentences=64)
    sts = tmp_path / "data" / "sts" / "original"
    write_sts_tree(sts)
    return model, corpus, sts


def set_up_run(qtbot, wizard, model, corpus, *, max_steps: int) -> None:
    """Drives the set-up pages as a user would, up to the run page."""
    assert wizard.currentPage() is wizard.mode_page
    assert not wizard.mode_page.across.isEnabled()  # an empty library has no languages to pair
    next_page(qtbot, wizard)
    page = wizard.corpus_page
    page.add_paths([corpus])
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()  # not counted yet
    qtbot.mouseClick(page.count_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wizard.corpus is not None, timeout=60_000)
    assert "64 sentences read" in page.counts.text() and "kept for training" in page.counts.text()
    next_page(qtbot, wizard)
    wizard.base_page.use_folder(model)
    next_page(qtbot, wizard)
    hyper = wizard.hyper_page
    assert hyper.lr.value() == pytest.approx(3e-5) and hyper.batch_size.value() == 64  # the paper's
    hyper.batch_size.setValue(40)
    next_page(qtbot, wizard)  # 64 sentences are too few for batches of 40
    assert wizard.currentPage() is hyper and "training needs at least 80" in hyper.problem.text()
    assert hyper.lam.value() == pytest.approx(0.2) and hyper.tau.value() == pytest.approx(0.05)
    start_tiny_run_on_cpu(qtbot, wizard, lr=1e-3, batch_size=8, max_len=16, max_steps=max_steps, eval_steps=2)


def test_wizard_trains_scores_exports_registers_and_activates(qtbot, library, inputs):
    model, corpus, sts = inputs
    window = QtMainWindow(library, QSettings())
    qtbot.addWidget(window)
    try:
        wizard = open_train_wizard(window, sts_dir=sts)
        wizard.summary_page.name.setText("tiny-wizard")
        set_up_run(qtbot, wizard, model, corpus, max_steps=4)
        run = wizard.run_page
        qtbot.waitUntil(run.isComplete, timeout=TRAIN_TIMEOUT_MS)
        assert [x for x, _ in run.loss_plot.points()] == [1, 2, 3, 4]
        assert [x for x, _ in run.dev_plot.points()] == [2, 4]  # STS-B dev every 2 steps
        assert "Done: 4 steps" in run.status.text()

        next_page(qtbot, wizard)
        results = wizard.results_page
        qtbot.waitUntil(results.isComplete, timeout=TRAIN_TIMEOUT_MS)
        labels = [results.table.item(r, 0).text() for r in range(results.table.rowCount())]
        assert labels[-3:] == ["Average", "Alignment (lower is better)", "Uniformity (lower is better)"]
        assert "STS-B" in labels and "SICK-R" in labels
        before, after = wizard.scores["before"], wizard.scores["after"]
        assert results.table.item(labels.index("Average"), 2).text() == f"{after['average']:.2f}"
        assert after["alignment"] is not None and before["uniformity"] is not None

        next_page(qtbot, wizard)
        export = wizard.export_page
        assert export.name.text() == "tiny-wizard"  # the name given on the summary, before training
        export.activate.setChecked(True)
        with qtbot.waitSignal(wizard.model_activation_requested, timeout=TRAIN_TIMEOUT_MS) as asked:
            qtbot.mouseClick(export.export_button, Qt.MouseButton.LeftButton)
        assert asked.args == ["tiny-wizard"]
        qtbot.waitUntil(export.isComplete, timeout=10_000)

        manifest = get_manifest("tiny-wizard", library.paths)
        training = manifest.training
        assert training["config"]["lam"] == 0.2 and training["config"]["batch_size"] == 8
        assert training["sts_before"]["average"] == pytest.approx(before["average"])
        assert training["sts_after"] == after
        assert active_model_name(library.paths) == "tiny-wizard"
        # the window re-encodes the library through its job queue, as Settings does
        qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=TRAIN_TIMEOUT_MS)
        assert library.status().model == "tiny-wizard"
        qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton), Qt.MouseButton.LeftButton)
        assert not wizard.isVisible()
    finally:
        window.shutdown()
    assert not running_workers()


def test_cancel_during_training_leaves_no_thread_and_no_result(qtbot, library, inputs):
    model, corpus, sts = inputs
    wizard = QtTrainWizard(library, sts_dir=sts)
    qtbot.addWidget(wizard)
    wizard.show()
    set_up_run(qtbot, wizard, model, corpus, max_steps=0)  # 0: all 20 epochs, far more than the test waits
    run = wizard.run_page
    qtbot.waitUntil(lambda: len(run.loss_plot.points()) >= 1, timeout=TRAIN_TIMEOUT_MS)
    qtbot.mouseClick(run.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not run.running(), timeout=TRAIN_TIMEOUT_MS)
    assert run.status.text().startswith("Stopped")
    assert wizard.finished is None and not run.isComplete()
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    assert not running_workers()


def test_closing_the_wizard_mid_run_stops_training(qtbot, library, inputs):
    model, corpus, sts = inputs
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    set_up_run(qtbot, wizard, model, corpus, max_steps=0)
    qtbot.waitUntil(lambda: len(wizard.run_page.loss_plot.points()) >= 1, timeout=TRAIN_TIMEOUT_MS)
    wizard.reject()  # the window's close button and Cancel both end here
    assert not wizard.jobs.busy() and not running_workers()


def test_result_rows_eta_and_counts_texts():
    before = {"scores": {"STS12": 50.0, "STSBenchmark": 60.0}, "average": 55.0, "alignment": 0.31, "uniformity": -2.5}
    after = {"scores": {"STS12": 52.5, "STSBenchmark": 61.25}, "average": 56.875, "alignment": 0.2, "uniformity": -3.1}
    assert score_rows(before, after) == [
        ("STS12", "50.00", "52.50"), ("STS-B", "60.00", "61.25"), ("Average", "55.00", "56.88"),
        ("Alignment (lower is better)", "0.3100", "0.2000"), ("Uniformity (lower is better)", "-2.5000", "-3.1000"),
    ]
    assert score_rows(None, after)[0] == ("STS12", "", "52.50")
    assert eta_text(42) == "about 42 s left" and eta_text(600) == "about 10 min left"
    assert eta_text(3 * 3600) == "about 3.0 h left" and eta_text(float("nan")) == ""
    stats = CorpusStats(files=2, files_failed=1, read=100, duplicates=5, too_short=3, too_long=2, kept=90)
    assert corpus_counts_text(stats) == ("2 files (1 unreadable), 100 sentences read: 5 duplicates, 3 too short, "
                                         "2 too long; 90 kept for training")


def test_an_indexed_collection_is_counted_from_the_store(qtbot, library, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    sentences = make_sentences(40, seed=3)
    text = ". ".join(s.capitalize() for s in sentences) + "."
    (folder / "notes.txt").write_text(text, encoding="utf-8")
    for _ in library.index_paths([folder]):
        pass
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    page = wizard.corpus_page
    page.use(str(folder))
    assert page.use_collection.isChecked() and wizard.corpus is None
    qtbot.mouseClick(page.count_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wizard.corpus is not None, timeout=60_000)
    assert 0 < wizard.corpus.stats.kept <= 40
    assert all(sentence in text for sentence in wizard.corpus.sentences)  # the stored passages' sentences
    assert wizard.config().collection == str(folder) and wizard.config().corpus == ()


def test_back_during_training_stops_it_and_a_new_run_can_start(qtbot, library, inputs):
    model, corpus, sts = inputs
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    set_up_run(qtbot, wizard, model, corpus, max_steps=0)
    run = wizard.run_page
    qtbot.waitUntil(lambda: len(run.loss_plot.points()) >= 1, timeout=TRAIN_TIMEOUT_MS)
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.BackButton), Qt.MouseButton.LeftButton)
    assert wizard.currentPage() is wizard.summary_page and not running_workers()
    wizard.hyper_page.max_steps.setValue(2)
    next_page(qtbot, wizard)
    qtbot.waitUntil(run.isComplete, timeout=TRAIN_TIMEOUT_MS)
    assert [x for x, _ in run.loss_plot.points()] == [1, 2] and wizard.finished.steps == 2
    assert "No STS data" in _results_text(qtbot, wizard)


def _results_text(qtbot, wizard) -> str:
    next_page(qtbot, wizard)
    qtbot.waitUntil(wizard.results_page.isComplete, timeout=10_000)
    return wizard.results_page.status.text()


def test_settings_hints_come_from_the_trainer_config_help(qtbot, library):
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    texts = {label.text() for label in wizard.hyper_page.findChildren(QLabel)}
    for field in ("lr", "batch_size", "max_len", "eval_steps", "lam", "tau"):  # under Advanced
        assert field_help(field) in texts
    assert field_help("lam").startswith("Share of the positive") and field_help("lr").endswith(".")
