"""Builds the large-library benchmark folder from real files of this machine, and changes 1%
of it for the re-index run (bench/bench_large_library.py uses both).

    python bench/large_folder.py build --out /tmp/large-folder
    python bench/large_folder.py change --out /tmp/large-folder --fraction 0.01

What goes in (seeded, so the same machine gives the same folder):
  * man/: manual pages of /usr/share/man rendered to text with groff (-man -Tutf8, no
    overstrike), every translated page (de, fr, ja, ru, ... ) and a sample of the English
    ones; pages whose text passes --max-kb are left out.
  * doc/: /usr/share/doc as it is (copyright files, READMEs, HTML manuals, PDFs, images,
    scripts), its .gz files decompressed (changelogs are text kept small on disk); files
    over --max-kb left out.
  * licenses/: /usr/share/common-licenses.
  * python/: documentation and sources of the Python packages in this venv (.py, .md,
    .rst, .txt, .html), a sample, files over --max-kb left out.
Real folders hold near-identical files (copyright blocks, licences, __init__.py); they
are kept, not deduplicated. The folder's size is bounded by the text it holds, because
encoding is what indexing time is made of.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MAN = Path("/usr/share/man")
DOC = Path("/usr/share/doc")
LICENSES = Path("/usr/share/common-licenses")
PYTHON_SUFFIXES = {".py", ".md", ".rst", ".txt", ".html"}


def render_man_page(source: Path, dest: Path, max_bytes: int) -> bool:
    """`source` (roff, maybe gzipped) as UTF-8 text in `dest`; False when it failed or is too
    long. A page rendered by an interrupted build is kept."""
    if dest.is_file():
        return True
    try:
        roff = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
        if roff.startswith(b".so "):  # a page that only includes another: not a page of its own
            return False
        text = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", "-Kutf8"], input=roff,
                              capture_output=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError, EOFError, gzip.BadGzipFile):
        return False
    if not text.strip() or len(text) > max_bytes:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(text)
    return True


def man_pages(rng: random.Random, english: int) -> list[Path]:
    """Every translated page and `english` sampled English ones (symlinks left out)."""
    pages = sorted(p for p in MAN.rglob("*") if p.is_file() and not p.is_symlink())
    translated = [p for p in pages if not p.relative_to(MAN).parts[0].startswith("man")]
    untranslated = [p for p in pages if p.relative_to(MAN).parts[0].startswith("man")]
    return translated + rng.sample(untranslated, min(english, len(untranslated)))


def copy_doc(source: Path, dest: Path, max_bytes: int) -> bool:
    try:
        if source.suffix == ".gz":
            data = gzip.decompress(source.read_bytes())
            dest = dest.with_suffix("")
        else:
            if source.stat().st_size > max_bytes:
                return False
            data = source.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile):
        return False
    if len(data) > max_bytes:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return True


def build(out: Path, args) -> dict:
    rng = random.Random(args.seed)
    if args.fresh and out.exists():
        shutil.rmtree(out)
    max_bytes = args.max_kb * 1024
    counts = {}
    pages = man_pages(rng, args.man_english)
    with ThreadPoolExecutor(args.jobs) as pool:
        rendered = pool.map(lambda p: render_man_page(p, out / "man" / p.relative_to(MAN).with_suffix(".txt"),
                                                      max_bytes), pages)
        counts["man"] = sum(rendered)
    docs = sorted(p for p in DOC.rglob("*") if p.is_file() and not p.is_symlink())
    counts["doc"] = sum(copy_doc(p, out / "doc" / p.relative_to(DOC), max_bytes) for p in docs)
    counts["licenses"] = sum(copy_doc(p, out / "licenses" / p.name, max_bytes)
                             for p in sorted(LICENSES.iterdir()) if p.is_file())
    site = Path(args.site_packages)
    sources = sorted(p for p in site.rglob("*") if p.suffix in PYTHON_SUFFIXES and p.is_file()
                     and not p.is_symlink() and p.stat().st_size <= max_bytes)
    chosen = rng.sample(sources, min(args.python, len(sources)))
    counts["python"] = sum(copy_doc(p, out / "python" / p.relative_to(site), max_bytes) for p in chosen)
    files = [p for p in out.rglob("*") if p.is_file()]
    summary = {"files": len(files), "bytes": sum(p.stat().st_size for p in files), "parts": counts,
               "seed": args.seed, "max_kb": args.max_kb}
    (out.parent / f"{out.name}.json").write_text(json.dumps(summary, indent=1))
    return summary


def change(out: Path, fraction: float, seed: int) -> dict:
    """Appends a dated line to `fraction` of the folder's text files (seeded choice)."""
    rng = random.Random(seed)
    texts = sorted(p for p in out.rglob("*") if p.is_file() and p.suffix in {".txt", ".md", ".py", ".rst", ""})
    chosen = rng.sample(texts, max(1, round(fraction * sum(1 for p in out.rglob("*") if p.is_file()))))
    for path in chosen:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"\nEdited for the re-index benchmark: {rng.random():.6f}\n")
    return {"changed": len(chosen)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["build", "change"])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-kb", type=int, default=16, help="leave out files whose text is larger")
    parser.add_argument("--man-english", type=int, default=4_200, help="English man pages sampled")
    parser.add_argument("--python", type=int, default=11_000, help="venv files sampled")
    parser.add_argument("--site-packages", default=str(Path(sys.prefix) / "lib" / "python3.11" / "site-packages"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--fraction", type=float, default=0.01)
    parser.add_argument("--fresh", action="store_true", help="start again (default: resume)")
    args = parser.parse_args()
    result = build(args.out, args) if args.action == "build" else change(args.out, args.fraction, args.seed + 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
