"""Weaker matches: documents far below the best come back marked `weak`, after the strong
ones, and are counted apart from `total`; a query nothing answers well finds no strong match."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import WordEncoder
from search_corpora import write_invoices

from engine.config import data_paths
from engine.events import SearchResults
from engine.library import Library
from engine.search_config import SearchConfig

EVERYTHING_STRONG = SearchConfig(weak_below=-np.inf)

DOCS = {
    "bees.txt": "Honey bees collect nectar from flowers and make honey in the hive. "
                "Beekeepers harvest honey in late summer.",
    "wasps.txt": "Wasps build paper nests and hunt other insects. They rarely make honey.",
    "trains.txt": "The night train crosses the steppe towards Vladivostok.",
}


@pytest.fixture
def library(babelfind_home, tmp_path):
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    write_invoices(tmp_path / "invoices", n=40)
    *_, finished = library.index_paths([docs, tmp_path / "invoices"])
    assert not finished.summary.skipped
    yield library
    library.close()


def names(results: SearchResults, weak: bool | None = None) -> list[str]:
    return [Path(h.path).name for h in results.hits if weak is None or h.weak == weak]


def assert_strong_then_weak(results: SearchResults) -> None:
    flags = [h.weak for h in results.hits]
    assert flags == sorted(flags), "a weaker match came before a strong one"
    assert results.total == sum(not f for f in flags) or results.total > len(results.hits)


@pytest.mark.parametrize("mode", ["fused", "keyword"])
def test_a_document_far_below_the_best_is_a_weaker_match(library, mode):
    results = library.search_results("honey bees nectar", k=10, mode=mode)
    assert names(results, weak=False) == ["bees.txt"]
    assert "wasps.txt" in names(results, weak=True)  # one "honey" of three words
    assert (results.total, results.weak_total) == (1, len(names(results, weak=True)))
    assert results.languages == {"en": 1}  # the facet counts the strong matches
    assert_strong_then_weak(results)


@pytest.mark.parametrize("query", ["honey bees nectar", "FA-2024-4050", "invoice unpaid amount", "honey"])
@pytest.mark.parametrize("mode", ["fused", "dense", "keyword"])
def test_strong_and_weak_together_are_every_match(library, query, mode):
    """The weak band only splits what the floor kept: nothing is lost or counted twice."""
    split = library.search_results(query, k=100, mode=mode)
    whole = library.search_results(query, k=100, mode=mode, config=EVERYTHING_STRONG)
    assert whole.weak_total == 0 and not any(h.weak for h in whole.hits)
    assert split.total + split.weak_total == whole.total
    assert names(split) == names(whole)  # the same order: weak ones are the tail
    assert_strong_then_weak(split)


def test_an_identifier_is_strong_and_its_near_identical_neighbours_weak(library, tmp_path):
    number = "FA-2024-4050"
    expected = next(p.name for p in (tmp_path / "invoices").iterdir() if number in p.read_text())
    results = library.search_results(number, k=10)
    assert names(results, weak=False) == [expected]
    assert results.weak_total >= 1 and all(h.weak for h in results.hits[1:])


@pytest.mark.parametrize("mode", ["fused", "dense"])
def test_a_nonsense_query_finds_no_strong_match(library, mode):
    results = library.search_results("qwzx vlorp bnarf", k=10, mode=mode)
    assert results.total == 0 and results.languages == {}
    assert all(h.weak for h in results.hits) and results.weak_total == len(results.hits)
    assert library.search_results("qwzx vlorp bnarf", k=10, mode="keyword").hits == ()


def test_a_real_question_whose_words_the_folder_lacks_is_not_nonsense(library):
    """Its language is known: a cross-lingual question shares no word with its answer."""
    results = library.search_results("where could somebody sleep overnight comfortably", k=10)
    assert results.total >= 1 and not results.hits[0].weak


def test_unanswered_needs_all_three_signs(library):
    from engine.query import parse_query
    from engine.search import unanswered_query

    nonsense = parse_query("qwzx vlorp")
    assert unanswered_query(nonsense, words_found=False, language=None)
    assert not unanswered_query(nonsense, words_found=True, language=None)
    assert not unanswered_query(nonsense, words_found=False, language="en")
    assert not unanswered_query(parse_query("lang:de"), words_found=False, language=None)
    off = SearchConfig(weak_when_unanswered=False)
    assert library.search_results("qwzx vlorp bnarf", k=10, mode="dense", config=off).total >= 1


def test_weak_below_zero_keeps_every_match_strong(library):
    results = library.search_results("honey", k=10, config=SearchConfig(weak_below=0.0))
    assert results.weak_total == 0 and results.total == len(results.hits) >= 2
