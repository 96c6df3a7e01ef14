"""The Qt binding keeps Python's reference counts straight on the calls the GUI makes
thousands of times (PySide6 6.12.0 did not; see the pin in pyproject.toml)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, Qt, Signal

CALLS = 500


class _Emitter(QObject):
    fired = Signal(object)


class _EmptyModel(QAbstractListModel):
    def rowCount(self, parent=QModelIndex()) -> int:
        return 1

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        return None  # what every model returns for roles it does not serve


def test_signal_emit_keeps_the_refcount_of_true(qapp):
    emitter = _Emitter()
    received: list[int] = []
    emitter.fired.connect(received.append)
    before = sys.getrefcount(True)
    for i in range(CALLS):
        emitter.fired.emit(i)
    # a small drift from unrelated work is fine; a leak loses one reference per call
    assert abs(sys.getrefcount(True) - before) < CALLS // 2
    assert len(received) == CALLS


def test_data_returning_none_keeps_the_refcount_of_none(qapp):
    model = _EmptyModel()
    index = model.index(0, 0)
    before = sys.getrefcount(None)
    for _ in range(CALLS):
        assert index.data(Qt.ItemDataRole.UserRole) is None  # called through C++
    assert abs(sys.getrefcount(None) - before) < CALLS // 2
