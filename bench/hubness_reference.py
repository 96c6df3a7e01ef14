"""Writes engine/index/hubness_queries.txt (language TAB sentence), the query-like sentences hubness is measured against.

    python bench/hubness_reference.py                       # from Tatoeba (benchmark data: not to ship)
    python bench/hubness_reference.py --from-reference      # from resources/reference_sentences.tsv
    python bench/hubness_reference.py --from-reference --languages all --per-language 10

--from-reference takes the rows marked query-like ("q") of the shipped reference set
(bench/reference_sentences.py, docs/data.md), by default for the same 16 languages and
40 per language as the Tatoeba version, so the two can be compared like for like; each
extra sentence costs one encoding per index generation.

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

import argparse
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


REFERENCE = REPO / "resources" / "reference_sentences.tsv"


def reference_queries(languages: set[str] | None, per_language: int) -> list[tuple[str, str]]:
    """The query-like rows of the reference set, at most `per_language` per language."""
    taken: dict[str, int] = {}
    queries = []
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        lang, kind, _source, sentence = line.split("\t", 3)
        if kind == "q" and (languages is None or lang in languages) and taken.get(lang, 0) < per_language:
            queries.append((lang, sentence))
            taken[lang] = taken.get(lang, 0) + 1
    return queries


def write(sentences: list[tuple[str, str]], header: str) -> None:
    unique = list(dict.fromkeys((lang, s.replace("\t", " ")) for lang, s in sentences))
    OUT.write_text(header + "".join(f"{lang}\t{s}\n" for lang, s in unique), encoding="utf-8")
    print(f"{len(unique)} reference queries -> {OUT.relative_to(REPO)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from-reference", action="store_true", help="use the shipped reference set, not Tatoeba")
    parser.add_argument("--languages", default=",".join([*TATOEBA_LANGUAGES.values(), "en"]),
                        help="with --from-reference: comma-separated codes, or 'all'")
    parser.add_argument("--per-language", type=int, default=PER_LANGUAGE)
    args = parser.parse_args()
    if args.from_reference:
        languages = None if args.languages == "all" else set(args.languages.split(","))
        write(reference_queries(languages, args.per_language),
              "# Hubness reference queries (engine/index/hubness.py), written by bench/hubness_reference.py\n"
              "# --from-reference: the query-like rows of resources/reference_sentences.tsv (sources and\n"
              "# licences in its header and docs/data.md). Lines: ISO 639-1 code, a tab, the sentence.\n")
        return 0
    sentences: list[tuple[str, str]] = []  # (ISO 639-1 code, sentence)
    for offset, (language, code) in enumerate(TATOEBA_LANGUAGES.items()):
        # a different slice per language, so the translations do not repeat one meaning
        lines = tatoeba_lines(language, language, FIRST_LINE + 37 * offset, PER_LANGUAGE)
        sentences += [(code, line) for line in lines]
    english = tatoeba_lines("fin", "eng", FIRST_LINE, PER_LANGUAGE // 2)  # unrelated English lines
    english += wikipedia_lines(PER_LANGUAGE // 2)
    sentences += [("en", line) for line in english]
    write(sentences, "# Hubness reference queries (engine/index/hubness.py), written by bench/hubness_reference.py.\n"
                     "# Sentences from the Tatoeba test set of LASER (tatoeba.org, CC BY 2.0 FR) and English\n"
                     "# Wikipedia (CC BY-SA). Lines: ISO 639-1 code, a tab, the sentence.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
