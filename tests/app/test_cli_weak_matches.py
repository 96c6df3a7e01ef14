"""`babelfind search` prints the weaker matches under their own heading after the strong
ones, says how each result matched, and counts the two apart (model-free encoder)."""

from __future__ import annotations

import argparse
import json

import pytest
from helpers import WordEncoder, count_query_parses
from search_corpora import HONEY_DOCS

from app.cli import library_commands
from engine.config import data_paths
from engine.events import DocumentHit, PassageHit, SearchResults
from engine.library import Library
from engine.query import parse_query


@pytest.fixture
def cli_library(babelfind_home, tmp_path, monkeypatch):
    """`babelfind search` over a library on the hashed-words encoder."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in HONEY_DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    *_, finished = library.index_paths([docs])
    assert not finished.summary.skipped
    library.close()
    monkeypatch.setattr(library_commands, "open_library",
                        lambda args: Library.open(data_paths(babelfind_home), encoder=WordEncoder()))


def search(capsys, query: str, **options) -> str:
    args = argparse.Namespace(query=query, k=10, lang=None, path=None, file_types=None, mode="fused",
                              json=False, db=None)
    for name, value in options.items():
        setattr(args, name, value)
    assert library_commands.run_search(args) == 0
    return capsys.readouterr().out


def test_weaker_matches_come_under_their_heading(cli_library, capsys):
    lines = search(capsys, "honey bees nectar").splitlines()
    heading = lines.index("Weaker matches")
    strong, weak = lines[:heading], lines[heading + 1 :]
    assert "bees.txt" in strong[0] and "(keywords+meaning)" in strong[0]
    assert any("wasps.txt" in line and "(keywords)" in line for line in weak)
    assert not any("wasps.txt" in line for line in strong)
    assert lines[-1].startswith("1 matching document; ") and lines[-1].endswith(("weaker match", "weaker matches"))


def test_json_marks_the_weaker_matches(cli_library, capsys):
    hits = json.loads(search(capsys, "honey bees nectar", json=True))
    assert [h["weak"] for h in hits] == sorted(h["weak"] for h in hits) and hits[0]["weak"] is False
    assert any(h["weak"] for h in hits) and {h["matched_by"] for h in hits} <= {"keywords", "meaning", "both"}


def test_only_strong_matches_print_no_heading(cli_library, capsys):
    out = search(capsys, "Vladivostok steppe")
    assert "Weaker matches" not in out and "trains.txt" in out.splitlines()[0]


def hit(path: str, weak: bool) -> DocumentHit:
    passage = PassageHit(1, 0.5, "text", 0, 4, None, "en", "text")
    return DocumentHit(path, 0.5, "en", "txt", (passage,), weak=weak)


@pytest.mark.parametrize("hits, total, weak_total, complete, expected", [
    ((False, False), 2, 0, True, "2 matching documents"),
    ((False,), 5, 0, True, "5 matching documents, 1 shown"),
    ((False, True), 1, 1, True, "1 matching document; 1 weaker match"),
    ((False, True), 1, 9, True, "1 matching document; 9 weaker matches, 1 shown"),
    ((True, True), 0, 2, False, "at least 0 matching documents; 2 weaker matches"),
])
def test_count_line(hits, total, weak_total, complete, expected):
    results = SearchResults(tuple(hit(f"/d/{i}.txt", w) for i, w in enumerate(hits)), total, {},
                            complete=complete, weak_total=weak_total)
    assert library_commands.count_line(results) == expected


def test_nothing_strong_says_so_before_the_weaker_matches(capsys, monkeypatch):
    results = SearchResults((hit("/d/a.txt", True),), 0, {}, weak_total=1,
                            query=parse_query("qwzx vlorp bnarf"))

    class Stub:
        def search_results(self, *args, **kwargs):
            return results

        def close(self):
            pass

    monkeypatch.setattr(library_commands, "library_exists", lambda args: True)
    monkeypatch.setattr(library_commands, "open_library", lambda args: Stub())
    lines = search(capsys, "qwzx vlorp bnarf").splitlines()
    assert lines[0] == "No strong matches. Weaker matches" and "/d/a.txt" in lines[1]


def test_a_name_nothing_mentions_is_said_with_the_weaker_matches(cli_library, capsys):
    lines = search(capsys, "honey bees and nectar on Kubernetes").splitlines()
    assert lines[0] == "No strong matches: nothing in the library mentions \u201cKubernetes\u201d. Weaker matches"
    assert "bees.txt" in lines[1]


def test_a_search_parses_its_query_once(cli_library, capsys, monkeypatch):
    parses = count_query_parses(monkeypatch)
    out = search(capsys, '"honey bees" nectar -wasps')
    assert "bees.txt" in out and "[nectar]" in out  # the marks come from that one parse
    assert parses == ['"honey bees" nectar -wasps']


class _Answering:
    """A library whose every search returns `results`."""

    def __init__(self, results: SearchResults):
        self.results = results

    def search_results(self, *args, **kwargs) -> SearchResults:
        return self.results

    def close(self) -> None:
        pass


def answer_with(monkeypatch, results: SearchResults) -> None:
    monkeypatch.setattr(library_commands, "open_library", lambda args: _Answering(results))


def test_one_heading_and_counts_that_add_up_whatever_order_the_hits_come_in(cli_library, capsys, monkeypatch):
    """Strong hits after weak ones (an engine ordering by score alone did that) still print
    strong first, under one heading, and the count line counts what is printed."""
    flags = (False, True, False, True, False)
    results = SearchResults(tuple(hit(f"/d/{i}.txt", w) for i, w in enumerate(flags)), 5, {"en": 5},
                            weak_total=4, query=parse_query("honey"))
    answer_with(monkeypatch, results)
    lines = search(capsys, "honey").splitlines()
    ranked = [line for line in lines if line[:3].strip().rstrip(".").isdigit()]
    assert [line.split("/d/")[1] for line in ranked] == ["0.txt", "2.txt", "4.txt", "1.txt", "3.txt"]
    assert lines.count("Weaker matches") == 1
    assert lines.index("Weaker matches") == lines.index(ranked[3]) - 1
    assert lines[-1] == "5 matching documents, 3 shown; 4 weaker matches, 2 shown"


def test_a_passage_in_another_language_than_its_document_is_labelled_with_both(cli_library, capsys, monkeypatch):
    passage = PassageHit(1, 0.5, "texte", 0, 5, None, "fr", "texte")
    results = SearchResults((DocumentHit("/d/guide.txt", 0.5, "en", "txt", (passage,)),), 1, {"fr": 1},
                            query=parse_query("texte"))
    answer_with(monkeypatch, results)
    assert "[fr, document en]" in search(capsys, "texte").splitlines()[0]


def test_an_exclusion_says_what_it_left_out(cli_library, capsys, tmp_path):
    lines = search(capsys, "insects that make honey -wasps").splitlines()
    assert lines[-1] == "Left out: 1 document holding \u201cwasps\u201d"
    assert not any("wasps.txt" in line for line in lines)
    # everything in the folder asked for left out: said all the same
    lines = search(capsys, "honey -honey", path=tmp_path / "docs" / "bees.txt").splitlines()
    assert lines == ["no results", "Left out: 1 document holding \u201choney\u201d"]  # bees.txt, not wasps.txt
