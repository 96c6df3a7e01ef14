"""A window and its training wizard driven through a whole run, in a process of its own.

    QT_QPA_PLATFORM=offscreen python wizard_in_a_window.py BASE CORPUS [--steps N] [--name NAME]

BASE is a model folder or an installed model's name, CORPUS a file or folder of sentences.
The window opens on BABELFIND_HOME's library, settles, and the wizard goes mode -> corpus ->
base -> settings -> summary (the time measured) -> run -> results -> export; then the wizard
closes. The last line printed is JSON: the resident memory (MB) of this process when the
window was idle, at its highest while the wizard ran and after it closed, whether torch or
transformers were ever imported here, child processes left, and the model registered.
tests/app/gui/training/test_qt_train_daily.py runs it on a tiny BERT; bench/bench_wizard_memory.py
on the default model.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import sys
import time
from pathlib import Path


def rss_mb() -> float:
    """This process's resident memory now (Linux /proc; 0 elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-len", type=int, default=16)
    parser.add_argument("--name", default="tiny-in-a-window")
    parser.add_argument("--settle-s", type=float, default=2.0, help="idle time before the first measure")
    parser.add_argument("--word-encoder", action="store_true",
                        help="the library on the tests' hashed-words encoder instead of its model")
    args = parser.parse_args()

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app.gui.qt_tools import install_tools, open_train_wizard
    from app.gui.search.qt_main_window import QtMainWindow
    from engine.library import Library

    from engine.config import data_paths

    app = QApplication.instance() or QApplication(sys.argv)
    paths = data_paths()
    encoder = None
    if args.word_encoder:
        encoder = _tests_helpers().WordEncoder()
    library = Library.open(paths, encoder=encoder)
    paths.home.mkdir(parents=True, exist_ok=True)
    window = QtMainWindow(library, QSettings(str(paths.home / "window.ini"), QSettings.Format.IniFormat))
    install_tools(window)
    window.show()
    wait(app, window.model_ready, 600)
    settle(app, args.settle_s)
    idle = rss_mb()
    peak = [idle]

    def pump(predicate, timeout_s: float) -> None:
        wait(app, predicate, timeout_s, on_tick=lambda: peak.append(rss_mb()))

    wizard = open_train_wizard(window, sts_dir=None)
    wizard.mode_page.within.setChecked(True)
    wizard.next()
    wizard.corpus_page.add_paths([args.corpus])
    wizard.corpus_page.count()
    pump(lambda: wizard.corpus is not None, 300)
    wizard.next()
    if Path(args.base).is_dir():
        wizard.base_page.use_folder(Path(args.base))
    else:
        wizard.base_page.choice.setCurrentIndex(wizard.base_page.choice.findData(args.base))
    wizard.next()
    hyper = wizard.hyper_page
    hyper.batch_size.setValue(args.batch_size)
    hyper.max_len.setValue(args.max_len)
    hyper.max_steps.setValue(args.steps)
    hyper.eval_steps.setValue(max(1, args.steps // 2))
    wizard.next()
    wizard.summary_page.name.setText(args.name)
    pump(lambda: wizard.summary_page.estimate is not None, 900)
    estimate = wizard.summary_page.estimate
    started = time.monotonic()
    wizard.next()
    pump(wizard.run_page.isComplete, 3600)
    trained_s = time.monotonic() - started
    wizard.next()
    pump(wizard.results_page.isComplete, 600)
    wizard.next()
    wizard.export_page.export()
    pump(wizard.export_page.isComplete, 1800)
    registered = wizard.manifest.name if wizard.manifest else None
    wizard.done(0)
    wizard.deleteLater()
    settle(app, args.settle_s)
    gc.collect()
    after = rss_mb()
    report = {"idle_mb": round(idle, 1), "peak_mb": round(max(peak), 1), "after_mb": round(after, 1),
              "torch_loaded": "torch" in sys.modules, "transformers_loaded": "transformers" in sys.modules,
              "children_left": len(multiprocessing.active_children()), "registered": registered,
              "estimated_s": round(estimate.seconds, 1), "trained_s": round(trained_s, 1)}
    window.shutdown()
    library.close()
    print(json.dumps(report))
    return 0


def _tests_helpers():
    """tests/helpers.py, loaded from its file: tests/ on sys.path would let its trainer/
    folder (a namespace package there) shadow the real trainer package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("helpers", Path(__file__).resolve().parents[3] / "helpers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wait(app, predicate, timeout_s: float, on_tick=None) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout_s:.0f} s")
        app.processEvents()
        if on_tick is not None:
            on_tick()
        time.sleep(0.05)


def settle(app, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.05)


if __name__ == "__main__":
    sys.exit(main())
