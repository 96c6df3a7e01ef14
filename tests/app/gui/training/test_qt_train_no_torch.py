"""Tools > Train a model without torch: one message with the install command, no wizard."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtWidgets import QMessageBox

from app.gui.qt_tools import open_train_wizard
from app.training_extra import INSTALL_HINT


@pytest.fixture
def no_training(monkeypatch):
    """torch and transformers unimportable in this process (as in tests/app/test_no_torch.py)."""
    for name in ("torch", "transformers"):
        monkeypatch.setitem(sys.modules, name, None)


def test_wizard_without_torch_shows_how_to_install(qtbot, window, no_training):
    assert open_train_wizard(window) is None
    box = window.training_unavailable
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert INSTALL_HINT in box.text() and "Training needs torch and transformers" in box.text()
    assert "train" not in window.tool_windows  # no half-made wizard left behind
    box.close()


def test_the_bundles_train_menu_says_training_needs_the_source_install(qtbot, window, no_training, monkeypatch):
    """pip cannot change the desktop bundle: it names the source install and its command."""
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert open_train_wizard(window) is None
    text = window.training_unavailable.text()
    assert "Training is not part of the desktop bundle" in text and INSTALL_HINT not in text
    assert "pip install -c requirements.lock '.[train]'" in text and "babelfind-gui" in text
    window.training_unavailable.close()
