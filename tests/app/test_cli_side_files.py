"""The command line over damaged side files: searches answer, one note line says what was
rebuilt, and `check` reports the keyword index (issue 24: a damaged keyword index made
every search exit 1 with a traceback while `check` said all was well)."""

from __future__ import annotations


import pytest

from app.cli import main
from engine.config import data_paths


@pytest.fixture
def indexed_home(home_with_tiny, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(60):
        (corpus / f"note{i}.txt").write_text(f"Note {i} about walrus{i} and the puffin colony {i * 7}. " * 20,
                                             encoding="utf-8")
    assert main(["index", str(corpus)]) == 0
    return home_with_tiny


def keyword_file(home):
    return data_paths(home).indexes / "keywords.sqlite"


def search_lines(capsys, query="walrus17"):
    capsys.readouterr()
    code = main(["search", query, "--mode", "keyword", "-k", "1"])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_damaged_keyword_index_is_rebuilt_and_the_search_answers(indexed_home, capsys):
    path = keyword_file(indexed_home)
    with open(path, "r+b") as f:
        f.seek(4096)
        f.write(b"\xff" * (path.stat().st_size - 4096))
    code, out, err = search_lines(capsys)
    assert code == 0, err
    assert "note17.txt" in out
    notes = err.strip().splitlines()
    assert len(notes) == 1 and notes[0].startswith("babelfind: note: the keyword index"), err
    assert search_lines(capsys)[2] == ""  # healed: nothing more to say


def test_a_folder_in_place_of_the_keyword_index(indexed_home, capsys):
    path = keyword_file(indexed_home)
    for file in path.parent.glob("keywords.sqlite*"):
        file.unlink()
    path.mkdir()
    capsys.readouterr()
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "keywords.sqlite is not a file" in out
    code, out, err = search_lines(capsys)
    assert code == 0 and "note17.txt" in out, err
    assert "moved it to" in err and err.count("\n") == 1, err


def test_check_reports_damage_inside_the_keyword_index(indexed_home, capsys):
    path = keyword_file(indexed_home)
    with open(path, "r+b") as f:
        f.seek(path.stat().st_size // 2)
        f.write(b"\xff" * 8192)
    capsys.readouterr()
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "keyword index" in out and "is damaged" in out, out
