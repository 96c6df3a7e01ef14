"""Tools menu entries: "Train a model..." and "Find parallel sentences...".

    >>> window = QtMainWindow(library, settings)
    >>> install_tools(window)          # adds the Tools menu

Each tool opens its own window, made on first use and kept in `window.tool_windows`
(the main window stops their background work when it shuts down). The search window,
the wizard and the mining panel do not know each other: this module puts them together.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from app.gui.search.qt_menus import add_tool


def install_tools(window) -> None:
    train = QAction("Train a &model...", window)
    train.setToolTip("Adapt an encoder to your own sentences (MixCSE), then use it for search")
    train.triggered.connect(lambda: open_train_wizard(window))
    add_tool(window, train)
    mine = QAction("Find &parallel sentences...", window)
    mine.setToolTip("Find the sentences of two documents that translate each other")
    mine.triggered.connect(lambda: open_mining_panel(window))
    add_tool(window, mine)


def open_train_wizard(window, **kwargs):
    """Shows the training wizard (a new one unless one is open); returns it.

    Without torch (an install or bundle without the `train` extra) it shows one message
    saying how to install it instead, and returns None.
    """
    from app.training_extra import missing_training_packages, training_missing_message

    missing = missing_training_packages()
    if missing:
        window.training_unavailable = _tell(window, training_missing_message("Training", missing))
        return None
    from app.gui.training.qt_wizard import QtTrainWizard

    wizard = _open(window, "train")
    if wizard is None:
        old = window.tool_windows.get("train")
        if old is not None and shiboken6.isValid(old):
            old.deleteLater()  # finished or closed: its workers were stopped by done()
        wizard = QtTrainWizard(window.library, parent=window, **kwargs)
        wizard.model_activation_requested.connect(window.switch_model)
        window.tool_windows["train"] = wizard
    wizard.show()
    wizard.raise_()
    return wizard


def _tell(window, text: str) -> QMessageBox:
    """A window-modal note that does not block the caller (tests, the event loop)."""
    box = QMessageBox(QMessageBox.Icon.Information, "Training is not installed", text,
                      QMessageBox.StandardButton.Ok, window)
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # copy the command
    box.open()
    return box


def open_mining_panel(window, **kwargs):
    """Shows the "Parallel sentences" window (one per main window); returns it."""
    from app.gui.mining.qt_panel import QtMiningPanel

    panel = _open(window, "mine")
    if panel is None:
        panel = QtMiningPanel(window.library, parent=window, **kwargs)
        window.tool_windows["mine"] = panel
    else:
        panel.refresh_documents()
    panel.show()
    panel.raise_()
    return panel


def _open(window, key: str):
    tool = window.tool_windows.get(key)
    if tool is None or not shiboken6.isValid(tool) or (key == "train" and not tool.isVisible()):
        return None  # a closed wizard starts over; the panel keeps its pairs
    return tool
