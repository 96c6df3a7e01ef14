"""The training wizard's LASER branch: a fast BiLSTM distilled from the active model.

Mode page ("A fast LASER model distilled from the active one") -> corpus page -> this page:
name, time limit and passes, then Train; the run (trainer.laser.student.train_and_register)
goes in a worker with progress, a loss curve and Cancel, and ends with the model
registered (family "laser"), optionally made active (the window then re-encodes).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWizardPage,
)

from app.gui.common.qt_plots import QtCurvePlot
from app.gui.common.qt_theme import QtAdvancedSection, hint
from app.gui.common.child_job import ChildJob
from app.gui.training.qt_results import eta_text, kept_step
from engine.errors import BabelfindError
from trainer.laser.student_config import StudentConfig

log = logging.getLogger(__name__)

DEFAULT_MINUTES = 25  # the defaults finish 20k sentences within this on two CPU cores


def student_name(teacher: str | None) -> str:
    return f"{teacher or 'model'}-laser"


class QtLaserPage(QWizardPage):
    """Settings, run and result of a LASER student; the wizard's last page in this mode."""

    def __init__(self, teacher: str | None, parent=None):
        super().__init__(parent)
        self.teacher = teacher
        self.setTitle("A faster model for this computer")
        self.setSubTitle(f"A small model learns to give the results of {teacher or 'the model you use now'}; "
                         "it searches several times faster on a computer without a graphics card.")
        self.name = QLineEdit(student_name(teacher))
        self.minutes = QSpinBox()
        self.minutes.setRange(1, 24 * 60)
        self.minutes.setValue(DEFAULT_MINUTES)
        self.minutes.setSuffix(" min")
        self.epochs = QSpinBox()
        self.epochs.setRange(1, 100)
        self.epochs.setValue(StudentConfig.epochs)
        self.activate = QCheckBox("Make it the active model (re-encodes the library)")
        self.train_button = QPushButton("Train")
        self.train_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.status = hint("Choose a name and press Train.")
        self.loss_plot = QtCurvePlot("Training loss (1 - cosine to the teacher)")
        self.worker = None
        self.manifest = None
        self.run_config = None  # the StudentConfig of the run started last
        form = QFormLayout()
        form.addRow("Model name", self.name)
        form.addRow("Stop after at most", self.minutes)
        form.addRow("Passes over the sentences", self.epochs)
        form.addRow("", self.activate)
        advanced = QtAdvancedSection("Advanced: how it works")
        advanced.note("A BiLSTM encoder of the LASER architecture (Artetxe and Schwenk, 2019), "
                      "distilled from the active model: it learns to give the active model's "
                      "vectors for your sentences (loss: 1 - cosine to them), and is registered "
                      "as a LASER-family model.")
        form.addRow(advanced)
        buttons = QHBoxLayout()
        buttons.addWidget(self.progress, 1)
        buttons.addWidget(self.train_button)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addWidget(self.loss_plot, 1)
        self.setFinalPage(True)

    def config(self):
        """The StudentConfig this page and the corpus page describe."""
        import time

        wizard = self.wizard()
        source = wizard.corpus_page.source()
        out = wizard.paths.home / "training" / f"laser-{time.strftime('%Y%m%d-%H%M%S')}"
        return StudentConfig(teacher=self.teacher or "", corpus=source.paths,
                             collection=source.collection, out_dir=out, epochs=self.epochs.value(),
                             time_limit_s=60.0 * self.minutes.value())

    def start(self) -> None:
        from engine.models import check_name

        wizard = self.wizard()
        try:
            name = self.name.text().strip()
            check_name(name)
            config = self.config()
        except BabelfindError as e:
            self.status.setText(str(e))
            return
        self.manifest = None
        self.loss_plot.clear()
        self.progress.setRange(0, 0)
        self.status.setText(f"Preparing: reading the sentences for {name}...")
        self._set_running(True)
        self.run_config = config
        # in a child process: torch and the teacher never load into the window
        job = ChildJob("trainer.laser.student:train_and_register", config, name, paths=wizard.paths,
                       activate=self.activate.isChecked())
        self.worker = wizard.jobs.run(job, yielded=self._on_event, returned=self._on_returned,
                                      cancelled=self._on_cancelled, errored=self._on_error,
                                      done=self._on_done)
        self.completeChanged.emit()

    def cancel(self) -> None:
        if self.worker is not None:
            self.status.setText("Stopping...")
            self.worker.cancel()

    def _set_running(self, running: bool) -> None:
        self.train_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        for field in (self.name, self.minutes, self.epochs, self.activate):
            field.setEnabled(not running)

    def _on_event(self, event) -> None:
        from trainer.events import TrainStep, TrainWarning
        from trainer.events import StudentStage, StudentStarted

        if isinstance(event, StudentStage):
            self.progress.setRange(0, max(1, event.total))
            self.progress.setValue(event.done)
            self.status.setText(f"{event.stage.capitalize()}: {event.done:,} / {event.total:,}"
                                if event.total > 1 else f"{event.stage.capitalize()}...")
        elif isinstance(event, StudentStarted):
            self.progress.setRange(0, event.total_steps)
            self.status.setText(f"Training on {event.items:,} sentences ({event.vocab_size:,} "
                                f"pieces, dim {event.dim}): {event.total_steps:,} steps")
        elif isinstance(event, TrainStep):
            self.progress.setValue(event.step)
            self.loss_plot.add_point(event.step, event.loss)
            self.status.setText(f"Step {event.step:,} / {event.total:,}, loss {event.loss:.4f}, "
                                f"{eta_text(event.eta_s)}")
        elif isinstance(event, TrainWarning):
            self.status.setText(event.message)

    def _on_returned(self, manifest) -> None:
        from engine.model_manifest import ModelManifest

        if not isinstance(manifest, ModelManifest):
            return
        self.manifest = manifest
        wizard = self.wizard()
        wizard.manifest = manifest
        self.status.setText(f"Registered '{manifest.name}' (LASER, dim {manifest.dim}).")
        wizard.registered.emit(manifest)
        if self.activate.isChecked():
            wizard.model_activation_requested.emit(manifest.name)

    def _on_cancelled(self) -> None:
        """Says what a stop kept: the last checkpoint, or nothing (the run folder removed)."""
        folder = Path(self.run_config.out_dir)
        step = kept_step(folder)
        if step is None:
            shutil.rmtree(folder, ignore_errors=True)
            self.status.setText("Stopped before the first checkpoint was saved: nothing was kept.")
        else:
            self.status.setText(f"Stopped. Kept: the checkpoint of step {step:,} in {folder} "
                                f"(babelfind train-laser --out {self.name.text().strip()} --resume --run-dir '{folder}' "
                                "continues from it).")

    def _on_error(self, error) -> None:
        if not isinstance(error, BabelfindError):
            log.error("LASER training failed", exc_info=error)
        self.status.setText(f"Training stopped: {error}")

    def _on_done(self, _worker) -> None:
        self.worker = None
        self._set_running(False)
        if self.progress.maximum() == 0:
            self.progress.setRange(0, 1)
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return self.worker is None and self.manifest is not None

    def nextId(self) -> int:
        return -1
