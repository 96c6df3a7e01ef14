"""Translation pairs from a whole library: every language mined against the main one.

    >>> for event in iter_mine_collection(store, encoder, root="/home/me/Docs"):
    ...     if isinstance(event, CollectionMined): rows = event.rows()

The stored passages' sentences are grouped by their passage's language. The language
with the most sentences is the pivot (usually the user's own); each other language that
has enough sentences is mined against it with the margin criterion (no ordered
alignment: the sentences come from many documents). This is what the training wizard's
"Improve search across my languages" mode learns from, after the user reviewed it.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, replace

from engine.errors import InputError
from engine.mining.bitext import (MiningFinished, MiningOptions, MiningProgress, MiningResult,
                                  iter_mine_sentences)

# A language needs this many distinct sentences to be mined (fewer give no pairs worth it).
MIN_SENTENCES = 20
# Sentences kept per language (the first ones in document order): bounds encoding time.
MAX_SENTENCES = 20_000
# Sentences this short are headings and list items, not translatable sentences.
MIN_CHARS = 12


@dataclass(frozen=True)
class CollectionMined:
    """The finished run: one MiningResult per language mined against the pivot."""

    pivot: str
    results: tuple[MiningResult, ...]
    skipped: dict  # language -> why it was not mined (too few sentences)

    def rows(self, above_threshold: bool = True) -> list[tuple[float, str, str]]:
        """(score, sentence, pivot-language sentence), best first."""
        rows = [(p.score, p.src_text, p.tgt_text) for r in self.results for p in r.pairs
                if not above_threshold or p.score > r.threshold]
        return sorted(rows, key=lambda row: -row[0])


def sentences_by_language(store, root: str | None = None, *, max_per_language: int = MAX_SENTENCES
                          ) -> dict[str, list[str]]:
    """Distinct sentences of the stored passages (under `root`), by passage language."""
    from engine.segment import split_sentences

    found: dict[str, dict[str, None]] = {}
    for text, language in store.passage_texts(root):
        if not language:
            continue
        bucket = found.setdefault(language, {})
        if len(bucket) >= max_per_language:
            continue
        for span in split_sentences(text, language):
            sentence = " ".join(text[span.start:span.end].split())
            if len(sentence) >= MIN_CHARS:
                bucket.setdefault(sentence, None)
    return {lang: list(sentences)[:max_per_language] for lang, sentences in found.items()}


def iter_mine_collection(store, encoder, root: str | None = None, *, pivot: str | None = None,
                         options: MiningOptions = MiningOptions(),
                         min_sentences: int = MIN_SENTENCES
                         ) -> Generator[MiningProgress | CollectionMined, None, None]:
    """Mines each language of the library (or of `root`) against `pivot`; yields
    progress (stage "de -> en: encode source", ...) and finally `CollectionMined`.

    Raises:
        InputError: fewer than two languages have `min_sentences` sentences.
    """
    by_language = sentences_by_language(store, root)
    usable = {lang: s for lang, s in by_language.items() if len(s) >= min_sentences}
    skipped = {lang: f"{len(s)} sentences (needs {min_sentences})"
               for lang, s in by_language.items() if lang not in usable}
    if pivot is None and usable:
        pivot = max(usable, key=lambda lang: len(usable[lang]))
    others = sorted(lang for lang in usable if lang != pivot)
    if pivot not in usable or not others:
        found = ", ".join(f"{lang} {len(s)}" for lang, s in sorted(by_language.items())) or "none"
        raise InputError("finding translations needs sentences in at least two languages "
                         f"({min_sentences} or more each); the library has: {found}")
    results = []
    for lang in others:
        settings = replace(options, align="off", src_lang=lang, tgt_lang=pivot)
        for event in iter_mine_sentences(usable[lang], usable[pivot], encoder, settings,
                                         names=(lang, pivot)):
            if isinstance(event, MiningFinished):
                results.append(event.result)
            else:
                yield replace(event, stage=f"{lang} -> {pivot}: {event.stage}")
    yield CollectionMined(pivot, tuple(results), skipped)
