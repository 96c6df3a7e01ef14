"""Where a query's words occur in a text: whole words, folded like the keyword index.

    >>> match_spans("ffi_prep_closure_loc failed; Red Hat", parse_query("closure red").highlight)
    [(9, 16), (29, 32)]

A word matches a whole token or one part of an identifier ("closure" marks just that
part of `ffi_prep_closure_loc`; `ffi_prep_closure_loc` marks all of it, underscores
included). "red" never marks "redistribute". In the query's language (`stemmed`) a word
also marks the words it shares a stem with, as the keyword index matches them: "boxes"
marks "box". A quoted phrase marks its words only where they stand together. Excluded
words and filters mark nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.index.keyword_tokens import STOPWORDS, Token, iter_tokens, tokenize
from engine.index.stemming import stem, stems


@dataclass(frozen=True)
class HighlightTerms:
    words: frozenset[str]  # folded terms of the plain words
    phrases: tuple[tuple[str, ...], ...]  # folded term sequences of the phrases
    language: str | None = None  # the query's, when its words' stems mark too
    stems: frozenset[str] = frozenset()  # the words' stems in `language`

    def __bool__(self) -> bool:
        return bool(self.words or self.phrases)

    @classmethod
    def of_tokens(cls, words: Sequence[Token], phrases: Sequence[Sequence[Token]]) -> HighlightTerms:
        """From a parsed query's tokens (engine.query.ParsedQuery.highlight)."""
        terms = frozenset(t.term for t in words)
        # "why are the bees" marks "bees", not every "the"; nor, in an Italian passage,
        # every article "i" for the English "I": function words of any language go
        if terms - STOPWORDS:
            terms -= STOPWORDS
        return cls(terms, tuple(s for s in (tuple(t.term for t in p) for p in phrases) if s))

    def stemmed(self, language: str | None) -> HighlightTerms:
        """These terms, also marking words that share a stem in `language` (the query's,
        engine.search.SearchResults.language); unchanged where it has no stemmer."""
        if not stems(language):
            return self
        return replace(self, language=language, stems=frozenset(stem(w, language) for w in self.words))


NO_TERMS = HighlightTerms(frozenset(), ())


def match_spans(text: str, terms: HighlightTerms) -> list[tuple[int, int]]:
    """Sorted, non-overlapping (start, end) offsets of the matched words in `text`."""
    if not terms:
        return []
    tokens = tokenize(text)
    spans: list[tuple[int, int]] = []
    for token in tokens:
        spans.extend(_word_spans(token, terms))
    for phrase in terms.phrases:
        spans.extend(_phrase_spans(tokens, phrase))
    return _merge(spans)


def first_match(text: str, terms: HighlightTerms) -> tuple[int, int] | None:
    """Where `text`'s first matched word starts and ends (match_spans' first span, unless
    CJK bigrams overlap it), reading no further: a snippet needs only that, and a passage
    matches early more often than not. None where nothing matches."""
    if not terms:
        return None
    if terms.phrases:  # rare; a phrase may start before the first plain word it follows
        spans = match_spans(text, terms)
        return spans[0] if spans else None
    for token in iter_tokens(text):
        spans = _word_spans(token, terms)
        if spans:
            return spans[0]
    return None


def _word_spans(token: Token, terms: HighlightTerms) -> list[tuple[int, int]]:
    if _marks(token.term, terms):
        return [(token.start, token.end)]
    # a one-letter part is noise: "C program" should not mark the c of "git.c" or "x86_64"'s x
    return [(p.start, p.end) for p in token.parts if len(p.term) > 1 and _marks(p.term, terms)]


def _marks(term: str, terms: HighlightTerms) -> bool:
    if term in terms.words:
        return True
    # A shared stem does not reach a function word: the Italian "come" (how) shares "com"
    # with the Spanish "como", which every Spanish passage holds.
    return bool(terms.stems) and term not in STOPWORDS and stem(term, terms.language) in terms.stems


def _phrase_spans(tokens: list[Token], phrase: tuple[str, ...]) -> list[tuple[int, int]]:
    n = len(phrase)
    terms = [t.term for t in tokens]
    return [(tokens[i].start, tokens[i + n - 1].end) for i in range(len(tokens) - n + 1)
            if terms[i : i + n] == list(phrase)]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans (CJK bigrams, a phrase over its words) become one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
