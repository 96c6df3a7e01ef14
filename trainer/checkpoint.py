"""Resumable checkpoints of a training run, written so a kill never leaves a half one.

Run folder layout::

    OUT/config.json                     the TrainConfig (JSON)
    OUT/checkpoints/step-00000125/      model/ (transformers + tokenizer), head.pt,
                                        state.pt (optimiser, scheduler, RNG, step...), config.json
    OUT/latest.json                     {"step": 125, "path": "checkpoints/step-00000125"}
    OUT/best/                           model/, head.pt, best.json {"step", "stsb_dev"}

A checkpoint is written into a temporary folder and renamed into place, and `latest.json`
is replaced atomically afterwards, so `latest.json` always names a complete checkpoint.
Older checkpoints are deleted once a newer one is complete.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from engine.errors import InputError
from trainer.config import TrainConfig

LATEST = "latest.json"
BEST = "best"


@dataclass(frozen=True)
class TrainState:
    """What besides the weights a resumed run needs to continue exactly."""

    step: int  # optimiser steps done
    micro_batch: int  # may have been halved after a CUDA out-of-memory
    best_step: int | None
    best_dev: float | None
    corpus_fingerprint: str  # the resumed run must see the same sentences in the same order


def rng_state() -> dict:
    state = {"python": random.getstate(), "numpy": np.random.get_state(),
             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
    os.replace(tmp, path)


def save_model(model, folder: Path) -> None:
    model.save_transformer(folder / "model")
    if model.mlp is not None:
        torch.save(model.mlp.state_dict(), folder / "head.pt")


def save_checkpoint(out_dir: Path, config: TrainConfig, model, optimizer, scheduler,
                    state: TrainState) -> Path:
    """Writes checkpoint `state.step` completely, points latest.json at it, prunes older ones."""
    root = out_dir / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"step-{state.step:08d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    save_model(model, tmp)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "rng": rng_state(), "state": state.__dict__}, tmp / "state.pt")
    (tmp / "config.json").write_text(config.to_json(), encoding="utf-8")
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_json(out_dir / LATEST, {"step": state.step, "path": f"checkpoints/{name}"})
    for old in root.glob("step-*"):
        if old != final:
            shutil.rmtree(old, ignore_errors=True)
    return final


def latest_checkpoint(out_dir: Path) -> Path | None:
    try:
        data = json.loads((out_dir / LATEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise InputError(f"{out_dir / LATEST} is unreadable: {e}") from e
    path = out_dir / data["path"]
    return path if (path / "state.pt").is_file() else None


def load_head(path: Path, model) -> None:
    """The MLP head saved beside a checkpoint's (or best) model folder, if the model has one."""
    if model.mlp is not None:
        model.mlp.load_state_dict(torch.load(path / "head.pt", weights_only=True))


def load_checkpoint(path: Path, optimizer, scheduler) -> TrainState:
    """Restores optimiser, scheduler and RNG; returns the saved TrainState.

    The weights are loaded by the caller from `path / "model"` before the optimiser is made.
    """
    saved = torch.load(path / "state.pt", weights_only=False)
    optimizer.load_state_dict(saved["optimizer"])
    scheduler.load_state_dict(saved["scheduler"])
    set_rng_state(saved["rng"])
    return TrainState(**saved["state"])


def save_best(out_dir: Path, model, step: int, dev: float | None) -> Path:
    """Copies the current weights to OUT/best (atomically replacing the previous best)."""
    tmp = out_dir / ".best.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_model(model, tmp)
    (tmp / "best.json").write_text(json.dumps({"step": step, "stsb_dev": dev}), encoding="utf-8")
    final = out_dir / BEST
    old = out_dir / ".best.old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    return final
