"""`babelfind train-laser` end to end on a tiny teacher, then `babelfind mine --model` with the student."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from engine.config import data_paths
from laser_models import training_sentences
from mining_fakes import ENGLISH, GERMAN
from tiny_models import register_tiny_model


@pytest.fixture
def teacher(babelfind_home, tmp_path):
    """'tiny' registered and active in this test's home; a corpus of 400 sentences."""
    from engine.models import set_active

    paths = data_paths()
    register_tiny_model(paths, "tiny")
    set_active("tiny", paths)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(training_sentences(400) + GERMAN + ENGLISH) + "\n", encoding="utf-8")
    return corpus


def train_argv(corpus, *extra):
    return ["train-laser", "--corpus", str(corpus), "--lines", "--out", "tiny-student",
            "--vocab-size", "150", "--embed-dim", "16", "--batch-size", "16", *extra]


def test_train_laser_registers_a_student_that_mines(teacher, tmp_path, capsys):
    capsys.readouterr()
    assert main(train_argv(teacher, "--steps", "12", "--json")) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["model"] == "tiny-student" and summary["family"] == "laser"
    assert summary["teacher"] == "tiny" and summary["dim"] == 32 and summary["steps"] == 12

    de, en = tmp_path / "de.txt", tmp_path / "en.txt"
    de.write_text("\n".join(GERMAN) + "\n", encoding="utf-8")
    en.write_text("\n".join(reversed(ENGLISH)) + "\n", encoding="utf-8")
    assert main(["mine", str(de), str(en), "--lines", "--src-lang", "de", "--tgt-lang", "en",
                 "--model", "tiny-student", "--threshold", "0", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["pairs"], result  # the student's vectors were mined (threshold 0 keeps every best match)


def test_train_laser_resumes_after_the_last_step_is_known(teacher, capsys):
    assert main(train_argv(teacher, "--steps", "4")) == 0
    # a second run under the same name needs --replace; --resume re-exports from the run folder
    assert main(train_argv(teacher, "--steps", "4")) == 1
    assert "already installed" in capsys.readouterr().err
    assert main(["train-laser", "--out", "tiny-student", "--resume", "--replace"]) == 0


def test_train_laser_needs_sentences_and_a_free_name(teacher, capsys):
    capsys.readouterr()
    assert main(["train-laser", "--out", "x"]) == 1
    assert "--corpus" in capsys.readouterr().err
    assert main(train_argv(teacher, "--minutes", "0")) == 1
    assert "--minutes must be > 0" in capsys.readouterr().err


def test_embedding_and_span_options_reach_the_config(teacher, tmp_path):
    import argparse

    from app.cli.laser_train_command import build_config, register
    from trainer.laser.student_config import StudentConfig

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    default = build_config(parser.parse_args(train_argv(teacher)), data_paths())
    opted_out = build_config(parser.parse_args(train_argv(
        teacher, "--random-embeddings", "--embedding-lr-scale", "0.1", "--spans", "0")), data_paths())
    assert default.init_from_teacher and default.embedding_lr_scale == 1.0
    assert default.spans_per_sentence == StudentConfig.spans_per_sentence > 0
    assert not opted_out.init_from_teacher and opted_out.embedding_lr_scale == 0.1
    assert opted_out.spans_per_sentence == 0
