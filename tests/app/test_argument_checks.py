"""Bad arguments stop a command at once: one line on stderr, non-zero exit, no model loaded."""

from __future__ import annotations

import pytest

from app.cli import main


def one_line_error(capsys, argv, code=2) -> str:
    assert main(argv) == code
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1, err
    assert "error:" in lines[0] and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_an_empty_query_is_refused(no_model_loads, capsys, query):
    assert "the query is empty" in one_line_error(capsys, ["search", query])


@pytest.mark.parametrize("k, expected", [("0", "at least 1, got 0"), ("-5", "at least 1, got -5"),
                                         ("abc", "whole number of at least 1, got 'abc'"),
                                         ("2.5", "whole number")])
def test_k_below_one_or_not_a_whole_number_is_refused(no_model_loads, capsys, k, expected):
    message = one_line_error(capsys, ["search", "glaciers", "-k", k])
    assert message.startswith("babelfind search: error: argument -k:") and expected in message


@pytest.mark.parametrize("lang, suggestion", [("german", "de"), ("Deutsch", "de"), ("deu", "de"),
                                              ("pt-BR", "pt"), ("francais", "fr"), ("chinese", "zh")])
def test_a_language_name_gets_its_code_suggested(no_model_loads, capsys, lang, suggestion):
    message = one_line_error(capsys, ["search", "glaciers", "--lang", lang])
    assert f"unknown language '{lang}'; did you mean '{suggestion}'" in message


def test_a_comma_list_of_languages_is_explained(no_model_loads, capsys):
    message = one_line_error(capsys, ["search", "glaciers", "--lang", "de,fr"])
    assert "one language code per option, not 'de,fr'; repeat the option" in message


def test_an_unknown_code_gets_no_guess(no_model_loads, capsys):
    message = one_line_error(capsys, ["search", "glaciers", "--lang", "en", "--lang", "xx"])
    assert "unknown language 'xx'" in message and "did you mean" not in message


def test_embed_refuses_a_missing_input_and_a_missing_output_folder(no_model_loads, capsys, tmp_path):
    text = tmp_path / "lines.txt"
    text.write_text("one\ntwo\n", encoding="utf-8")
    assert "no such file" in one_line_error(capsys, ["embed", str(tmp_path / "nope.txt"), "-o", str(tmp_path / "v.npy")])
    assert "is a folder, not a file" in one_line_error(capsys, ["embed", str(tmp_path), "-o", str(tmp_path / "v.npy")])
    missing = tmp_path / "no-such-folder" / "v.npy"
    assert "does not exist" in one_line_error(capsys, ["embed", str(text), "-o", str(missing)])
    assert not missing.parent.exists()  # not created behind the user's back
    assert "is a folder" in one_line_error(capsys, ["embed", str(text), "-o", str(tmp_path)])


def test_mine_refuses_missing_inputs_and_outputs_and_bad_options(no_model_loads, capsys, tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("Hallo.\n", encoding="utf-8")
    b.write_text("Hello.\n", encoding="utf-8")
    assert "no such file" in one_line_error(capsys, ["mine", str(a), str(tmp_path / "gone.txt")])
    assert "does not exist" in one_line_error(capsys, ["mine", str(a), str(b), "-o", str(tmp_path / "x" / "p.tsv")])
    assert "at least 1" in one_line_error(capsys, ["mine", str(a), str(b), "--k", "0"])
    assert "did you mean 'de'" in one_line_error(capsys, ["mine", str(a), str(b), "--src-lang", "german"])
    # checked after parsing but still before any model: a typed error, exit code 1
    assert ".tsv or .tmx" in one_line_error(capsys, ["mine", str(a), str(b), "-o", str(tmp_path / "p.csv")], code=1)


def test_index_refuses_a_missing_path(no_model_loads, capsys, tmp_path):
    assert "no such file or folder" in one_line_error(capsys, ["index", str(tmp_path / "missing")])


def test_eval_and_train_check_their_arguments_first(no_model_loads, capsys, tmp_path):
    assert "choose what to evaluate" in one_line_error(capsys, ["eval", "multilingual-e5-small"], code=1)
    assert "no such folder" in one_line_error(capsys, ["eval", "x", "--tatoeba", "--data", str(tmp_path / "none")])
    assert "give --corpus" in one_line_error(capsys, ["train", "--out", "mine"], code=1)
    assert "no such file or folder" in one_line_error(capsys, ["train", "--corpus", str(tmp_path / "gone"), "--out", "m"])
    assert "at least 1" in one_line_error(capsys, ["train", "--corpus", str(tmp_path), "--out", "m", "--max-steps", "0"])
    assert "'none'" in one_line_error(capsys, ["train", "--corpus", str(tmp_path), "--out", "m", "--lam", "2"])
    assert "invalid model name" in one_line_error(capsys, ["train", "--corpus", str(tmp_path), "--out", "a/b"], code=1)


def test_eval_checks_tatoeba_languages_before_loading(no_model_loads, capsys, tmp_path):
    tatoeba = tmp_path / "data" / "tatoeba" / "v1"
    tatoeba.mkdir(parents=True)
    for side in ("deu", "eng"):
        (tatoeba / f"tatoeba.deu-eng.{side}").write_text("ein Hund\n" if side == "deu" else "a dog\n")
    argv = ["eval", "multilingual-e5-small", "--tatoeba", "--data", str(tmp_path / "data"), "--langs"]
    assert "did you mean 'deu'?" in one_line_error(capsys, argv + ["de"], code=1)
    assert "did you mean 'deu'?" in one_line_error(capsys, argv + ["German"], code=1)
    assert "ISO 639-3" in one_line_error(capsys, argv + ["xyz"], code=1)
    assert "Tatoeba folder not found" in one_line_error(capsys, argv[:-3] + ["--data", str(tmp_path)], code=1)


def test_wrong_command_lines_are_one_line_with_a_pointer_to_help(no_model_loads, capsys):
    assert "see 'babelfind search --help'" in one_line_error(capsys, ["search"])
    assert "unrecognized arguments: --bogus" in one_line_error(capsys, ["search", "x", "--bogus"])
    assert main(["search", "--help"]) == 0


def test_status_and_forget_on_a_fresh_home_load_nothing_and_create_nothing(no_model_loads, capsys, babelfind_home):
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "none installed yet" in out and "nothing is indexed yet" in out
    assert "is not indexed" in one_line_error(capsys, ["forget", str(babelfind_home)], code=1)
    assert not (babelfind_home / "babelfind.db").exists() and not (babelfind_home / "models").exists()


def test_search_and_reindex_on_a_fresh_home_say_nothing_is_indexed(no_model_loads, capsys):
    assert main(["search", "glaciers"]) == 0
    assert "nothing is indexed yet" in capsys.readouterr().out
    assert main(["search", "glaciers", "--json"]) == 0
    assert capsys.readouterr().out.strip() == "[]"
    assert main(["reindex"]) == 0
    assert "nothing is indexed yet" in capsys.readouterr().err


def test_a_refused_command_never_imports_the_model_runtime(tmp_path):
    """In a fresh process: a bad argument exits before onnxruntime or the library are imported."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = ("import sys; from app.cli import main; code = main(sys.argv[1:]); "
              "heavy = [m for m in ('onnxruntime', 'engine.library', 'torch', 'transformers') if m in sys.modules]; "
              "print(code, heavy)")
    repo = Path(__file__).resolve().parents[2]
    env = os.environ | {"PYTHONPATH": str(repo), "BABELFIND_HOME": str(tmp_path / "home")}
    for argv in (["search", " "], ["search", "x", "-k", "0"], ["search", "x", "--lang", "german"],
                 ["embed", str(tmp_path / "none.txt"), "-o", str(tmp_path / "v.npy")]):
        done = subprocess.run([sys.executable, "-c", script, *argv], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.stdout.strip() == "2 []", (argv, done.stdout, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
