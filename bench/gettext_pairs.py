"""Translation pairs (L, English) from this machine's gettext catalogues: real text for trials.

    python bench/gettext_pairs.py /tmp/gettext 2000      # gettext.<l>-en.tsv, 2,000 pairs each

Programs' translated messages (/usr/share/locale/<l>/LC_MESSAGES/*.mo) are parallel text
nobody here wrote. Place- and language-name catalogues (iso_*) are left out; printf codes,
markup and accelerator marks are removed; the English side has 3+ words. The
pairs are shuffled with seed 0 and cut to the limit. Written as the score / L / English TSV
that `babelfind train-laser --pairs` and bench_laser_student --extra-pairs read.
"""

from __future__ import annotations

import argparse
import gettext
import random
import re
from pathlib import Path

LOCALES = {"ar": ["ar"], "de": ["de"], "es": ["es"], "fr": ["fr"], "hi": ["hi"], "it": ["it"],
           "pt": ["pt", "pt_BR"], "ru": ["ru"], "tr": ["tr"], "zh": ["zh_CN"]}
NOISE = re.compile(r"%[-#0-9.]*[sdilufgxXc]|%\([a-z_]+\)[sd]|\{[^}]*\}|_|&|\\\\n|<[^>]+>")


def clean(text: str) -> str:
    return " ".join(NOISE.sub(" ", text).split())


def catalogue_pairs(locale_dirs: list[str], root: Path) -> dict[str, str]:
    """English -> translation over every catalogue of these locales, the first one kept."""
    pairs: dict[str, str] = {}
    for locale in locale_dirs:
        for mo in sorted((root / locale / "LC_MESSAGES").glob("*.mo")):
            if mo.name.startswith("iso_"):
                continue
            try:
                with mo.open("rb") as f:
                    catalogue = gettext.GNUTranslations(f)._catalog
            except (OSError, ValueError):
                continue  # a damaged or oddly encoded catalogue: skip it
            for key, value in catalogue.items():
                if not (isinstance(key, str) and isinstance(value, str)) or not key or "\x00" in key:
                    continue  # the header, and plural forms
                english, translation = clean(key.split("\x04")[-1]), clean(value)
                if (len(english.split()) >= 3 and 10 <= len(english) <= 300 and translation
                        and translation != english and len(translation) <= 400):
                    pairs.setdefault(english, translation)
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("limit", type=int, help="pairs per language")
    parser.add_argument("--root", type=Path, default=Path("/usr/share/locale"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for lang, locale_dirs in LOCALES.items():
        pairs = sorted(catalogue_pairs(locale_dirs, args.root).items())
        random.Random(0).shuffle(pairs)
        kept = pairs[:args.limit]
        (args.out / f"gettext.{lang}-en.tsv").write_text(
            "".join(f"1.0\t{translation}\t{english}\n" for english, translation in kept), encoding="utf-8")
        print(lang, len(kept))


if __name__ == "__main__":
    main()
