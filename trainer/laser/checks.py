"""Sanity checks on a LASER checkpoint's `params` before anything is allocated.

    >>> params = check_params(path, state["params"], state["model"])

A checkpoint's `params` decide the sizes `LaserLstm(**params)` allocates; a crafted or
damaged one (`num_embeddings: 10**12`) would ask for terabytes before
`load_state_dict` ever compares shapes. Here every size must be a sane whole number and
agree with the shapes of the weights the checkpoint holds, so the module built from
`params` is no bigger than the file that was read.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import torch

from engine.errors import ModelError

MAX_SIZES = {"num_embeddings": 10_000_000, "embed_dim": 16_384, "hidden_size": 16_384,
             "num_layers": 64}
FLAGS = ("bidirectional", "left_pad")


def check_params(path: Path, params: object, weights: object, module_class) -> dict:
    """`params` completed with the module's defaults; ModelError naming `path` otherwise."""
    if not isinstance(params, dict):
        raise ModelError(f"{path}: 'params' must be a dict of encoder arguments", path)
    names = [n for n in inspect.signature(module_class.__init__).parameters if n != "self"]
    unknown = sorted(set(params) - set(names), key=str)
    if unknown:
        raise ModelError(f"{path}: 'params' has arguments a LASER BiLSTM does not take: "
                         f"{', '.join(map(str, unknown))} (an architecture not supported)", path)
    for key in ("num_embeddings", "padding_idx"):
        if not _is_int(params.get(key)):
            raise ModelError(f"{path}: 'params' lacks an integer {key!r}", path)
    full = _defaults(module_class) | params
    _check_values(path, full)
    _check_shapes(path, full, weights)
    return dict(params)


def _defaults(module_class) -> dict:
    signature = inspect.signature(module_class.__init__)
    return {n: p.default for n, p in signature.parameters.items()
            if p.default is not inspect.Parameter.empty}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_values(path: Path, params: dict) -> None:
    for key, limit in MAX_SIZES.items():
        value = params[key]
        if not _is_int(value) or not 1 <= value <= limit:
            raise ModelError(f"{path}: 'params' {key} = {value!r} is not a size from 1 to "
                             f"{limit:,} (damaged or not a LASER checkpoint)", path)
    if not 0 <= params["padding_idx"] < params["num_embeddings"]:
        raise ModelError(f"{path}: 'params' padding_idx {params['padding_idx']} is not one of "
                         f"the {params['num_embeddings']} embeddings", path)
    for key in FLAGS:
        if params[key] not in (True, False):  # bool, or 0/1 as older pickles may hold
            raise ModelError(f"{path}: 'params' {key} must be true or false, got {params[key]!r}",
                             path)
    if not isinstance(params["padding_value"], (int, float)) or isinstance(params["padding_value"], bool):
        raise ModelError(f"{path}: 'params' padding_value must be a number", path)


def _check_shapes(path: Path, params: dict, weights: object) -> None:
    """The weights' shapes must be the ones `params` implies, before allocating those."""
    if not isinstance(weights, dict) or not all(isinstance(w, torch.Tensor) for w in weights.values()):
        raise ModelError(f"{path}: 'model' must map parameter names to tensors", path)
    embed, hidden = params["embed_dim"], params["hidden_size"]
    expected = {"embed_tokens.weight": (params["num_embeddings"], embed)}
    suffixes = ("", "_reverse") if params["bidirectional"] else ("",)
    for layer in range(params["num_layers"]):
        inputs = embed if layer == 0 else hidden * len(suffixes)
        for suffix in suffixes:
            expected[f"lstm.weight_ih_l{layer}{suffix}"] = (4 * hidden, inputs)
            expected[f"lstm.weight_hh_l{layer}{suffix}"] = (4 * hidden, hidden)
    for name, shape in expected.items():
        found = weights.get(name)
        if found is None:
            raise ModelError(f"{path}: the weights do not fit a LASER BiLSTM with params "
                             f"{_brief(params)}: they lack {name!r}", path)
        if tuple(found.shape) != shape:
            raise ModelError(f"{path}: the weights do not fit a LASER BiLSTM with params "
                             f"{_brief(params)}: {name} has shape {tuple(found.shape)}, "
                             f"not {shape}", path)


def _brief(params: dict) -> str:
    keys = ("num_embeddings", "embed_dim", "hidden_size", "num_layers", "bidirectional")
    return "(" + ", ".join(f"{k}={params[k]}" for k in keys) + ")"
