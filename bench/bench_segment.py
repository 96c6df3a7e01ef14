"""Segmentation and language-id throughput on a multilingual text built from Tatoeba.

Run: OMP_NUM_THREADS=1 python bench/bench_segment.py [--mb 5] [--data ../shared/data]

Times are CPU seconds of this process (time.process_time), so a busy shared machine
slows the wall clock but not the figures. The baseline is a one-line regex splitter
("split after . ! ? before whitespace") over the same text in the same run; the ratio
says what the extra rules cost.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from pathlib import Path

from engine.langid import detect_languages
from engine.segment import make_passages, split_sentences

NAIVE = re.compile(r"(?<=[.!?。！？])\s+")


def build_text(folder: Path, megabytes: float, seed: int = 0) -> str:
    """Paragraphs of 1-8 Tatoeba sentences in 112 languages until `megabytes` of UTF-8."""
    rng = random.Random(seed)
    lines = []
    for path in sorted(folder.glob("tatoeba.*-eng.*")):
        lines += [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng.shuffle(lines)
    paragraphs, size, position = [], 0, 0
    while size < megabytes * 1e6:
        count = rng.randint(1, 8)
        paragraph = " ".join(lines[(position + i) % len(lines)] for i in range(count))
        position += count
        paragraphs.append(paragraph)
        size += len(paragraph.encode()) + 2
    return "\n\n".join(paragraphs)


def cpu_seconds(function, *args, **kwargs):
    start = time.process_time()
    result = function(*args, **kwargs)
    return time.process_time() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--langid-mb", type=float, default=0.5, help="passages' worth of text to run language id on")
    args = parser.parse_args()
    text = build_text(args.data / "tatoeba" / "v1", args.mb)
    megabytes = len(text.encode()) / 1e6
    naive_s, naive = cpu_seconds(NAIVE.split, text)
    split_s, sentences = cpu_seconds(split_sentences, text)
    passage_s, passages = cpu_seconds(make_passages, text, sentences)
    texts, size = [], 0
    for passage in passages:
        if size >= args.langid_mb * 1e6:
            break
        texts.append(text[passage.start : passage.end])
        size += len(texts[-1].encode())
    langid_s, _ = cpu_seconds(detect_languages, texts)
    print(f"text: {megabytes:.2f} MB UTF-8, {len(text):,} chars")
    print(f"naive regex split : {megabytes / naive_s:7.2f} MB/s ({len(naive):,} pieces)")
    print(f"split_sentences   : {megabytes / split_s:7.2f} MB/s ({len(sentences):,} sentences,"
          f" {naive_s / split_s:.2f}x the naive speed)")
    print(f"make_passages     : {megabytes / passage_s:7.2f} MB/s ({len(passages):,} passages)")
    print(f"segment (both)    : {megabytes / (split_s + passage_s):7.2f} MB/s")
    print(f"detect_languages  : {size / 1e6 / langid_s:7.2f} MB/s of passage text"
          f" ({len(texts):,} passages, {langid_s / len(texts) * 1e3:.2f} ms each)")


if __name__ == "__main__":
    main()
