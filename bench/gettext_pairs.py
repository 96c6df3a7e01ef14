"""Translation pairs (L, English) from translated program messages: training data the project may ship from.

    python bench/text_sources.py                         # fetch the sources once
    python bench/gettext_pairs.py bench/out/pairs 2000   # gettext.<l>-en.tsv, at most 2,000 pairs each
    python bench/gettext_pairs.py /tmp/g 2000 --languages de,fr --local-only   # this machine's catalogues only

Programs' translated messages are parallel text nobody here wrote: the gettext
catalogues of this machine (/usr/share/locale) and of the Debian packages, the
debconf templates and Django's catalogues that bench/text_sources.py fetches (see
docs/data.md for their licences). Place- and language-name catalogues (iso_*) are
left out. Cleaning, in order:
- printf and format codes, markup and accelerator marks are removed from both sides;
  a message with a path, an address or an escape is dropped;
- debconf templates pair paragraph by paragraph, and only when both sides have as many;
- the English side has 3+ words and 10 to 300 characters, the translation 2 to 400;
- the translation differs from the English, is in its language's main script (80% of
  its letters) and is detected as its language by engine.langid; the English side is
  not detected as another language;
- the length ratio (translation / English characters) lies within a factor 2.5 of the
  language's median ratio;
- each English and each translation is used once per language.
The per-language cap is filled English-sentence-by-sentence preferring English
sentences that fewer languages have used yet (languages with fewest pairs choose
first), so that the files do not all repeat the same few thousand English messages
(the trainer never puts two pairs sharing a side in one batch). Written as
the score / L / English TSV that `babelfind train --pairs` and `train-laser --pairs` read.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from text_filters import in_script, main_scripts  # noqa: E402
from text_sources import (  # noqa: E402
    CACHE, LOCAL_LOCALE, Message, catalogue_messages, is_gpl, licence, messages, package_of,
)

from engine.langid import detect_language  # noqa: E402

# Removed: printf and Python format codes, {fields}, markup, entities, escaped newlines.
NOISE = re.compile(r"%[-+#0-9.*]*[sdilufgxXcp]|%\([a-z_]+\)[a-z]|\{[^}]*\}|\\\\n|<[^>]+>|&\w+;")
# Accelerator marks are inside words ("Mo_ve", "&Open", "~Save"): removed without a space.
ACCELERATOR = re.compile(r"[_&~](?=\w)")
DROP = re.compile(r"https?:|www\.|/\w+/|\\|@\w|\$\w")
MIN_ENGLISH_WORDS = 3
ENGLISH_CHARS = (10, 300)
TRANSLATION_CHARS = (2, 400)
SCRIPT_SHARE = 0.8
RATIO_FACTOR = 2.5

def clean(text: str) -> str:
    return " ".join(NOISE.sub(" ", ACCELERATOR.sub("", text)).split())


def raw_pairs(all_messages, origins: dict | None = None) -> dict[str, dict[str, str]]:
    """Per language: English -> translation, cleaned and length-bounded, the first one kept.

    `origins`, when given, gets (language, English) -> the message's source for each pair.
    """
    pairs: dict[str, dict[str, str]] = defaultdict(dict)
    for message in all_messages:
        for english, translation in _aligned_paragraphs(message):
            if DROP.search(english) or DROP.search(translation):
                continue
            english, translation = clean(english), clean(translation)
            if (len(english.split()) >= MIN_ENGLISH_WORDS and _within(english, ENGLISH_CHARS)
                    and _within(translation, TRANSLATION_CHARS) and translation != english):
                if english not in pairs[message.lang]:
                    pairs[message.lang][english] = translation
                    if origins is not None:
                        origins[message.lang, english] = message.source
    return pairs


def _aligned_paragraphs(message: Message):
    """The message as (English, translation) pieces: whole, or paragraph by paragraph for
    debconf templates (short description first), only when both have as many paragraphs."""
    if message.english is None:
        return
    english, translation = message.english.split("\n"), message.text.split("\n")
    if not message.source.endswith("/templates"):
        yield " ".join(english), " ".join(translation)
    elif len(english) == len(translation):
        yield from zip(english, translation)


def _within(text: str, bounds: tuple[int, int]) -> bool:
    return bounds[0] <= len(text) <= bounds[1]


def pair_checks(pairs: dict[str, dict[str, str]]):
    """A check(lang, English, translation) for the script, language and length-ratio rules."""
    scripts = main_scripts({lang: list(found.values()) for lang, found in pairs.items()})
    medians = {lang: statistics.median(len(tr) / len(en) for en, tr in found.items())
               for lang, found in pairs.items() if found}

    def check(lang: str, english: str, translation: str) -> bool:
        ratio = len(translation) / len(english)
        return (medians[lang] / RATIO_FACTOR <= ratio <= medians[lang] * RATIO_FACTOR
                and in_script(translation, scripts[lang], SCRIPT_SHARE)
                and detect_language(translation) == lang and _english_or_unclear(english))

    return check


@functools.cache
def _english_or_unclear(text: str) -> bool:
    return detect_language(text) in ("en", None)


def capped(pairs: dict[str, dict[str, str]], check, limit: int) -> dict[str, list[tuple[str, str]]]:
    """At most `limit` checked pairs per language, English sentences spread over the languages.

    Checks run lazily, in the order pairs are offered, so a language with 30,000 messages
    costs `limit` checks and their misses, not 30,000.
    """
    used: Counter = Counter()
    chosen = {}
    for lang in sorted(pairs, key=lambda lang: (len(pairs[lang]), lang)):
        order = sorted(pairs[lang].items(), key=lambda p: (used[p[0]], _hash(lang, p[0])))
        kept, translations = [], set()
        for english, translation in order:
            if len(kept) >= limit:
                break
            if translation not in translations and check(lang, english, translation):
                kept.append((english, translation))
                translations.add(translation)
                used[english] += 1
        if kept:
            chosen[lang] = kept
    return chosen


def _hash(*parts: str) -> str:
    return hashlib.sha1("\x00".join(parts).encode("utf-8")).hexdigest()


def write_pairs(chosen: dict[str, list[tuple[str, str]]], out: Path, prefix: str = "gettext") -> None:
    out.mkdir(parents=True, exist_ok=True)
    for lang, kept in sorted(chosen.items()):
        (out / f"{prefix}.{lang}-en.tsv").write_text(
            "".join(f"1.0\t{translation}\t{english}\n" for english, translation in kept), encoding="utf-8")


def write_sources(chosen, origins: dict, out: Path, cache: Path) -> None:
    """gettext.sources.tsv: pairs per language and package, with the package's licence."""
    counts = Counter((lang, package_of(origins[lang, english])) for lang, kept in chosen.items() for english, _ in kept)
    licences = {package_of(source): licence(source, cache) for source in origins.values()}
    (out / "gettext.sources.tsv").write_text(
        "language\tpackage\tpairs\tlicence\n"
        + "".join(f"{lang}\t{package}\t{n}\t{licences[package]}\n" for (lang, package), n in sorted(counts.items())),
        encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("limit", type=int, help="pairs per language")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where bench/text_sources.py fetched to")
    parser.add_argument("--root", type=Path, default=LOCAL_LOCALE, help="this machine's catalogues")
    parser.add_argument("--local-only", action="store_true", help="only the catalogues under --root")
    parser.add_argument("--languages", help="comma-separated ISO 639-1 codes (default: all)")
    parser.add_argument("--no-gpl", action="store_true", help="leave out GPL-licensed catalogues")
    args = parser.parse_args()
    source = catalogue_messages(args.root, "local") if args.local_only else messages(args.cache, args.root)
    wanted = set(args.languages.split(",")) if args.languages else None
    origins: dict = {}
    pairs = raw_pairs((m for m in source if (wanted is None or m.lang in wanted)
                       and not (args.no_gpl and is_gpl(m.source, args.cache))), origins)
    chosen = capped(pairs, pair_checks(pairs), args.limit)
    write_pairs(chosen, args.out)
    write_sources(chosen, origins, args.out, args.cache)
    for lang, kept in sorted(chosen.items()):
        print(lang, len(kept))
    print(f"{sum(map(len, chosen.values()))} pairs in {len(chosen)} languages -> {args.out}")


if __name__ == "__main__":
    main()
