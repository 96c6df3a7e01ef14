"""Torch-free steps every transformer build shares: encoders over files, and the variants.

    >>> onnx_encode(folder / "model.onnx", folder / "tokenizer.json", 384, ["Hallo"])
    >>> manifest = make_variants(work, manifest, ("int8",), None, None, progress)

Used by the torch export (trainer.serving.export) and the torch-free build of the default models
(trainer.serving.bert_build); nothing here may import torch (an import-linter contract checks).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.encoders.migrate import optimise_cpu_variant
from engine.encoders.parity import PARITY_SENTENCES
from engine.errors import InputError
from engine.models import ModelManifest

Progress = Callable[[float, str], None]


def file_encoder(model_path: Path, tokenizer_path: Path, dim: int, *, prefixes: dict | None = None,
                 max_length: int = 512, pad_id: int = 0, threads: int | None = None,
                 embeddings: dict | None = None):
    """An OnnxEncoder for an ONNX file outside the registry (export-time checks).

    `embeddings` is the manifest's table spec for a body graph (files beside the graph);
    None for a graph that looks tokens up itself.
    """
    from engine.encoders.onnx import OnnxEncoder

    manifest = ModelManifest(name=Path(model_path).stem, family="transformer",
                             dim=dim, pooling="mean", max_length=max_length,
                             prefixes=dict(prefixes or {}), pad_token_id=pad_id,
                             variants={"x": {"file": Path(model_path).name}},
                             tokenizer_file=str(tokenizer_path), embeddings=dict(embeddings or {}))
    return OnnxEncoder(Path(model_path).parent, manifest, variant="x", device="cpu",
                       threads=threads)


def onnx_encode(model_path: Path, tokenizer_path: Path, dim: int, texts: Sequence[str], *, prefix: str = "",
                max_length: int = 512, pad_id: int = 0, embeddings: dict | None = None) -> np.ndarray:
    """Encodes `texts` (with `prefix`) with an ONNX file outside the registry."""
    encoder = file_encoder(model_path, tokenizer_path, dim, prefixes={"passage": prefix},
                           max_length=max_length, pad_id=pad_id, embeddings=embeddings)
    return encoder.encode(list(texts), kind="passage")


def make_variants(work: Path, manifest: ModelManifest, variants: Sequence[str], quality_texts,
                  tatoeba_dir, progress: Progress) -> ModelManifest:
    """Adds the fp16/int8 `variants` (each kept only within its quality bound), then saves
    the CPU variant optimised; progress(fraction of this step, message)."""
    from trainer.serving.quantise import make_fp16_variant, make_int8_variant

    texts = list(quality_texts or PARITY_SENTENCES)
    for i, variant in enumerate(variants):
        progress(i / max(1, len(variants)), f"making the {variant} variant")
        make = {"fp16": make_fp16_variant, "int8": make_int8_variant}.get(variant)
        if make is None:
            raise InputError(f"unknown variant {variant!r}; use fp16 or int8")
        info = make(manifest, work, texts, tatoeba_dir=tatoeba_dir)
        manifest = replace(manifest, variants=manifest.variants | {variant: info})
    return optimise_cpu_variant(work, manifest)
