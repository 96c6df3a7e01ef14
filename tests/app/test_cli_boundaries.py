"""One line at every boundary (issue 24): what a user can type or hand over that used to
end in a Python traceback. Each case: an exit code and one `babelfind ...: error:` line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli import main
from train_helpers import tiny_training_inputs


def one_error_line(capsys, argv, code=1) -> str:
    capsys.readouterr()
    assert main([str(a) for a in argv]) == code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()  # what a command says it is doing may come first
    errors = [line for line in lines if "error: " in line]
    assert errors == lines[-1:] and errors[0].startswith("babelfind"), err
    assert "Traceback" not in out + err
    return errors[0]


@pytest.fixture
def indexed(home_with_tiny, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "walrus.txt").write_text("The walrus rests on the ice floe.", encoding="utf-8")
    (corpus / "puffin.txt").write_text("The puffin dives for sand eels.", encoding="utf-8")
    assert main(["index", str(corpus)]) == 0
    return corpus


def test_a_query_starting_with_a_dash_is_a_query(indexed, capsys):
    capsys.readouterr()
    assert main(["search", "-walrus", "ice", "--mode", "keyword"]) == 0, capsys.readouterr().err
    # -walrus left its document out, and says so
    assert capsys.readouterr().out.splitlines() == ["no results", "Left out: 1 document holding \u201cwalrus\u201d"]
    assert main(["search", "--mode", "keyword", "--", "floe", "-k"]) == 0  # after --, even an option's name
    assert main(["search", "walrus", "-k", "1", "--mode", "keyword"]) == 0
    assert "walrus.txt" in capsys.readouterr().out
    # an exclusion alone has nothing to look for: a wrong command line, said in one line
    assert "nothing to look for" in one_error_line(capsys, ["search", "-walrus"], code=2)


@pytest.mark.parametrize("argv", [
    ["search", "bees path:~zzznosuchuser/x"],
    ["search", "bees", "--path", "~zzznosuchuser/x"],
    ["index", "~zzznosuchuser/x"],
    ["forget", "~zzznosuchuser/x"],
], ids=["filter", "--path", "index", "forget"])
def test_a_home_folder_of_nobody(indexed, capsys, argv):
    line = one_error_line(capsys, argv, code=2)  # the query is parsed with the command line
    assert "no user 'zzznosuchuser'" in line


@pytest.fixture
def base_model(tmp_path):
    return tiny_training_inputs(tmp_path)[0]


@pytest.mark.parametrize("name, content, expected", [
    ("utf16-bom-only.tsv", b"\xff\xfe", "0 usable translation pairs"),
    ("latin1.tsv", "0.9\tdas Bär\tthe bear\n".encode("latin-1"), "not UTF-8 text (byte 0xe4"),
    ("score.tmx", b"<tmx><body><tu><prop type='x-score'>high</prop><tuv><seg>a b c</seg></tuv>"
                  b"<tuv><seg>d e f</seg></tuv></tu></body></tmx>", "x-score: score 'high' is not a number"),
    ("nan.tsv", b"nan\tdas Haus\tthe house\n", "score 'nan' is not a number"),
], ids=["utf16-bom", "latin1", "tmx-score", "nan"])
def test_pair_files_that_are_not_pairs(babelfind_home, base_model, tmp_path, capsys, name, content, expected):
    pairs = tmp_path / name
    pairs.write_bytes(content)
    line = one_error_line(capsys, ["train", "--pairs", pairs, "--out", "p", "--base", base_model,
                                   "--no-sts", "--device", "cpu"])
    assert expected in line, line


def test_a_utf16_pair_file_is_read(babelfind_home, tmp_path):
    from engine.mining.bitext_io import read_tsv

    pairs = tmp_path / "windows.tsv"
    pairs.write_bytes("0.9\tdas Haus\tthe house\n1.1\tder Baum\tthe tree\n".encode("utf-16"))
    assert read_tsv(pairs) == [(0.9, "das Haus", "the house"), (1.1, "der Baum", "the tree")]


HOSTILE_NAMES = ["red\x1b[31mtext.txt", "two\nlines.txt", "evil\u202etxt.exe.txt", "bell\x07\x9b.txt"]


def test_names_that_would_drive_the_terminal_are_escaped(home_with_tiny, tmp_path, capsys):
    import json

    corpus = tmp_path / "names\u202e"
    corpus.mkdir()
    for name in HOSTILE_NAMES:
        (corpus / name).write_text(f"The walrus {name!r} rests on the \u202eice floe.", encoding="utf-8")
    (corpus / "broken\x1b]0;title\x07.pdf").write_bytes(b"%PDF-1.4 not really")
    capsys.readouterr()
    assert main(["index", str(corpus)]) == 0
    assert main(["search", "walrus", "--mode", "keyword"]) == 0
    assert main(["status"]) == 0
    out, err = capsys.readouterr()
    for text in (out, err):
        assert not set(text) & {"\x1b", "\x07", "\x9b", "\u202e", "\r"}, repr(text)
    assert "red\\x1b[31mtext.txt" in out and "evil\\u202etxt.exe.txt" in out and "two\\nlines.txt" in out
    result_lines = [line for line in out.splitlines() if line[:3].strip().rstrip(".").isdigit()]
    assert len(result_lines) == len(HOSTILE_NAMES)  # one line each: no name split a result
    assert main(["search", "walrus", "--mode", "keyword", "--json"]) == 0
    paths = {Path(hit["path"]).name for hit in json.loads(capsys.readouterr().out)}
    assert paths == set(HOSTILE_NAMES)  # JSON still gives the real names


@pytest.mark.parametrize("argv", [["search", "walrus"], ["status"], ["reindex"], ["forget", "{corpus}"]],
                         ids=lambda a: a[0])
def test_a_deleted_database_is_damage_not_a_fresh_home(indexed, babelfind_home, capsys, argv):
    (babelfind_home / "babelfind.db").unlink()
    line = one_error_line(capsys, [a.replace("{corpus}", str(indexed)) for a in argv])
    assert "is missing or empty" in line


def test_importing_a_model_whose_graph_allocates_from_its_input_is_one_line(
        babelfind_home, tiny_registry, tmp_path, capsys):
    from hostile_models import poison_graph

    from engine.config import DataPaths
    from engine.models import export_model, model_dir

    source = DataPaths(tmp_path / "source")
    shutil.copytree(tiny_registry.models, source.models)
    poison_graph(model_dir("tiny", source), "model.onnx", "values")
    archive = export_model("tiny", tmp_path / "poisoned.zip", source)
    line = one_error_line(capsys, ["models", "import", archive])
    assert line.startswith("babelfind: error: model 'tiny' refused: ") and "ConstantOfShape" in line
    assert main(["models", "list", "--json"]) == 0 and "tiny" not in capsys.readouterr().out
