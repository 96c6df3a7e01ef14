"""Encoders over ONNX files outside the registry, for the checks every transformer build makes.

    >>> onnx_encode(folder / "model.onnx", folder / "tokenizer.json", 384, ["Hallo"])

Used by the torch export (trainer.serving.export) and the torch-free build of the default models
(trainer.serving.bert_build); nothing here may import torch (an import-linter contract checks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from engine.model_manifest import ModelManifest


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
