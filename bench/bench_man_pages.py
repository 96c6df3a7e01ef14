"""Manual pages: Babelfind's roff reader against groff's own rendering (`man -l`).

    python bench/bench_man_pages.py                     # 400 pages, sampled across languages
    python bench/bench_man_pages.py --pages 50 --seed 2

For a sample of the pages under /usr/share/man (English and the translations, every
section), each page is read three ways: by groff (`man -l`, the reference: what a user
sees in a terminal), by engine/extract/man_file.py, and as plain text (what Babelfind
did before it read roff: the file decoded, its markup kept). Each reading is a bag of
words (Unicode word characters, case-folded); against groff's bag, precision says how
much of a reading is not on the rendered page (markup such as `fB`, `TP`, `IX`, and
definitions), recall how much of the page it kept. Times are per page, in this process
for the readers and per `man` call for groff.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.extract.base import normalise_whitespace  # noqa: E402
from engine.extract.man_file import extract_man_page, is_man_page  # noqa: E402
from engine.extract.text_file import decode_text  # noqa: E402

MAN = Path("/usr/share/man")
_WORD = re.compile(r"\w+")


def sample_pages(count: int, seed: int) -> list[Path]:
    """`count` pages, half English and half translated, each half shuffled with `seed`."""
    english = sorted(MAN.glob("man*/*"))
    translated = sorted(p for p in MAN.glob("*/man*/*") if not p.parent.parent.name.startswith("man"))
    rng = random.Random(seed)
    return rng.sample(english, min(count // 2, len(english))) + rng.sample(translated, min(count - count // 2, len(translated)))


def page_bytes(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()


def groff_text(path: Path) -> str:
    """The page as `man` renders it for a wide terminal, without the header and footer lines."""
    env = dict(os.environ, MANWIDTH="2000", MAN_KEEP_FORMATTING="", LANG="C.UTF-8")
    rendered = subprocess.run(["man", "-l", "-E", "UTF-8", str(path)], capture_output=True, env=env,
                              timeout=60).stdout.decode("utf-8", "replace")
    plain = re.sub(".\b", "", rendered)  # overstrikes: bold and underline
    lines = [line for line in plain.splitlines() if line.strip()]
    return "\n".join(lines[1:-1])


def words(text: str) -> Counter:
    return Counter(w.casefold() for w in _WORD.findall(text))


def overlap(reading: Counter, reference: Counter) -> tuple[float, float]:
    """(precision, recall) of a bag of words against the reference bag."""
    shared = sum((reading & reference).values())
    return shared / max(1, sum(reading.values())), shared / max(1, sum(reference.values()))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    scores = {"roff reader": [], "plain text": []}
    timing = {"roff reader": 0.0, "groff (man -l)": 0.0}
    used = 0
    for path in sample_pages(args.pages, args.seed):
        data = page_bytes(path)
        name = path.with_suffix("") if path.suffix == ".gz" else path
        if not is_man_page(name, data) or re.match(rb"\s*[.']\s*so\s", data):
            continue  # an alias (.so): no text of its own
        started = time.perf_counter()
        reference = words(groff_text(path))
        timing["groff (man -l)"] += time.perf_counter() - started
        if sum(reference.values()) < 20:
            continue
        started = time.perf_counter()
        ours = extract_man_page(name, data).text
        timing["roff reader"] += time.perf_counter() - started
        scores["roff reader"].append(overlap(words(ours), reference))
        scores["plain text"].append(overlap(words(normalise_whitespace(decode_text(data, name))), reference))
        used += 1
    print(f"{used} pages (of {args.pages} sampled, seed {args.seed}; aliases and near-empty pages left out)\n")
    print("| reading | word precision (mean) | word recall (mean) | pages with recall < 0.95 |")
    print("|---|---|---|---|")
    for reading, pairs in scores.items():
        precision, recall = (sum(p[i] for p in pairs) / len(pairs) for i in (0, 1))
        low = sum(1 for p in pairs if p[1] < 0.95)
        print(f"| {reading} | {precision:.3f} | {recall:.3f} | {low} |")
    print()
    for reader, seconds in timing.items():
        print(f"{reader}: {1000 * seconds / max(1, used):.1f} ms per page")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
