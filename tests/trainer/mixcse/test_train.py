"""The MixCSE training loop on a tiny random BERT: learning, repeatability, resume, failures."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from engine.errors import InputError
from train_helpers import tiny_config, tiny_training_inputs, training_events
from trainer.mixcse import train as train_module
from trainer.config import TrainConfig
from trainer.mixcse.model import SentenceModel
from trainer.mixcse.train import (TrainCheckpoint, TrainFinished, TrainingDivergedError, TrainStarted,
                           TrainStep, TrainWarning, train)

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def inputs(tmp_path):
    return tiny_training_inputs(tmp_path)


def _run(config, **kwargs) -> list:
    return training_events(train(config, **kwargs))


def _losses(events) -> list[float]:
    return [e.loss for e in events if isinstance(e, TrainStep)]


def _weights(folder: Path) -> dict:
    return load_file(str(folder / "model" / "model.safetensors"))


def test_tiny_bert_loss_falls_on_a_repeated_small_batch(tmp_path, inputs):
    model, _ = inputs
    small = tmp_path / "small.txt"  # two batches' worth, seen again every epoch
    small.write_text("\n".join(Path(inputs[1]).read_text().splitlines()[:16]), encoding="utf-8")
    config = tiny_config(model, small, tmp_path / "run", max_steps=30, checkpoint_steps=30)
    events = _run(config)
    losses = _losses(events)
    assert len(losses) == 30 and all(math.isfinite(x) for x in losses)
    assert np.mean(losses[-5:]) < 0.6 * np.mean(losses[:5])
    started = events[0]
    assert isinstance(started, TrainStarted) and started.corpus.kept == 16
    assert started.config.pooling == "cls_mlp"  # a plain folder gets the paper's pooling
    finished = events[-1]
    assert isinstance(finished, TrainFinished) and finished.steps == 30
    assert (finished.best_checkpoint / "model" / "config.json").is_file()
    saved = TrainConfig.from_json((finished.best_checkpoint.parent / "config.json").read_text())
    assert saved == started.config


def test_same_seed_same_losses_other_seed_other_losses(tmp_path, inputs):
    model, corpus = inputs
    first = _losses(_run(tiny_config(model, corpus, tmp_path / "a", max_steps=4)))
    again = _losses(_run(tiny_config(model, corpus, tmp_path / "b", max_steps=4)))
    other = _losses(_run(tiny_config(model, corpus, tmp_path / "c", max_steps=4, seed=7)))
    assert first == again
    assert first != other


_CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from trainer.config import TrainConfig
    from trainer.mixcse.train import TrainCheckpoint, train
    config = TrainConfig.from_json(Path(sys.argv[1]).read_text())
    for event in train(config):
        print(type(event).__name__, getattr(event, "step", ""), flush=True)
        if isinstance(event, TrainCheckpoint) and event.step == 4:
            os.kill(os.getpid(), signal.SIGKILL)
""")


def test_killed_run_resumes_to_the_same_final_state(tmp_path, inputs):
    model, corpus = inputs
    killed = tiny_config(model, corpus, tmp_path / "killed", max_steps=7)
    config_file = tmp_path / "config.json"
    config_file.write_text(killed.to_json())
    env = os.environ | {"PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    child = subprocess.run([sys.executable, "-c", _CHILD, str(config_file)], env=env, cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert json.loads((tmp_path / "killed" / "latest.json").read_text())["step"] == 4

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the child ran with one thread; same arithmetic here
    try:
        resumed = _run(killed, resume=True)
        straight = _run(tiny_config(model, corpus, tmp_path / "straight", max_steps=7))
    finally:
        torch.set_num_threads(threads)
    assert resumed[0].start_step == 4
    assert [e.step for e in resumed if isinstance(e, TrainStep)] == [5, 6, 7]
    assert _losses(resumed) == _losses(straight)[4:]
    a, b = _weights(resumed[-1].best_checkpoint), _weights(straight[-1].best_checkpoint)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_resume_without_checkpoint_is_a_clear_error(tmp_path, inputs):
    model, corpus = inputs
    config = tiny_config(model, corpus, tmp_path / "run")
    config.out_dir.mkdir()
    (config.out_dir / "config.json").write_text(config.to_json())
    with pytest.raises(InputError, match="nothing to resume"):
        _run(config, resume=True)


def test_nan_loss_stops_with_message_and_keeps_last_good_checkpoint(tmp_path, inputs, monkeypatch):
    model, corpus = inputs
    real = train_module.make_loss
    calls = {"n": 0}

    def poisoned(config):
        loss_fn = real(config)

        def fn(h1, h2):
            calls["n"] += 1
            loss = loss_fn(h1, h2)
            return loss * float("nan") if calls["n"] == 3 else loss

        return fn

    monkeypatch.setattr(train_module, "make_loss", poisoned)
    config = tiny_config(model, corpus, tmp_path / "run")
    seen = []
    with pytest.raises(TrainingDivergedError, match="step 3: the loss became nan") as info:
        for event in train(config):
            seen.append(event)
    good = config.out_dir / "checkpoints" / "step-00000002"
    assert info.value.checkpoint == good and str(good) in str(info.value)
    assert json.loads((config.out_dir / "latest.json").read_text())["step"] == 2
    assert all(torch.isfinite(t).all() for t in _weights(good).values())
    assert [e.step for e in seen if isinstance(e, TrainStep)] == [1, 2]


def test_closing_the_generator_cancels_and_keeps_the_checkpoint(tmp_path, inputs):
    model, corpus = inputs
    config = tiny_config(model, corpus, tmp_path / "run", max_steps=20)
    events = train(config)
    for event in events:
        if isinstance(event, TrainStep) and event.step == 3:
            events.close()
            break
    assert json.loads((config.out_dir / "latest.json").read_text())["step"] == 2
    resumed = _run(config, resume=True)
    assert resumed[0].start_step == 2 and resumed[-1].steps == 20


def test_cuda_out_of_memory_halves_the_micro_batch(tmp_path, inputs, monkeypatch):
    model, corpus = inputs
    forward = SentenceModel.forward

    def small_memory(self, input_ids, attention_mask, with_head=None):
        if input_ids.shape[0] > 8:  # 2 views x more than 4 sentences do not "fit"
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return forward(self, input_ids, attention_mask, with_head)

    monkeypatch.setattr(SentenceModel, "forward", small_memory)
    events = _run(tiny_config(model, corpus, tmp_path / "run", max_steps=3))
    warnings = [e.message for e in events if isinstance(e, TrainWarning)]
    assert warnings == ["out of memory: micro-batch halved to 4 sentences (2 per step)"]
    assert len(_losses(events)) == 3 and all(math.isfinite(x) for x in _losses(events))
    state = torch.load(tmp_path / "run" / "checkpoints" / "step-00000003" / "state.pt", weights_only=True)
    assert state["state"]["micro_batch"] == 4


def test_dev_evaluation_keeps_the_best_checkpoint(tmp_path, inputs):
    model, corpus = inputs
    sts = tmp_path / "sts"  # a tiny STS-B dev file in the real format
    words = Path(corpus).read_text().splitlines()
    lines = [f"g\tf\ty\t{i:04d}\t{i % 5}.0\t{words[i]}\t{words[i + 1]}" for i in range(20)]
    (sts / "STSBenchmark").mkdir(parents=True)
    (sts / "STSBenchmark" / "sts-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = tiny_config(model, corpus, tmp_path / "run", max_steps=4, eval_steps=2, sts_dir=str(sts))
    events = _run(config)
    evals = [e for e in events if type(e).__name__ == "TrainEval"]
    assert [e.step for e in evals] == [2, 4]
    best = max(evals, key=lambda e: e.score)
    finished = events[-1]
    assert finished.best_step == best.step
    assert finished.best_score == pytest.approx(best.score)
    assert json.loads((finished.best_checkpoint / "best.json").read_text())["step"] == best.step
    assert isinstance(events[-2], TrainCheckpoint) and events[-2].step == 4


def test_cls_mlp_head_is_used_in_training_only(inputs):
    model = SentenceModel.load(inputs[0], "cls_mlp")
    batch = model.tokenize(["the cat sat on the mat", "a dog runs"], 16, "cpu")
    model.eval()
    hidden = model.transformer(**batch).last_hidden_state[:, 0]
    torch.testing.assert_close(model(**batch), hidden)
    torch.testing.assert_close(model(**batch, with_head=True), model.mlp(hidden))


def test_bad_settings_are_clear_errors(tmp_path, inputs):
    model, corpus = inputs
    with pytest.raises(InputError, match="lambda must be in"):
        tiny_config(model, corpus, tmp_path, lam=1.5)
    with pytest.raises(InputError, match="micro-batches"):
        tiny_config(model, corpus, tmp_path, batch_size=8, grad_accum=3)
    with pytest.raises(InputError, match="not a transformers model folder"):
        _run(tiny_config(tmp_path, corpus, tmp_path / "run"))


def test_available_devices_lists_the_cpu_last():
    devices = train_module.available_devices()
    assert devices[-1][0] == "cpu"
    assert all(kind == "cuda" for kind, _ in devices[:-1])
    assert len(devices) == 1 + (torch.cuda.device_count() if torch.cuda.is_available() else 0)


def test_config_round_trips_through_json_and_help_names_real_fields(tmp_path):
    from trainer.config import ADVANCED_FIELDS, FIELD_HELP

    config = TrainConfig(base="x", corpus=("a", "b"), out_dir=tmp_path, lam=None, max_steps=9)
    assert TrainConfig.from_json(config.to_json()) == config
    fields = set(TrainConfig.__dataclass_fields__)
    assert set(FIELD_HELP) <= fields and set(ADVANCED_FIELDS) <= fields
    with pytest.raises(InputError, match="not a training config"):
        TrainConfig.from_json("[1, 2")


@pytest.mark.parametrize("trainable", ["bitfit", "body"])
def test_an_adapter_run_changes_only_what_it_trains(tmp_path, inputs, trainable):
    model, corpus = inputs
    config = tiny_config(model, corpus, tmp_path / "run", max_steps=3, checkpoint_steps=3,
                         pooling="mean", trainable=trainable)
    finished = _run(config)[-1]
    before = load_file(str(model / "model.safetensors"))
    after = _weights(finished.best_checkpoint)
    changed = {name for name, w in before.items() if not torch.equal(w, after[name])}
    assert changed, "the run trained nothing"
    embeddings = {n for n in before if n.startswith("embeddings.") and "LayerNorm" not in n}
    assert not changed & embeddings
    if trainable == "bitfit":
        assert all(before[n].ndim == 1 for n in changed)
    else:
        assert any(before[n].ndim == 2 for n in changed)


def test_unknown_trainable_is_a_clear_error(tmp_path, inputs):
    with pytest.raises(InputError, match="trainable must be one of"):
        tiny_config(*inputs, tmp_path, trainable="lora")
