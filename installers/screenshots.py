"""Renders the README screenshots of the real window into docs/screenshots/.

    xvfb-run -a -s "-screen 0 1600x1000x24" python installers/screenshots.py

Indexes the sample corpus (engine.resources.sample_corpus) with the active model in a
throw-away BABELFIND_HOME (the default models are installed there first, or linked from
--models), then saves: empty.png (the first-run welcome page), indexing.png,
results.png, no_results.png, no_answer.png (a question nothing in the sample answers:
only weaker matches), switch_settings.png and switch_building.png (Settings offering the
adapted model, then the window building it before re-encoding) and dark.png. Window settings go to a temporary
QSettings folder, never to the user's.

The two tools follow: train_summary.png (the training wizard's summary page, the time
measured on this computer, before anything starts: the active model on the shared
Wikipedia sentences), train_run.png (its run page during a short real MixCSE run of
all-minilm-l6-v2 on the same sentences, dev-STS on the first STS-B dev pairs) and mining.png (Parallel sentences over German and English PUD
sentences, the English shuffled and partly unmatched). `--only train_run mining` renders
just those.
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

SIZE = (1200, 760)  # the window's size on a first start (QtMainWindow._restore_state)
QUERY_LIGHT = "why are the glaciers in the Alps shrinking"  # finds the German text
QUERY_DARK = "how to bake sourdough bread with a crispy crust"  # finds the French PDF
QUERY_NONE = '"purple elephants" type:pdf'  # no sample document holds the phrase
QUERY_NO_ANSWER = "how do I change the oil of a diesel car"  # no sample text is about cars
SHOTS = ("empty", "indexing", "results", "no_results", "no_answer", "dark", "train_summary", "train_run", "mining",
         "switch_model")
SHARED_DATA = REPO.parent / "shared" / "data"
TRAIN_STEPS, TRAIN_EVAL_STEPS, TRAIN_BATCH = 40, 10, 16  # a short run that still draws curves
STS_DEV_PAIRS = 300  # dev-STS on a prefix of STS-B dev keeps each evaluation short on a CPU
MINING_SENTENCES, MINING_UNMATCHED = 48, 8  # PUD sentences per side; those without a translation


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--corpus", type=Path, help="folder to index (default: the sample corpus)")
    parser.add_argument("--models", type=Path, help="an installed models folder to link instead of installing")
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="shared data (sts/, corpus/) for the tools")
    parser.add_argument("--only", nargs="+", choices=SHOTS, default=SHOTS, help="render only these")
    args = parser.parse_args(argv)
    if args.corpus is None:
        from engine.resources import sample_corpus

        args.corpus = sample_corpus()
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
    from app.gui.common.qt_theme import app_icon, apply_theme
    from app.gui.qt_tools import install_tools
    from app.gui.search.qt_main_window import QtMainWindow
    from engine.config import data_paths
    from engine.indexer import IndexerConfig
    from engine.library import Library
    from trainer.serving.default_models import ensure_default_models

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(settings_dir))
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setOrganizationName(ORGANISATION)
    app.setApplicationName(APPLICATION)
    app.setWindowIcon(app_icon())
    apply_theme(app, "light")
    paths = data_paths(home)
    log.info("model: %s", ensure_default_models(paths, lambda f, m: log.info("  %3.0f%% %s", 100 * f, m)))
    # small encoder batches: the nine sample files (37 passages) would otherwise be encoded
    # in one batch at the end, and the progress row never seen mid-run
    library = Library.open(paths, config=IndexerConfig(batch_passages=4))
    window = QtMainWindow(library, QSettings())
    install_tools(window)
    window.resize(*SIZE)
    window.show()
    try:
        _settle(app)
        if "empty" in args.only:
            _save(window, args.out / "empty.png")
        if "indexing" in args.only:
            _shoot_indexing(app, window, args.corpus, args.out / "indexing.png")
        elif {"results", "no_results", "no_answer", "dark", "switch_model"} & set(args.only):
            _index(app, window, args.corpus)
        if "results" in args.only:
            _search(app, window, QUERY_LIGHT)
            _save(window, args.out / "results.png")
        if "no_results" in args.only:
            _search(app, window, QUERY_NONE)
            _save(window, args.out / "no_results.png")
        if "no_answer" in args.only:
            _search(app, window, QUERY_NO_ANSWER)
            _save(window, args.out / "no_answer.png")
        if "train_summary" in args.only:
            _shoot_summary(app, window, args.data, args.out / "train_summary.png")
        if "train_run" in args.only:
            _shoot_training(app, window, args.data, home, args.out / "train_run.png")
        if "mining" in args.only:
            _shoot_mining(app, window, args.data, home, args.out / "mining.png")
        if "switch_model" in args.only:
            _shoot_switch(app, window, args.out / "switch_settings.png", args.out / "switch_building.png")
        if "dark" in args.only:
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
        if (not shot and isinstance(event, IndexProgress) and 3 <= event.files_done < event.files_total
                and event.eta_s is not None):
            shot.append(True)
            _settle(app, 0.05)
            _save(window, out)

    window.jobs.progress.connect(on_progress)
    _index(app, window, corpus)
    window.jobs.progress.disconnect(on_progress)
    if not shot:
        raise SystemExit("indexing finished before a progress frame could be taken")


def _shoot_switch(app, window, settings_out: Path, building_out: Path) -> None:
    """Settings > Models offering the adapted model not built yet, then the window while
    it is built (before the library is re-encoded with it); waits for the switch to end."""
    from app.first_run import InstallProgress
    from app.gui.search.qt_settings import QtSettingsDialog
    from trainer.serving.default_models import ALIGNED_MODEL

    dialog = QtSettingsDialog(window.library, window)
    dialog.show()
    dialog.resize(max(dialog.width(), 900), dialog.sizeHint().height())
    rows = [dialog.models.item(r).name for r in range(dialog.models.rowCount())]
    dialog.models_view.selectRow(rows.index(ALIGNED_MODEL))
    _settle(app)
    _save(dialog, settings_out)
    dialog.reject()
    shot: list[bool] = []

    def on_progress(event) -> None:
        if not shot and isinstance(event, InstallProgress) and event.fraction >= 0.1:
            shot.append(True)
            _settle(app, 0.05)
            _save(window, building_out)

    window.jobs.progress.connect(on_progress)
    window.switch_model(ALIGNED_MODEL)
    _wait(app, lambda: window.library.status().model == ALIGNED_MODEL and not window.jobs.busy(), timeout_s=900)
    window.jobs.progress.disconnect(on_progress)
    if not shot:
        raise SystemExit("the model was built before a progress frame could be taken")


def _index(app, window, corpus: Path) -> None:
    window.index_paths([corpus])
    _wait(app, lambda: not window.jobs.busy(), timeout_s=600)


def _wizard_at_summary(app, window, data: Path, base: str | None, sts_dir: Path | None, **settings):
    """The training wizard driven as a user would, up to its summary page with the time
    measured: "Fit the model to my documents", the Wikipedia sentences, `base` (None: the
    model the library uses), `settings` on the "How long to train" page."""
    from app.gui.qt_tools import open_train_wizard

    wizard = open_train_wizard(window, sts_dir=sts_dir)
    wizard.resize(900, 640)
    wizard.mode_page.within.setChecked(True)
    wizard.next()
    wizard.corpus_page.add_paths([data / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt"])
    wizard.corpus_page.count()
    _wait(app, lambda: wizard.corpus is not None, timeout_s=300)
    wizard.next()
    if base is not None:
        wizard.base_page.choice.setCurrentIndex(wizard.base_page.choice.findData(base))
    wizard.next()
    for name, value in settings.items():
        getattr(wizard.hyper_page, name).setValue(value)
    wizard.next()
    _wait(app, lambda: wizard.summary_page.estimate is not None, timeout_s=1200)
    _settle(app)
    return wizard


def _shoot_summary(app, window, data: Path, out: Path) -> None:
    """The summary a user reads before training starts: a first try of 300 steps."""
    wizard = _wizard_at_summary(app, window, data, None, None, max_steps=300)
    _save(wizard, out)
    wizard.reject()


def _shoot_training(app, window, data: Path, home: Path, out: Path) -> None:
    """Drives the wizard's pages as a user would and saves the run page near the end."""
    from trainer.events import TrainStep

    sts = _short_sts(data / "sts" / "original", home / "sts-short")
    wizard = _wizard_at_summary(app, window, data, "all-minilm-l6-v2", sts, batch_size=TRAIN_BATCH,
                                max_steps=TRAIN_STEPS, eval_steps=TRAIN_EVAL_STEPS)
    shot: list[bool] = []

    def on_event(event) -> None:
        if not shot and isinstance(event, TrainStep) and event.step >= TRAIN_STEPS - 3:
            shot.append(True)
            _settle(app, 0.05)
            _save(wizard, out)

    wizard.next()  # starts training
    wizard.run_page.worker.yielded.connect(on_event)
    _wait(app, lambda: not wizard.run_page.running(), timeout_s=1800)
    if not shot:
        raise SystemExit(f"training ended before the screenshot: {wizard.run_page.status.text()}")
    wizard.reject()


def _short_sts(sts: Path, target: Path) -> Path:
    """A copy of the STS tree whose STS-B dev split holds only its first STS_DEV_PAIRS pairs."""
    dev = target / "STSBenchmark" / "sts-dev.csv"
    dev.parent.mkdir(parents=True)
    lines = (sts / "STSBenchmark" / "sts-dev.csv").read_text(encoding="utf-8").splitlines()[:STS_DEV_PAIRS]
    dev.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def _shoot_mining(app, window, data: Path, home: Path, out: Path) -> None:
    """Mines German against shuffled English PUD sentences, rejects one pair, saves the panel."""
    import random

    from app.gui.qt_tools import open_mining_panel

    pud = data / "corpus" / "pud-parallel"
    german = (pud / "pud.de.tsv").read_text(encoding="utf-8").splitlines()[:MINING_SENTENCES]
    english = (pud / "pud.en.tsv").read_text(encoding="utf-8").splitlines()
    english = english[MINING_UNMATCHED:MINING_SENTENCES + MINING_UNMATCHED]
    random.Random(7).shuffle(english)  # out of order: pairs are mined, not aligned
    files = []
    for name, lines in (("nachrichten.de.tsv", german), ("news.en.tsv", english)):
        files.append(home / name)
        files[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    panel = open_mining_panel(window)
    panel.resize(1200, 760)
    panel.set_side(0, files[0])
    panel.set_side(1, files[1])
    panel.mine()
    _wait(app, lambda: panel.worker is None, timeout_s=600)
    if panel.error.text():
        raise SystemExit(f"mining failed: {panel.error.text()}")
    panel.slider.setValue(panel.slider.maximum() // 4)  # a stricter threshold greys the weakest bars
    panel.table.selectRow(2)  # one pair rejected, to show the Keep box unticked
    panel.pairs.set_rejected(panel.selected_rows()[0], True)
    _settle(app)
    _save(panel, out)
    panel.close()


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
