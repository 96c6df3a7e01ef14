"""The shipped reference sentences, encoded once per process and model file.

    >>> vectors = encode_reference(encoder, sentences, "query")

Every library measures its language means (engine.index.language_means) and its hubness
reference queries (engine.index.hubness) with its model: about 2,500 fixed sentences, a
minute and more of a first index where the model runs in fp32 on two cores. They depend
only on the model file and the sentences, so a process that opens another library with
the same model (the window switching libraries, a command run in-process, a test
session) encodes them once. Keyed by the served file's identity (path, size, modification
time), its variant and device, and the sentences; an encoder without a model file (a test
double) is not memoised.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

MAX_ENTRIES = 256  # a language's sentences per side and model: a few MB at most
_memo: dict[tuple, np.ndarray] = {}
_lock = threading.Lock()


def encode_reference(encoder, texts: Sequence[str], kind: str) -> np.ndarray:
    """`encoder.encode(texts, kind=kind)` as float32 [n, dim], from the memo when this
    model file encoded these texts before in this process."""
    identity = _model_identity(encoder)
    if identity is None:
        return np.asarray(encoder.encode(list(texts), kind=kind), np.float32)
    key = (identity, kind, hashlib.sha256("\n".join(texts).encode("utf-8", "surrogatepass")).hexdigest())
    with _lock:
        known = _memo.get(key)
    if known is None:
        known = np.asarray(encoder.encode(list(texts), kind=kind), np.float32)
        with _lock:
            if len(_memo) >= MAX_ENTRIES:
                _memo.pop(next(iter(_memo)))
            _memo[key] = known
    return known.copy()


def _model_identity(encoder) -> tuple | None:
    path = getattr(encoder, "model_path", None)
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns,
            getattr(encoder, "variant", None), getattr(encoder, "device", None))
