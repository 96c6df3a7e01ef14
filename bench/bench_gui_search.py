"""Keystroke-to-results latency of the desktop window over a ~10k-passage collection.

    OMP_NUM_THREADS=1 QT_QPA_PLATFORM=offscreen python bench/bench_gui_search.py --home /tmp/bench-gui

Builds (once; reused from --home) a synthetic collection indexed through the real
Library with the active model (passage vectors of repeated paragraphs are computed
once, see CachingEncoder), opens the real QtMainWindow, and for each query types
all but the last character, then measures from `QTest.keyClick(last character)` to the
results model being reset with the new hits. The 150 ms debounce is excluded by setting
the timer's interval to 0 (it still goes through the event loop once). The baseline in
the same run is `Library.search` alone for the same queries, so the difference is what
the window adds (key handling, facet counts, model reset).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TOPICS = {
    "bees": "bees hive honey nectar pollen queen swarm beekeeper wax flowers",
    "rail": "train railway station track locomotive freight passengers timetable bridge tunnel",
    "bread": "bread dough flour yeast oven crust sourdough baking kneading starter",
    "glacier": "glacier ice melting alps snow climate meltwater valley moraine summer",
    "tea": "tea leaves green oolong black fermentation harvest plantation brewing cup",
    "glass": "glass furnace blowing venice murano colour craftsman vase beads sand",
    "volcano": "volcano lava eruption hot spring crater ash magma steam island earthquake",
    "polder": "polder dike windmill pump drainage sea level canal farmland storm flood",
}
VERBS = "describes explains measures changes protects shows requires follows surrounds improves".split()
JOINERS = "in the during after before across near under with about".split()


def synthetic_corpus(folder: Path, documents: int, pool: int, seed: int = 0) -> None:
    """`documents` one-paragraph text files drawn from `pool` distinct seeded paragraphs.

    Each file is one passage (four short sentences stay under the passage limits), so
    the collection has `documents` passages while only `pool` distinct texts need the
    model (see CachingEncoder).
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    topics = list(TOPICS)
    paragraphs = []
    for p in range(pool):
        words = TOPICS[topics[p % len(topics)]].split()
        paragraphs.append(" ".join(
            f"The {rng.choice(words)} {rng.choice(VERBS)} the {rng.choice(words)} "
            f"{rng.choice(JOINERS)} the {rng.choice(words)} {rng.choice(words)}."
            for _ in range(4)
        ))
    for d in range(documents):
        sub = folder / f"part{d // 1000:02}"  # a thousand files per folder, like real archives
        sub.mkdir(exist_ok=True)
        (sub / f"{topics[d % pool % len(topics)]}_{d:05}.txt").write_text(paragraphs[d % pool], encoding="utf-8")


class CachingEncoder:
    """The real encoder, remembering passage vectors by text (queries always go through).

    Filling a 10k-passage collection on a shared 2-core machine would take most of an
    hour of encoding; with a pool of repeated paragraphs only the distinct texts are
    encoded, and every stored vector is still the real model's.
    """

    def __init__(self, encoder):
        self._encoder = encoder
        self.name, self.dim = encoder.name, encoder.dim
        self._cache: dict[str, object] = {}

    def encode(self, texts, kind: str = "passage"):
        import numpy as np

        if kind != "passage":
            return self._encoder.encode(texts, kind=kind)
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            for text, vector in zip(missing, self._encoder.encode(missing, kind="passage")):
                self._cache[text] = vector
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


QUERIES = [
    "how do bees make honey from nectar", "the queen of the hive", "freight trains crossing a bridge",
    "railway timetable for passengers", "baking sourdough bread with a crispy crust", "kneading the dough",
    "why are glaciers melting in the alps", "meltwater in the valley", "green tea fermentation",
    "tea plantation harvest", "glass blowing in venice", "coloured glass beads", "volcanic eruption and lava",
    "hot springs heated by magma", "draining land below sea level", "windmills pumping water from polders",
    "storm flood behind the dike", "pollen and flowers", "locomotive in a tunnel", "yeast and flour",
]


def build(home: Path, passages_goal: int, pool: int):
    from engine.config import data_paths
    from engine.library import Library
    from engine.models import load_encoder
    from trainer.serving.default_models import ensure_default_models

    paths = data_paths(home)
    ensure_default_models(paths)
    library = Library.open(paths, encoder=CachingEncoder(load_encoder(paths=paths)))
    if library.status().passages < passages_goal:
        corpus = home / "corpus"
        synthetic_corpus(corpus, documents=passages_goal, pool=pool)
        started = time.perf_counter()
        for event in library.index_paths([corpus]):
            if getattr(event, "files_done", 1) % 1000 == 0:
                print(f"  indexing {event.files_done}/{event.files_total}", file=sys.stderr)
        print(f"indexed in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return library


def measure(library, rounds: int) -> dict[str, list[float]]:
    import shiboken6
    from PySide6.QtCore import QSettings
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(Path(library.paths.home) / "qsettings"))
    from app.gui.search.qt_main_window import QtMainWindow

    window = QtMainWindow(library, QSettings())
    window.resize(1280, 800)
    window.show()
    bar = window.search_bar
    bar.debounce.setInterval(0)
    updated: list[float] = []
    window.results_model.modelReset.connect(lambda: updated.append(time.perf_counter()))
    gui, engine = [], []
    try:
        for query in QUERIES:  # warm-up: first ONNX runs and SQLite pages
            library.search(query, 50)
        for _ in range(rounds):
            for query in QUERIES:
                bar.debounce.blockSignals(True)  # typing the prefix must not search
                bar.field.clear()
                QTest.keyClicks(bar.field, query[:-1])
                app.processEvents()
                bar.debounce.stop()
                bar.debounce.blockSignals(False)
                updated.clear()
                started = time.perf_counter()
                QTest.keyClick(bar.field, query[-1])
                while not updated:
                    app.processEvents()
                gui.append((updated[0] - started) * 1000)
                started = time.perf_counter()
                library.search(query, 50)
                engine.append((time.perf_counter() - started) * 1000)
    finally:
        window.shutdown()
        window.close()
        # free the window while Qt is still up; leaving it to interpreter shutdown can
        # crash PySide's finaliser
        shiboken6.delete(window)
        app.processEvents()
    return {"window (keystroke -> model updated)": gui, "Library.search alone": engine}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="BABELFIND_HOME for the collection (reused)")
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--pool", type=int, default=400, help="distinct paragraphs the passages repeat")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    args.home.mkdir(parents=True, exist_ok=True)
    os.environ["BABELFIND_HOME"] = str(args.home)
    library = build(args.home, args.passages, args.pool)
    status = library.status()
    results = measure(library, args.rounds)
    print(f"collection: {status.documents:,} documents, {status.passages:,} passages, model {status.model}, "
          f"index {status.index_kind}; {len(QUERIES)} queries x {args.rounds} rounds")
    print("| path | median ms | p90 ms | max ms |")
    print("|---|---|---|---|")
    for name, values in results.items():
        values = sorted(values)
        p90 = values[int(0.9 * (len(values) - 1))]
        print(f"| {name} | {statistics.median(values):.1f} | {p90:.1f} | {values[-1]:.1f} |")
    library.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
