"""Trainer test setup: without CUDA, Triton kernels run under the Triton interpreter (numpy).

Triton decides between compiling and interpreting when a kernel is *decorated*, i.e. when
``trainer.mixcse.fused_loss`` is first imported, so the variable is set here, before any test
module imports it. It stays set for the rest of the session; on a machine without CUDA that
is the only way any Triton kernel can run, so other tests lose nothing. With CUDA the real
kernels are tested instead.

No ``__init__.py`` in this folder on purpose: pytest would then import the tests as a package
named ``trainer`` and shadow the real ``trainer`` package.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
