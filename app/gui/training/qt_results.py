"""The training wizard's last pages: run (live curves, time left, stop), results, export.

Each runs its trainer call in a child process (app.gui.common.child_job), so that torch
and the model never load into the window: the run page `trainer.mixcse.train.train()`; the
results page shows the held-out pairs' or sentences' scores and, with STS data, scores
the base and the best checkpoint (`trainer.mixcse.finish.sts_before_and_after`); the
export page `trainer.mixcse.finish.finish_training` and, when asked, the window's model
switch.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

from PySide6.QtCore import QTimer

from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWizardPage,
)

from app.gui.common.child_job import ChildJob
from app.gui.common.qt_plots import QtCurvePlot
from app.gui.common.qt_theme import hint
from app.gui.common.texts import duration_text
from app.gui.training.qt_scores import (
    SEPARATION_HELP,
    QtRunFolder,
    data_text,
    dev_title,
    eta_text,
    pair_rows,
    pair_summary,
    score_rows,
    sentence_rows,
    sentence_summary,
)
from engine.errors import BabelfindError
from trainer.config import SENTENCE_METRIC

log = logging.getLogger(__name__)


class QtRunPage(QWizardPage):
    """Trains in a child process (app.gui.common.child_job) with live loss and dev curves:
    from the first second it says what it is doing, the step, the sentences seen and the
    time left (the summary's measure until the first steps, then theirs). Going Back or
    closing stops the run; Stop says what was kept, and a kept checkpoint can be resumed."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTitle("Training")
        self.worker = None
        self.run_config = None  # the TrainConfig of the run on this page
        self._cancelled = False
        self._started_at: float | None = None  # monotonic time the run was started
        self._training_text = ""  # what the status says once steps run
        self._left: tuple[float, float] | None = None  # (seconds left, at monotonic time)
        self.status = hint("")
        self.progress = QProgressBar()
        self.steps = QLabel("")
        self.eta = QLabel("")
        self.loss_plot = QtCurvePlot("Training loss")
        self.dev_plot = QtCurvePlot("STS-B dev (Spearman x 100)", min_span=2.0)
        self.cancel_button = QPushButton("Stop training")
        self.run_folder = QtRunFolder()
        self.cancel_button.clicked.connect(self.cancel)
        self.resume_button = QPushButton("Resume training")
        self.resume_button.setToolTip("Continue from the last checkpoint in the run folder")
        self.resume_button.clicked.connect(self.resume)
        self.resume_button.hide()
        self.metric_help = hint("")
        self.messages = hint("")
        self.clock = QTimer(self, interval=1000)
        self.clock.timeout.connect(self._tick)
        row = QHBoxLayout()
        row.addWidget(self.progress, 1)
        row.addWidget(self.eta)
        row.addWidget(self.cancel_button)
        row.addWidget(self.resume_button)
        plots = QGridLayout()
        plots.addWidget(self.loss_plot, 0, 0)
        plots.addWidget(self.dev_plot, 0, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addLayout(row)
        layout.addWidget(self.steps)
        layout.addLayout(plots, 1)
        layout.addWidget(self.metric_help)
        layout.addWidget(self.messages)
        layout.addWidget(self.run_folder)

    def initializePage(self) -> None:
        wizard = self.wizard()
        wizard.finished, wizard.scores = None, None
        self.loss_plot.clear()
        self.dev_plot.clear()
        for label in (self.messages, self.metric_help, self.steps, self.eta):
            label.setText("")
        self.run_folder.show_folder(None)
        self.resume_button.hide()
        self.progress.setRange(0, 0)
        try:
            self.run_config = wizard.config()
        except BabelfindError as e:
            self.status.setText(str(e))
            return
        estimate = wizard.summary_page.estimate
        self._start(resume=False, left=estimate.seconds if estimate is not None else None)

    def resume(self) -> None:
        """Continues the stopped run from its last checkpoint (same folder, same settings)."""
        if self.worker is not None or self.run_config is None:
            return
        self.resume_button.hide()
        self._start(resume=True, left=None)

    def _start(self, *, resume: bool, left: float | None) -> None:
        wizard = self.wizard()
        self._cancelled = False
        self._started_at = time.monotonic()
        self._left = None if left is None else (left, self._started_at)
        self.status.setText("Resuming from the last checkpoint: starting the training tools..." if resume
                            else "Starting the training tools...")
        self.cancel_button.setEnabled(True)
        job = ChildJob("trainer.mixcse.train:train", self.run_config, resume=resume, corpus=wizard.corpus,
                       paths=wizard.paths, db_url=wizard.db_url)
        self.worker = wizard.jobs.run(job, yielded=self._on_event, returned=self._on_returned,
                                      cancelled=self._on_cancelled, errored=self._on_error, done=self._on_done)
        self.clock.start()
        self._tick()
        self.completeChanged.emit()

    def cancel(self) -> None:
        if self.worker is not None:
            self.status.setText("Stopping...")
            self.cancel_button.setEnabled(False)
            self.worker.cancel()

    def running(self) -> bool:
        return self.worker is not None

    def cleanupPage(self) -> None:  # Back from this page: stop the run, ignore its last signals
        worker, self.worker = self.worker, None
        self.clock.stop()
        if worker is not None:
            for signal in (worker.yielded, worker.returned, worker.cancelled, worker.errored):
                signal.disconnect()
            worker.cancel()
            worker.wait()
            self._tell_what_was_kept()
        self.cancel_button.setEnabled(False)
        self.resume_button.hide()

    def _tick(self) -> None:
        """Every second: the time spent, and the time left counting down between steps."""
        if self._started_at is None:
            return
        spent = duration_text(time.monotonic() - self._started_at)
        if self._left is None:
            self.eta.setText(f"{spent} so far")
            return
        seconds, at = self._left
        left = max(0.0, seconds - (time.monotonic() - at))
        measured = "" if self.loss_plot.points() else " (estimated)"
        self.eta.setText(f"{spent} so far, {eta_text(left) or 'about 0 s left'}{measured}")

    def _on_event(self, event) -> None:
        from trainer.events import TrainEval, TrainPreparing, TrainStarted, TrainStep, TrainWarning

        if isinstance(event, TrainPreparing):
            self.status.setText(f"{event.stage}...")
        elif isinstance(event, TrainStarted):
            self._on_started(event)
        elif isinstance(event, TrainStep):
            self.progress.setValue(event.step)
            self.loss_plot.add_point(event.step, event.loss)
            self._left = (event.eta_s, time.monotonic())
            self.steps.setText(step_text(event, self.run_config.batch_size, self.wizard().across_languages()))
            self.status.setText(self._training_text)
            self._tick()
        elif isinstance(event, TrainEval):
            self.dev_plot.title = dev_title(event.metric)
            self.dev_plot.add_point(event.step, event.score)
        elif isinstance(event, TrainWarning):
            self.messages.setText(event.message)

    def _on_started(self, event) -> None:
        c = event.config
        self.progress.setRange(0, event.total_steps)
        self.progress.setValue(event.start_step)
        if event.start_step:  # resumed: the steps after the checkpoint are done again
            for plot in (self.loss_plot, self.dev_plot):
                _keep_points_up_to(plot, event.start_step)
        self.run_folder.show_folder(c.out_dir)
        self.dev_plot.title = dev_title(event.metric)
        self.dev_plot.update()
        self.metric_help.setText(SEPARATION_HELP if event.metric == SENTENCE_METRIC else "")
        self._training_text = (f"Training {Path(c.base).name} on {device_text(event.device)}: "
                               f"{event.total_steps:,} steps of {c.batch_size}, from {data_text(event)}"
                               + (f", resumed at step {event.start_step:,}." if event.start_step else "."))
        self.status.setText(self._training_text)

    def _on_returned(self, last) -> None:
        from trainer.events import TrainFinished

        if isinstance(last, TrainFinished):
            self.wizard().finished = last
            dev = "" if last.best_score is None else f", {last.metric} {last.best_score:.2f}"
            self.status.setText(f"Done: {last.steps:,} steps; the best checkpoint is step {last.best_step:,}{dev}.")
            self._left = None

    def _on_cancelled(self) -> None:
        self._cancelled = True

    def _on_error(self, error) -> None:
        if not isinstance(error, BabelfindError):
            log.error("training failed", exc_info=error)
        self.status.setText(f"Training stopped: {error}")

    def _on_done(self, worker) -> None:
        if worker is not self.worker:
            return  # a run left with Back; a newer one may be running
        self.worker = None
        self.clock.stop()
        self._tick()
        self.cancel_button.setEnabled(False)
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        if self._cancelled:
            self._tell_what_was_kept()
        self.completeChanged.emit()

    def _tell_what_was_kept(self) -> None:
        """After a stop: the checkpoint resume would continue from, or (none written yet)
        that nothing was kept, the run folder being removed."""
        folder = Path(self.run_config.out_dir)
        step = kept_step(folder)
        self.eta.setText("")
        if step is None:
            shutil.rmtree(folder, ignore_errors=True)
            self.run_folder.show_folder(None)
            self.status.setText("Stopped before the first checkpoint was saved: nothing was kept. "
                                "Start again with Back, then Start training.")
            return
        self.status.setText(f"Stopped. Kept: the checkpoint of step {step:,} in the run folder; "
                            "Resume continues from there.")
        self.resume_button.show()

    def isComplete(self) -> bool:
        return self.worker is None and self.wizard().finished is not None


def kept_step(folder: Path) -> int | None:
    """The step of the run folder's last complete checkpoint; None when it has none."""
    from trainer.run_folder import checkpoint_step, latest_checkpoint

    try:
        last = latest_checkpoint(folder)
    except BabelfindError:
        return None
    return None if last is None else checkpoint_step(last)


def step_text(event, batch_size: int, pairs: bool) -> str:
    """Example: "Step 3 of 300  ·  192 of 19,200 sentences seen"."""
    seen = event.seen or event.step * batch_size
    what = "translation pairs" if pairs else "sentences"
    return f"Step {event.step:,} of {event.total:,}  ·  {seen:,} of {event.total * batch_size:,} {what} seen"


def device_text(device: str) -> str:
    return "the graphics card" if device.startswith("cuda") else "this computer's processor"


def _keep_points_up_to(plot: QtCurvePlot, step: int) -> None:
    kept = [(x, y) for x, y in plot.points() if x <= step]
    plot.clear()
    for x, y in kept:
        plot.add_point(x, y)


class QtResultsPage(QWizardPage):
    """Before and after: held-out pairs or sentences, STS when there is STS data."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTitle("Results")
        self.setCommitPage(True)  # the run is over: Back would only retrain
        self.status = hint("")
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["", "Before", "After"])
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setColumnWidth(0, 260)
        self.run_folder = QtRunFolder()
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.run_folder)
        self._scoring = False

    def initializePage(self) -> None:
        wizard = self.wizard()
        self.table.setRowCount(0)
        self.run_folder.show_folder(wizard.finished.run_dir)
        self._add_rows(pair_rows(wizard.finished.held_out))
        self._add_rows(sentence_rows(wizard.finished.held_out_sentences))
        if wizard.sts_dir is None:
            self.status.setText(self._held_out_summary() or
                                "No STS data was found and there were too few sentences to hold "
                                "some out, so the model is not scored; it can still be exported.")
            return
        self._scoring = True
        self.status.setText("Scoring on STS...")
        job = ChildJob("trainer.mixcse.finish:sts_before_and_after", wizard.finished, Path(wizard.sts_dir),
                       wizard.paths)
        wizard.jobs.run(job, yielded=lambda what: self.status.setText(f"Scoring {what} on STS..."),
                        returned=self._show, errored=self._on_error, done=self._on_done)

    def _add_rows(self, rows) -> None:
        start = self.table.rowCount()
        self.table.setRowCount(start + len(rows))
        for r, row in enumerate(rows, start):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))

    def _show(self, scores) -> None:
        self.wizard().scores = scores
        self._add_rows(score_rows(scores["before"], scores["after"]))
        change = scores["after"]["average"] - scores["before"]["average"]
        summary = self._held_out_summary()
        self.status.setText((summary + " " if summary else "")
                            + f"STS average {scores['before']['average']:.2f} -> "
                            f"{scores['after']['average']:.2f} ({change:+.2f}).")

    def _held_out_summary(self) -> str:
        """The held-out pairs' or sentences' before/after in words ("" when neither)."""
        finished = self.wizard().finished
        if pair_rows(finished.held_out):
            return pair_summary(finished.held_out)
        if sentence_rows(finished.held_out_sentences):
            return sentence_summary(finished.held_out_sentences)
        return ""

    def _on_error(self, error) -> None:
        self.status.setText(f"Scoring failed: {error}")

    def _on_done(self, _worker) -> None:
        self._scoring = False
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return not self._scoring


class QtExportPage(QWizardPage):
    """Export to ONNX, register with the config and scores, optionally activate."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTitle("Export and use")
        self.name = QLineEdit()
        self.name.textChanged.connect(lambda: self.completeChanged.emit())
        self.activate = QCheckBox("Make it the active model and re-index my documents in the background")
        self.export_button = QPushButton("Export")
        self.export_button.clicked.connect(self.export)
        self.progress = QProgressBar()
        self.status = hint("")
        form = QFormLayout(self)
        form.addRow("Model name", self.name)
        form.addRow("", hint("The best checkpoint is exported to ONNX and registered with its "
                              "training settings and scores."))
        form.addRow("", self.activate)
        form.addRow(self.export_button, self.progress)
        form.addRow(self.status)
        self.switch_back = QPushButton("")
        self.switch_back.hide()
        self.switch_back.clicked.connect(self._switch_back)
        form.addRow("", self.switch_back)
        self._exporting = False

    def initializePage(self) -> None:
        self.name.setText(self.wizard().summary_page.model_name())  # chosen before training
        self.progress.setValue(0)

    def export(self) -> None:
        from engine.models import model_dir

        wizard, name = self.wizard(), self.name.text().strip()
        if model_dir(name, wizard.paths).exists():
            self.status.setText(f"A model named '{name}' is already installed; choose another name.")
            return
        finished, scores, activate = wizard.finished, wizard.scores or {}, self.activate.isChecked()
        sts_dir = Path(wizard.sts_dir) if wizard.sts_dir and scores else None

        job = ChildJob("trainer.mixcse.finish:finish_training", finished, name, sts_dir=sts_dir,
                       sts_before=scores.get("before"), sts_after=scores.get("after"), activate=activate,
                       paths=wizard.paths, progress="progress")
        self._exporting = True
        self.export_button.setEnabled(False)
        self.completeChanged.emit()
        wizard.jobs.run(job, yielded=self._on_progress, returned=self._on_registered,
                        errored=lambda e: self.status.setText(f"Export failed: {e}"), done=self._on_done)

    def _on_progress(self, event) -> None:
        fraction, message = event
        self.progress.setValue(int(100 * fraction))
        self.status.setText(message)

    def _on_registered(self, manifest) -> None:
        wizard = self.wizard()
        wizard.manifest = manifest
        self.progress.setValue(100)
        text = f"Registered '{manifest.name}'."
        if self.activate.isChecked():
            text += " It is now the active model; your documents are re-encoded in the background."
            wizard.model_activation_requested.emit(manifest.name)
            if wizard.previous_model and wizard.previous_model != manifest.name:
                self.switch_back.setText(f"Go back to {wizard.previous_model}")
                self.switch_back.setEnabled(True)
                self.switch_back.show()
        self.status.setText(text)
        wizard.registered.emit(manifest)

    def _switch_back(self) -> None:
        """Asks the window to make the model that was active before this run active again."""
        wizard = self.wizard()
        wizard.model_activation_requested.emit(wizard.previous_model)
        self.switch_back.setEnabled(False)
        self.status.setText(f"Switching back to {wizard.previous_model}: your documents are "
                            f"re-encoded in the background; '{wizard.manifest.name}' stays installed.")

    def _on_done(self, _worker) -> None:
        self._exporting = False
        self.export_button.setEnabled(self.wizard().manifest is None)
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return self.wizard().manifest is not None and not self._exporting

    def nextId(self) -> int:
        return -1  # the last page of the MixCSE modes (the LASER page's id comes after it)
