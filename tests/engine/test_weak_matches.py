"""Weaker matches: documents far below the best come back marked `weak`, after the strong
ones, and are counted apart from `total`; a query nothing answers well finds no strong match."""

from __future__ import annotations

import dataclasses
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


def test_a_name_the_library_never_mentions_leaves_its_language_without_a_strong_match(library, tmp_path):
    """An English passage that answered "honey bees on Kubernetes" would say Kubernetes; one in
    German may spell a name its own way, and keeps its strength."""
    german = tmp_path / "german"
    german.mkdir()
    (german / "bienen.txt").write_text("Die Honigbienen sammeln den Nektar der Blumen und machen daraus im "
                                       "Bienenstock den Honig, honey bees nectar, den die Imker im Sommer ernten.",
                                       encoding="utf-8")
    *_, finished = library.index_paths([german])
    assert finished.summary.indexed == 1
    named = library.search_results("honey bees and nectar on Kubernetes", k=10)
    assert "bees.txt" in names(named, weak=True)
    assert names(named, weak=False) == ["bienen.txt"]
    assert_strong_then_weak(named)
    known = library.search_results("honey bees and nectar in Vladivostok", k=10)  # a name the library holds
    assert "bees.txt" in names(known, weak=False)
    off = library.search_results("honey bees and nectar on Kubernetes", k=10,
                                 config=SearchConfig(weak_when_name_unknown=False))
    assert "bees.txt" in names(off, weak=False)


def test_a_latin_script_passage_writing_no_form_of_the_name_is_weaker_under_the_name_floor(library, tmp_path):
    """Under `name_absent_floor`, a passage in another language written in Latin letters that
    writes neither the name nor a respelling of it ("Kubernetis") speaks of something else; a
    passage in another script may transliterate the name and keeps its strength, as does
    every passage at or over the floor."""
    other = tmp_path / "other"
    other.mkdir()
    german = "Die Honigbienen sammeln den Nektar der Blumen und machen daraus im Bienenstock den Honig"
    (other / "bienen.txt").write_text(f"{german}, honey bees nectar.", encoding="utf-8")
    (other / "respelt.txt").write_text(f"{german} auf Kubernetis, honey bees nectar.", encoding="utf-8")
    (other / "pchely.txt").write_text("Пчёлы собирают нектар с цветов и делают мёд в улье, а пчеловоды "
                                      "собирают мёд в конце лета: honey bees.", encoding="utf-8")
    *_, finished = library.index_paths([other])
    assert finished.summary.indexed == 3
    query = "honey bees and nectar on Kubernetes"
    split_off = SearchConfig(weak_below=0.01)  # only the name rules make a match weaker here

    judged = library.search_results(query, k=10, config=dataclasses.replace(split_off, name_absent_floor=1.01))
    assert set(names(judged, weak=False)) == {"respelt.txt", "pchely.txt"}
    assert {"bees.txt", "bienen.txt"} <= set(names(judged, weak=True))
    assert_strong_then_weak(judged)
    near_enough = library.search_results(query, k=10, config=dataclasses.replace(split_off, name_absent_floor=-1.0))
    unjudged = library.search_results(query, k=10, config=split_off)
    for results in (near_enough, unjudged):
        assert {"bienen.txt", "respelt.txt", "pchely.txt"} <= set(names(results, weak=False))
        assert "bees.txt" in names(results, weak=True)  # its own language: an answer would name it


def test_weak_below_zero_keeps_every_match_strong(library):
    results = library.search_results("honey", k=10, config=SearchConfig(weak_below=0.0))
    assert results.weak_total == 0 and results.total == len(results.hits) >= 2


def test_a_query_no_passage_comes_near_has_no_strong_match(library):
    """The answer floor: under it, every match is weaker, unless a passage holds the
    query's words (a name, an identifier) with a good share."""
    never = SearchConfig(answer_floor=1.01)  # no cosine reaches it
    unanswerable = library.search_results("chocolate cake recipe with strawberries", config=never)
    assert unanswerable.total == 0 and unanswerable.weak_total > 0
    assert all(hit.weak for hit in unanswerable.hits)
    by_words = library.search_results("honey bees collect nectar", config=never)
    assert by_words.total >= 1 and by_words.hits[0].path.endswith("bees.txt") and not by_words.hits[0].weak
    no_floor = library.search_results("honey bees", config=SearchConfig(answer_floor=None))
    assert no_floor.total >= 1


def test_the_floor_is_the_one_measured_for_the_model_in_its_space(library):
    from engine.library import default_search_config
    from engine.search_config import ANSWER_FLOORS, ANSWER_MARGINS

    live = library.live
    config = default_search_config(live)
    assert config.answer_floor is None and config.answer_margin is None  # WordEncoder: nothing measured
    e5 = dataclasses.replace(live.generation, model_name="multilingual-e5-small")
    live.generation, saved = e5, live.generation
    try:
        config = default_search_config(live)
        assert config.answer_floor == ANSWER_FLOORS["multilingual-e5-small"]
        assert config.answer_margin == ANSWER_MARGINS["multilingual-e5-small"]
        live.means, means = None, live.means  # plain cosines: neither was measured there
        config = default_search_config(live)
        assert config.answer_floor is None and config.answer_margin is None
        live.means = means
    finally:
        live.generation = saved


def test_a_best_match_no_nearer_than_ordinary_sentences_come_is_not_strong(library):
    """The answer margin: the best passage must stand above what the library's reference
    sentences of the query's language reach, unless a passage holds the query's words."""
    from engine.search import reference_level

    library.search_results("honey bees")  # the reference queries are measured for a search
    level = reference_level(library.live, "en")
    assert level is not None and -1.0 <= level <= 1.0
    beyond_reach = SearchConfig(answer_margin=2.0)  # no cosine is 2 above anything
    unanswerable = library.search_results("chocolate cake recipe with strawberries", config=beyond_reach)
    assert unanswerable.total == 0 and unanswerable.weak_total > 0
    by_words = library.search_results("honey bees collect nectar", config=beyond_reach)
    assert by_words.total >= 1 and names(by_words, weak=False)[0] == "bees.txt"
    within_reach = SearchConfig(answer_margin=-2.0)
    assert library.search_results("honey bees", config=within_reach).total >= 1


def test_the_reference_level_is_measured_again_only_when_the_library_has_moved(library, tmp_path, monkeypatch):
    from engine.search import reference_level

    live = library.live
    library.search_results("honey bees")
    searches = []
    search = live.search
    monkeypatch.setattr(live, "search", lambda *a, **k: searches.append(a) or search(*a, **k))
    first = reference_level(live, "en")
    assert len(searches) == 1 and reference_level(live, "en") == first and len(searches) == 1
    assert reference_level(live, "de") is not None and len(searches) == 2  # per language
    more = tmp_path / "more"
    more.mkdir()
    for n in range(12):  # the library grows by far more than a tenth
        (more / f"note{n}.txt").write_text(f"Note {n} about the station and the train to the city. " * 3,
                                           encoding="utf-8")
    *_, finished = library.index_paths([more])
    assert finished.summary.indexed == 12
    reference_level(live, "en")
    assert len(searches) == 3


def test_a_measured_level_is_kept_for_the_next_process_unless_damaged_or_of_other_settings(
        library, babelfind_home, monkeypatch):
    import json

    from engine.index.reference_levels import levels_file_for
    from engine.search import _levels, reference_level

    no_level = SearchConfig(answer_margin=None)  # loads the corrections, measures no level
    library.search_results("honey bees", config=no_level)
    first = reference_level(library.live, "en")
    kept = levels_file_for(library.live.folder, library.live.generation.id)
    assert kept.is_file()
    library.close()

    again = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    again.search_results("honey bees", config=no_level)
    live, searches, search = again.live, [], again.live.search
    monkeypatch.setattr(live, "search", lambda *a, **k: searches.append(a) or search(*a, **k))
    assert reference_level(live, "en") == first and not searches  # read, not measured
    for spoil in (lambda: kept.write_text("{not json", encoding="utf-8"),
                  lambda: kept.write_text(json.dumps({**json.loads(kept.read_text("utf-8")), "stamp": "other"}),
                                          encoding="utf-8")):
        spoil()
        _levels.pop(live.hubness, None)  # as in a new process
        measured = len(searches)
        assert reference_level(live, "en") == pytest.approx(first) and len(searches) == measured + 1
        assert json.loads(kept.read_text("utf-8"))["levels"]["en"][1] == pytest.approx(first)  # kept again
    again.close()


TECH_DOCS = {
    "backup.txt": "Backing up your home folder. Copy your files to an external disk with rsync every week: "
                  "rsync -a --delete ~/ /media/backup/home/ keeps an exact copy, and a second disk kept "
                  "elsewhere protects against fire and theft.",
    "permissions.txt": "File permissions. Every file has an owner, a group and a mode; chmod changes the "
                       "mode, so that chmod 600 notes.txt lets only you read and write the file.",
    "printing.txt": "Printing with CUPS. Open http://localhost:631 to add a printer, then lp -d office "
                    "report.pdf prints the report on the office printer.",
    "sauvegarde_fr.txt": "Sauvegarder son dossier personnel. Copiez chaque semaine vos fichiers sur un disque "
                         "externe, et gardez un second disque ailleurs, à l'abri du feu et du vol.",
}


@pytest.mark.slow
def test_the_default_model_says_when_nothing_answers(tmp_path, babelfind_home, installed_models):
    from trainer.serving.default_models import DEFAULT_MODEL

    from engine.config import save_settings

    (babelfind_home / "models").symlink_to(installed_models, target_is_directory=True)
    save_settings(data_paths(babelfind_home), active_model=DEFAULT_MODEL, device="cpu")
    folder = tmp_path / "manuals"
    folder.mkdir()
    for name, text in TECH_DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    library = Library.open(data_paths(babelfind_home))
    try:
        list(library.index_paths([folder]))
        cake = library.search_results("chocolate cake recipe with strawberries")
        assert cake.total == 0 and cake.weak_total > 0, [h.best.explanation for h in cake.hits]
        backup = library.search_results("how do I keep a copy of my files in case my disk dies")
        assert backup.total >= 1 and Path(backup.hits[0].path).name in ("backup.txt", "sauvegarde_fr.txt")
        assert not backup.hits[0].weak
    finally:
        library.close()
