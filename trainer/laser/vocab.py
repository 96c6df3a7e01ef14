"""A SentencePiece vocabulary for a LASER student, in the official file formats.

    >>> vocab = train_student_vocab(sentences, Path("run/vocab"), vocab_size=32000)
    >>> vocab.spm, vocab.cvocab, vocab.dictionary["</s>"]      # student.spm, student.cvocab, 2

The SentencePiece model learns from the sentences as the LASER tokenizer will hand them to
it at serving time (non-printing characters to spaces, Moses punctuation, lower case), so
training and serving cut words the same way. The `.cvocab` is a fairseq dictionary
("piece count" per line, token i has id i + 4 after <s>, <pad>, </s>, <unk>), exactly what
`laser2.cvocab` is, and the dictionary is what a LASER checkpoint stores: the existing
import path (trainer.laser.bilstm.export_laser) and the serving tokenizer read them unchanged.
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from engine.encoders.laser_tokenizer import SPECIAL_IDS, moses_normaliser, remove_non_printing
from engine.errors import InputError

log = logging.getLogger(__name__)

SPM_FILE = "student.spm"
CVOCAB_FILE = "student.cvocab"
MIN_VOCAB = 100  # below this SentencePiece has hardly more than the characters
# Chinese and Japanese sentences bring thousands of characters; the rarest 0.05% become
# <unk> rather than one piece each (the usual multilingual setting).
CHARACTER_COVERAGE = 0.9995


@dataclass(frozen=True)
class StudentVocab:
    spm: Path
    cvocab: Path
    dictionary: dict[str, int]  # token -> id, special symbols at 0-3 as in LASER checkpoints


def laser_preprocess(sentences: Sequence[str], lang: str = "en") -> list[str]:
    """The text SentencePiece sees at serving time (engine.encoders.laser_tokenizer)."""
    normaliser = moses_normaliser(lang)
    return [normaliser.normalize(remove_non_printing(s)).lower() for s in sentences]


def train_student_vocab(sentences: Sequence[str], folder: Path, *, vocab_size: int = 32000,
                        threads: int = 2) -> StudentVocab:
    """Learns a unigram SentencePiece model on `sentences`; writes .spm and .cvocab to `folder`.

    The vocabulary shrinks below `vocab_size` when the corpus is too small for it
    (SentencePiece's soft limit), rather than failing. Every sentence is read (no
    sampling), so the same sentences give the same vocabulary.

    Raises:
        InputError: no sentences, or `vocab_size` below MIN_VOCAB.
    """
    import sentencepiece

    if vocab_size < MIN_VOCAB:
        raise InputError(f"the vocabulary needs at least {MIN_VOCAB} pieces, got {vocab_size}")
    lines = [line for line in laser_preprocess(sentences) if line.strip()]
    if not lines:
        raise InputError("no sentences to learn a vocabulary from")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, vocab_size=vocab_size,
        model_type="unigram", character_coverage=CHARACTER_COVERAGE, hard_vocab_limit=False,
        # LASER's dictionary holds <s>, <pad>, </s>, <unk> itself; SentencePiece keeps only
        # its own <unk> (required) and no <s>/</s> pieces, so every other piece is a word part
        bos_id=-1, eos_id=-1, unk_id=0, input_sentence_size=2_000_000,
        seed_sentencepiece_size=1_000_000, num_threads=threads, minloglevel=2)
    spm_path = folder / SPM_FILE
    spm_path.write_bytes(model.getvalue())
    processor = sentencepiece.SentencePieceProcessor(model_file=str(spm_path))
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())
              if not (processor.is_unknown(i) or processor.is_control(i))]
    counts = Counter(piece for line in lines for piece in processor.encode(line, out_type=str))
    cvocab = folder / CVOCAB_FILE
    # fairseq writes "token count"; a piece never used in the corpus still gets count 0
    cvocab.write_text("".join(f"{piece} {counts.get(piece, 0)}\n" for piece in pieces),
                      encoding="utf-8")
    dictionary = dict(SPECIAL_IDS) | {piece: i + len(SPECIAL_IDS) for i, piece in enumerate(pieces)}
    log.info("student vocabulary: %d pieces from %d sentences", len(pieces), len(lines))
    return StudentVocab(spm_path, cvocab, dictionary)


def read_student_vocab(folder: Path) -> StudentVocab:
    """The vocabulary `train_student_vocab` wrote to `folder` (a resumed run reuses it)."""
    from engine.encoders.laser_tokenizer import read_cvocab

    folder = Path(folder)
    tokens = read_cvocab(folder / CVOCAB_FILE)
    dictionary = dict(SPECIAL_IDS) | {t: i + len(SPECIAL_IDS) for i, t in enumerate(tokens)}
    return StudentVocab(folder / SPM_FILE, folder / CVOCAB_FILE, dictionary)
