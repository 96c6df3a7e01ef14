"""Helpers for driving the real window: drop files, type queries, wait for jobs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl

# QDragEnterEvent takes a QPoint up to PySide6 6.11 (6.12 adds QPointF and deprecates
# QPoint); QDropEvent has always taken a QPointF.
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWizard

from app.gui.search.qt_main_window import QtMainWindow

# A first index with the real default model measures its language means and hubness
# references: over two minutes where int8 is not served (a CPU without VNNI) and the
# test shares the cores with another pytest-xdist worker. The waits end when the job does.
JOB_TIMEOUT_MS = 360_000


def drop(window: QtMainWindow, paths: Sequence[Path]) -> bool:
    """Sends a real drag-enter and drop with file URLs to the window; True if accepted."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    centre = window.rect().center()
    enter = QDragEnterEvent(
        centre, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(window, enter)
    if not enter.isAccepted():
        return False
    event = QDropEvent(
        QPointF(centre), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(window, event)
    return event.isAccepted()


def drop_and_wait(qtbot, window: QtMainWindow, paths: Sequence[Path]) -> None:
    """Drops `paths` and waits on the worker's finished signal."""
    assert drop(window, paths)
    worker = window.jobs.worker()
    assert worker is not None, "the drop started no indexing job"
    if worker.isRunning() or not worker.isFinished():
        with qtbot.waitSignal(worker.finished, timeout=JOB_TIMEOUT_MS):
            pass
    qtbot.waitUntil(lambda: not window.jobs.busy(), timeout=JOB_TIMEOUT_MS)


def type_query(qtbot, window: QtMainWindow, text: str) -> None:
    """Types `text` key by key and waits for the debounced search to run."""
    field = window.search_bar.field
    field.setFocus()
    field.clear()
    with qtbot.waitSignal(window.searched, timeout=10_000):
        qtbot.keyClicks(field, text)


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def next_page(qtbot, wizard) -> None:
    """Clicks the wizard's Next, as a user would; fails when Next is disabled."""
    button = wizard.button(QWizard.WizardButton.NextButton)
    assert button.isEnabled(), f"Next is disabled on {wizard.currentPage().title()!r}"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def start_tiny_run_on_cpu(qtbot, wizard, **settings: int | float) -> None:
    """From the train wizard's "How long to train" page: sets `settings` (lr=1e-3,
    max_steps=4, ...: the page's fields, the advanced ones too), goes to the summary (where
    nothing runs yet; a machine without a GPU trains on its CPU) and starts training."""
    hyper = wizard.hyper_page
    for name, value in settings.items():
        getattr(hyper, name).setValue(value)
    next_page(qtbot, wizard)
    assert wizard.currentPage() is wizard.summary_page
    next_page(qtbot, wizard)  # "Start training"
    assert wizard.currentPage() is wizard.run_page


def listed_rows(window) -> list[tuple[str, bool]]:
    """(file name or heading, weak) per row of the results list, as the view shows them."""
    from app.gui.search.qt_models import QtResultsModel

    model = window.results.model()
    rows = []
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        hit = index.data(QtResultsModel.HitRole)
        rows.append((Path(hit.path).name if hit else index.data(), bool(index.data(QtResultsModel.WeakRole))))
    return rows


def shown_names(window: QtMainWindow) -> list[str]:
    """The file names of the results on screen, in order."""
    model = window.results.model()
    return [Path(model.index(r, 0).data(window.results_model.PathRole)).name for r in range(model.rowCount())]
