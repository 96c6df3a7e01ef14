"""The training wizard for people who are not ML engineers (real widgets, tiny BERT):
a summary before anything starts (what, on what, the new model's name, where, the time
measured here, the disk), progress from the first second, plain words with the technical
names under Advanced, one device line with a CPU alone, a Stop that says what was kept,
and a window that never loads torch (every trainer call runs in a child process)."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gui_helpers import next_page
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QLabel, QWizard

from app.gui.common.qt_theme import QtAdvancedSection
from app.gui.common.qt_worker import running_workers
from app.gui.training.qt_summary import new_model_name
from app.gui.training.qt_wizard import QtTrainWizard
from train_helpers import tiny_training_inputs

TIMEOUT_MS = 240_000
# Words of the method, not of the task: fine under Advanced, nowhere else.
TECHNICAL = ("MixCSE", "SimCSE", "lambda", "Lambda", "tau", "Tau", "pooling", "CLS", "MLP", "BiLSTM",
             "LASER", "epoch", "transformers", "encoder", "contrastive", "dropout", "margin")


@pytest.fixture
def inputs(tmp_path):
    return tiny_training_inputs(tmp_path, sentences=240)


def to_summary(qtbot, wizard, model, corpus, **settings) -> None:
    """Mode -> sentences (counted) -> the tiny model -> settings -> the summary page."""
    next_page(qtbot, wizard)
    wizard.corpus_page.add_paths([corpus])
    qtbot.mouseClick(wizard.corpus_page.count_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wizard.corpus is not None, timeout=60_000)
    next_page(qtbot, wizard)
    wizard.base_page.use_folder(model)
    next_page(qtbot, wizard)
    for name, value in (dict(lr=1e-3, batch_size=8, max_len=16, eval_steps=2) | settings).items():
        getattr(wizard.hyper_page, name).setValue(value)
    next_page(qtbot, wizard)
    assert wizard.currentPage() is wizard.summary_page


@pytest.fixture
def wizard(qtbot, library):
    wizard = QtTrainWizard(library, sts_dir=None)
    qtbot.addWidget(wizard)
    wizard.show()
    yield wizard
    wizard.shutdown()


def test_the_summary_says_everything_before_anything_starts(qtbot, wizard, inputs):
    model, corpus = inputs
    to_summary(qtbot, wizard, model, corpus, max_steps=6)
    page = wizard.summary_page
    assert wizard.button(QWizard.WizardButton.NextButton).text() == "Start training"
    assert "A new model from tiny-bert" in page.what.text()
    assert f"{wizard.corpus.stats.kept:,} sentences from your documents" in page.data.text()
    assert page.name.text() == "tiny-bert-my-documents"
    assert not (wizard.paths.home / "training").exists() or not any(
        p.name.startswith("run-") for p in (wizard.paths.home / "training").iterdir())  # no run yet
    qtbot.waitUntil(lambda: page.estimate is not None, timeout=TIMEOUT_MS)
    estimate = page.estimate
    assert estimate.steps == 6 and estimate.step_s > 0
    assert page.time.text().startswith("about ") and "on this computer (6 steps of" in page.time.text()
    assert "while training" in page.disk.text() and "free" in page.disk.text()
    # a machine without a GPU: one line, no choice to make
    assert page.device.count() == 1 and page.device.isHidden() and not page.device_text.isHidden()
    assert page.device_text.text().startswith("This computer's processor (") and "no graphics card" in page.device_text.text()
    assert wizard.config().device == "cpu"
    page.name.setText("bad/name")
    next_page(qtbot, wizard)
    assert wizard.currentPage() is page and page.problem.text()


def test_a_new_models_name_is_never_an_installed_one():
    taken = {"e5-my-documents", "e5-my-documents-2"}
    assert new_model_name("/models/e5", "sentences", taken) == "e5-my-documents-3"
    assert new_model_name("e5", "languages", taken) == "e5-my-languages"


def test_progress_starts_at_once_and_counts_steps_and_sentences(qtbot, wizard, inputs):
    model, corpus = inputs
    to_summary(qtbot, wizard, model, corpus, max_steps=4)
    qtbot.waitUntil(lambda: wizard.summary_page.estimate is not None, timeout=TIMEOUT_MS)
    next_page(qtbot, wizard)  # Start training
    run = wizard.run_page
    # the first second: what it does, a moving bar, the time spent and the measured time left
    assert run.status.text() == "Starting the training tools..."
    assert run.progress.maximum() == 0  # busy until the run knows its steps
    assert "so far" in run.eta.text() and "(estimated)" in run.eta.text()
    # What the page showed after each event, read as it arrives: steps can come faster than
    # the test polls, so waiting for "Step 1" itself could miss it.
    shown = []
    run.worker.yielded.connect(lambda event: shown.append((run.status.text(), run.steps.text(), run.eta.text())))
    qtbot.waitUntil(lambda: not run.running(), timeout=TIMEOUT_MS)
    assert run.isComplete(), run.status.text()
    stages = [status for status, _, _ in shown]
    assert any(s.startswith("Loading tiny-bert") for s in stages)
    assert any(s.startswith("Scoring the model before training") for s in stages)
    first_step = next((steps, eta) for _, steps, eta in shown if steps.startswith("Step 1 of 4"))
    assert first_step[0] == "Step 1 of 4  ·  8 of 32 sentences seen"
    assert "left" in first_step[1] and "(estimated)" not in first_step[1]  # now from the steps
    assert run.steps.text().startswith("Step 4 of 4  ·  32 of 32")


def test_every_page_speaks_plainly_and_keeps_the_technical_names_under_advanced(qtbot, wizard):
    for page_id in wizard.pageIds():
        page = wizard.page(page_id)
        advanced = page.findChildren(QtAdvancedSection)
        shown = [w.text() for w in page.findChildren(QLabel) + page.findChildren(QAbstractButton)
                 if not any(section.body.isAncestorOf(w) for section in advanced)]
        shown += [page.title(), page.subTitle()]
        for text in shown:
            assert not any(word in text for word in TECHNICAL), f"{type(page).__name__}: {text!r}"
    assert wizard.hyper_page.advanced.body.isHidden()  # folded until asked for
    advanced_text = " ".join(label.text() for label in wizard.hyper_page.advanced.body.findChildren(QLabel))
    assert "MixCSE" in advanced_text and "Lambda" in advanced_text and "Tau" in advanced_text


def test_stopping_before_a_checkpoint_says_nothing_was_kept(qtbot, wizard, inputs):
    model, corpus = inputs
    to_summary(qtbot, wizard, model, corpus, max_steps=0, eval_steps=1000)  # no checkpoint for a long time
    next_page(qtbot, wizard)
    run = wizard.run_page
    qtbot.waitUntil(lambda: len(run.loss_plot.points()) >= 1, timeout=TIMEOUT_MS)
    folder = Path(run.run_config.out_dir)
    assert folder.is_dir()
    qtbot.mouseClick(run.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not run.running(), timeout=30_000)
    assert run.status.text().startswith("Stopped before the first checkpoint was saved: nothing was kept")
    assert not folder.exists() and run.resume_button.isHidden() and not running_workers()
    assert multiprocessing.active_children() == []


def test_stopping_after_a_checkpoint_names_it_and_resume_continues(qtbot, wizard, inputs):
    model, corpus = inputs
    to_summary(qtbot, wizard, model, corpus, max_steps=0, eval_steps=2)  # a checkpoint every 2 steps
    next_page(qtbot, wizard)
    run = wizard.run_page
    qtbot.waitUntil(lambda: len(run.loss_plot.points()) >= 3, timeout=TIMEOUT_MS)
    qtbot.mouseClick(run.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not run.running(), timeout=30_000)
    text = run.status.text()
    assert text.startswith("Stopped. Kept: the checkpoint of step ") and "Resume continues" in text
    step = int(text.split("step ")[1].split(" ")[0])
    assert step >= 2 and step % 2 == 0 and not run.resume_button.isHidden()
    qtbot.mouseClick(run.resume_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: run.status.text().startswith("Training") and "resumed at step" in run.status.text(),
                    timeout=TIMEOUT_MS)
    wizard.shutdown()


@pytest.mark.timeout(600)
def test_the_window_never_loads_torch_and_no_process_outlives_the_wizard(tmp_path):
    """In a process of its own (this test session imports torch elsewhere): a window, the
    wizard through a whole run and its export, closed; torch was never imported there."""
    model, corpus = tiny_training_inputs(tmp_path, sentences=240)
    env = dict(os.environ, BABELFIND_HOME=str(tmp_path / "home"), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("wizard_in_a_window.py")), str(model),
                           str(corpus), "--word-encoder", "--settle-s", "0.5"], capture_output=True, text=True, env=env, timeout=540)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["registered"] == "tiny-in-a-window"
    assert report["torch_loaded"] is False and report["transformers_loaded"] is False
    assert report["children_left"] == 0


def test_with_a_graphics_card_the_summary_offers_the_choice(qtbot):
    from app.gui.training.qt_summary import QtSummaryPage, device_choice_text

    page = QtSummaryPage()
    qtbot.addWidget(page)
    page.show()
    page._show_devices((("cuda", "NVIDIA H200 (139 GiB)"), ("cpu", "CPU (16 threads)")), "cuda")
    assert page.device.isVisible() and page.device_text.isHidden()
    assert [page.device.itemText(i) for i in range(page.device.count())] == [
        "Graphics card: NVIDIA H200 (139 GiB)", "This computer's processor (16 threads)"]
    assert page.chosen_device() == "cuda"
    assert device_choice_text("cpu", "CPU (2 threads)") == "This computer's processor (2 threads)"


def test_time_and_disk_texts_say_what_they_add_up(tmp_path):
    from app.gui.training.qt_summary import disk_text, time_text
    from trainer.mixcse.estimate import RunEstimate

    estimate = RunEstimate(device="cpu", devices=(("cpu", "CPU (2 threads)"),), steps=300, evaluations=4,
                           checkpoints=3, prepare_s=30, step_s=4.1, evaluation_s=40, checkpoint_s=5,
                           weights_bytes=470_000_000)
    assert estimate.seconds == 30 + 300 * 4.1 + 4 * 40 + 3 * 5
    assert time_text(estimate) == ("about 23 min 55 s on this computer (300 steps of 4.1 s, 4 evaluations "
                                   "of 40.0 s each, 3 checkpoints)")
    text = disk_text(estimate, tmp_path / "training")
    assert text.startswith("up to 3.3 GB while training, in ") and "(1.9 GB stay" in text and "587.5 MB" in text
    assert "free" in text


def test_kept_step_reads_the_run_folder_without_torch(tmp_path):
    from app.gui.training.qt_results import kept_step

    assert kept_step(tmp_path / "nothing") is None
    checkpoint = tmp_path / "checkpoints" / "step-00000120"
    checkpoint.mkdir(parents=True)
    (tmp_path / "latest.json").write_text(json.dumps({"step": 120, "path": "checkpoints/step-00000120"}))
    assert kept_step(tmp_path) is None  # named, but not complete (no state.pt)
    (checkpoint / "state.pt").write_bytes(b"x")
    assert kept_step(tmp_path) == 120
