"""Results that add up: strong documents before weaker ones whatever their scores, a label
per passage beside the document's majority language, and language facets whose counts
are exactly what choosing them returns (hashed-words encoder, real language detection)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import WordEncoder
from search_corpora import NIGHT_TRAIN

from engine.config import data_paths
from engine.index.fusion import ScoreBaseline
from engine.library import Library
from engine.search import _Candidates, _documents
from engine.search_config import SearchConfig
from engine.store.schema import Document, Passage
from engine.store.search_queries import passage_documents

ENGLISH, FRENCH, GERMAN = NIGHT_TRAIN["en"], NIGHT_TRAIN["fr"], NIGHT_TRAIN["de"]


@pytest.fixture
def library(babelfind_home, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    files = {
        "english.txt": ENGLISH * 2,
        "french.txt": FRENCH * 2,
        "german.txt": GERMAN * 2,
        # a French chapter that opens with an English summary: mostly French
        "chapter.fr.txt": ENGLISH + "\n\n" + FRENCH * 4,
        # an English guide with one French paragraph: mostly English
        "guide.txt": ENGLISH * 4 + "\n\n" + FRENCH,
    }
    for name, text in files.items():
        (docs / name).write_text(text, encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    *_, finished = library.index_paths([docs])
    assert not finished.summary.skipped
    yield library
    library.close()


def document_languages(library) -> dict[str, str]:
    with library.store.session() as s:
        return {Path(d.path).name: d.language for d in s.query(Document)}


def test_a_documents_language_is_the_language_of_most_of_its_text(library):
    """Not of its first passage: the French chapter opens in English."""
    languages = document_languages(library)
    assert languages["chapter.fr.txt"] == "fr"
    assert languages["guide.txt"] == "en"


def test_each_result_shows_its_passages_language_beside_the_documents(library):
    results = library.search_results("Innsbruck lang:fr", k=10)
    by_name = {Path(h.path).name: h for h in results.hits}
    assert {"french.txt", "chapter.fr.txt", "guide.txt"} <= set(by_name)
    for hit in results.hits:
        assert all(p.language == "fr" for p in hit.passages)  # what lang:fr asked for
    assert by_name["guide.txt"].language == "en"  # its document is mostly English


@pytest.mark.parametrize("query", ["Innsbruck", "train de nuit Innsbruck", "sleeping car beds", "Nachtzug"])
def test_a_facets_count_is_what_choosing_it_returns(library, query):
    everything = library.search_results(query, k=50)
    assert everything.languages, "the query should match something"
    for language, count in everything.languages.items():
        chosen = library.search_results(query, k=50, facet=language)
        assert chosen.total == count, f"{language}: the facet said {count}, choosing it gave {chosen.total}"
        assert chosen.languages == everything.languages  # the counts stay those of every match
        strong = [h for h in chosen.hits if not h.weak]
        assert len(strong) == count
        for hit in chosen.hits:
            assert hit.passages and all(p.language == language for p in hit.passages)
        assert [h.weak for h in chosen.hits] == sorted(h.weak for h in chosen.hits)


def test_a_mixed_document_counts_under_each_of_its_matching_languages(library):
    results = library.search_results("Innsbruck", k=50)
    strong = {Path(h.path).name for h in results.hits if not h.weak}
    assert {"chapter.fr.txt", "guide.txt"} <= strong
    french = {Path(h.path).name for h in library.search_results("Innsbruck", k=50, facet="fr").hits}
    english = {Path(h.path).name for h in library.search_results("Innsbruck", k=50, facet="en").hits}
    assert {"chapter.fr.txt", "guide.txt"} <= french & english
    assert "german.txt" not in french | english


def test_strong_documents_come_first_even_when_a_weaker_one_scores_higher(library):
    """The fused score orders; the strength (score or keyword share against the best)
    decides strong or weak; they need not agree. A document whose keyword share is close
    to the best's is strong though a weak one's meaning scores above it: the hits list
    the strong ones first, so the top k never skips a strong document for a weak one."""
    ids = np.sort(library.live.index.ids())
    paths = passage_documents(library.store, ids.tolist())
    one_per_document = {paths[pid][0]: pid for pid in reversed(ids.tolist())}  # each one's first passage
    chosen = sorted(one_per_document.values())[:3]
    best, meaning_only, words_only = chosen
    candidates = _Candidates(
        ids=np.asarray(chosen, np.int64),
        cosine=np.asarray([0.9, 0.55, np.nan], np.float32),  # z 9 (the best), 5.5, none
        keyword=np.asarray([0.3, 0.0, 0.2], np.float32))
    config = SearchConfig(weak_below=0.65)
    results = _documents(library.store, candidates, ScoreBaseline(0.0, 0.1), "fused", 10, config,
                         sentence=True)
    order = [paths[p][0] for p in (best, words_only, meaning_only)]
    assert [h.path for h in results.hits] == order
    assert [h.weak for h in results.hits] == [False, False, True]
    assert (results.total, results.weak_total) == (2, 1)
    # its fused score is below the weak one's: only the grouping put it first
    assert results.hits[1].score < results.hits[2].score
    top_two = _documents(library.store, candidates, ScoreBaseline(0.0, 0.1), "fused", 2, config, sentence=True)
    assert [h.path for h in top_two.hits] == order[:2]


def test_a_passage_of_names_in_an_english_file_is_labelled_english(babelfind_home, tmp_path):
    """Alone, a release note's shortlog is Latin to the language model; read with the rest
    of its file it is English, so no "Latin" facet appears in an English folder."""
    fixes = ["clone: rename static function `dir_exists()`.", "t: fix typo in test descriptions",
             "rerere doc: quote `rerere.enabled`", "gitweb: fix esc_param", "fsck: reduce stack footprint",
             "Fix parsing numeric color values"]
    names = ["Marta Rubio", "Nils Stokke", "Gaute Aas", "Tomas Stoa", "Timo Hirvi", "Lars Torva"]
    shortlog = "\n\n".join(f"{name} (1):\n{fix}" for name, fix in zip(names, fixes))
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "RelNotes.txt").write_text("\n\n".join([ENGLISH * 2, shortlog, ENGLISH * 2]), encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    try:
        list(library.index_paths([notes]))
        with library.store.session() as s:
            texts = {p.text: p.language for p in s.query(Passage)}
        assert any(text.startswith("Marta Rubio") for text in texts)
        assert set(texts.values()) <= {"en", None}  # a passage too unclear for any label has none
        assert set(library.search_results("rename static function Marta Rubio", k=5).languages) == {"en"}
    finally:
        library.close()
