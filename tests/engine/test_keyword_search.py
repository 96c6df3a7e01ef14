"""Keyword and fused search end to end with a model-free encoder, on SQLite and PostgreSQL:
identifiers among near-identical documents, CJK, accents, phrases, exclusions, filters
inside retrieval with counts over every match, and the keyword index kept in step."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
from helpers import WordEncoder
from search_corpora import write_invoices
from sqlalchemy import select

from engine.config import data_paths
from engine.errors import InputError, UnknownFilterError
from engine.highlight import match_spans
from engine.library import Library
from engine.store.schema import Passage

PG_URL = os.environ.get("BABELFIND_TEST_PG_URL")


@pytest.fixture
def open_library(babelfind_home, db_url):
    opened = []

    def open_() -> Library:
        library = Library.open(data_paths(babelfind_home), db_url=db_url, encoder=WordEncoder())
        opened.append(library)
        return library

    yield open_
    for library in opened:
        library.close()


def index(library: Library, *paths: Path) -> None:
    *_, last = library.index_paths(list(paths))
    assert not last.summary.skipped


def names(hits) -> list[str]:
    return [Path(h.path).name for h in hits]


def write(root: Path, docs: dict[str, str]) -> Path:
    for name, body in docs.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body, encoding="utf-8")
    return root


def keyword_ids_agree(library: Library) -> bool:
    with library.store.session() as s:
        stored = sorted(s.scalars(select(Passage.id)))
    return library.live.keywords.ids().tolist() == stored


def test_an_invoice_number_finds_its_reminder_first_among_240(open_library, tmp_path):
    library = open_library()
    files = write_invoices(tmp_path / "invoices")
    index(library, tmp_path / "invoices")
    numbers = list(files)[::8]  # 30 of them
    for number in numbers:
        assert library.search(number, k=3)[0].path == str(files[number]), number
        mixed = library.search(f"Rechnung {number}", k=3)
        assert mixed[0].path == str(files[number]), number
    assert library.search(numbers[0], k=1, mode="keyword")[0].matched_by == "keywords"
    assert library.search(numbers[0], k=1)[0].matched_by in ("keywords", "both")


def test_identifier_parts_match_and_modes_differ(open_library, tmp_path):
    library = open_library()
    index(library, write(tmp_path / "c", {
        "crash.txt": "The handler ffi_prep_closure_loc failed with 0x800f0922 on the Z6III camera.",
        "other.txt": "A closure in the garden, a prep kitchen and a camera bag.",
    }))
    assert names(library.search("ffi_prep_closure_loc", k=2, mode="keyword")) == ["crash.txt"]
    assert names(library.search("0x800f0922", k=2, mode="keyword")) == ["crash.txt"]
    assert names(library.search("Z6III", k=2, mode="keyword")) == ["crash.txt"]
    assert "crash.txt" in names(library.search("closure", k=2, mode="keyword"))
    with pytest.raises(InputError):
        library.search("closure", mode="sparse")


def test_an_identifier_inside_a_sentence_outranks_a_near_miss_in_meaning(open_library, tmp_path):
    """The question is English, so it is a sentence; it names an identifier, so the
    passage holding that identifier wins over the one that shares the question's other words."""
    library = open_library()
    index(library, write(tmp_path / "c", {
        "crash.txt": "The handler ffi_prep_closure_loc returned an error on the camera.",
        "near.txt": "Why does the closure fail when it is prepared? Why does the closure fail so often?",
        # "fail" and "closure" are common words here, as in any real folder; the identifier is not
        **{f"note{i}.txt": f"Note {i}: pumps fail in winter; the road closure lasts a week." for i in range(8)},
    }))
    hits = library.search("why does ffi_prep_closure_loc fail", k=2)
    assert names(hits)[0] == "crash.txt", [(h.path, h.score) for h in hits]
    assert names(library.search("why does ffi_prep_closure_loc fail", k=2, mode="dense"))[0] == "near.txt"


def test_cjk_and_accent_insensitive_keyword_matches(open_library, tmp_path):
    library = open_library()
    index(library, write(tmp_path / "c", {
        "beijing_zh.txt": "我们明年夏天去北京旅游，参观故宫和长城。",
        "shanghai_zh.txt": "上海是一个很大的港口城市，外滩很有名。",
        "groesse_de.txt": "Die Größe des Cafés überrascht jeden Besucher der Stadt.",
        "plain_en.txt": "The size of the room surprised every visitor to the city.",
    }))
    assert names(library.search("北京", k=3, mode="keyword")) == ["beijing_zh.txt"]
    assert names(library.search("故宫", k=3)) [0] == "beijing_zh.txt"
    assert names(library.search("GROSSE cafes", k=3, mode="keyword"))[0] == "groesse_de.txt"
    assert names(library.search("cafe", k=3, mode="keyword")) == []  # whole words: "cafés" != "cafe"
    assert names(library.search("Cafés", k=3, mode="keyword")) == ["groesse_de.txt"]
    assert names(library.search("grösse", k=3, mode="keyword")) == ["groesse_de.txt"]


def test_quoted_phrase_and_exclusion(open_library, tmp_path):
    library = open_library()
    index(library, write(tmp_path / "c", {
        "red_wine.txt": "We served a red wine from Rioja with the cheese.",
        "wine_red.txt": "The wine list was long; the red door of the bar stood open.",
        "beer.txt": "We served a dark beer with the cheese.",
    }))
    assert names(library.search('"red wine"', k=5)) == ["red_wine.txt"]
    assert set(names(library.search("red wine", k=5))) >= {"red_wine.txt", "wine_red.txt"}
    served = names(library.search("served cheese -wine", k=5))
    assert served == ["beer.txt"]
    assert "red_wine.txt" not in names(library.search('wine -"red wine"', k=5))


def test_command_options_in_a_query_are_searched_for_not_left_out(open_library, tmp_path):
    library = open_library()
    index(library, write(tmp_path / "c", {
        "git.txt": "Set your name once for every repository: git config --global user.name.",
        "climate.txt": "Global temperatures rose again; the climate report has a global summary.",
        "rm.txt": "To delete a folder and everything in it, run rm -rf with care.",
    }))
    assert names(library.search("git config --global", k=5))[0] == "git.txt"
    assert names(library.search("rm -rf", k=5))[0] == "rm.txt"
    assert "climate.txt" not in names(library.search("temperatures -global", k=5))


def test_a_dash_word_the_library_writes_as_an_option_is_searched_for(open_library, tmp_path):
    """"cannot find -lfoo" pasted from a linker's message must find the page that explains
    it, not leave it out; a word the library writes plain ("-car") stays an exclusion,
    and every exclusion says what it left out."""
    library = open_library()
    index(library, write(tmp_path / "c", {
        "linker.txt": "Why do I get ld: cannot find -lfoo? The library package lacks its libfoo.so link.",
        "cars.txt": "A jaguar car is fast; the car dealer sold the jaguar car.",
        "cats.txt": "The jaguar is a big cat of the rainforest.",
        "gcc.txt": "Build with gcc -Wall -Werror and read every warning.",
        "gpl.txt": "This licence is the GPL, version 2 or later: the GPL lets you share the program.",
    }))
    results = library.search_results("why do I get cannot find -lfoo when linking", k=5)
    assert names(results.hits)[0] == "linker.txt"
    assert "-lfoo" in results.query.words and results.query.excluded == () and results.left_out == ()
    assert results.query.words.index("-lfoo") == results.query.words.index("find") + 1  # where it was typed
    jaguar = library.search_results("jaguar -car", k=5)
    assert "cars.txt" not in names(jaguar.hits) and jaguar.left_out == (("car", 1),)
    # a cluster without a vowel is a flag (`tar -xzf`) unless the library writes it plain
    licences = library.search_results("licence -gpl", k=5)
    assert licences.query.excluded == ("gpl",) and licences.left_out == (("gpl", 1),)
    assert "gpl.txt" not in names(licences.hits)
    assert "-xzf" in library.search_results("tar -xzf backup", k=5).query.words  # nowhere: a flag
    # a word at the start is never an option; a phrase is always an exclusion
    assert library.search_results("-lfoo jaguar", k=5).left_out == (("lfoo", 1),)
    assert library.search_results('jaguar -"jaguar car"', k=5).left_out == (("jaguar car", 1),)
    # nothing left: the exclusion is still reported
    nothing = library.search_results("big cat -jaguar", k=5, path_prefix=str(tmp_path / "c" / "cats.txt"))
    assert nothing.hits == () and nothing.left_out == (("jaguar", 1),)  # in that folder, not cars.txt


def test_filters_apply_inside_retrieval_with_counts_over_every_match(open_library, tmp_path):
    library = open_library()
    root = tmp_path / "c"
    docs = {}
    for i in range(12):
        docs[f"de/bahn_{i}.txt"] = f"Der Zug Nummer {i} fährt morgens durch die Berge nach Innsbruck und zurück."
        docs[f"en/train_{i}.md"] = f"The train number {i} goes through the mountains to Innsbruck and back."
    write(root, docs)
    old = time.mktime((2020, 5, 1, 12, 0, 0, 0, 0, -1))
    for i in range(4):
        os.utime(root / f"en/train_{i}.md", (old, old))
    index(library, root)
    everything = library.search_results("Innsbruck", k=3)
    assert everything.total == 24 and len(everything.hits) == 3
    assert everything.languages == {"de": 12, "en": 12}
    german = library.search_results("Innsbruck lang:de", k=3)
    assert german.total == 12 and {h.language for h in german.hits} == {"de"}
    assert library.search_results("Innsbruck type:md", k=3).total == 12
    assert library.search_results(f"Innsbruck path:{root / 'de'}", k=50).total == 12
    assert library.search_results("Innsbruck before:2021-01-01", k=50).total == 4
    assert library.search_results("Innsbruck after:2021", k=50).total == 20
    assert library.search_results("Innsbruck -Zug", k=50).total == 12
    assert library.search("Innsbruck", k=50, languages=["en"], file_types=["md"])[0].file_type == "md"
    with pytest.raises(UnknownFilterError):
        library.search("Innsbruck colour:red")


def test_nonsense_finds_few_and_a_filter_with_no_match_finds_none(open_library, tmp_path):
    library = open_library()
    write_invoices(tmp_path / "invoices", n=40)
    index(library, tmp_path / "invoices")
    assert library.search_results("qqxv zzkrt", k=50).total <= 3
    assert library.search_results("invoice lang:ja", k=50).total == 0


def test_removed_documents_leave_the_keyword_index(open_library, tmp_path):
    library = open_library()
    root = write(tmp_path / "c", {"a.txt": "Alpha Zebrafish notes.", "b.txt": "Beta notes."})
    index(library, root)
    assert names(library.search("zebrafish", mode="keyword")) == ["a.txt"]
    (root / "a.txt").unlink()
    index(library, root)
    assert library.search("zebrafish", mode="keyword") == []
    assert keyword_ids_agree(library)
    library.forget(root)
    assert len(library.live.keywords) == 0


def test_a_stale_or_damaged_keyword_file_is_repaired_on_open(open_library, babelfind_home, tmp_path):
    library = open_library()
    index(library, write(tmp_path / "c", {"a.txt": "Alpha Zebrafish notes.", "b.txt": "Beta notes."}))
    path = library.live.keywords.path
    library.close()
    with sqlite3.connect(path) as db:  # as if killed between the database commit and this file
        db.execute("DELETE FROM passages")
        db.execute("UPDATE meta SET value = value - 1 WHERE key = 'version'")
    reopened = open_library()
    assert keyword_ids_agree(reopened) and names(reopened.search("zebrafish", mode="keyword")) == ["a.txt"]
    reopened.close()
    path.write_bytes(b"not a database" * 100)
    again = open_library()
    assert keyword_ids_agree(again) and len(again.live.keywords) > 0


def test_a_question_finds_and_marks_other_forms_of_its_words(open_library, tmp_path):
    library = open_library()
    others = {f"note{i}.txt": f"Note {i} on the weather of week {i}." for i in range(8)}  # idf needs a few
    index(library, write(tmp_path / "c", {
        "pic.txt": "Pic draws box-and-arrow diagrams in troff documents.",
        "tbl.txt": "Tbl formats tables of numbers in troff documents.", **others}))
    results = library.search_results("drawing boxes with arrows", 5, mode="keyword")
    assert names(results.hits) == ["pic.txt"] and results.language == "en"
    best = results.hits[0].best
    marked = match_spans(best.text, results.query.highlight.stemmed(results.language))
    assert [best.text[a:b] for a, b in marked] == ["draws", "box", "arrow"]
    assert names(library.search_results('"boxes"', 5, mode="keyword").hits) == []  # a phrase: as written
