"""A run folder is untrusted: a crafted state.pt runs no code, latest.json stays inside."""

from __future__ import annotations

import json
import os
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from app.cli import main
from engine.errors import InputError
from train_helpers import tiny_config, tiny_training_inputs
from trainer import checkpoint as ckpt
from trainer.mixcse.train import train


class _RunsCode:
    """Unpickling this calls os.system: what a malicious checkpoint would do."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def one_error_line(err: str) -> bool:
    """One line of error, the last, after what the command said it was doing."""
    lines = err.strip().splitlines()
    return [line for line in lines if "error:" in line] == lines[-1:]


def test_rng_state_round_trips_through_a_weights_only_file(tmp_path):
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    torch.save({"rng": ckpt.rng_state()}, tmp_path / "rng.pt")
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    random.seed(9), np.random.seed(9), torch.manual_seed(9)
    ckpt.set_rng_state(torch.load(tmp_path / "rng.pt", weights_only=True)["rng"])
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected


@pytest.fixture
def checkpointed_run(tmp_path):
    """A finished 2-step run with a checkpoint to resume from, and its config."""
    model, corpus = tiny_training_inputs(tmp_path)
    config = tiny_config(model, corpus, tmp_path / "run", max_steps=2)
    list(train(config))
    return config, ckpt.latest_checkpoint(config.out_dir)


def test_a_checkpoint_that_would_run_code_is_refused(checkpointed_run, tmp_path):
    config, last = checkpointed_run
    marker = tmp_path / "pwned"
    torch.save({"optimizer": _RunsCode(marker), "scheduler": {}, "rng": {}, "state": {}},
               last / "state.pt")
    with pytest.raises(InputError, match="refusing to resume"):
        list(train(config, resume=True))
    assert not marker.exists()


@pytest.mark.parametrize("state", [
    {"step": "2", "micro_batch": 4, "best_step": None, "best_dev": None, "corpus_fingerprint": "x"},
    {"step": 2},
    [1, 2],
])
def test_a_checkpoint_with_a_wrong_state_is_refused(checkpointed_run, state):
    config, last = checkpointed_run
    saved = torch.load(last / "state.pt", weights_only=True)
    torch.save(saved | {"state": state}, last / "state.pt")
    with pytest.raises(InputError, match="training state"):
        list(train(config, resume=True))


def test_truncated_or_foreign_state_files_are_clear_errors(checkpointed_run):
    config, last = checkpointed_run
    (last / "state.pt").write_bytes((last / "state.pt").read_bytes()[:100])
    with pytest.raises(InputError, match="not a readable checkpoint"):
        list(train(config, resume=True))
    torch.save({"weights": torch.zeros(2)}, last / "state.pt")
    with pytest.raises(InputError, match="not a Babelfind training checkpoint"):
        list(train(config, resume=True))


@pytest.mark.parametrize("path", ["../elsewhere/step-1", "/etc", "checkpoints/../../x", 5])
def test_latest_json_must_point_inside_the_run_folder(tmp_path, path):
    run = tmp_path / "run"
    (tmp_path / "elsewhere" / "step-1").mkdir(parents=True)
    (tmp_path / "elsewhere" / "step-1" / "state.pt").write_bytes(b"")
    run.mkdir()
    (run / "latest.json").write_text(json.dumps({"step": 1, "path": path}))
    with pytest.raises(InputError, match="outside|does not name"):
        ckpt.latest_checkpoint(run)


def test_cli_resume_from_a_crafted_checkpoint_is_one_line(checkpointed_run, tmp_path, capsys):
    config, last = checkpointed_run
    marker = tmp_path / "pwned"
    torch.save(_RunsCode(marker), last / "state.pt")
    code = main(["train", "--out", "crafted", "--run-dir", str(config.out_dir), "--resume",
                 "--no-sts", "--base", config.base])
    err = capsys.readouterr().err
    assert code == 1 and one_error_line(err) and "refusing to resume" in err, err
    assert not marker.exists()


def test_cli_resume_with_poisoned_model_weights_is_one_line(checkpointed_run, tmp_path, capsys):
    config, last = checkpointed_run
    marker = tmp_path / "pwned"
    for weights in (last / "model").glob("*.safetensors"):
        weights.unlink()  # transformers then reads pytorch_model.bin, a pickle
    torch.save(_RunsCode(marker), last / "model" / "pytorch_model.bin")
    code = main(["train", "--out", "poisoned", "--run-dir", str(config.out_dir), "--resume",
                 "--no-sts", "--base", config.base])
    err = capsys.readouterr().err
    assert code == 1 and one_error_line(err) and "cannot load" in err and "Traceback" not in err, err
    assert not marker.exists()


def test_a_copied_run_folder_resumes_in_itself(checkpointed_run, tmp_path):
    import shutil

    config, _last = checkpointed_run
    copy = tmp_path / "copy"
    shutil.copytree(config.out_dir, copy)
    original = {p.relative_to(config.out_dir): p.stat().st_mtime_ns for p in Path(config.out_dir).rglob("*")}
    events = list(train(replace(config, out_dir=copy), resume=True))
    assert Path(events[-1].run_dir) == copy and copy in ckpt.latest_checkpoint(copy).parents
    # the original run folder is untouched: not a file written, not one added
    assert {p.relative_to(config.out_dir): p.stat().st_mtime_ns for p in Path(config.out_dir).rglob("*")} == original
