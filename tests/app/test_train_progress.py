"""The training commands' progress view (app.cli.train_progress) on made-up events."""

from __future__ import annotations

from dataclasses import dataclass

from app.cli.train_progress import drive_training
from trainer.events import TrainCheckpoint, TrainEval, TrainStep, TrainWarning


@dataclass(frozen=True)
class Started:
    total_steps: int = 2
    start_step: int = 0


@dataclass(frozen=True)
class Finished:
    steps: int = 2


def test_lines_for_start_evaluations_warnings_and_other_events(capsys):
    seen, other = [], []
    events = [Started(), TrainEval(0, "m", 50.0, 50.0, 0, True), TrainStep(1, 2, 0.5, 1e-3, 1.0, 0),
              TrainWarning("halved"), TrainCheckpoint(1, None), TrainStep(2, 2, 0.4, 1e-3, 0.0, 0),
              TrainEval(2, "m", 60.0, 60.0, 2, True), Finished()]
    result = drive_training(iter(events), started=Started, finished=Finished, on_start=seen.append,
                            eval_text=lambda e: f"eval {e.step} {e.score:.1f}", other=other.append)
    assert result == Finished() and seen == [Started()] and other == [TrainCheckpoint(1, None)]
    err = capsys.readouterr().err
    assert "eval 0 50.0" in err and "eval 2 60.0" in err and "warning: halved" in err


def test_a_run_that_never_finishes_returns_none():
    assert drive_training(iter([Started()]), started=Started, finished=Finished,
                          on_start=lambda e: None, eval_text=str) is None
