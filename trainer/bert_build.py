"""Register a BERT sentence encoder from numpy weights, without torch or transformers.

    >>> register_bert(state, config, tokenizer_json, "all-minilm-l6-v2", pooling="mean")

The default models are built this way at first start (trainer.default_models): the
graph is written with `onnx.helper` (trainer.bert_graph), its embedding table moves out
and is checked against the graph's own lookup (engine.encoders.migrate.split_folder),
then the fp16/int8 variants are made as in trainer.export. Seconds, not the ~100 s of
converting to a transformers folder and tracing it with torch. tests/trainer/
test_bert_build.py checks the result against the torch export of the same weights.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.config import DataPaths, data_paths
from engine.encoders.migrate import split_folder
from engine.errors import InputError
from engine.models import ModelManifest, build_model, check_name, model_dir
from trainer.bert_graph import BertSizes, bert_graph
from trainer.serving_build import make_variants

Progress = Callable[[float, str], None]
TOKENIZER_FILE = "tokenizer.json"


def register_bert(state: dict[str, np.ndarray], config: dict, tokenizer_json: str, name: str, *,
                  pooling: str = "mean", prefixes: dict | None = None, max_length: int = 512,
                  languages: Sequence[str] = (), source: str = "", licence: str = "",
                  notes: str = "", variants: Sequence[str] = ("int8",), tatoeba_dir: Path | None = None,
                  paths: DataPaths | None = None, replace_existing: bool = False,
                  table_dtypes: Sequence[str] | None = None,
                  progress: Progress | None = None) -> ModelManifest:
    """Builds and registers model `name` from BertModel weights `state` and `config`.

    Args:
        tokenizer_json: the fast tokenizer as tokenizer.json text.
        variants: extra variants to try ("fp16", "int8"), kept within their quality bounds.
        table_dtypes: embedding row formats to try, smallest first (the first that keeps
            the vectors within cosine 0.9999 of the graph's own lookup is kept); None:
            as engine.encoders.migrate.split_folder chooses.
    Raises:
        ModelError when a weight is missing or the table split changes the vectors.
    """
    report = progress or (lambda fraction, message: None)
    paths = paths or data_paths()
    check_name(name)
    if model_dir(name, paths).exists() and not replace_existing:
        raise InputError(f"a model named '{name}' is already installed")
    sizes = BertSizes.from_config(config)
    prefixes = {"query": "", "passage": ""} | dict(prefixes or {})
    max_length = min(max_length, int(config.get("max_position_embeddings", max_length)))

    def build(work: Path) -> ModelManifest:
        import onnx

        report(0.0, "writing the ONNX graph")
        _write_tokenizer(work / TOKENIZER_FILE, tokenizer_json)
        onnx.save(bert_graph(state, sizes, pooling), str(work / "model.onnx"))
        manifest = ModelManifest(
            name=name, family="transformer", dim=sizes.hidden, pooling=pooling,
            max_length=max_length, prefixes=prefixes, variants={"fp32": {"file": "model.onnx"}},
            pad_token_id=int(config.get("pad_token_id") or 0), tokenizer_file=TOKENIZER_FILE,
            languages=tuple(languages), source=source, licence=licence, notes=notes)
        report(0.2, "moving the embedding table out of the graph")
        manifest = split_folder(work, work, manifest, lambda f, m: report(0.2 + 0.4 * f, m),
                                dtypes=table_dtypes)
        parity = manifest.embeddings["parity"]
        manifest = replace(manifest, export_parity={
            "min_cosine": parity["min_cosine"], "sentences": parity["sentences"],
            "threshold": parity["threshold"], "opset": 17,
            "reference": "the graph written from the weights, with its own embedding lookup "
                         "(built without torch; tests compare it with the torch export)"})
        return make_variants(work, manifest, variants, None, tatoeba_dir,
                             lambda f, m: report(0.6 + 0.35 * f, m))

    return build_model(name, paths, build, report)


def _write_tokenizer(path: Path, tokenizer_json: str) -> None:
    """tokenizer.json without fixed padding or truncation (the encoder sets both per batch)."""
    data = json.loads(tokenizer_json)
    data["padding"] = None
    data["truncation"] = None
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
