"""What reading an image costs, against its size: is OCR's time per file, per byte, or both?

    python bench/bench_image_reading.py /tmp/bench-large/folder

Reads every image of the folder (what the indexer takes for one: engine.extract's
extension_format) through the indexer's own image reader (engine.extract.image_file, OCR included), one after the other,
and fits its seconds three ways: per byte (what engine.throughput assumes of every kind),
per file, and a + b * bytes (least squares). For each model, the median of |predicted -
measured| / measured over the images says how well one image's reading is foreseen.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

def time_images(folder: Path) -> list[tuple[int, float]]:
    """(bytes, reading seconds) of each image under `folder`; images OCR refuses count too,
    since their reading costs what it costs."""
    from engine.errors import BabelfindError
    from engine.extract import extension_format
    from engine.extract.image_file import extract_image

    readings = []
    for path in sorted(folder.rglob("*")):
        if extension_format(path) != "image" or not path.is_file():
            continue
        data = path.read_bytes()
        started = time.perf_counter()
        try:
            extract_image(path, data)
        except BabelfindError:
            pass
        readings.append((len(data), time.perf_counter() - started))
    return readings


def median_error(predict, readings: list[tuple[int, float]]) -> float:
    return statistics.median(abs(predict(size) - seconds) / seconds for size, seconds in readings)


def report(readings: list[tuple[int, float]]) -> None:
    sizes = [size for size, _ in readings]
    seconds = [s for _, s in readings]
    slope, per_file = statistics.linear_regression(sizes, seconds)
    per_byte = sum(seconds) / sum(sizes)
    mean = statistics.mean(seconds)
    print(f"{len(readings)} images; bytes median {statistics.median(sizes):,.0f}, max {max(sizes):,}; "
          f"seconds median {statistics.median(seconds):.3f}, min {min(seconds):.3f}, max {max(seconds):.3f}")
    print(f"fit: {per_file:.3f} s per file + {slope * 1e6:.1f} s per MB "
          f"(correlation of size and seconds {statistics.correlation(sizes, seconds):.2f})")
    print("median error of one image's predicted reading:")
    print(f"  per byte             {median_error(lambda size: per_byte * size, readings):.0%}")
    print(f"  per file             {median_error(lambda size: mean, readings):.0%}")
    print(f"  per file + per byte  {median_error(lambda size: per_file + slope * size, readings):.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    readings = time_images(args.folder)
    if len(readings) < 3:
        sys.exit(f"{args.folder}: {len(readings)} images; at least 3 are needed for a fit")
    report(readings)


if __name__ == "__main__":  # the OCR worker starts by spawn, which imports this module again
    main()
