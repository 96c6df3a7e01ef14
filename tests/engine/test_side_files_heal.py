"""The files beside the database are caches that heal: a keyword index, FAISS file or
hubness file that fails at open, search or update is rebuilt from the database with one
repair line, and every search answers as it did before the damage."""

from __future__ import annotations

import logging
import random
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from helpers import WordEncoder

from engine.config import data_paths
from engine.index.keyword_index import inspect
from engine.index.live_index import LiveIndex
from engine.integrity import check_home
from engine.library import Library
from engine.repairs import REPAIR_LOGGER

WORDS = "honey bees glacier river bread mountain valley zebra kestrel falcon owl".split()
QUERIES = ("walrus17", "walrus250", "honey12 zebra3", "kestrel40")


def write_corpus(folder: Path, count: int = 300, start: int = 0) -> Path:
    """`count` documents of 200 seeded words each; document i alone holds "walrusI"."""
    rng = random.Random(start)
    folder.mkdir(exist_ok=True)
    for i in range(start, start + count):
        words = " ".join(rng.choice(WORDS) + str(rng.randint(0, 500)) for _ in range(200))
        (folder / f"d{i}.txt").write_text(f"{words} walrus{i}.", encoding="utf-8")
    return folder


def open_library(home: Path) -> Library:
    return Library.open(data_paths(home), encoder=WordEncoder())


def answers(library: Library) -> dict[str, list[str]]:
    return {q: [Path(h.path).name for h in library.search(q, k=5, mode="keyword")] for q in QUERIES}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A home that indexed the corpus once, for each test to copy."""
    home, corpus = tmp_path_factory.mktemp("template-home"), tmp_path_factory.mktemp("corpus")
    write_corpus(corpus)
    library = open_library(home)
    list(library.index_paths([corpus]))
    expected = answers(library)
    library.close()
    assert expected["walrus17"][0] == "d17.txt"
    return home, corpus, expected


@pytest.fixture
def indexed(template, babelfind_home):
    """(home, corpus, the keyword answers of the undamaged library); the library is closed."""
    home, corpus, expected = template
    shutil.copytree(home, babelfind_home, dirs_exist_ok=True)
    return babelfind_home, corpus, expected


def keyword_file(home: Path) -> Path:
    return data_paths(home).indexes / "keywords.sqlite"


def damage_all_but_the_header(path: Path) -> None:
    """Every page after the first overwritten with 0xFF, in place (the same inode)."""
    data = path.read_bytes()
    with open(path, "r+b") as f:
        f.seek(4096)
        f.write(b"\xff" * (len(data) - 4096))


def damage_inside(path: Path) -> None:
    """8 KiB of 0xFF in the middle of the file, as the attack run wrote it."""
    with open(path, "r+b") as f:
        f.seek(path.stat().st_size // 2)
        f.write(b"\xff" * 8192)


def answers_on_open(home: Path, caplog) -> dict[str, list[str]]:
    """The keyword answers of the library opened afresh, its log records kept in caplog."""
    with caplog.at_level(logging.WARNING):
        library = open_library(home)
        try:
            return answers(library)
        finally:
            library.close()


def repair_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == REPAIR_LOGGER]


@pytest.mark.parametrize("damage", [damage_inside, damage_all_but_the_header])
def test_a_keyword_index_damaged_while_closed_is_rebuilt(indexed, damage, caplog):
    home, _corpus, expected = indexed
    damage(keyword_file(home))
    assert answers_on_open(home, caplog) == expected
    assert len(repair_lines(caplog)) <= 1  # damage the pages read miss costs nothing


def test_damage_found_by_a_search_is_repaired_and_the_search_answered(indexed, caplog):
    home, _corpus, expected = indexed
    library = open_library(home)
    try:
        damage_all_but_the_header(keyword_file(home))  # after open: found by the first search
        with caplog.at_level(logging.WARNING):
            assert answers(library) == expected
        lines = repair_lines(caplog)
        assert len(lines) == 1 and "keyword index" in lines[0] and "rebuilding it from the database" in lines[0]
        assert check_home(data_paths(home)).ok
    finally:
        library.close()


def test_damage_found_by_an_update_is_repaired_and_nothing_lost(indexed, tmp_path, caplog):
    home, _corpus, _expected = indexed
    library = open_library(home)
    try:
        damage_all_but_the_header(keyword_file(home))
        more = write_corpus(tmp_path / "more", count=20, start=300)
        with caplog.at_level(logging.WARNING):
            summary = list(library.index_paths([more]))[-1].summary
        assert summary.indexed == 20
        assert len(repair_lines(caplog)) == 1
        held = inspect(keyword_file(home))[1]
        assert np.array_equal(held, np.sort(library.live.index.ids()))  # every passage, old and new
        for i in (17, 250, 310):
            assert Path(library.search(f"walrus{i}", k=1, mode="keyword")[0].path).name == f"d{i}.txt"
    finally:
        library.close()


def test_a_folder_in_place_of_the_keyword_index_is_moved_aside(indexed, caplog):
    home, _corpus, expected = indexed
    path = keyword_file(home)
    for companion in path.parent.glob("keywords.sqlite*"):
        companion.unlink()
    path.mkdir()
    (path / "someone's file").write_text("kept", encoding="utf-8")
    report = check_home(data_paths(home))
    assert any("keywords.sqlite is not a file" in n for n in report.notes), report.notes
    assert answers_on_open(home, caplog) == expected
    assert path.is_file()
    moved = [p for p in path.parent.iterdir() if p.name.startswith("keywords.sqlite.moved-")]
    assert len(moved) == 1 and (moved[0] / "someone's file").read_text(encoding="utf-8") == "kept"
    assert any("moved it to" in line for line in repair_lines(caplog))


def test_check_runs_the_full_text_integrity_check(indexed):
    home, _corpus, _expected = indexed
    assert check_home(data_paths(home)).ok
    damage_inside(keyword_file(home))
    report = check_home(data_paths(home))
    assert report.ok  # the database is whole; the cache is rebuilt on the next open
    assert any("keyword index" in n and "damaged" in n for n in report.notes), report.notes
    assert inspect(keyword_file(home))[0].startswith("is damaged")  # check repaired nothing


def test_check_notes_a_keyword_index_out_of_step(indexed):
    home, _corpus, _expected = indexed
    with sqlite3.connect(keyword_file(home)) as db:
        db.execute("DELETE FROM passages WHERE rowid IN (SELECT rowid FROM passages LIMIT 3)")
    report = check_home(data_paths(home))
    assert any("keyword index lacks 3 passage(s) (1, 2, 3)" in n for n in report.notes), report.notes


@pytest.mark.parametrize("side_file", ["faiss", "hubness"])
def test_a_folder_in_place_of_a_vector_side_file_is_moved_aside(indexed, side_file, caplog):
    home, _corpus, expected = indexed
    library = open_library(home)
    library.search("honey")  # measures and saves the hubness penalties
    generation = library.live.generation.id
    library.close()
    folder = data_paths(home).indexes
    path = (LiveIndex.file_for if side_file == "faiss" else LiveIndex.hubness_file_for)(folder, generation)
    path.unlink()
    path.mkdir()
    with caplog.at_level(logging.WARNING):
        library = open_library(home)
        try:
            assert answers(library) == expected
            library.search("honey")
            library.live.save()
        finally:
            library.close()
    assert path.is_file()
    assert any("moved it to" in line for line in repair_lines(caplog))


def test_a_damaged_vector_file_is_rebuilt_with_one_line(indexed, caplog):
    home, _corpus, expected = indexed
    library = open_library(home)
    path = LiveIndex.file_for(data_paths(home).indexes, library.live.generation.id)
    library.close()
    damage_inside(path)
    assert answers_on_open(home, caplog) == expected
    lines = repair_lines(caplog)
    assert len(lines) == 1 and "vector index" in lines[0] and "rebuilding it" in lines[0], lines
