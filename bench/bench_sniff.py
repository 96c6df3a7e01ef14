"""Judging files without a known extension: the NUL-byte shortcut against the full sniff.

    PYTHONPATH=$PWD python bench/bench_sniff.py

Every file in an indexed folder is now looked at (LICENSE, corpus.de, .po are text; .mo,
.jpg are not). 200 binary "photos" and 50 extensionless text files are judged by
`engine.indexer._refusal`, with its NUL-byte shortcut and, in the same process, with the
shortcut patched out (the encoding detector then decides every binary file). Medians of 5.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from engine import indexer


def make_files(folder: Path) -> list[Path]:
    files = []
    for i in range(200):
        path = folder / f"photo{i}.jpg"
        path.write_bytes(b"\xff\xd8\xff\xe0" + os.urandom(20_000))
        files.append(path)
    for i in range(50):
        path = folder / f"NOTE{i}"
        path.write_text("Plain text without an extension. " * 50)
        files.append(path)
    return files


def median_seconds(files: list[Path], rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        verdicts = [indexer._refusal(f) for f in files]
        times.append(time.perf_counter() - start)
    assert sum(v is not None for v in verdicts) == 200  # the photos, and only them
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(Path(tmp))
        fast = median_seconds(files)
        # without the shortcut: no file "has" a NUL byte, every one goes to the detector
        with mock.patch.object(indexer, "bom_encoding", lambda head: "no-shortcut"):
            slow = median_seconds(files)
    print(f"with NUL shortcut: {fast * 1000:.0f} ms  without: {slow * 1000:.0f} ms  "
          f"ratio {slow / fast:.1f}x  (250 files)")


if __name__ == "__main__":
    main()
