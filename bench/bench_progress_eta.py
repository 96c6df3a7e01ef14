"""How true is indexing's "time left"? The engine's estimate (passages encoded, engine.throughput)
against the time a run really had left, and against counting files as it used to.

    OMP_NUM_THREADS=2 python bench/bench_progress_eta.py /usr/share/doc/... --models ~/.local/share/babelfind/models

Indexes FOLDER into a fresh home (the models copied there) with the default model, keeps
every progress event's time and estimate, and when the run is over knows the truth for
each: the end time minus the event's time. Prints the estimate and its error at 10%, 25%,
50% and 75% of the run's wall time, for the engine's estimate and for the files-based one
(files left / files per second so far) that the same events would have given.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--models", type=Path, required=True, help="an installed models folder (copied)")
    parser.add_argument("--model", default="multilingual-e5-small", help="the model to index with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="babelfind-eta-") as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(args.models, home / "models")
        os.environ["BABELFIND_HOME"] = str(home)
        from engine.config import data_paths, save_settings
        from engine.events import IndexFinished, IndexProgress
        from engine.library import Library

        save_settings(data_paths(home), active_model=args.model, device="cpu")
        library = Library.open(data_paths(home))
        library.encoder.encode(["warm up"], kind="passage")  # the model's load is not indexing
        started = time.monotonic()
        events = []
        for event in library.index_paths([args.folder]):
            now = time.monotonic() - started
            if isinstance(event, IndexProgress) and not event.waiting:
                events.append((now, event.files_done, event.files_total, event.encoded, event.eta_s))
            elif isinstance(event, IndexFinished):
                summary = event.summary
        end = time.monotonic() - started
        library.close()
    rows = []
    for share in (0.10, 0.25, 0.50, 0.75):
        now, done, total, encoded, eta = min(events, key=lambda e: abs(e[0] - share * end))
        truth = end - now
        by_files = (total - done) / (done / now) if done and now > 0 else None
        rows.append({"at": share, "seconds": round(now, 1), "files": f"{done}/{total}", "passages": encoded,
                     "truth_s": round(truth, 1), "engine_s": None if eta is None else round(eta, 1),
                     "files_s": None if by_files is None else round(by_files, 1)})
    print(json.dumps({"folder": str(args.folder), "files": summary.indexed + len(summary.skipped),
                      "passages": summary.passages, "seconds": round(end, 1), "events": len(events),
                      "points": rows}, indent=2))
    print("| at | files done | time left (true) | engine (passages) | error | files-based | error |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['at']:.0%} of {end:.0f} s | {r['files']} | {r['truth_s']:.0f} s | {_s(r['engine_s'])} | "
              f"{_error(r['engine_s'], r['truth_s'])} | {_s(r['files_s'])} | {_error(r['files_s'], r['truth_s'])} |")
    return 0


def _s(value) -> str:
    return "-" if value is None else f"{value:.0f} s"


def _error(estimate, truth: float) -> str:
    return "-" if estimate is None or truth <= 0 else f"{100 * (estimate - truth) / truth:+.0f}%"


if __name__ == "__main__":
    sys.exit(main())
