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

A run folder may come from someone else, so resuming trusts nothing in it: `state.pt`
holds only tensors, dicts, lists, numbers and strings and is read with
`torch.load(weights_only=True)` (a pickle could run code), and the path in `latest.json`
must lie inside the run folder.
"""

from __future__ import annotations

import json
import os
import pickle
import random
import shutil
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch

from engine.errors import InputError
from trainer.config import TrainConfig
# the layout's names, and reading the last checkpoint, live where front ends read them without torch
from trainer.run_folder import BEST, LATEST, latest_checkpoint  # noqa: F401


@dataclass(frozen=True)
class TrainState:
    """What besides the weights a resumed run needs to continue exactly."""

    step: int  # optimiser steps done
    micro_batch: int  # may have been halved after a CUDA out-of-memory
    best_step: int | None
    best_dev: float | None
    corpus_fingerprint: str  # the resumed run must see the same sentences in the same order


def rng_state() -> dict:
    """Every generator's state as tensors and numbers (loadable with weights_only)."""
    version, mt_words, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "python": {"version": version, "words": torch.tensor(mt_words, dtype=torch.int64),
                   "gauss": gauss},
        "numpy": {"kind": kind, "keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "gauss": float(cached)},
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    python, numpy_state = state["python"], state["numpy"]
    random.setstate((python["version"], tuple(int(w) for w in python["words"].tolist()),
                     python["gauss"]))
    np.random.set_state((numpy_state["kind"], numpy_state["keys"].numpy().astype(np.uint32),
                         numpy_state["pos"], numpy_state["has_gauss"], numpy_state["gauss"]))
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
                "rng": rng_state(), "state": _plain(state)}, tmp / "state.pt")
    (tmp / "config.json").write_text(config.to_json(), encoding="utf-8")
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_json(out_dir / LATEST, {"step": state.step, "path": f"checkpoints/{name}"})
    for old in root.glob("step-*"):
        if old != final:
            shutil.rmtree(old, ignore_errors=True)
    return final


def _plain(state: TrainState) -> dict:
    """The state as built-in types only (a numpy float would need a pickle to load)."""
    data = dict(state.__dict__)
    if data["best_dev"] is not None:
        data["best_dev"] = float(data["best_dev"])
    return data


def load_head(path: Path, model) -> None:
    """The MLP head saved beside a checkpoint's (or best) model folder, if the model has one."""
    if model.mlp is not None:
        head = _torch_load(path / "head.pt")
        try:
            model.mlp.load_state_dict(head)
        except (RuntimeError, TypeError, AttributeError) as e:
            raise InputError(f"{path / 'head.pt'}: does not fit this model's head: {str(e)[:300]}") from e


def load_checkpoint(path: Path, optimizer, scheduler) -> TrainState:
    """Restores optimiser, scheduler and RNG; returns the saved TrainState.

    The weights are loaded by the caller from `path / "model"` before the optimiser is made.
    """
    saved = _read_state(path / "state.pt")
    state = _train_state(saved["state"], path / "state.pt")
    try:
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        set_rng_state(saved["rng"])
    except (KeyError, TypeError, ValueError, RuntimeError, AttributeError, IndexError) as e:
        raise InputError(f"{path / 'state.pt'}: the optimiser or random state does not fit "
                         f"this run: {str(e)[:300]}") from e
    return state


def _read_state(file: Path) -> dict:
    """state.pt as data only; InputError when it holds anything else or is damaged."""
    saved = _torch_load(file)
    keys = ("optimizer", "scheduler", "rng", "state")
    if not isinstance(saved, dict) or any(k not in saved for k in keys):
        raise InputError(f"{file}: not a Babelfind training checkpoint (expected the keys "
                         f"{', '.join(keys)})")
    return saved


def _torch_load(file: Path):
    """A torch file as data only (weights_only: a pickle could run code)."""
    try:
        return torch.load(file, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        raise InputError(f"{file}: refusing to resume from it: it holds Python objects other "
                         f"than tensors and plain data (made elsewhere, or by an older "
                         f"Babelfind?): {str(e)[:200]}") from e
    except (RuntimeError, EOFError, OSError, ValueError) as e:
        raise InputError(f"{file}: not a readable checkpoint (truncated or damaged?): "
                         f"{str(e)[:300]}") from e


def _train_state(data: object, file: Path) -> TrainState:
    types = {"step": int, "micro_batch": int, "best_step": (int, type(None)),
             "best_dev": (float, int, type(None)), "corpus_fingerprint": str}
    names = [f.name for f in fields(TrainState)]
    if not isinstance(data, dict) or sorted(data) != sorted(names) or not all(
            isinstance(data[k], types[k]) and not isinstance(data[k], bool) for k in names):
        raise InputError(f"{file}: its training state is not what Babelfind saves "
                         f"({', '.join(names)})")
    if data["step"] < 0 or data["micro_batch"] < 1:
        raise InputError(f"{file}: step {data['step']} or micro-batch {data['micro_batch']} "
                         "out of range")
    return TrainState(**data)


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
