"""A large library end to end: index a folder of 20,000+ real files from scratch, re-index it
unchanged and with 1% of its files changed, against Recoll (keywords only) on the same folder.

    python bench/large_folder.py build --out /tmp/bench-large/folder
    python bench/bench_large_library.py index --home /tmp/bench-large/home --folder /tmp/bench-large/folder
    python bench/bench_large_library.py reindex --home /tmp/bench-large/home --folder /tmp/bench-large/folder
    python bench/bench_large_library.py recoll --home /tmp/bench-large/recoll --folder /tmp/bench-large/folder
    python bench/large_folder.py change --out /tmp/bench-large/folder --fraction 0.01
    python bench/bench_large_library.py reindex --home /tmp/bench-large/home --folder /tmp/bench-large/folder --label changed
    python bench/bench_large_library.py recoll --home /tmp/bench-large/recoll --folder /tmp/bench-large/folder --label changed
    python bench/bench_large_library.py report --home /tmp/bench-large/home

`index` installs the default models into a fresh home as the first start does (timed on
its own), then indexes the folder with the library's defaults (the CLI's `babelfind
index`; `--priority` as given, "normal" to time it against Recoll at the same priority)
in this process, writing every progress event with its time to <home>/progress-<label>.jsonl:
files and passages per second, stage seconds, peak RSS, the time until a search first
returns a hit (a search is run as soon as the first files are stored), and how honest
the time-left estimate was (`eta_honesty`: after 10% of the files, predicted against the
actual time left, and at 5%, 10%, ... of the files). `report` adds disk per passage
(database, FAISS file, keyword index, hubness side file). Every run appends its numbers to
<home>/runs.json; `eta --home H [--label first]` reads a run's estimates again from its log.
`index --trace` also records the run's pace (bench/pace_trace.py), and `replay --home H`
measures the estimates engine/throughput.py gives now on that same recorded work.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PROBE_QUERY = "copyright license permission"  # words nearly every folder of this kind holds


def _peak_mb() -> float:
    """Peak resident memory of this process (VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _record(home: Path, run: dict) -> None:
    path = home / "runs.json"
    runs = json.loads(path.read_text()) if path.is_file() else []
    path.write_text(json.dumps(runs + [run], indent=1))
    print(json.dumps(run, indent=1))


def install_models(home: Path) -> float:
    from engine.config import data_paths
    from trainer.serving.default_models import install_default_models

    start = time.perf_counter()
    install_default_models(data_paths(home))
    return time.perf_counter() - start


def index(home: Path, folder: Path, label: str, priority: str, reindex: bool = False, on_end=None) -> dict:
    """One indexing run of `folder` (or `reindex` of every root), timed event by event;
    `on_end` is called the moment the run ends."""
    from engine.config import data_paths
    from engine.events import IndexFinished, IndexProgress
    from engine.library import Library, indexer_config

    paths = data_paths(home)
    opened = time.perf_counter()
    library = Library.open(paths, config=indexer_config(paths, priority))
    encoder = library.encoder
    events, first_hit, summary = [], None, None
    log = (home / f"progress-{label}.jsonl").open("w")
    start = time.perf_counter()
    jobs = library.reindex() if reindex else library.index_paths([folder])
    for event in jobs:
        now = time.perf_counter() - start
        if isinstance(event, IndexProgress):
            row = {"t": round(now, 3), "files_done": event.files_done, "files_total": event.files_total,
                   "passages": event.passages, "eta_s": event.eta_s}
            log.write(json.dumps(row) + "\n")
            events.append(row)
            if first_hit is None and event.passages > 0:
                hits = library.search(PROBE_QUERY, 3)
                first_hit = time.perf_counter() - start if hits else None
        elif isinstance(event, IndexFinished):
            summary = event.summary
    wall = time.perf_counter() - start
    if on_end is not None:
        on_end()
    log.close()
    library.close()
    stages = dict(summary.stage_seconds)
    return {"label": label, "priority": priority, "model_variant": getattr(encoder, "variant", None),
            "open_s": round(start - opened, 2), "wall_s": round(wall, 1),
            "files_total": events[-1]["files_total"] if events else 0,
            "indexed": summary.indexed, "unchanged": summary.unchanged, "removed": summary.removed,
            "skipped": len(summary.skipped), "passages": summary.passages,
            "files_per_s": round((events[-1]["files_total"] if events else 0) / wall, 2),
            "passages_per_s": round(summary.passages / wall, 2),
            "stage_seconds": {k: round(v, 1) for k, v in stages.items()},
            "first_hit_s": None if first_hit is None else round(first_hit, 1),
            "peak_rss_mb": round(_peak_mb()), "eta_honesty": eta_honesty(events, wall),
            "skip_reasons": _reasons(summary.skipped)}


def _reasons(skipped) -> dict:
    counts: dict[str, int] = {}
    for item in skipped:
        key = item.reason.split(":")[0][:60]
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])[:12])


def eta_honesty(events: list[dict], wall: float, after: float = 0.10) -> dict:
    """How far the time-left estimate was from the time actually left, once `after` of the
    files were done: error = (estimate - actual) / actual, over events at least 10 s
    before the end (the last seconds divide by almost nothing)."""
    errors = []
    for e in events:
        if not e["files_total"] or e["files_done"] < after * e["files_total"] or e["eta_s"] is None:
            continue
        left = wall - e["t"]
        if left >= 10:
            errors.append(((e["eta_s"] - left) / left, e["files_done"] / e["files_total"]))
    if not errors:
        return {"events": 0}
    import numpy as np

    values = np.array([err for err, _ in errors])
    worst = max(errors, key=lambda x: abs(x[0]))
    return {"events": len(errors), "median_abs_error": round(float(np.median(np.abs(values))), 3),
            "max_abs_error": round(float(np.abs(values).max()), 3),
            "worst_at_fraction_done": round(worst[1], 3), "worst_error": round(worst[0], 3),
            "share_within_25pct": round(float(np.mean(np.abs(values) <= 0.25)), 3),
            "at_files_done": eta_at_shares(events, wall)}


ETA_SHARES = (0.05, 0.10, 0.20, 0.30, 0.50, 0.70, 0.90, 0.99, 0.995)


def eta_at_shares(events: list[dict], wall: float) -> dict:
    """The estimate and the truth of the time left at the first event with each share of
    the files done: {"10%": [estimate s, true s, error]}."""
    table = {}
    for share in ETA_SHARES:
        event = next((e for e in events if e["files_total"] and e["eta_s"] is not None
                      and e["files_done"] >= share * e["files_total"]), None)
        if event is not None:
            left = wall - event["t"]
            table[f"{share:.1%}".replace(".0%", "%")] = [round(event["eta_s"]), round(left),
                                                        round((event["eta_s"] - left) / left, 3)]
    return table


def eta_replayed(home: Path, label: str) -> dict:
    """`eta_honesty` of the estimates the current code makes on a recorded run's work, beside
    the ones the run itself made (the same when the code has not changed)."""
    from pace_trace import replay

    estimates, end = replay(home / f"pace-{label}.jsonl")
    progress = _progress_log(home, label)
    if len(progress) != len(estimates):
        raise SystemExit(f"{len(estimates)} estimates recorded, {len(progress)} progress events")
    recorded = [e | {"t": clock} for e, (clock, _) in zip(progress, estimates)]
    now = [e | {"t": clock, "eta_s": value} for e, (clock, value) in zip(progress, estimates)]
    return {"label": f"replay-{label}", "recorded": eta_honesty(recorded, end), "now": eta_honesty(now, end)}


def eta_from_log(home: Path, label: str) -> dict:
    """`eta_honesty` again from a run's progress log and its recorded wall time."""
    runs = json.loads((home / "runs.json").read_text())
    wall = next(r["wall_s"] for r in reversed(runs) if r.get("label") == label and "wall_s" in r)
    return {"label": f"eta-{label}", "eta_honesty": eta_honesty(_progress_log(home, label), wall)}


def _progress_log(home: Path, label: str) -> list[dict]:
    """The progress events a run wrote (index)."""
    return [json.loads(line) for line in (home / f"progress-{label}.jsonl").read_text().splitlines()]


def disk(home: Path) -> dict:
    """Bytes per passage of each file the library keeps."""
    from engine.config import data_paths
    from engine.store import Store

    paths = data_paths(home)
    store = Store.open(paths.db_url)
    passages = store.counts()[1]
    store.close()
    db = Path(paths.db_url.removeprefix("sqlite:///"))
    parts = {"database": sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))}
    for path in paths.indexes.iterdir():
        kind = ("faiss" if path.suffix == ".faiss" else "hubness" if "hubness" in path.name
                else "keyword index" if "keyword" in path.name else path.name)
        parts[kind] = parts.get(kind, 0) + path.stat().st_size
    return {"passages": passages, "bytes": parts,
            "bytes_per_passage": {k: round(v / max(passages, 1)) for k, v in parts.items()},
            "total_bytes_per_passage": round(sum(parts.values()) / max(passages, 1))}


def recoll(home: Path, folder: Path, label: str | None = None) -> dict:
    """recollindex from scratch on `folder` (its own config dir), then unchanged; with
    `label` ("changed"), one more run over the index already there."""
    if shutil.which("recollindex") is None:
        raise SystemExit("recollindex not found: apt-get install -y recoll")
    config = home / "recoll"
    if label is None:
        if config.exists():
            shutil.rmtree(config)
        config.mkdir(parents=True)
        (config / "recoll.conf").write_text(f"topdirs = {folder}\n")
    timings = {}
    for run in ((label,) if label else ("first", "unchanged")):
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "recollindex", "-c", str(config)],
                              capture_output=True, text=True)
        timings[run] = {"wall_s": round(time.perf_counter() - start, 1),
                        "peak_rss_mb": round(int(done.stderr.strip().splitlines()[-1]) / 1024),
                        "returncode": done.returncode}
    size = sum(p.stat().st_size for p in config.rglob("*") if p.is_file())
    query = subprocess.run(["recollq", "-c", str(config), "-S", "mtime", "-n", "0-0", PROBE_QUERY],
                           capture_output=True, text=True)
    return {"label": "recoll", **timings, "index_bytes": size, "probe": query.stdout.splitlines()[:2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["index", "reindex", "recoll", "report", "eta", "replay"])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--label", default=None)
    parser.add_argument("--priority", choices=["low", "normal"], default="low")
    parser.add_argument("--trace", action="store_true", help="index: record the run's pace for `replay`")
    args = parser.parse_args()
    args.home.mkdir(parents=True, exist_ok=True)
    os.environ["BABELFIND_HOME"] = str(args.home)
    if args.action == "index":
        installed = install_models(args.home)
        end = None
        if args.trace:
            from pace_trace import record

            end = record(args.home / f"pace-{args.label or 'first'}.jsonl")
        run = index(args.home, args.folder, args.label or "first", args.priority, on_end=end)
        _record(args.home, run | {"model_install_s": round(installed, 1)})
    elif args.action == "reindex":
        _record(args.home, index(args.home, args.folder, args.label or "unchanged", args.priority,
                                 reindex=True))
    elif args.action == "recoll":
        _record(args.home, recoll(args.home, args.folder, args.label))
    elif args.action == "eta":  # the estimates of a run already made, read again from its log
        print(json.dumps(eta_from_log(args.home, args.label or "first"), indent=1))
    elif args.action == "replay":
        print(json.dumps(eta_replayed(args.home, args.label or "first"), indent=1))
    else:
        _record(args.home, {"label": "disk"} | disk(args.home))


if __name__ == "__main__":
    main()
