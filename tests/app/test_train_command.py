"""`babelfind train` end to end on a tiny BERT: train -> export -> registered -> listed."""

from __future__ import annotations

import json
import re

import pytest

from app.cli import main
from train_helpers import tiny_training_inputs, write_sts_tree

TINY_ARGS = ["--lines", "--max-steps", "3", "--batch-size", "8", "--max-len", "16", "--lr", "1e-3",
             "--device", "cpu", "--eval-steps", "2"]


@pytest.fixture
def inputs(tmp_path):
    return tiny_training_inputs(tmp_path)


def test_train_registers_lists_activates_and_scores(tmp_path, inputs, capsys):
    model, corpus = inputs
    data = tmp_path / "data"
    write_sts_tree(data / "sts" / "original")
    code = main(["train", "--corpus", str(corpus), "--base", str(model), "--out", "tiny-mix",
                 "--data", str(data), "--activate", "--json", *TINY_ARGS])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["model"] == "tiny-mix" and summary["steps"] == 3 and summary["active"]
    assert summary["best_step"] in (2, 3) and summary["best_score"] is not None
    assert summary["sts_before"] is not None and summary["sts_after"] is not None
    assert re.search(r"\d+ sentences read, .* \d+ kept", captured.err)  # counts before training
    # what it does before the first step, from the first second
    assert captured.err.index("Preparing tiny-bert...") < captured.err.index("Loading tiny-bert for training...")

    assert main(["models", "list", "--json"]) == 0
    listed = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed["tiny-mix"]["active"]

    assert main(["models", "info", "tiny-mix", "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    training = manifest["training"]
    assert training["config"]["lam"] == 0.2 and training["config"]["pooling"] == "cls_mlp"
    assert manifest["pooling"] == "cls"  # the MLP head was for training only
    assert set(training["sts_after"]["scores"]) == {"STS12", "STS13", "STS14", "STS15", "STS16",
                                                     "STSBenchmark", "SICKRelatedness"}

    # the registered ONNX model evaluates through `babelfind eval --sts`
    assert main(["eval", "tiny-mix", "--sts", "--data", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sts"]["average"] == pytest.approx(training["sts_after"]["average"], abs=0.5)


def test_simcse_without_sts_data(tmp_path, inputs, capsys):
    model, corpus = inputs
    code = main(["train", "--corpus", str(corpus), "--base", str(model), "--out", "tiny-sim",
                 "--lam", "none", "--no-sts", *TINY_ARGS])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "registered model 'tiny-sim'" in captured.out
    assert main(["models", "info", "tiny-sim", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["training"]["config"]["lam"] is None


def test_without_sts_data_held_out_sentences_score_the_run(tmp_path, capsys):
    model, corpus = tiny_training_inputs(tmp_path / "big", sentences=240)
    code = main(["train", "--corpus", str(corpus), "--base", str(model), "--out", "tiny-held",
                 "--no-sts", *TINY_ARGS])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "base model: held-out sentence separation" in captured.err
    line = re.search(r"held-out sentences \(24\): separation ([\d.]+)% before -> ([\d.]+)% after; "
                     r"(\d+)% of their nearest neighbours kept", captured.out)
    assert line, captured.out
    assert main(["models", "info", "tiny-held", "--json"]) == 0
    training = json.loads(capsys.readouterr().out)["training"]
    assert training["metric"] == "held-out sentence separation"
    assert training["held_out_sentences"]["best"]["separation"] == pytest.approx(float(line[2]), abs=0.05)


def test_too_few_sentences_is_one_clear_line(tmp_path, inputs, capsys):
    model, _ = inputs
    few = tmp_path / "few.txt"
    few.write_text("the cat sat on the mat\na dog runs fast\nthe red house is big\n", encoding="utf-8")
    code = main(["train", "--corpus", str(few), "--base", str(model), "--out", "nope", *TINY_ARGS])
    err = capsys.readouterr().err
    assert code == 1
    assert "3 usable sentences but training needs at least 16" in err
    assert "Traceback" not in err


def test_missing_source_and_existing_name_are_clear_errors(tmp_path, inputs, capsys):
    model, corpus = inputs
    assert main(["train", "--base", str(model), "--out", "x", *TINY_ARGS]) == 1
    assert "--corpus" in capsys.readouterr().err
    assert main(["train", "--corpus", str(tmp_path / "absent"), "--base", str(model),
                 "--out", "x", *TINY_ARGS]) == 2  # refused while parsing, before any loading
    assert "no such file or folder" in capsys.readouterr().err


def test_train_on_translation_pairs_reports_the_held_out_scores(tmp_path, inputs, capsys):
    from engine.mining.bitext_io import write_pairs
    from train_helpers import tiny_translations

    model, _ = inputs
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(120))
    code = main(["train", "--pairs", str(tmp_path / "pairs.tsv"), "--base", str(model),
                 "--out", "tiny-pairs", "--json", "--no-sts", "--holdout", "0.2",
                 "--max-steps", "4", "--batch-size", "8", "--max-len", "16", "--lr", "5e-3",
                 "--device", "cpu", "--eval-steps", "2"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["metric"] == "held-out translation retrieval"
    assert summary["best_score"] is not None and summary["model"] == "tiny-pairs"
    held = summary["held_out_pairs"]
    assert held["base"]["step"] == 0 and held["best"]["step"] == summary["best_step"]
    assert held["best"]["retrieval"] == summary["best_score"]
    assert main(["models", "info", "tiny-pairs", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["training"]["held_out_pairs"] == held
    assert "on translation pairs" in info["source"]
    assert "pairs: 120 read" in captured.err and "24 held out" in captured.err
    assert re.search(r"base model: held-out translation retrieval \d+\.\d+ \[retrieval", captured.err)


def test_a_missing_pairs_file_is_one_line(tmp_path, inputs, capsys):
    model, _ = inputs
    assert main(["train", "--pairs", str(tmp_path / "nope.tsv"), "--base", str(model),
                 "--out", "x"]) == 2  # refused while parsing, before any loading
    assert "no such file or folder" in capsys.readouterr().err


def test_an_interrupted_pair_run_resumes_from_its_run_folder(tmp_path, inputs, capsys, monkeypatch):
    from engine.mining.bitext_io import write_pairs
    from train_helpers import tiny_translations
    from trainer.mixcse import train as train_module

    model, _ = inputs
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(120))
    args = ["--out", "tiny-resumed", "--no-sts", "--device", "cpu"]
    apply_update = train_module._Run.apply_update

    def interrupted_at_step_3(run):
        if run.state.step == 2:
            raise KeyboardInterrupt  # Ctrl-C during the third step
        apply_update(run)

    monkeypatch.setattr(train_module._Run, "apply_update", interrupted_at_step_3)
    code = main(["train", "--pairs", str(tmp_path / "pairs.tsv"), "--base", str(model), *args,
                 "--holdout", "0.2", "--max-steps", "4", "--batch-size", "8", "--max-len", "16",
                 "--lr", "5e-3", "--eval-steps", "2"])
    assert code == 130 and "interrupted" in capsys.readouterr().err
    monkeypatch.setattr(train_module._Run, "apply_update", apply_update)
    assert main(["train", "--resume", "--json", *args]) == 0
    captured = capsys.readouterr()
    assert "resuming at step 2" in captured.err
    summary = json.loads(captured.out)
    assert summary["steps"] == 4 and summary["model"] == "tiny-resumed"
    held = summary["held_out_pairs"]
    assert held["base"]["step"] == 0  # scored before Ctrl-C, kept in the run folder
    assert held["best"]["step"] == summary["best_step"] in (2, 4)


def test_the_corpus_weights_and_pair_roles_reach_the_run_and_bad_ones_are_refused(tmp_path, inputs, capsys):
    from engine.mining.bitext_io import write_pairs
    from train_helpers import tiny_translations

    model, corpus = inputs
    write_pairs(tmp_path / "pairs.tsv", tiny_translations(64))
    common = ["train", "--pairs", str(tmp_path / "pairs.tsv"), "--base", str(model), "--no-sts",
              "--holdout", "0", "--max-steps", "2", "--batch-size", "8", "--max-len", "16",
              "--device", "cpu", "--eval-steps", "2"]
    code = main([*common, "--corpus", str(corpus), "--lines", "--out", "tiny-held",
                 "--run-dir", str(tmp_path / "run"), "--mono-weight", "0.5", "--distill-weight", "2",
                 "--pair-roles", "query-passage"])
    assert code == 0, capsys.readouterr().err
    saved = json.loads((tmp_path / "run" / "config.json").read_text(encoding="utf-8"))
    assert (saved["mono_weight"], saved["distill_weight"], saved["pair_roles"]) == (0.5, 2.0, "query-passage")
    assert main([*common, "--out", "z", "--pair-roles", "both"]) == 2
    assert "invalid choice: 'both'" in capsys.readouterr().err
    assert main([*common, "--corpus", str(corpus), "--out", "x", "--distill-weight", "-1"]) == 2
    assert "must be a number >= 0, got '-1'" in capsys.readouterr().err
    assert main([*common, "--out", "y", "--distill-weight", "1"]) == 1  # nothing to hold near the base
    assert "distill_weight needs corpus sentences" in capsys.readouterr().err
