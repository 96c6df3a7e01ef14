"""Mined sentence pairs as a table: keep checkbox, score, source, target.

    >>> model = QtPairsModel()
    >>> model.set_result(result)                 # an engine.mining.bitext.MiningResult
    >>> view.setModel(model.proxy)               # sortable, hides pairs at or below the threshold
    >>> model.set_threshold(1.1); model.kept()   # MinedPairs above it and not rejected

The model wraps the engine's result and a set of rejected row numbers; it never copies or
changes the pairs (Frescobaldi's snippet model is the pattern).
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal

from engine.mining.bitext_review import kept_indices

COLUMNS = ("Keep", "Score", "Source", "Target")
KEEP, SCORE, SOURCE, TARGET = range(4)
SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # raw value to sort by (scores as numbers)


class QtPairsModel(QAbstractTableModel):
    """Rows are the result's pairs in the engine's order; row numbers index `result.pairs`."""

    review_changed = Signal()  # a pair was accepted or rejected, or the threshold moved

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result = None
        self.rejected: set[int] = set()
        self.threshold = float("-inf")
        self.proxy = _ThresholdProxy(self)
        self.proxy.setSourceModel(self)
        self.proxy.setSortRole(SORT_ROLE)

    # -- data ---------------------------------------------------------------------

    def set_result(self, result) -> None:
        self.beginResetModel()
        self.result, self.rejected = result, set()
        self.endResetModel()
        self.review_changed.emit()

    def pairs(self) -> tuple:
        return self.result.pairs if self.result is not None else ()

    def scores(self) -> list[float]:
        return [p.score for p in self.pairs()]

    def set_threshold(self, threshold: float) -> None:
        self.proxy.beginFilterChange()
        self.threshold = threshold
        self.proxy.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        self.review_changed.emit()

    def set_rejected(self, row: int, rejected: bool) -> None:
        index = self.index(row, KEEP)
        self.setData(index, Qt.CheckState.Unchecked if rejected else Qt.CheckState.Checked,
                     Qt.ItemDataRole.CheckStateRole)

    def kept_rows(self) -> list[int]:
        return kept_indices(self.scores(), self.threshold, self.rejected)

    def kept(self) -> list:
        pairs = self.pairs()
        return [pairs[i] for i in self.kept_rows()]

    def shown(self) -> int:
        """Pairs above the threshold, accepted or not (the rows the table shows)."""
        return self.proxy.rowCount()

    # -- QAbstractTableModel ------------------------------------------------------

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.pairs())

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def flags(self, index):
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        return base | Qt.ItemFlag.ItemIsUserCheckable if index.column() == KEEP else base

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        pair = self.pairs()[row]
        if role == Qt.ItemDataRole.CheckStateRole and column == KEEP:
            return Qt.CheckState.Unchecked if row in self.rejected else Qt.CheckState.Checked
        if role == Qt.ItemDataRole.DisplayRole:
            return {SCORE: f"{pair.score:.3f}", SOURCE: pair.src_text, TARGET: pair.tgt_text}.get(column)
        if role == SORT_ROLE:
            return {KEEP: int(row not in self.rejected), SCORE: pair.score, SOURCE: pair.src_text,
                    TARGET: pair.tgt_text}[column]
        if role == Qt.ItemDataRole.ToolTipRole and column in (SOURCE, TARGET):
            return pair.src_text if column == SOURCE else pair.tgt_text
        if role == Qt.ItemDataRole.TextAlignmentRole and column == SCORE:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != KEEP:
            return False
        checked = Qt.CheckState(value) == Qt.CheckState.Checked
        (self.rejected.discard if checked else self.rejected.add)(index.row())
        self.dataChanged.emit(index, index.siblingAtColumn(TARGET))
        self.review_changed.emit()
        return True


class _ThresholdProxy(QSortFilterProxyModel):
    """Sorts by the raw values and hides pairs scoring at or below the threshold."""

    def __init__(self, pairs_model: QtPairsModel):
        super().__init__(pairs_model)
        self._pairs_model = pairs_model

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        return self._pairs_model.pairs()[source_row].score > self._pairs_model.threshold
