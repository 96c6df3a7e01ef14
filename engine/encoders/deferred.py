"""An encoder that is loaded on first use, or ahead of it by a background warm-up.

    >>> encoder = DeferredEncoder.for_model(None, paths=paths)    # reads one manifest
    >>> threading.Thread(target=encoder.load).start()              # the window warms up
    >>> encoder.encode(["query"], kind="query")                    # waits for that load

The window opens its library with one, so it shows before the model is loaded; `name`
and `dim` come from the manifest at once, everything else from the loaded encoder.
"""

from __future__ import annotations

import threading
from typing import Callable, Sequence

import numpy as np

from engine.encoders.base import Encoder, TextKind


class DeferredEncoder:
    """Wraps `load() -> Encoder`; `load` runs once (thread-safe) and its error, if any,
    is raised again to every later caller."""

    def __init__(self, name: str, dim: int, load: Callable[[], Encoder]):
        self.name = name
        self.dim = dim
        self._load = load
        self._lock = threading.Lock()
        self._encoder: Encoder | None = None
        self._error: BaseException | None = None

    @classmethod
    def for_model(cls, name: str | None, *, device: str = "auto", paths=None) -> DeferredEncoder:
        """The registry's model `name` (the active one when None), not loaded yet.

        Raises:
            ModelError when there is no such model (the files are checked at load).
        """
        from engine.errors import ModelError
        from engine.models import _paths, active_model_name, get_manifest, load_encoder

        paths = _paths(paths)
        name = name or active_model_name(paths)
        if not name:
            raise ModelError("no active model; run 'babelfind models use NAME'")
        manifest = get_manifest(name, paths)
        return cls(manifest.name, int(manifest.dim),
                   lambda: load_encoder(name, device=device, paths=paths))

    @property
    def loaded(self) -> bool:
        return self._encoder is not None or self._error is not None

    def load(self) -> Encoder:
        """The encoder, loading it now unless another thread did or is doing it."""
        with self._lock:
            if self._encoder is None and self._error is None:
                try:
                    self._encoder = self._load()
                except BaseException as e:
                    self._error = e
            if self._error is not None:
                raise self._error
            return self._encoder

    def encode(self, texts: Sequence[str], kind: TextKind = "passage") -> np.ndarray:
        return self.load().encode(texts, kind=kind)

    def __getattr__(self, attribute: str):
        # variant, device, threads...: only a loaded encoder knows them
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.load(), attribute)
