"""The training wizard's last page before anything starts: what will be trained, on what,
the new model's name, where it runs, how long it will take on this computer, the disk.

    >>> page = QtSummaryPage()          # the wizard's SUMMARY_PAGE; Next reads "Start training"

The time is measured, not guessed: `trainer.mixcse.estimate.measure` loads the base model
and times one step and one evaluation here, in a child process (app.gui.common.child_job),
so the window never loads torch. Training may start before the measure is done.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QLineEdit, QWizard, QWizardPage

from app.gui.common.child_job import ChildJob
from app.gui.common.qt_theme import hint
from app.gui.common.texts import duration_text, size_text
from app.gui.training import qt_modes as modes
from engine.errors import BabelfindError

log = logging.getLogger(__name__)

NAME_SUFFIX = {modes.MODE_LANGUAGES: "my-languages", modes.MODE_SENTENCES: "my-documents"}
CPU_TEXT = "This computer's processor"


def new_model_name(base: str, mode: str, taken) -> str:
    """A name for the new model that no installed model has.

    Example: new_model_name("multilingual-e5-small", "sentences", {...}) == "multilingual-e5-small-my-documents"
    """
    stem = f"{Path(base).name}-{NAME_SUFFIX.get(mode, 'trained')}"
    name, n = stem, 2
    while name in taken:
        name, n = f"{stem}-{n}", n + 1
    return name


def time_text(estimate) -> str:
    """Example: "about 25 min (300 steps of 4.1 s, 4 evaluations of 40 s each, 2 checkpoints)"."""
    parts = [f"{estimate.steps:,} steps of {_seconds(estimate.step_s)}"]
    if estimate.evaluations:
        parts.append(f"{estimate.evaluations} evaluations of {_seconds(estimate.evaluation_s)} each")
    if estimate.checkpoints:
        parts.append(f"{estimate.checkpoints} checkpoint{'s' if estimate.checkpoints > 1 else ''}")
    return f"about {duration_text(estimate.seconds)} on this computer ({', '.join(parts)})"


def disk_text(estimate, folder: Path) -> str:
    """What the run folder needs at most, what it keeps, the new model, and what is free."""
    model = int(1.25 * estimate.weights_bytes)  # the ONNX export and its int8 copy
    free = shutil.disk_usage(_existing(folder)).free
    text = (f"up to {size_text(estimate.disk_bytes)} while training, in {folder} ({size_text(estimate.kept_bytes)} "
            f"stay: the last checkpoint, to resume, and the best model), and {size_text(model)} for the "
            f"new model; {size_text(free)} free")
    if free < estimate.disk_bytes + model:
        text += ". Not enough free space: make room before starting"
    return text


def device_choice_text(device: str, description: str) -> str:
    """Example: device_choice_text("cpu", "CPU (2 threads)") == "This computer's processor (2 threads)"."""
    if device == "cpu":
        return f"{CPU_TEXT} {description.removeprefix('CPU').strip()}".strip()
    return f"Graphics card: {description}"


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else duration_text(seconds)


def _existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


class QtSummaryPage(QWizardPage):
    """What, on what, the new model's name, where, how long, how much disk; then Start."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setTitle("Ready to train")
        self.setSubTitle("Nothing has started yet. Check what will happen, then press Start training.")
        self.setButtonText(QWizard.WizardButton.NextButton, "Start training")
        self.what = QLabel()
        self.data = QLabel()
        self.name = QLineEdit()
        self.name.textChanged.connect(self._name_changed)
        self.device = QComboBox()
        self.device_text = QLabel(CPU_TEXT)
        self.time = QLabel()
        self.disk = QLabel()
        self.problem = hint("")
        for label in (self.what, self.data, self.time, self.disk, self.device_text):
            label.setWordWrap(True)
        self.device.currentIndexChanged.connect(self._device_changed)
        self.device.hide()
        form = QFormLayout(self)
        form.addRow("What", self.what)
        form.addRow("Learning from", self.data)
        form.addRow("New model's name", self.name)
        form.addRow("", hint("Your library keeps using its model until you choose the new one "
                             "(at the end, or in Settings)."))
        form.addRow("Runs on", self.device_text)
        form.addRow("", self.device)
        form.addRow("Time", self.time)
        form.addRow("Disk", self.disk)
        form.addRow(self.problem)
        self.worker = None
        self.estimate = None  # trainer.mixcse.estimate.RunEstimate, once measured
        self._devices: tuple[tuple[str, str], ...] = ()

    # -- what the wizard reads -------------------------------------------------------

    def model_name(self) -> str:
        return self.name.text().strip()

    def chosen_device(self) -> str:
        """"auto" until the devices are known; then the one chosen (the only one, with a CPU alone)."""
        return self.device.currentData() or "auto"

    # -- the page ----------------------------------------------------------------------

    def initializePage(self) -> None:
        from engine.models import list_models

        wizard = self.wizard()
        config = wizard.config()
        taken = {m.name for m in list_models(wizard.paths)}
        if not self.model_name() or self.model_name() in taken:
            self.name.setText(new_model_name(config.base, wizard.mode_page.mode(), taken))
        self.what.setText(self._what_text(config))
        self.data.setText(self._data_text())
        self._measure()

    def _what_text(self, config) -> str:
        base = Path(config.base).name
        if self.wizard().across_languages():
            return (f"A new model from {base} that matches sentences across your languages: it learns "
                    "that the translations you ticked mean the same.")
        return f"A new model from {base} that fits the words and topics of your documents."

    def _data_text(self) -> str:
        wizard = self.wizard()
        if wizard.across_languages():
            ticked = len(wizard.pairs_page.accepted())
            return (f"{ticked:,} translation pairs you ticked (a tenth of the sentences are kept apart "
                    "to score the result), and sentences of your documents so that search within each "
                    "language stays as good")
        corpus = wizard.corpus
        kept = corpus.stats.kept if corpus is not None else 0
        return f"{kept:,} sentences from your documents (a tenth at most kept apart to score the result)"

    def _measure(self) -> None:
        """Times the run in a child process; the time and disk lines fill in when it is done."""
        self._stop_measuring()
        wizard = self.wizard()
        self.estimate = None
        self.time.setText("Measuring how fast this computer trains (about a minute)...")
        self.disk.setText("")
        try:
            config = wizard.config(device=self.chosen_device())
        except BabelfindError as e:
            self.time.setText(str(e))
            return
        job = ChildJob("trainer.mixcse.estimate:measure", config, corpus=wizard.corpus, paths=wizard.paths,
                       db_url=wizard.db_url)
        self.worker = wizard.jobs.run(job, yielded=self._on_stage, returned=self._on_measured,
                                      errored=self._on_error, done=self._on_done)

    def _on_stage(self, event) -> None:
        self.time.setText(f"Measuring how fast this computer trains: {event.stage[0].lower()}{event.stage[1:]}...")

    def _on_measured(self, estimate) -> None:
        self.estimate = estimate
        self.time.setText(time_text(estimate))
        self.disk.setText(disk_text(estimate, self.wizard().paths.home / "training"))
        self._show_devices(estimate.devices, estimate.device)

    def _show_devices(self, devices, measured_on: str) -> None:
        """One line with a CPU alone; a choice when there is a GPU (choosing one measures again)."""
        if tuple(devices) == self._devices:
            return
        self._devices = tuple(devices)
        self.device.blockSignals(True)
        self.device.clear()
        for value, text in devices:
            self.device.addItem(device_choice_text(value, text), value)
        self.device.setCurrentIndex(max(0, self.device.findData(measured_on)))
        self.device.blockSignals(False)
        several = len(devices) > 1
        self.device.setVisible(several)
        self.device_text.setVisible(not several)
        if not several:
            self.device_text.setText(self.device.currentText() + "; no graphics card was found")

    def _device_changed(self, _index: int) -> None:
        self._measure()

    def _on_error(self, error) -> None:
        self.time.setText(f"Could not measure this computer's speed: {error}")

    def _on_done(self, worker) -> None:
        if worker is self.worker:
            self.worker = None

    def _stop_measuring(self) -> None:
        if self.worker is not None:
            for signal in (self.worker.yielded, self.worker.returned, self.worker.errored):
                signal.disconnect()
            self.worker.cancel()
            self.worker = None

    def _name_changed(self, _text: str) -> None:
        self.problem.setText("")
        self.completeChanged.emit()

    def isComplete(self) -> bool:
        return bool(self.model_name())

    def validatePage(self) -> bool:
        """The name must be new and valid; the measure stops (training needs the CPU)."""
        from engine.models import check_name, model_dir

        name = self.model_name()
        try:
            check_name(name)
        except BabelfindError as e:
            self.problem.setText(str(e))
            return False
        if model_dir(name, self.wizard().paths).exists():
            self.problem.setText(f"A model named '{name}' is already installed; choose another name.")
            return False
        self._stop_measuring()
        return True

    def cleanupPage(self) -> None:  # Back: the settings may change, so will the measure
        self._stop_measuring()
