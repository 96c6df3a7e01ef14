"""Keyword matching by stem: a query in a language with a stemmer finds the other forms of
its words ("boxes" finds "box"), in each passage's own language; names, phrases, required
words and queries of unknown language match as written; highlighting marks the same words
the index matched; an index of the earlier format is rebuilt once, with a note that is no warning."""

from __future__ import annotations

import importlib
import logging
import sqlite3

import pytest

from engine.highlight import HighlightTerms, match_spans
from engine.index.keyword_index import KeywordIndex, KeywordQuery
from engine.index.keyword_tokens import tokenize
from engine.index.language_means import reference_sentences
from engine.index.stemming import _ALGORITHMS, stem, stems
from engine.repairs import REPAIR_LOGGER
from engine.store import Store

TROFF = "Pic draws box-and-arrow diagrams in troff documents."
SORTING = "Sorting arrays of numbers quickly."
GERMAN = "Die Rechnungen des Monats liegen im Ordner."


@pytest.fixture
def keywords(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    index = KeywordIndex.open(store, store.create_generation("model", 4, "active"), tmp_path / "indexes")
    index.add([(1, 1, TROFF, "en"), (2, 2, SORTING, "en"), (3, 3, GERMAN, "de")]
              + [(10 + i, 10, f"filler passage number {i}", "en") for i in range(20)])
    yield index
    index.close()


def found(index: KeywordIndex, words: list[str], language: str | None) -> list[int]:
    ids, _scores = index.search(KeywordQuery.of(words, language), 10)
    return ids.tolist()


def test_stems_of_words_in_languages_with_a_stemmer_only():
    assert stem("boxes", "en") == stem("box", "en") == "box"
    assert stem("rechnungen", "de") == stem("rechnung", "de")
    assert stem("boxes", None) == "boxes" and stem("boxes", "zh") == "boxes" and not stems("zh")
    assert stem("fa_2024_5521", "en") == "fa_2024_5521" and stem("2024", "en") == "2024"


def python_stemmer(algorithm: str):
    """snowballstemmer's own pure-Python stemmer, whether or not PyStemmer is installed."""
    module = importlib.import_module(f"snowballstemmer.{algorithm}_stemmer")
    return getattr(module, f"{algorithm.title()}Stemmer")()


def test_the_compiled_stemmers_give_the_pure_python_stems():
    """The install stems with PyStemmer; where only snowballstemmer's Python code is (a
    platform without its wheel), every language's words get the same stems, so a keyword
    file made on one machine is read right on the other."""
    import snowballstemmer
    import Stemmer

    assert snowballstemmer.stemmer is Stemmer.Stemmer  # the lock installs the compiled stemmers
    sentences = reference_sentences()
    others = [t.term for text in sentences["en"][:20] + sentences["ru"][:20] for t in tokenize(text)]
    for language, algorithm in sorted(_ALGORITHMS.items()):
        own = [t.term for text in sentences.get(language, ())[:40] for t in tokenize(text)]
        words = [w for w in own + others if w.isalpha()]
        compiled, python = Stemmer.Stemmer(algorithm), python_stemmer(algorithm)
        assert len(words) > 100
        assert compiled.stemWords(words) == [python.stemWord(w) for w in words], language


def test_a_query_finds_other_forms_of_its_words_in_the_passages_language(keywords):
    assert found(keywords, ["boxes", "arrows"], "en") == [1]
    assert found(keywords, ["diagram"], "en") == [1]
    assert found(keywords, ["Rechnung"], "de") == [3]
    assert found(keywords, ["sorted", "array"], "en") == [2]


def test_a_query_of_unknown_language_matches_words_as_written(keywords):
    assert found(keywords, ["boxes"], None) == []
    assert found(keywords, ["box"], None) == [1]


def test_a_word_as_written_scores_above_another_form_of_it(keywords):
    """Both count, but the passage's own word is the stronger evidence: "arrow" is written
    in passage 1, "arrows" only shares its stem."""
    _ids, as_written = keywords.search(KeywordQuery.of(["arrow"], "en"), 10)
    ids, other_form = keywords.search(KeywordQuery.of(["arrows"], "en"), 10)
    assert ids.tolist() == [1] and 0 < other_form[0] < 0.6 * as_written[0]


def test_names_phrases_and_required_words_match_as_written(keywords):
    assert keywords.holds_word("box") and not keywords.holds_word("boxes")
    assert keywords.matching(["box", "and", "arrow"], phrase=True).tolist() == [1]
    assert keywords.matching(["boxes", "and", "arrows"], phrase=True).tolist() == []
    assert keywords.matching(["arrows"]).tolist() == []


def test_stems_are_counted_apart_from_the_words_as_written(keywords):
    with keywords._lock:
        total, as_written = keywords._frequencies(KeywordQuery.of(["diagrams"]))
        _total, stemmed = keywords._frequencies(KeywordQuery.of(["diagrams"], "en"))
    assert as_written == {("terms", "diagrams"): 1} and total == 23
    assert stemmed == {("terms", "diagrams"): 1, ("stems", "diagram"): 1}


def test_highlighting_marks_the_words_a_stem_matched():
    terms = HighlightTerms.of_tokens(tokenize("boxes arrows"), [])
    assert match_spans(TROFF, terms) == []
    spans = match_spans(TROFF, terms.stemmed("en"))
    assert [TROFF[a:b] for a, b in spans] == ["box", "arrow"]
    assert terms.stemmed(None) == terms and terms.stemmed("ja") == terms


def test_an_index_of_the_earlier_format_is_rebuilt_with_one_note_not_a_warning(tmp_path, caplog):
    store = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    generation = store.create_generation("model", 4, "active")
    folder = tmp_path / "indexes"
    folder.mkdir()
    with sqlite3.connect(folder / "keywords.sqlite") as db:  # format 1: no stems column
        db.execute("CREATE VIRTUAL TABLE passages USING fts5(terms, document UNINDEXED)")
        db.execute("PRAGMA user_version = 1")
    with caplog.at_level(logging.INFO):
        index = KeywordIndex.open(store, generation, folder)
    try:
        notes = [r for r in caplog.records if r.name == REPAIR_LOGGER]
        assert [r.levelno for r in notes] == [logging.INFO] and "(format 1, now 2)" in notes[0].getMessage()
        index.add([(1, 1, TROFF, "en")])
        assert found(index, ["boxes"], "en") == [1]
    finally:
        index.close()
