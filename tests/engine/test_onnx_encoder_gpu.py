"""OnnxEncoder on a CUDA device: provider, fp16 default, IO binding, large batches.

These run only where onnxruntime-gpu sees a GPU (pip install '.[gpu]'); elsewhere they
skip, and the CPU tests cover the shared code (the IO-binding path included).
"""

from __future__ import annotations

import numpy as np
import pytest

from engine.encoders.onnx import CUDA_PROVIDER, GPU_MAX_BATCH, cuda_device_count
from engine.models import load_encoder
from tiny_models import random_sentences


def cuda_available() -> bool:
    import onnxruntime

    return CUDA_PROVIDER in onnxruntime.get_available_providers() and cuda_device_count() > 0


pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not cuda_available(), reason="needs onnxruntime-gpu and a GPU")]


def test_gpu_encoder_serves_fp16_on_cuda_close_to_cpu_fp32(tiny_registry):
    gpu = load_encoder("tiny", paths=tiny_registry, device="auto")
    assert gpu.device == "cuda" and gpu.providers[0] == CUDA_PROVIDER
    assert gpu.variant == "fp16" and gpu.parallel_batches == 1
    texts = random_sentences(50, seed=8)
    cpu = load_encoder("tiny", paths=tiny_registry, device="cpu", variant="fp32").encode(texts)
    vectors = gpu.encode(texts)
    assert vectors.dtype == np.float32 and vectors.shape == cpu.shape
    assert (vectors * cpu).sum(1).min() >= 0.995


def test_gpu_fp32_equals_cpu_fp32_across_large_batches(tiny_registry):
    gpu = load_encoder("tiny", paths=tiny_registry, device="cuda", variant="fp32")
    texts = random_sentences(GPU_MAX_BATCH + 40, seed=9)  # more than one GPU batch
    cpu = load_encoder("tiny", paths=tiny_registry, device="cpu", variant="fp32").encode(texts)
    # ORT's CUDA provider may run fp32 MatMuls in TF32 (10-bit mantissa), hence not 0.9999
    assert (gpu.encode(texts) * cpu).sum(1).min() >= 0.999
