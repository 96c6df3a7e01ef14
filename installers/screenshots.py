"""Renders the README screenshots of the real window into docs/screenshots/.

    xvfb-run -a -s "-screen 0 1600x1000x24" python installers/screenshots.py

Indexes resources/sample/ with the active model in a throw-away BABELFIND_HOME (the
default models are installed there first, or linked from --models), then saves:
empty.png, indexing.png, results.png and dark.png. Window settings go to a temporary
QSettings folder, never to the user's.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

log = logging.getLogger("screenshots")

SIZE = (1280, 800)
QUERY_LIGHT = "why are the glaciers in the Alps shrinking"  # finds the German text
QUERY_DARK = "how to bake sourdough bread with a crispy crust"  # finds the French PDF


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--corpus", type=Path, default=REPO / "resources" / "sample")
    parser.add_argument("--models", type=Path, help="an installed models folder to link instead of installing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="babelfind-shots-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["BABELFIND_HOME"] = str(home)
        if args.models:
            (home / "models").symlink_to(args.models.resolve(), target_is_directory=True)
        return _render(args, home, Path(tmp) / "qsettings")


def _render(args, home: Path, settings_dir: Path) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.gui import APPLICATION, ORGANISATION
    from app.gui.qt_main_window import QtMainWindow
    from app.gui.qt_theme import app_icon, apply_theme
    from engine.config import data_paths
    from engine.library import Library
    from trainer.default_models import ensure_default_models

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(settings_dir))
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setWindowIcon(app_icon())
    apply_theme(app, "light")
    paths = data_paths(home)
    log.info("model: %s", ensure_default_models(paths, lambda f, m: log.info("  %3.0f%% %s", 100 * f, m)))
    library = Library.open(paths)
    window = QtMainWindow(library, QSettings())
    window.resize(*SIZE)
    window.show()
    try:
        _settle(app)
        _save(window, args.out / "empty.png")
        _shoot_indexing(app, window, args.corpus, args.out / "indexing.png")
        _search(app, window, QUERY_LIGHT)
        _save(window, args.out / "results.png")
        apply_theme(app, "dark")
        _search(app, window, QUERY_DARK)
        _save(window, args.out / "dark.png")
    finally:
        window.shutdown()
        window.close()
        library.close()
    return 0


def _shoot_indexing(app, window, corpus: Path, out: Path) -> None:
    """Starts indexing the corpus and saves a frame while the progress row is live."""
    from engine.events import IndexProgress

    shot: list[bool] = []

    def on_progress(event) -> None:
        if not shot and isinstance(event, IndexProgress) and event.files_done >= 3:
            shot.append(True)
            _settle(app, 0.05)
            _save(window, out)

    window.jobs.progress.connect(on_progress)
    window.index_paths([corpus])
    _wait(app, lambda: not window.jobs.busy(), timeout_s=600)
    window.jobs.progress.disconnect(on_progress)
    if not shot:
        raise SystemExit("indexing finished before a progress frame could be taken")


def _search(app, window, query: str) -> None:
    window.search_bar.field.setText(query)
    window.search_bar.debounce.stop()
    window.run_search()
    window.search_bar.field.setFocus()
    _settle(app)


def _save(window, path: Path) -> None:
    pixmap = window.grab()
    if not pixmap.save(str(path)):
        raise SystemExit(f"could not write {path}")
    log.info("wrote %s (%dx%d)", path, pixmap.width(), pixmap.height())


def _settle(app, seconds: float = 0.3) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _wait(app, condition, timeout_s: float) -> None:
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            raise SystemExit("timed out waiting for indexing")
        app.processEvents()
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main())
