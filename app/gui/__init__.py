"""Babelfind's desktop window (PySide6): `babelfind-gui`, or `python -m app`.

    >>> from app.gui import main
    >>> main([])        # opens the window; returns the exit code when it closes

Qt modules are `qt_*.py` and their classes `Qt*`; they only call engine/ and show what
it returns. Long engine jobs run in `qt_worker.QtWorker`.
"""

from __future__ import annotations

import argparse
import logging
import sys

ORGANISATION = "Babelfind"
APPLICATION = "Babelfind"

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.gui.qt_main_window import QtMainWindow
    from app.gui.qt_menus import THEME_KEY
    from app.gui.qt_theme import app_icon, apply_theme, follow_system
    from engine.config import data_paths
    from engine.errors import BabelfindError
    from engine.library import Library

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("Babelfind")
    app.setDesktopFileName("babelfind")
    app.setWindowIcon(app_icon())
    settings = QSettings()
    theme = lambda: str(settings.value(THEME_KEY, "system"))  # noqa: E731 - read at each change
    apply_theme(app, theme())
    follow_system(app, theme)
    try:
        paths = data_paths()
        if not ensure_models(paths):
            return 1
        library = Library.open(paths, db_url=args.db)
    except BabelfindError as e:
        QMessageBox.critical(None, "Babelfind cannot start", str(e))
        return 1
    window = QtMainWindow(library, settings)
    window.show()
    if args.paths:
        window.index_paths(args.paths)
    try:
        return app.exec()
    finally:
        window.shutdown()
        library.close()


def ensure_models(paths) -> bool:
    """At first start, installs the default models in the background with a progress dialog.

    Returns False when the user cancelled or installation failed (the app then quits).
    """
    from engine.models import list_models

    if list_models(paths):
        return True
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QMessageBox, QProgressDialog

    from app.gui.qt_worker import QtWorker
    from trainer.default_models import ensure_default_models

    dialog = QProgressDialog("Installing the default models (first start only)...", "Cancel", 0, 0)
    dialog.setWindowTitle("Babelfind")
    dialog.setMinimumDuration(0)
    worker = QtWorker.for_callback(lambda progress: ensure_default_models(paths, progress))
    outcome: dict[str, object] = {}
    worker.yielded.connect(lambda event: _show_install_progress(dialog, event))
    worker.returned.connect(lambda _result: outcome.setdefault("ok", True))
    worker.errored.connect(lambda error: outcome.setdefault("error", error))
    dialog.canceled.connect(worker.cancel)
    loop = QEventLoop()
    worker.finished.connect(loop.quit)
    worker.start()
    dialog.show()
    loop.exec()
    worker.wait()
    dialog.close()
    if "error" in outcome:
        QMessageBox.critical(None, "Babelfind", f"The default models could not be installed:\n{outcome['error']}")
    return bool(outcome.get("ok"))


def _show_install_progress(dialog, event) -> None:
    """Progress reports may be text, or carry `message` and `fraction` (0..1)."""
    fraction = getattr(event, "fraction", None)
    if fraction is not None:
        dialog.setRange(0, 1000)
        dialog.setValue(int(1000 * float(fraction)))
    dialog.setLabelText(str(getattr(event, "message", event)))


def _parse(argv: list[str]) -> argparse.Namespace:
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="babelfind-gui", description="Babelfind's desktop window.")
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to index at start")
    parser.add_argument("--db", help="SQLAlchemy database URL (default: from settings)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    return parser.parse_args(argv)
