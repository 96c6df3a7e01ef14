"""Does the window give its memory back after the training wizard? Resident memory of the
window's process, idle, during and after a wizard run, against the same run inside it.

    OMP_NUM_THREADS=2 python bench/bench_wizard_memory.py --models ~/.local/share/babelfind/models \\
        --corpus /usr/share/doc --files 60 --steps 2

Two processes, one after the other, each a window over the same fresh library (the
default model, the corpus indexed first by the CLI):

* wizard: tests/app/gui/training/wizard_in_a_window.py drives the wizard through a whole
  run (Fit the model to my documents, the default model, `--steps` steps), the results and
  the export, and closes it; the trainer runs in child processes.
* in-process: the same window, then the same training run by `trainer.mixcse.train.train`
  inside the window's process, as the wizard did before (the baseline of the same session).

Prints one JSON line per process (memory in MB from /proc/self/status VmRSS) and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIZARD = REPO / "tests" / "app" / "gui" / "training" / "wizard_in_a_window.py"

IN_PROCESS = r"""
import gc, json, sys, time
from pathlib import Path
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
sys.path.insert(0, {wizard_dir!r})
from wizard_in_a_window import rss_mb, settle, wait
from app.gui.search.qt_main_window import QtMainWindow
from engine.config import data_paths
from engine.library import Library

app = QApplication(sys.argv)
paths = data_paths()
library = Library.open(paths)
window = QtMainWindow(library, QSettings(str(paths.home / "window.ini"), QSettings.Format.IniFormat))
window.show()
wait(app, window.model_ready, 600)
settle(app, 2)
idle = rss_mb()
from trainer.config import TrainConfig  # torch loads here, as the wizard loaded it when training began
from trainer.mixcse.train import train
config = TrainConfig(base="multilingual-e5-small", corpus=({corpus!r},), out_dir=paths.home / "training" / "inproc",
                     batch_size={batch}, max_len={max_len}, max_steps={steps}, eval_steps={steps}, device="cpu")
peak = idle
for event in train(config, paths=paths):
    app.processEvents()
    peak = max(peak, rss_mb())
gc.collect()
settle(app, 2)
print(json.dumps({{"idle_mb": round(idle, 1), "peak_mb": round(peak, 1), "after_mb": round(rss_mb(), 1),
                  "torch_loaded": "torch" in sys.modules}}))
window.shutdown()
library.close()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=Path, required=True, help="an installed models folder (copied)")
    parser.add_argument("--corpus", type=Path, default=Path("/usr/share/doc"))
    parser.add_argument("--files", type=int, default=60, help="text files of the corpus to train on")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-len", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="babelfind-wizard-memory-") as tmp:
        tmp = Path(tmp)
        corpus = _corpus(args.corpus, args.files, tmp / "corpus")
        rows = {}
        for run in ("wizard", "in-process"):
            home = tmp / run
            shutil.copytree(args.models, home / "models")
            env = dict(os.environ, BABELFIND_HOME=str(home), QT_QPA_PLATFORM="offscreen")
            _index(corpus, env)
            if run == "wizard":
                command = [sys.executable, str(WIZARD), "multilingual-e5-small", str(corpus), "--steps",
                           str(args.steps), "--batch-size", str(args.batch_size), "--max-len", str(args.max_len),
                           "--name", "bench-wizard"]
            else:
                code = IN_PROCESS.format(wizard_dir=str(WIZARD.parent), corpus=str(corpus), batch=args.batch_size,
                                         max_len=args.max_len, steps=args.steps)
                command = [sys.executable, "-c", code]
            done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=REPO)
            if done.returncode != 0:
                raise SystemExit(f"{run} failed:\n{done.stderr[-4000:]}")
            rows[run] = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps({run: rows[run]}), flush=True)
    print("| run | idle MB | peak MB | after MB | after / idle | torch in the window |")
    print("|---|---|---|---|---|---|")
    for run, r in rows.items():
        print(f"| {run} | {r['idle_mb']:.0f} | {r['peak_mb']:.0f} | {r['after_mb']:.0f} | "
              f"{r['after_mb'] / r['idle_mb']:.2f} | {'yes' if r['torch_loaded'] else 'no'} |")
    return 0


def _index(corpus: Path, env: dict) -> None:
    babelfind = Path(sys.executable).with_name("babelfind")
    subprocess.run([str(babelfind), "index", str(corpus)], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def _corpus(source: Path, files: int, target: Path) -> Path:
    """The first `files` plain-text documents under `source` (README, copyright, ...), copied."""
    target.mkdir(parents=True)
    picked = 0
    for path in sorted(source.rglob("*")):
        if picked >= files:
            break
        if path.is_file() and not path.is_symlink() and path.suffix in ("", ".txt", ".md") and path.stat().st_size > 500:
            shutil.copy(path, target / f"{picked:03d}-{path.parent.name}-{path.name}.txt")
            picked += 1
    return target


if __name__ == "__main__":
    sys.exit(main())
