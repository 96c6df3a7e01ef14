"""A cache that healed itself (engine.repairs) said in the status bar, as the command line
says it on stderr: one line, from whichever thread did the repair.

    >>> notes = QtRepairNotes(window)
    >>> notes.noted.connect(lambda text: window.statusBar().showMessage(text, 15_000))
    >>> notes.detach()      # at shutdown
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, Signal

from app.printable import printable
from engine.repairs import REPAIR_LOGGER


class _Forward(logging.Handler):
    def __init__(self, notes: QtRepairNotes, level: int):
        super().__init__(level)
        self.notes = notes

    def emit(self, record: logging.LogRecord) -> None:
        self.notes.noted.emit(printable(record.getMessage()))  # queued to the GUI thread


class QtRepairNotes(QObject):
    """Emits `noted(text)` for each record of engine.repairs while attached: repairs, and
    with `level` INFO also the caches rebuilt once after an update (engine.repairs.updated)."""

    noted = Signal(str)

    def __init__(self, parent: QObject | None = None, level: int = logging.WARNING):
        super().__init__(parent)
        self._handler = _Forward(self, level)
        logging.getLogger(REPAIR_LOGGER).addHandler(self._handler)

    def detach(self) -> None:
        logging.getLogger(REPAIR_LOGGER).removeHandler(self._handler)
