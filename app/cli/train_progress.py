"""The command line's view of a training run: a progress bar with the loss, one line per
evaluation and warning, for `babelfind train` and `babelfind train-laser` alike.

    >>> finished = drive_training(train(config), started=TrainStarted, finished=TrainFinished,
    ...                           on_start=print_start, eval_text=eval_line)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable


def drive_training(events: Iterable, *, started: type, finished: type, on_start: Callable,
                   eval_text: Callable, postfix: Callable = lambda step: {"loss": f"{step.loss:.4f}"},
                   other: Callable = lambda event: None):
    """Runs `events` to the end and returns its `finished` event (None when it never came).

    `on_start(event)` prints the `started` event before the bar opens; `eval_text(event)` is
    the line for a TrainEval; `postfix(step)` the bar's fields for a TrainStep; `other(event)`
    sees every event of no kind named here (the LASER trainer's stages).
    """
    from tqdm import tqdm

    from trainer.events import TrainEval, TrainStep, TrainWarning

    bar, result = None, None
    try:
        for event in events:
            if isinstance(event, started):
                on_start(event)
                bar = tqdm(total=event.total_steps, initial=event.start_step, unit="step",
                           file=sys.stderr, disable=not sys.stderr.isatty())
            elif isinstance(event, TrainStep):
                bar.update(event.step - bar.n)
                bar.set_postfix(**postfix(event))
            elif isinstance(event, TrainEval):
                tqdm.write(eval_text(event), file=sys.stderr)
            elif isinstance(event, TrainWarning):
                tqdm.write(f"warning: {event.message}", file=sys.stderr)
            elif isinstance(event, finished):
                result = event
            else:
                other(event)
    finally:
        if bar is not None:
            bar.close()
    return result
