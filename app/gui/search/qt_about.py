"""The About dialog: version, and the active model with its source and licence.

    >>> QtAboutDialog(library, parent=window).exec()
"""

from __future__ import annotations

import html
from importlib import metadata

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QVBoxLayout

from app.gui.common.qt_theme import app_icon
from engine.errors import BabelfindError


def app_version() -> str:
    try:
        return metadata.version("babelfind")
    except metadata.PackageNotFoundError:
        return "development version"


def about_html(model_name: str, manifest) -> str:
    """The dialog's text; `manifest` is the model's ModelManifest, or None if unknown."""
    rows = [f"<b>Model:</b> {html.escape(model_name)}"]
    if manifest is not None:
        rows.append(f"<b>Source:</b> {html.escape(manifest.source or 'not recorded')}")
        rows.append(f"<b>Licence:</b> {html.escape(manifest.licence or 'not recorded')}")
        rows.append(f"<b>Languages:</b> {len(manifest.languages)}  ·  <b>Dimension:</b> {manifest.dim}")
    else:
        rows.append("The model's manifest could not be read.")
    return (
        f"<h2>Babelfind</h2><p>Version {html.escape(app_version())}</p>"
        "<p>Searches your own documents by meaning, in any language, entirely on this computer.</p>"
        + "<p>" + "<br>".join(rows) + "</p>"
    )


class QtAboutDialog(QDialog):
    def __init__(self, library, parent=None):
        super().__init__(parent)
        self.setWindowTitle("About Babelfind")
        model = library.status().model
        try:
            from engine.models import get_manifest

            manifest = get_manifest(model, library.paths)
        except BabelfindError:
            manifest = None
        logo = QLabel()
        logo.setPixmap(app_icon().pixmap(64, 64))
        logo.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.text = QLabel(about_html(model, manifest))
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row = QHBoxLayout()
        row.addWidget(logo)
        row.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(buttons)
        self.setMinimumWidth(420)
