"""Ordered alignment of documents that translate each other: link F1, plain vs neutral vectors.

    BABELFIND_HOME=<home with the default models> python bench/bench_alignment.py
    ... --langs de fr --docs 5 --min-ratios 1.0 1.03 1.1      # a smaller grid

Documents: PUD's 1000 sentences per language are translations of the same English
sentences in the same order. Each language and English are cut into `--docs` documents of
consecutive sentences, and every document pair is damaged the way real translations
differ: about 8% of the sentences are dropped from one side only (a sentence with no
counterpart), 6% of neighbouring pairs are merged into one sentence on one side (a 2-1 or
1-2 bead), and 5% unrelated sentences (Tatoeba's, not in PUD) are inserted on each side.

The aligner runs the app's own path (engine.mining.bitext with align="on", both spaces,
each min_ratio of the grid). A bead links every source unit to every target unit it holds;
gold links are the units that hold the same PUD sentence. Precision, recall and F1 are over
links. min_ratio is chosen per space on the first half of the documents (dev) and reported
on the other half (test), so the number shown was not tuned on what it scores.

"auto" checks the `--align auto` rule in each space: every damaged pair should be aligned,
and a document paired with an unrelated one (another document's English) should not.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_laser_student import CachedEncoder  # noqa: E402  (vectors by kind and text, kept on disk)
from bench_mining import pud as read_pud, tatoeba as read_tatoeba  # noqa: E402  (same data, same readers)
from engine.mining.alignment import AlignConfig  # noqa: E402
from engine.mining.bitext import MiningOptions, mine_sentences  # noqa: E402

log = logging.getLogger("bench_alignment")
DEFAULT_GRID = {"plain": (0.95, 0.98, 1.0, 1.01, 1.02, 1.03, 1.05, 1.08),
                "neutral": (0.95, 0.98, 1.0, 1.03, 1.06, 1.1, 1.15, 1.2, 1.3)}


@dataclass(frozen=True)
class Side:
    """One damaged document: its sentences and, per sentence, the PUD sentences it holds."""

    sentences: list[str]
    holds: list[tuple[int, ...]]  # () for an inserted sentence


@dataclass(frozen=True)
class DocumentPair:
    lang: str
    index: int
    src: Side
    tgt: Side

    def gold(self) -> set[tuple[int, int]]:
        """(source unit, target unit) pairs that hold the same PUD sentence."""
        where: dict[int, int] = {}
        for unit, held in enumerate(self.tgt.holds):
            for sentence in held:
                where[sentence] = unit
        return {(unit, where[s]) for unit, held in enumerate(self.src.holds) for s in held if s in where}


def damaged(sentences: list[str], ids: list[int], rng: random.Random, drop: set[int],
            fillers: list[str], joiner: str) -> Side:
    """`sentences` with the ids in `drop` left out, some neighbours merged, fillers inserted."""
    kept = [(sentences[i], (i,)) for i in ids if i not in drop]
    merged: list[tuple[str, tuple[int, ...]]] = []
    i = 0
    while i < len(kept):
        if i + 1 < len(kept) and rng.random() < 0.06:
            merged.append((kept[i][0] + joiner + kept[i + 1][0], kept[i][1] + kept[i + 1][1]))
            i += 2
        else:
            merged.append(kept[i])
            i += 1
    for filler in fillers:
        merged.insert(rng.randrange(len(merged) + 1), (filler, ()))
    return Side([text for text, _ in merged], [held for _, held in merged])


def document_pairs(shared: Path, lang: str, docs: int, seed: int) -> list[DocumentPair]:
    rng = random.Random(f"{seed} {lang}")
    src_pud, en_pud = read_pud(shared, lang), read_pud(shared, "en")
    src_tat, en_tat = read_tatoeba(shared, lang)
    size = len(src_pud) // docs
    joiner = "" if lang in ("zh", "ja") else " "
    pairs = []
    for d in range(docs):
        ids = list(range(d * size, (d + 1) * size))
        dropped = rng.sample(ids, int(0.16 * size))
        src_drop, tgt_drop = set(dropped[: len(dropped) // 2]), set(dropped[len(dropped) // 2:])
        fillers = int(0.05 * size)
        # one half of Tatoeba for one side, the other half for the other: no filler's
        # translation is on the other side
        src_fill = rng.sample(src_tat[: len(src_tat) // 2], fillers)
        tgt_fill = rng.sample(en_tat[len(en_tat) // 2:], fillers)
        pairs.append(DocumentPair(
            lang, d, damaged(src_pud, ids, rng, src_drop, src_fill, joiner),
            damaged(en_pud, ids, rng, tgt_drop, tgt_fill, " ")))
    return pairs


def link_scores(pair: DocumentPair, beads) -> tuple[int, int, int]:
    """(links predicted, links gold, links right)."""
    predicted = {(s, t) for bead in beads for s in bead.src_indices for t in bead.tgt_indices}
    gold = pair.gold()
    return len(predicted), len(gold), len(predicted & gold)


def prf(counts) -> tuple[float, float, float]:
    predicted, gold, right = (sum(c[i] for c in counts) for i in range(3))
    p, r = right / max(predicted, 1), right / max(gold, 1)
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


def align(pair: DocumentPair, encoder, space: str, min_ratio: float | None, align_mode: str = "on"):
    options = MiningOptions(src_lang=pair.lang, tgt_lang="en", align=align_mode, space=space,
                            alignment=AlignConfig() if min_ratio is None else AlignConfig(min_ratio=min_ratio))
    return mine_sentences(pair.src.sentences, pair.tgt.sentences, encoder, options)


def _scores(counts: dict, space: str, min_ratio: float, test: bool, lang: str | None = None):
    """P, R, F1 over the document pairs of one grid point: dev or test, one language or all."""
    return prf([c for (s, m, is_test, l), c in counts.items()
                if (s, m, is_test) == (space, min_ratio, test) and lang in (None, l)])


def run(args) -> None:
    from engine.models import load_encoder

    encoder = load_encoder(args.model)
    args.cache.mkdir(parents=True, exist_ok=True)
    encoder = CachedEncoder(encoder, args.cache / f"{hashlib.sha1(encoder.name.encode()).hexdigest()[:12]}.npz")
    pairs = [p for lang in args.langs for p in document_pairs(args.shared, lang, args.docs, args.seed)]
    is_test = lambda pair: pair.index >= args.docs // 2  # noqa: E731
    test = [p for p in pairs if is_test(p)]
    print(f"model {encoder.name}; {len(pairs)} document pairs ({args.docs} per language, "
          f"~{len(pairs[0].src.sentences)} sentences each), dev {len(pairs) - len(test)}, test {len(test)}\n")
    # (space, min_ratio, test?, language) -> summed (links predicted, gold, right)
    counts: dict[tuple[str, float, bool, str], tuple[int, int, int]] = {}
    for space in args.spaces:
        for min_ratio in args.min_ratios or DEFAULT_GRID[space]:
            for pair in pairs:
                key = (space, min_ratio, is_test(pair), pair.lang)
                found = link_scores(pair, align(pair, encoder, space, min_ratio).pairs)
                counts[key] = tuple(a + b for a, b in zip(counts.get(key, (0, 0, 0)), found))
            encoder.save()
            log.info("%s min_ratio %.2f: dev F1 %.1f", space, min_ratio,
                     100 * _scores(counts, space, min_ratio, False)[2])
    print("| space | min_ratio | dev F1 | test P | test R | test F1 | " +
          " | ".join(f"{lang} F1" for lang in args.langs) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(args.langs))
    for space in args.spaces:
        grid = sorted({m for (s, m, _, _) in counts if s == space})
        dev_f1 = {m: _scores(counts, space, m, False)[2] for m in grid}
        best = max(grid, key=dev_f1.get)
        for m in grid:
            p, r, f = _scores(counts, space, m, True)
            per_lang = [_scores(counts, space, m, True, lang)[2] for lang in args.langs]
            mark = " (best dev)" if m == best else ""
            print(f"| {space} | {m:g}{mark} | {100 * dev_f1[m]:.1f} | {100 * p:.1f} | {100 * r:.1f} | "
                  f"{100 * f:.1f} | " + " | ".join(f"{100 * x:.1f}" for x in per_lang) + " |")
    print("\n`--align auto` (default min_ratio of each space):\n")
    print("| space | translations aligned | unrelated documents aligned |")
    print("|---|---|---|")
    # each test document against the English of the same language's first document
    first = {p.lang: p for p in pairs if p.index == 0}
    unrelated = [DocumentPair(p.lang, p.index, p.src, first[p.lang].tgt) for p in test]
    for space in args.spaces:
        translated = sum(align(p, encoder, space, None, "auto").aligned for p in test)
        mixed = sum(align(p, encoder, space, None, "auto").aligned for p in unrelated)
        print(f"| {space} | {translated} of {len(test)} | {mixed} of {len(test)} |")
    encoder.save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--langs", nargs="+", default=["de", "fr", "es", "ru", "zh", "ar", "hi"])
    parser.add_argument("--docs", type=int, default=6, help="documents per language (half dev, half test)")
    parser.add_argument("--model", default=None, help="registered model (default: active)")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "bench_alignment_cache")
    parser.add_argument("--spaces", nargs="+", default=["plain", "neutral"], choices=["plain", "neutral"])
    parser.add_argument("--min-ratios", nargs="+", type=float, help="one grid for every space")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    run(args)


if __name__ == "__main__":
    main()
