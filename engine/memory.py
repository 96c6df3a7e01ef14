"""Giving memory that Python and the libraries freed back to the system.

    >>> release_freed_memory()     # between the steps of a long, memory-hungry job

glibc keeps freed heap memory for reuse, and a big build (the default model at first
start: a 250,000-piece tokenizer built, then graphs loaded into ONNX Runtime, whose large
buffers come from fresh mappings) would otherwise hold both at once: its peak is the sum
of its steps, not their largest. malloc_trim hands the free pages back. A no-op where
there is no glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import functools


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


def release_freed_memory() -> None:
    """Collects garbage, then returns free heap pages to the system (glibc's malloc_trim)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
