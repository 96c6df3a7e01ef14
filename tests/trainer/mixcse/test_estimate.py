"""The run estimate: measured on this machine from one timed step and one timed encoding,
counted like the run counts its steps, evaluations and checkpoints; nothing stays on disk."""

from __future__ import annotations

from train_helpers import tiny_config, tiny_training_inputs
from trainer.mixcse.estimate import PEAK_COPIES, RunEstimate, measure
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


def test_steps_ending_with_counts_every_nth_step_and_the_last():
    from trainer.mixcse.train import steps_ending_with

    assert [steps_ending_with(4, 1, 10), steps_ending_with(5, 1, 10), steps_ending_with(4, 1, 3)] == [3, 2, 1]
    assert [steps_ending_with(4, 9, 10), steps_ending_with(4, 10, 10), steps_ending_with(4, 8, 10)] == [1, 1, 2]
    assert [steps_ending_with(4, 1, 0), steps_ending_with(0, 1, 10)] == [0, 0]


def test_the_time_left_counts_the_evaluations_and_checkpoints_still_to_come():
    """After step 1 of 10 (a step 2 s, an evaluation 30 s every 4 steps, a checkpoint 5 s
    every 5): 9 steps, the evaluations of steps 4, 8 and 10, the checkpoints of 5 and 10."""
    from trainer.mixcse.train import _Pace

    pace = _Pace(total=10, eval_steps=4, save_steps=5)
    pace.seconds = {"step": [2.0], "eval": [30.0], "save": [5.0]}
    assert pace.seconds_left(1) == 9 * 2.0 + 3 * 30.0 + 2 * 5.0
    assert pace.seconds_left(10) == 30.0 + 5.0  # the last step's own evaluation and checkpoint
