"""What reading documents in a child process costs, against reading them in this one.

    PYTHONPATH=. python bench/bench_extract_isolation.py [--repeats 5] [--files 400]

The documents are real ones from /usr/share/doc (HTML manuals, READMEs, copyright files,
changelogs, PDFs) plus the seeded DOCX/ODT/EPUB of bench_extract_limits.py. Each document
is read in this process (engine.extract.isolated.SameProcess, the baseline), then through
one child (ExtractionProcess, as the indexer does), alternately `--repeats` times; its
fastest time each way is kept (the shared machine's load only ever adds), and those are
summed. The child's start (once per indexing run, and after each kill) is timed on its
own, as is the skipping of the hostile pages that made the child necessary.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_extract_limits import make_docx, make_epub, make_odt  # noqa: E402
from hostile_docs import nested_html  # noqa: E402

from engine.config import ExtractLimits  # noqa: E402
from engine.errors import ExtractionError  # noqa: E402
from engine.extract import SUPPORTED_EXTENSIONS  # noqa: E402
from engine.extract.isolated import ExtractionProcess, SameProcess  # noqa: E402

DOCS = Path("/usr/share/doc")


def real_documents(limit: int) -> list[tuple[Path, bytes]]:
    """Up to `limit` readable files under /usr/share/doc, in a fixed (seeded) order."""
    candidates = sorted(p for p in DOCS.rglob("*") if p.is_file() and not p.is_symlink()
                        and (p.suffix.lower() in SUPPORTED_EXTENSIONS or p.name in ("copyright", "README")))
    random.Random(0).shuffle(candidates)
    return [(p, p.read_bytes()) for p in candidates[:limit]]


def read_time(reader, path: Path, data: bytes) -> float:
    started = time.perf_counter()
    try:
        reader.extract(path, data)
    except ExtractionError:
        pass
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--files", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(0)
    documents = real_documents(args.files)
    documents += [(Path("report.docx"), make_docx(rng)), (Path("report.odt"), make_odt(rng)),
                  (Path("book.epub"), make_epub(rng))]
    size = sum(len(d) for _, d in documents)
    here, child, starts = [], [], []
    with ExtractionProcess() as process:
        for path, data in documents[:20]:  # the child imports its parsers, as this process has
            read_time(process, path, data)
        for path, data in documents:
            times = [(read_time(SameProcess(), path, data), read_time(process, path, data))
                     for _ in range(args.repeats)]
            here.append(min(t[0] for t in times))
            child.append(min(t[1] for t in times))
    for _ in range(args.repeats):
        started = time.perf_counter()
        with ExtractionProcess() as fresh:
            fresh.extract(Path("a.txt"), b"Honey bees dance.")
        starts.append(time.perf_counter() - started)
    a, b = sum(here), sum(child)
    extra = sorted(c - h for h, c in zip(here, child))
    print(f"{len(documents)} documents ({size / 2**20:.1f} MB), fastest of {args.repeats} each:\n")
    print("| variant | all documents | per document |\n|---|---|---|")
    print(f"| in this process | {a * 1000:.0f} ms | {a / len(documents) * 1000:.2f} ms |")
    print(f"| in a child process | {b * 1000:.0f} ms | {b / len(documents) * 1000:.2f} ms |")
    print(f"\nratio {b / a:.3f}x; the child's extra time per document: median "
          f"{statistics.median(extra) * 1000:.2f} ms, 90th percentile {extra[int(len(extra) * 0.9)] * 1000:.2f} ms; "
          f"a child starts (and reads one text file) in {statistics.median(starts) * 1000:.0f} ms")

    print("\n| hostile page | time to skip | reason |\n|---|---|---|")
    with ExtractionProcess() as process:
        for depth, limits in ((2_000_000, ExtractLimits()), (9_000, ExtractLimits(max_seconds=0.1))):
            data = nested_html(depth)
            started = time.perf_counter()
            try:
                process.extract(Path("deep.html"), data, limits)
                reason = "read"
            except ExtractionError as e:
                reason = e.reason
            print(f"| {depth:,} nested <div>s ({len(data) / 2**20:.1f} MB), {limits.max_seconds:g} s limit "
                  f"| {(time.perf_counter() - started) * 1000:.0f} ms | {reason} |")


if __name__ == "__main__":
    main()
