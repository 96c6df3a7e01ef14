"""`babelfind check` and the lost-database guard: damage is found and named, never
papered over by recreating an empty library."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import WordEncoder
from sqlalchemy import delete

from app.cli import main
from engine.config import data_paths
from engine.errors import LibraryDamagedError
from engine.index.live_index import LiveIndex
from engine.integrity import check_home
from engine.library import Library
from engine.store.schema import Vector

PAGE = 4096


@pytest.fixture
def indexed_home(babelfind_home, tmp_path):
    """A home with 30 small documents indexed (several database pages)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        (docs / f"d{i:02d}.txt").write_text(f"Document {i} talks about thing{i}. " * 40, encoding="utf-8")
    library = Library.open(data_paths(babelfind_home), encoder=WordEncoder())
    list(library.index_paths([docs]))
    library.close()
    return babelfind_home


def test_a_sound_library_checks_ok(indexed_home, capsys):
    report = check_home(data_paths(indexed_home))
    assert report.ok and report.problems == []
    assert main(["check"]) == 0
    assert "ok: the database is sound" in capsys.readouterr().out
    assert main(["check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) | {"database": ""} == {
        "ok": True, "problems": [], "notes": [], "database": ""}


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_a_lost_database_refuses_to_start_and_keeps_the_index(indexed_home, damage, capsys):
    paths = data_paths(indexed_home)
    db = indexed_home / "babelfind.db"
    index_file = next(paths.indexes.glob("generation-*.faiss"))
    before = index_file.read_bytes()
    db.write_bytes(b"") if damage == "truncate" else db.unlink()
    with pytest.raises(LibraryDamagedError, match="missing or empty.*Restore the database"):
        Library.open(paths, encoder=WordEncoder())
    assert index_file.read_bytes() == before  # not overwritten with an empty index
    assert db.stat().st_size == 0 if damage == "truncate" else not db.exists()
    assert main(["check"]) == 1
    assert "missing or empty" in capsys.readouterr().out


def test_a_fresh_home_and_an_emptied_index_folder_still_open(babelfind_home):
    paths = data_paths(babelfind_home)
    Library.open(paths, encoder=WordEncoder()).close()  # creates an empty index file
    (babelfind_home / "babelfind.db").unlink()
    Library.open(paths, encoder=WordEncoder()).close()  # nothing was ever indexed: fine


def test_a_zeroed_page_is_reported(indexed_home, capsys):
    db = indexed_home / "babelfind.db"
    assert not (indexed_home / "babelfind.db-wal").exists()  # closed: all pages are in the file
    with open(db, "r+b") as f:
        f.seek(3 * PAGE)
        f.write(b"\0" * PAGE)
    report = check_home(data_paths(indexed_home))
    assert not report.ok and "database integrity" in report.problems[0]
    assert main(["check"]) == 1
    out, err = capsys.readouterr()
    assert "PROBLEM" in out and err.count("\n") == 1


def test_a_vector_file_lacking_passages_is_a_problem(indexed_home):
    """What two unlocked writers used to leave: a current-looking file missing ids."""
    paths = data_paths(indexed_home)
    library = Library.open(paths, encoder=WordEncoder())
    generation = library.live.generation
    dropped = np.sort(library.live.index.ids())[:3]
    library.live.index.remove(dropped)
    library.live.index.save(LiveIndex.file_for(paths.indexes, generation.id), generation=library.live.version)
    report = library.check()
    assert not report.ok
    assert any(f"lacks 3 ({', '.join(map(str, dropped))})" in p for p in report.problems)


def test_missing_stored_vectors_and_a_stale_file(indexed_home):
    paths = data_paths(indexed_home)
    library = Library.open(paths, encoder=WordEncoder())
    with library.store.session() as s:
        s.execute(delete(Vector).where(Vector.passage_id == 1))
    report = library.check()
    assert any("1 (1) passage(s) have no stored vector" in p for p in report.problems)
    index_file = LiveIndex.file_for(paths.indexes, library.live.generation.id)
    stale = library.live.version - 1
    library.live.index.save(index_file, generation=stale)
    notes = check_home(paths).notes
    assert any(f"holds version {stale}" in n for n in notes)
