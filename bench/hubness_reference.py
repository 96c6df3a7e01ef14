"""Writes engine/index/hubness_queries.txt (language TAB sentence), the query-like sentences hubness is measured against.

    python bench/hubness_reference.py

A passage's hubness penalty is its mean cosine to its k nearest reference queries
(engine/index/hubness.py), so the reference should look like what people type: short
sentences and questions on everyday and encyclopaedic topics, in many languages and
scripts, with no language dominating (a penalty measured against English queries only
would mostly measure "is this passage English"). Taken from the Tatoeba test set
(CC BY 2.0 FR; 40 sentences per language from the middle of each file, away from the
lines bench_language_bias uses; English: 20 of them and 20 English Wikipedia sentences,
CC BY-SA), never
from PUD or STS-B, which the search dev sets are built from.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
if not DATA.is_dir():
    DATA = Path("/work/shared/data")
OUT = REPO / "engine" / "index" / "hubness_queries.txt"

# Tatoeba file code -> the ISO 639-1 code engine.langid gives a query in that language
TATOEBA_LANGUAGES = {"deu": "de", "fra": "fr", "spa": "es", "ita": "it", "por": "pt", "nld": "nl",
                     "pol": "pl", "rus": "ru", "tur": "tr", "ara": "ar", "hin": "hi", "cmn": "zh",
                     "jpn": "ja", "kor": "ko", "swe": "sv"}
PER_LANGUAGE = 40
FIRST_LINE = 400  # bench_language_bias reads the first 300 lines and the last 300 of ita


def tatoeba_lines(language: str, side: str, first: int, count: int) -> list[str]:
    path = DATA / "tatoeba" / "v1" / f"tatoeba.{language}-eng.{side}"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines[first : first + count] if line.strip()]


def wikipedia_lines(count: int) -> list[str]:
    path = DATA / "corpus" / "wiki-en" / "wiki1m_for_simcse.head.txt"
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    short = [line for line in lines if 30 <= len(line) <= 160]
    step = max(1, len(short) // count)
    return short[::step][:count]


def main() -> int:
    sentences: list[tuple[str, str]] = []  # (ISO 639-1 code, sentence)
    for offset, (language, code) in enumerate(TATOEBA_LANGUAGES.items()):
        # a different slice per language, so the translations do not repeat one meaning
        lines = tatoeba_lines(language, language, FIRST_LINE + 37 * offset, PER_LANGUAGE)
        sentences += [(code, line) for line in lines]
    english = tatoeba_lines("fin", "eng", FIRST_LINE, PER_LANGUAGE // 2)  # unrelated English lines
    english += wikipedia_lines(PER_LANGUAGE // 2)
    sentences += [("en", line) for line in english]
    unique = list(dict.fromkeys((lang, s.replace("\t", " ")) for lang, s in sentences))
    header = ("# Hubness reference queries (engine/index/hubness.py), written by bench/hubness_reference.py.\n"
              "# Sentences from the Tatoeba test set of LASER (tatoeba.org, CC BY 2.0 FR) and English\n"
              "# Wikipedia (CC BY-SA). Lines: ISO 639-1 code, a tab, the sentence.\n")
    OUT.write_text(header + "".join(f"{lang}\t{s}\n" for lang, s in unique), encoding="utf-8")
    print(f"{len(unique)} reference queries -> {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
