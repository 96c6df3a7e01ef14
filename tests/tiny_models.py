"""A tiny random BERT with a WordPiece tokenizer, written by tests (cheap to export).

    >>> folder = make_tiny_bert(tmp_path / "tiny")          # transformers folder
    >>> manifest = register_tiny_model(paths, "tiny")       # exported into a registry
    >>> register_old_format_model(paths, "old")             # as earlier versions wrote it
"""

from __future__ import annotations

import random
from pathlib import Path

WORDS = ("query passage the cat sat on mat dog runs fast slow red blue green house tree is a an and "
         "hello world der die das und ist la le et est el y es de en").split()
PIECES = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [str(d) for d in range(10)]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PUNCT = list(".,:;!?'\"-()")


def random_sentences(n: int, seed: int = 0) -> list[str]:
    """n seeded sentences of 1-40 words from the tiny vocabulary."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(n)]


def make_tiny_bert(folder: Path, seed: int = 0, max_positions: int = 64) -> Path:
    """Writes a 2-layer, hidden-32 BertModel and its fast tokenizer to `folder`."""
    import torch
    from transformers import BertConfig, BertModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = SPECIAL + PUNCT + PIECES + [f"##{p}" for p in PIECES] + WORDS
    write_wordpiece_tokenizer(folder, vocab)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=max_positions, pad_token_id=0)
    torch.manual_seed(seed)
    model = BertModel(config, add_pooling_layer=False)
    with torch.no_grad():  # default init (std 0.02) makes every sentence look alike
        for param in model.parameters():
            if param.dim() > 1:
                param.normal_(0, 0.3)
    model.save_pretrained(str(folder))
    return folder


def write_wordpiece_tokenizer(folder: Path, vocab: list[str]) -> None:
    """A lower-casing BERT WordPiece tokenizer over `vocab`, saved as a transformers folder."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    ids = {token: i for i, token in enumerate(vocab)}
    tokenizer = Tokenizer(models.WordPiece(ids, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
        pad_token="[PAD]", mask_token="[MASK]").save_pretrained(str(folder))


def register_tiny_model(paths, name: str = "tiny", *, pooling: str = "mean",
                        prefixes: dict | None = None, variants=(), seed: int = 0, **kwargs):
    """Exports a fresh tiny BERT into the registry at `paths`; returns its manifest."""
    from trainer.serving.export import export_transformer

    src = make_tiny_bert(paths.home / f"src-{name}", seed=seed)
    return export_transformer(src, name, pooling=pooling, max_length=64,
                              prefixes=prefixes or {"query": "query: ", "passage": "passage: "},
                              variants=variants, paths=paths, source="test", licence="MIT",
                              **kwargs)


def tiny_bert_weights(folder: Path) -> tuple[dict, dict, str]:
    """(state dict, config, tokenizer.json text) of a `make_tiny_bert` folder, read without torch."""
    import json

    from trainer.serving.bert_graph import read_safetensors

    folder = Path(folder)
    return (read_safetensors(folder / "model.safetensors"),
            json.loads((folder / "config.json").read_text(encoding="utf-8")),
            (folder / "tokenizer.json").read_text(encoding="utf-8"))


def register_old_format_model(paths, name: str = "old", *, seed: int = 0, int8: bool = True):
    """A registry folder as earlier versions wrote it: graphs that take input_ids and hold
    the embedding table (model.onnx, model.int8.onnx), no `embeddings` in the manifest."""
    from engine.model_manifest import ModelManifest, write_manifest
    from trainer.serving.export import TorchEncoder, _save_tokenizer, export_onnx
    from trainer.serving.quantise import quantise_int8

    src = make_tiny_bert(paths.home / f"src-{name}", seed=seed)
    folder = paths.models / name
    folder.mkdir(parents=True)
    torch_encoder = TorchEncoder(src, pooling="mean", max_length=64)
    _save_tokenizer(torch_encoder.tokenizer, folder)
    export_onnx(torch_encoder.head, folder / "model.onnx")
    variants = {"fp32": {"file": "model.onnx"}}
    if int8:
        quantise_int8(folder / "model.onnx", folder / "model.int8.onnx")
        variants["int8"] = {"file": "model.int8.onnx", "for": "cpu"}
    manifest = ModelManifest(name=name, family="transformer", dim=32, pooling="mean", max_length=64,
                             prefixes={"query": "query: ", "passage": "passage: "},
                             variants=variants, source="test", licence="MIT")
    return write_manifest(folder, manifest)
