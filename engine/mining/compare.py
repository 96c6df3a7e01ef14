"""Mining two documents with one or more models, timing each model's encoder.

    >>> for event in iter_mine_with_models(src, tgt, ["multilingual-e5-small", "notes-laser"]):
    ...     if isinstance(event, ComparedFinished): print([s.rate for s in event.speeds])

The first model's MiningResult is the one to review; every further model mines the same
documents with the same options, so the speeds (sentences encoded per second of encoding,
reading and searching left out) and pair counts stand side by side. Models named by string
are loaded inside the generator, so a GUI worker does the loading off the GUI thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from engine.errors import InputError
from engine.mining.bitext import MiningFinished, MiningOptions, MiningProgress, iter_mine_documents


@dataclass(frozen=True)
class ModelSpeed:
    name: str
    sentences: int  # texts encoded while mining
    seconds: float  # time spent inside encode()
    pairs: int  # pairs mined

    @property
    def rate(self) -> float:
        """Sentences per second of encoding (0 when nothing was encoded)."""
        return self.sentences / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class ComparedFinished:
    finished: MiningFinished  # the first model's result
    speeds: tuple[ModelSpeed, ...]  # one per model, in the order given


class TimedEncoder:
    """Wraps an Encoder: counts the texts it encodes and the seconds it takes."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.sentences = 0
        self.seconds = 0.0

    def encode(self, texts, kind="passage"):
        start = time.perf_counter()
        vectors = self.encoder.encode(texts, kind=kind)
        self.seconds += time.perf_counter() - start
        self.sentences += len(texts)
        return vectors

    def __getattr__(self, name):  # name, dim, tokenize... as the wrapped encoder has them
        return getattr(self.encoder, name)


def iter_mine_with_models(src_path: Path, tgt_path: Path, models: Sequence, options: MiningOptions = MiningOptions(),
                          *, load: Callable | None = None) -> Iterator:
    """MiningProgress events (stage prefixed with the model's name when there are several),
    then ComparedFinished. `models`: Encoders or registered names (loaded with `load`,
    default engine.models.load_encoder).

    Raises:
        InputError: no model given; whatever mining or loading a model raises.
    """
    if not models:
        raise InputError("choose at least one model to mine with")
    if load is None:
        from engine.models import load_encoder as load
    first, speeds = None, []
    for model in models:
        name = model if isinstance(model, str) else getattr(model, "name", "model")
        if isinstance(model, str):
            yield MiningProgress(f"load {name}", 0, 1)
        timed = TimedEncoder(load(model) if isinstance(model, str) else model)
        for event in iter_mine_documents(src_path, tgt_path, timed, options):
            if isinstance(event, MiningFinished):
                first = first or event
                speeds.append(ModelSpeed(name, timed.sentences, timed.seconds, len(event.result.pairs)))
            elif len(models) > 1:
                yield MiningProgress(f"{name}: {event.stage}", event.done, event.total)
            else:
                yield event
    yield ComparedFinished(first, tuple(speeds))


def speed_text(speeds: Sequence[ModelSpeed]) -> str:
    """"A: 1,234 sentences/s (120 pairs) | B: 321 sentences/s (118 pairs), A 3.8x faster"."""
    parts = [f"{s.name}: {s.rate:,.0f} sentences/s ({s.pairs:,} pairs)" for s in speeds]
    text = " | ".join(parts)
    if len(speeds) == 2 and min(s.rate for s in speeds) > 0:
        fast, slow = sorted(speeds, key=lambda s: -s.rate)
        text += f"; {fast.name} is {fast.rate / slow.rate:.1f}x faster"
    return text
