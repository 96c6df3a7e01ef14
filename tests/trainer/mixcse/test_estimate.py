"""The run estimate: measured on this machine from one timed step and one timed encoding,
counted like the run counts its steps, evaluations and checkpoints; nothing stays on disk."""

from __future__ import annotations

from train_helpers import tiny_config, tiny_training_inputs
from trainer.mixcse.estimate import PEAK_COPIES, RunEstimate, _due, measure
from trainer.mixcse.train import TrainCheckpoint, TrainEval, TrainStarted, train


def drain(generator):
    stages = []
    while True:
        try:
            stages.append(next(generator).stage)
        except StopIteration as done:
            return stages, done.value


def test_the_estimate_counts_what_the_run_then_does(tmp_path, babelfind_home):
    model, corpus_file = tiny_training_inputs(tmp_path, sentences=240)
    config = tiny_config(model, corpus_file, tmp_path / "run", batch_size=8, max_steps=10, eval_steps=4,
                         checkpoint_steps=5)
    stages, estimate = drain(measure(config))
    assert isinstance(estimate, RunEstimate) and stages[0].startswith("Preparing")
    assert "Timing a training step on this computer" in stages
    assert estimate.device == "cpu" and estimate.devices[-1][0] == "cpu"
    assert min(estimate.step_s, estimate.evaluation_s, estimate.checkpoint_s, estimate.prepare_s) > 0
    assert estimate.weights_bytes > 0 and estimate.disk_bytes == PEAK_COPIES * estimate.weights_bytes
    assert estimate.seconds > estimate.steps * estimate.step_s
    assert not (tmp_path / "run").exists()
    assert not any((babelfind_home / "training").iterdir())  # the timing's scratch is gone

    events = list(train(config))
    started = next(e for e in events if isinstance(e, TrainStarted))
    assert estimate.steps == started.total_steps == 10
    assert estimate.evaluations == sum(isinstance(e, TrainEval) for e in events)  # the base model's too
    assert estimate.checkpoints == sum(isinstance(e, TrainCheckpoint) for e in events)


def test_due_counts_every_nth_step_and_the_last():
    assert [_due(10, 4), _due(10, 5), _due(3, 4), _due(0, 4), _due(10, 0)] == [3, 2, 1, 0, 0]
