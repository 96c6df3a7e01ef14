"""Whole-process time of `babelfind` commands that should return at once: bad arguments, status.

    python bench/bench_cli_checks.py --home /tmp/home-with-a-library --baseline /tmp/base-tree --runs 5

Runs each command `--runs` times with this checkout first on PYTHONPATH, and (with
`--baseline`) as often with an older checkout, alternating so load changes hit both;
prints the median seconds and the baseline/current ratio. HOME needs installed models
and an index (e.g. `babelfind index resources/sample` run there once).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = (
    ("empty query", ["search", ""]),
    ("-k 0", ["search", "glaciers", "-k", "0"]),
    ("--lang german", ["search", "glaciers", "--lang", "german"]),
    ("status", ["status"]),
)


def run_once(tree: Path, home: Path, argv: list[str]) -> tuple[float, int]:
    env = os.environ | {"PYTHONPATH": str(tree), "BABELFIND_HOME": str(home)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())", *argv],
                          env=env, cwd=tree, capture_output=True, check=False)
    return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, help="an older checkout to compare with")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    trees = {"current": REPO} | ({"baseline": args.baseline} if args.baseline else {})
    print(f"{'command':<16} " + " ".join(f"{name + ' s (rc)':>18}" for name in trees) + "   ratio")
    for label, argv in COMMANDS:
        times: dict[str, list[float]] = {name: [] for name in trees}
        codes: dict[str, int] = {}
        for _ in range(args.runs):
            for name, tree in trees.items():
                seconds, codes[name] = run_once(tree, args.home, argv)
                times[name].append(seconds)
        medians = {name: statistics.median(values) for name, values in times.items()}
        cells = " ".join(f"{medians[n]:>13.2f} ({codes[n]})" for n in trees)
        ratio = f"{medians['baseline'] / medians['current']:7.1f}x" if "baseline" in trees else ""
        print(f"{label:<16} {cells}   {ratio}")


if __name__ == "__main__":
    main()
