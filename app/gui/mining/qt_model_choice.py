"""The mining panel's model row: which model mines, and one to compare its speed with.

    >>> row = QtMiningModels(library.paths, library_model="multilingual-e5-small")
    >>> row.models(library_encoder)      # [library_encoder] or [encoder or name, "notes-laser"]

The first choice is the library's own model (its loaded encoder is reused); the others are
registered models, loaded by the mining job in its worker. With a second model chosen,
the job mines with both and the panel shows their sentences per second side by side
(engine.mining.compare).
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QWidget

NO_COMPARISON = "(none)"


class QtMiningModels(QWidget):
    """Two combos: the model to mine with, and an optional second one to compare."""

    def __init__(self, paths, library_model: str | None, parent=None):
        super().__init__(parent)
        self.paths = paths
        self.library_model = library_model
        self.model = QComboBox()
        self.model.setToolTip("The model whose vectors find the pairs")
        self.compare = QComboBox()
        self.compare.setToolTip("Mine again with this model and show both speeds (sentences/s)")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for label, combo in (("Model", self.model), ("Compare speed with", self.compare)):
            row.addWidget(QLabel(label))
            row.addWidget(combo, 1)
        self.refresh()

    def refresh(self) -> None:
        """Lists the registered models again (one may have been trained or imported)."""
        from engine.models import list_models

        names = [m.name for m in list_models(self.paths) if m.name != self.library_model]
        chosen, compared = self.model.currentData(), self.compare.currentData()
        self.model.clear()
        self.model.addItem(f"Library model ({self.library_model or 'none'})", None)
        for name in names:
            self.model.addItem(name, name)
        self.compare.clear()
        self.compare.addItem(NO_COMPARISON, None)
        for name in [self.library_model, *names]:
            if name:
                self.compare.addItem(name, name)
        for combo, value in ((self.model, chosen), (self.compare, compared)):
            index = combo.findData(value)
            combo.setCurrentIndex(max(0, index))

    def choose(self, model: str | None, compare: str | None = None) -> None:
        """Selects by name (None: the library's model / no comparison), as a user would."""
        for combo, value in ((self.model, model), (self.compare, compare)):
            index = combo.findData(value)
            if index < 0:
                raise ValueError(f"{value!r} is not offered")
            combo.setCurrentIndex(index)

    def models(self, library_encoder) -> list:
        """What to mine with: the first is an Encoder or a name; a second only to compare."""
        first = self.model.currentData()
        chosen = [library_encoder if first is None else first]
        second = self.compare.currentData()
        if second is not None and second != (first or self.library_model):
            chosen.append(second)
        return chosen
