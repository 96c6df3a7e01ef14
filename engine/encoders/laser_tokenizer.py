"""LASER text preprocessing: text -> token ids the BiLSTM encoder reads (no torch).

    >>> tok = LaserTokenizer(Path("laser2.spm"), vocab)       # vocab: token -> id
    >>> tok.ids("Hello, World!")                               # [..., 2]  (ends with </s>)

The steps are those of LASER's `laser_encoders.LaserTokenizer` and `SentenceEncoder`:

1. every Unicode "Other" character (categories Cc, Cf, Cs, Co, Cn) becomes a space;
2. Moses punctuation normalisation (sacremoses, Perl parity, language `lang`, with
   ‘ and ‚ mapped to '"' as in Moses release 4.0);
3. lower-casing;
4. SentencePiece pieces, each looked up in the checkpoint's dictionary (unknown ->
   <unk>), then </s> appended. No <s> is prepended for BiLSTM models.

The four special symbols have fixed ids, whatever the dictionary says (LASER forces them).
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Sequence

from engine.errors import ModelError

SPECIAL_IDS = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
BOS, PAD, EOS, UNK = 0, 1, 2, 3
_SPACES = re.compile(r"\s+")
# Moses release 4.0 turns single low/left quotes into double quotes; sacremoses' Perl
# parity table maps them to an apostrophe, so LASER overrides those two rules.
_MOSES_4_OVERRIDES = {"‘": '"', "‚": '"'}


def read_cvocab(path: Path) -> list[str]:
    """Tokens of a fairseq dictionary file ("token count" per line), in id order.

    Token i has id i + 4: fairseq puts <s>, <pad>, </s>, <unk> first.

    Raises:
        ModelError naming `path` when it is missing or a line is not "token count".
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ModelError(f"cannot read LASER vocabulary {path}: {e}", path) from e
    tokens = []
    for number, line in enumerate(lines, start=1):
        fields = line.rstrip().rsplit(" ", 2)
        if fields[-1] == "#fairseq:overwrite":  # flag: a duplicate of a special symbol
            fields = fields[:-1]
        if len(fields) != 2 or not fields[1].lstrip("-").isdigit():
            raise ModelError(f"{path}: line {number} is not 'token count': {line[:60]!r}", path)
        tokens.append(fields[0])
    if not tokens:
        raise ModelError(f"{path}: the vocabulary is empty", path)
    return tokens


def with_special_ids(vocab: dict) -> dict[str, int]:
    """`vocab` with <s>, <pad>, </s>, <unk> forced to ids 0-3 (as LASER does at load)."""
    return {str(k): int(v) for k, v in vocab.items()} | SPECIAL_IDS


def read_vocab_json(path: Path) -> dict[str, int]:
    """The token -> id mapping written at export (`laser_vocab.json`)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot read LASER vocabulary {path}: {e}", path) from e
    if not isinstance(data, dict) or not all(isinstance(v, int) for v in data.values()):
        raise ModelError(f"{path}: expected a JSON object of token -> integer id", path)
    return with_special_ids(data)


def remove_non_printing(text: str) -> str:
    """Characters of Unicode category C (control, format, unassigned...) -> spaces."""
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


class LaserTokenizer:
    """LASER preprocessing + SentencePiece + dictionary lookup.

    Args:
        spm_path: the SentencePiece model (`laser2.spm`).
        vocab: token -> id (the checkpoint's dictionary); special ids are forced.
        lang: language for Moses punctuation rules (LASER uses "en" for everything).
        lower_case: LASER2/3 lower-case before SentencePiece.
        max_length: most ids per text, </s> included (longer texts lose their tail).
    """

    def __init__(self, spm_path: Path, vocab: dict, *, lang: str = "en",
                 lower_case: bool = True, max_length: int | None = None):
        self.spm_path = Path(spm_path)
        self.vocab = with_special_ids(vocab)
        self.lang = lang
        self.lower_case = lower_case
        self.max_length = max_length
        self.spm = self._load_spm(self.spm_path)
        self.normaliser = moses_normaliser(lang)

    @staticmethod
    def _load_spm(path: Path):
        import sentencepiece

        if not path.is_file():
            raise ModelError(f"SentencePiece model is missing: {path}", path)
        try:
            return sentencepiece.SentencePieceProcessor(model_file=str(path))
        except (OSError, RuntimeError) as e:
            raise ModelError(f"{path} is not a SentencePiece model: {e}", path) from e

    def preprocess(self, text: str) -> str:
        """The text SentencePiece sees: printable, punctuation-normalised, lower-cased."""
        text = self.normaliser.normalize(remove_non_printing(text))
        return text.lower() if self.lower_case else text

    def pieces(self, text: str) -> list[str]:
        # LASER joins the pieces with spaces and splits the line again; kept for parity
        line = " ".join(self.spm.encode(self.preprocess(text), out_type=str))
        return _SPACES.sub(" ", line).strip().split()

    def ids(self, text: str) -> list[int]:
        """Token ids of `text`, </s> last."""
        ids = [self.vocab.get(piece, UNK) for piece in self.pieces(text)]
        if self.max_length is not None:
            ids = ids[:max(0, self.max_length - 1)]
        return ids + [EOS]

    def batch_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.ids(t) for t in texts]


def moses_normaliser(lang: str = "en"):
    """sacremoses' punctuation normaliser with LASER's Moses-4.0 quote rules."""
    from sacremoses import MosesPunctNormalizer

    normaliser = MosesPunctNormalizer(lang, perl_parity=True)
    normaliser.substitutions = [
        (pattern, _MOSES_4_OVERRIDES.get(pattern, replacement))
        for pattern, replacement in normaliser.substitutions
    ]
    return normaliser
