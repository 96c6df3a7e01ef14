"""Bundle and install: sizes, launch-to-first-result, and that nothing imports torch early.

    python bench/bench_bundle.py --bundle dist/babelfind --work /tmp/bench-bundle --repeats 7

- sizes: the bundle folder (and its largest parts), a plain install without `train`
  (a venv made here with `pip install -c requirements.lock .`, reused from --work), and
  what `train` adds (torch, transformers, triton in this interpreter's environment);
- first use: `babelfind index resources/sample` in a fresh home, once per install (the
  bundle copies its prepared models, the plain install builds the default model);
- launch to first result: `babelfind search QUERY` as a fresh process on the indexed
  home, bundle and plain install (and --baseline-bundle, an earlier build) in
  alternation, medians of --repeats;
- early torch: `python -X importtime` of `babelfind search` and of the window's modules in
  this interpreter (torch installed) lists no torch or transformers module.
The load average is printed before and after: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "resources" / "sample"
QUERY = "how do honey bees turn nectar into honey"
TRAINING = ("torch", "transformers", "triton")


def du(path: Path) -> int:
    """Bytes in the files under `path` (links not followed)."""
    if path.is_symlink():
        return 0  # PyInstaller links shared libraries it already carries
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "BABELFIND_PREPARED_MODELS", "BABELFIND_RESOURCES")}
    return env | {"BABELFIND_HOME": str(home)}


def plain_venv(work: Path, venv: Path | None) -> Path:
    venv = venv or work / "plain-venv"
    if not (venv / "bin" / "babelfind").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-c",
                        str(REPO / "requirements.lock"), str(REPO)], check=True, env=clean_env(work))
    return venv


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd="/")
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {done.stderr[-2000:]}")
    return elapsed


def sizes(bundle: Path, venv: Path) -> dict:
    internal = bundle / "_internal"
    parts = sorted(((du(p), p.name) for p in internal.iterdir()), reverse=True)[:8]
    site = next((venv / "lib").glob("python*/site-packages"))
    import importlib.util
    train = {}
    for name in TRAINING:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            train[name] = du(Path(next(iter(spec.submodule_search_locations))))
    return {"bundle": du(bundle), "bundle_parts": parts, "models": du(internal / "models"),
            "plain_venv": du(venv), "plain_site_packages": du(site), "train_adds": train}


def torch_imports(command: list[str], home: Path) -> list[str]:
    """Modules of torch/transformers/triton that `python -X importtime` saw imported."""
    env = os.environ | {"PYTHONPATH": str(REPO), "BABELFIND_HOME": str(home)}
    done = subprocess.run([sys.executable, "-X", "importtime", *command], capture_output=True,
                          text=True, cwd=REPO, env=env)
    if done.returncode != 0:
        raise SystemExit(f"importtime run failed: {done.stderr[-2000:]}")
    names = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
             if line.startswith("import time:")]
    return [n for n in names if n.split(".")[0] in TRAINING]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=REPO / "dist" / "babelfind")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-bundle"))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--venv", type=Path, help="a plain install to reuse (default: made in --work)")
    parser.add_argument("--baseline-bundle", type=Path,
                        help="an earlier bundle folder to time in the same alternation")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {os.getloadavg()}")
    venv = plain_venv(args.work, args.venv)
    installs = {"bundle": args.bundle / "babelfind", "plain install": venv / "bin" / "babelfind"}
    if args.baseline_bundle is not None:
        installs["baseline bundle"] = args.baseline_bundle / "babelfind"
    report = {"sizes": sizes(args.bundle, venv), "first_index_s": {}, "search_s": {}}
    homes = {}
    for label, exe in installs.items():
        homes[label] = args.work / f"home-{label.replace(' ', '-')}"
        shutil.rmtree(homes[label], ignore_errors=True)
        report["first_index_s"][label] = timed([str(exe), "index", str(SAMPLE)], clean_env(homes[label]))
    runs = {label: [] for label in installs}
    for _ in range(args.repeats):
        for label, exe in installs.items():
            runs[label].append(timed([str(exe), "search", QUERY], clean_env(homes[label])))
    report["search_s"] = {label: {"median": statistics.median(r), "runs": r} for label, r in runs.items()}
    report["torch_before_training"] = {
        "babelfind search": torch_imports(["-c", "import sys; from app.cli import main; "
                                           f"sys.exit(main(['search', {QUERY!r}]))"], homes["plain install"]),
        "window modules": torch_imports(["-c", "import app.gui.search.qt_main_window, app.gui.qt_tools, "
                                         "app.gui.training.qt_wizard"], homes["plain install"]),
    }
    print(f"load average after: {os.getloadavg()}")
    print(json.dumps(report, indent=2, default=str))
    s = report["sizes"]
    print(f"\nbundle {mb(s['bundle'])} (models {mb(s['models'])}); plain venv {mb(s['plain_venv'])}; "
          f"train adds {mb(sum(s['train_adds'].values()))}")
    for label in installs:
        print(f"{label}: first index {report['first_index_s'][label]:.1f} s, "
              f"search median {report['search_s'][label]['median']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
