"""The dev sets' questions agree with the sets' design, and the benchmark scores acceptable
answers as one (bench/devsets_debian.py, bench/bench_search.py; no documents needed)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import devsets_debian as sets  # noqa: E402
from bench_search import ranks, shown_rank  # noqa: E402
from questions_english_doc import ENGLISH_DOC_QUESTIONS  # noqa: E402
from questions_faq4 import FAQ4_QUESTIONS  # noqa: E402
from questions_manual5 import MANUAL5_QUESTIONS  # noqa: E402
from questions_no_answer import (ENGLISH_DOC_NO_ANSWER, FAQ4_NO_ANSWER, MANUAL5_NO_ANSWER,  # noqa: E402
                                 REFERENCE6_NO_ANSWER, XLING_NO_ANSWER)
from questions_reference6 import REFERENCE6_QUESTIONS  # noqa: E402
from questions_xling import XLING_QUESTIONS  # noqa: E402


def test_each_handbook_section_is_in_one_language_only():
    sections = [s for group in sets.HANDBOOK_SECTIONS.values() for s in group]
    assert len(sections) == len(set(sections))
    chapters = [c for group in sets.MANUAL5_CHAPTERS.values() for c in group]
    assert len(chapters) == len(set(chapters)) == 11  # index, 9 chapters, appendix A
    assert set(sets.MANUAL5_CHAPTERS) == {"de", "fr", "it", "es", "ru"}


def test_xling_questions_cross_languages_against_same_language_distractors():
    documents = sets.xling_documents()
    assert len(XLING_QUESTIONS) >= 40
    question_languages = Counter(language for language, _, _ in XLING_QUESTIONS)
    assert len([lang for lang in question_languages if lang != "en"]) >= 3
    for language, question, expected in XLING_QUESTIONS:
        assert expected in documents, question
        assert documents[expected] != language, question
    for language in question_languages:  # the same-language pull is there for every question language
        assert sum(1 for doc_language in documents.values() if doc_language == language) >= 3, language


def test_manual5_and_english_doc_answers_are_documents_of_the_set():
    chapters = sets.manual5_documents()
    assert len(MANUAL5_QUESTIONS) >= 30
    assert {kind for kind, *_ in MANUAL5_QUESTIONS} == {"english", "native", "command"}
    for kind, language, query, *answers in MANUAL5_QUESTIONS:
        assert answers and all(a in chapters for a in answers), query
        assert (language is None) == (kind == "command"), query
    assert len(ENGLISH_DOC_QUESTIONS) >= 25
    assert len({q for q, *_ in ENGLISH_DOC_QUESTIONS}) == len(ENGLISH_DOC_QUESTIONS)
    assert len(ENGLISH_DOC_NO_ANSWER) >= 25 and len(MANUAL5_NO_ANSWER) >= 25


def test_faq4_asks_across_languages_about_chapters_each_in_one_language():
    chapters = sets.faq4_documents()
    assert len(chapters) == len(sets.FAQ4_CHAPTERS) == 15
    assert set(chapters.values()) == set(sets.FAQ4_LANGUAGES)
    for language, question, expected in FAQ4_QUESTIONS:
        assert chapters[expected] != language, question
    assert len({language for language, _, _ in FAQ4_QUESTIONS}) >= 5
    assert sets.no_answer_questions("faq4") == FAQ4_NO_ANSWER and len(set(FAQ4_NO_ANSWER)) == 10


def test_reference6_asks_across_languages_about_chapters_each_in_one_language():
    chapters = sets.reference6_documents()
    assert len(chapters) == 8 and len(set(chapters.values())) == 6
    for language, question, expected in REFERENCE6_QUESTIONS:
        assert expected in chapters and chapters[expected] != language, question
    assert len({language for language, _, _ in REFERENCE6_QUESTIONS}) == 6
    assert {expected for _, _, expected in REFERENCE6_QUESTIONS} == set(chapters)  # every chapter is asked about
    assert sets.no_answer_questions("reference6") == REFERENCE6_NO_ANSWER and len(set(REFERENCE6_NO_ANSWER)) == 10


def test_xling_has_unanswerable_questions_in_several_languages():
    assert len(XLING_NO_ANSWER) >= 20 and len(set(XLING_NO_ANSWER)) == len(XLING_NO_ANSWER)
    assert sets.no_answer_questions("xling") == XLING_NO_ANSWER
    # asked in the handbook's languages, Russian among them, not only in English
    scripts = Counter("cyrillic" if any("\u0400" <= c <= "\u04ff" for c in q) else "latin" for q in XLING_NO_ANSWER)
    assert scripts["cyrillic"] >= 2 and scripts["latin"] >= 10


def test_any_acceptable_document_counts_with_ties_against_it():
    paths = ["a", "a", "b", "c", "d"]
    scores = np.array([[0.1, 0.2, 0.9, 0.5, 0.5],   # b first
                       [0.9, 0.1, 0.3, 0.5, 0.5]])  # a first; c and d tie
    assert ranks(scores, paths, [["c", "b"], ["d"]]) == [1, 3]
    assert ranks(scores, paths, [["missing"], ["c", "d"]]) == [None, 2]  # c and d both answer: no tie
    assert shown_rank(["x", "gcc/README", "cpp/README"], {"expected": "cpp/README",
                                                          "acceptable": ["cpp/README", "gcc/README"]}) == 2
    assert shown_rank(["x"], {"expected": "y"}) is None


def test_one_check_names_every_doc_file_the_chosen_sets_copy():
    needed = sets.doc_files_needed(["english-doc", "manual5", "faq4"])
    assert set(sets.ENGLISH_FILES) | set(sets.MANUAL5_DISTRACTORS) | set(sets.MANUAL5_PACKAGE_FILES) <= set(needed)
    assert len(needed) == len(set(needed))  # a file two sets share is checked once
    assert sets.doc_files_needed(["mixed", "invoices", "stsb", "xling"]) == ()
