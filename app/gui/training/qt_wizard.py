"""Tools > Train a model: the MixCSE training wizard.

    >>> wizard = QtTrainWizard(library, sts_dir=Path("../shared/data/sts"), parent=window)
    >>> wizard.model_activation_requested.connect(window.switch_model)
    >>> wizard.show()

Mode -> (across languages: translation pairs mined from the library, reviewed) or
(within them: corpus -> base model) -> how long (the method's settings under Advanced) ->
summary (what, on what, the new model's name, where, the time measured on this computer,
the disk; nothing runs before Start) -> run (what it does from the first second, steps,
sentences seen, time left, live curves, Stop that says what was kept) -> results (held-out
translations and/or STS before/after) -> export and, when the user asks, activate, with
the previous model one click away. A third mode distils the active model into a fast LASER
model: corpus -> one page that trains, registers and optionally activates it (qt_laser).

Every call into the trainer (the measure, training, scoring, export, the LASER student)
runs in a child process (app.gui.common.child_job) driven by a QtWorker: torch and the
model never load into the window, so its memory is back to its idle size once the wizard
closes. Activation asks the window to re-encode through its job queue (the same path as
Settings > Use this model).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWizard

from app.gui.common.qt_worker import QtWorker
from app.gui.training import qt_modes as modes
from app.gui.training.qt_laser import QtLaserPage
from app.gui.training.qt_modes import QtModePage, QtPairsPage
from app.gui.training.qt_pages import QtBaseModelPage, QtCorpusPage, QtHyperPage
from app.gui.training.qt_results import QtExportPage, QtResultsPage, QtRunPage
from app.gui.training.qt_summary import QtSummaryPage

log = logging.getLogger(__name__)


def default_sts_dir() -> Path | None:
    """STS data for dev evaluation and the before/after scores: BABELFIND_SHARED_DATA or
    ../shared/data beside the checkout; None when absent (training then skips evaluation)."""
    from engine.errors import InputError
    from trainer.evaluate import sts_dir_of

    env = os.environ.get("BABELFIND_SHARED_DATA")
    data = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    try:
        return sts_dir_of(data / "sts") if (data / "sts").is_dir() else sts_dir_of(data)
    except InputError:
        return None


class QtWizardJobs(QObject):
    """The wizard's background jobs: each in its own QtWorker, all stopped by shutdown()."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.workers: list[QtWorker] = []

    def run(self, job, **slots) -> QtWorker:
        """Runs generator `job`; `slots` may connect yielded, returned, cancelled, errored, and
        done(worker), called once the thread has ended."""
        return self._start(QtWorker(job, self), slots)

    def run_callback(self, function: Callable, **slots) -> QtWorker:
        """Runs `function(progress)` (see QtWorker.for_callback) with the same slots."""
        return self._start(QtWorker.for_callback(function, self), slots)

    def _start(self, worker: QtWorker, slots: dict) -> QtWorker:
        done = slots.pop("done", None)
        for name, slot in slots.items():
            getattr(worker, name).connect(slot)
        worker.finished.connect(lambda: self._finished(worker, done))
        self.workers.append(worker)
        worker.start()
        return worker

    def _finished(self, worker: QtWorker, done) -> None:
        worker.wait()
        if worker in self.workers:
            self.workers.remove(worker)
        # Not deleteLater(): deleting a finished worker from the event loop while the next
        # click is handled crashed PySide (seen after the export job, about one run in
        # two). The few workers of one wizard go with it, as children of this object;
        # QtWorker drops its job when it ends, so nothing large stays alive.
        if done is not None:
            done(worker)

    def busy(self) -> bool:
        return any(worker.isRunning() for worker in self.workers)

    def shutdown(self) -> None:
        for worker in list(self.workers):
            worker.cancel()
        for worker in list(self.workers):
            worker.wait()


class QtTrainWizard(QWizard):
    """Trains, scores, exports and registers a model; see the module docstring.

    Signals:
        model_activation_requested(str): the new model was made active; the window
            re-encodes the library with it (`QtMainWindow.switch_model`).
        registered(object): the new model's ModelManifest.
    """

    model_activation_requested = Signal(str)
    registered = Signal(object)

    def __init__(self, library, *, sts_dir: Path | str | None = "auto", parent=None):
        super().__init__(parent)
        from engine.models import active_model_name, list_models

        self.library = library
        self.paths = library.paths
        self.db_url = library.db_url
        # "auto": the shared STS data when present; None: no dev evaluation, no scores
        self.sts_dir = default_sts_dir() if sts_dir == "auto" else sts_dir
        self.jobs = QtWizardJobs(self)
        self.corpus = None  # trainer.corpus.Corpus counted on the first page
        self.finished = None  # trainer.mixcse.train.TrainFinished of the last run
        self.scores: dict | None = None  # {"before": report dict, "after": report dict}
        self.manifest = None  # the registered model
        self.previous_model = active_model_name(self.paths)  # to switch back to after activating
        # reviewed pairs are written here; each run gets its own folder beside it
        self.work_dir = self.paths.home / "training" / f"wizard-{time.strftime('%Y%m%d-%H%M%S')}"
        self.setWindowTitle("Train a model")
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setButtonText(QWizard.WizardButton.CommitButton, "Export >")  # leaving the results page
        self.resize(820, 640)
        roots = [root.path for root in library.roots()]
        self.mode_page = QtModePage(self.previous_model, library.status().languages)
        self.pairs_page = QtPairsPage(roots)
        self.corpus_page = QtCorpusPage(roots)
        self.base_page = QtBaseModelPage([m.name for m in list_models(self.paths)],
                                         default=self.previous_model)
        self.hyper_page = QtHyperPage()
        self.summary_page = QtSummaryPage()
        self.run_page = QtRunPage()
        self.results_page = QtResultsPage()
        self.export_page = QtExportPage()
        self.laser_page = QtLaserPage(self.previous_model)
        for page_id, page in ((modes.MODE_PAGE, self.mode_page), (modes.PAIRS_PAGE, self.pairs_page),
                              (modes.CORPUS_PAGE, self.corpus_page), (modes.BASE_PAGE, self.base_page),
                              (modes.HYPER_PAGE, self.hyper_page), (modes.SUMMARY_PAGE, self.summary_page),
                              (modes.RUN_PAGE, self.run_page),
                              (modes.RESULTS_PAGE, self.results_page), (modes.EXPORT_PAGE, self.export_page),
                              (modes.LASER_PAGE, self.laser_page)):
            self.setPage(page_id, page)

    def across_languages(self) -> bool:
        return self.mode_page.mode() == modes.MODE_LANGUAGES

    def config(self, device: str | None = None):
        """The `TrainConfig` the pages describe (the run folder is new for every run);
        `device` overrides the summary page's choice."""
        from trainer.config import TrainConfig
        from trainer.corpus import ALL_INDEXED

        hyper = self.hyper_page
        stamp = time.strftime("%Y%m%d-%H%M%S")
        if self.across_languages():
            # The documents the pairs came from train beside them, held near the base
            # model (TrainConfig.distill), so search within each language does not drift.
            data = dict(base=self.previous_model, pairs=(str(self.pairs_page.pairs_file()),),
                        collection=self.pairs_page.root() or ALL_INDEXED)
        else:
            source = self.corpus_page.source()
            data = dict(base=self.base_page.base(), corpus=source.paths, collection=source.collection)
        return TrainConfig(
            **data, out_dir=self.paths.home / "training" / f"run-{stamp}",
            lam=hyper.lam_value(), tau=round(hyper.tau.value(), 4), lr=hyper.lr.value(),
            batch_size=hyper.batch_size.value(), max_len=hyper.max_len.value(), epochs=hyper.epochs.value(),
            max_steps=hyper.max_steps.value() or None, eval_steps=hyper.eval_steps.value(),
            pooling=hyper.pooling.currentText(), device=device or self.summary_page.chosen_device(),
            sts_dir=str(self.sts_dir) if self.sts_dir else None,
        )

    def shutdown(self) -> None:
        """Stops training (the last checkpoint stays) and waits for every worker and its process."""
        self.jobs.shutdown()

    def done(self, result: int) -> None:
        self.shutdown()
        super().done(result)
