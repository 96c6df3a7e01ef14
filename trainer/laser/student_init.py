"""A LASER student's first token embeddings, taken from its teacher's (vocabulary transfer).

    >>> rows = teacher_embedding_rows(vocab.dictionary, "multilingual-e5-small", 256, paths=paths)
    >>> rows.shape                      # (len(dictionary), 256); None: the teacher has no table

A student trained on ~20k sentences sees each of its pieces a few times only, too few to
learn from scratch that "▁haus" and "▁house" mean the same. The teacher's input embedding
table already places its subwords in one space shared by its languages, so each student
piece starts from the teacher's row of the same piece, or the mean of the rows of the
teacher's tokens of the piece's text (the vocabulary transfer of WECHSEL and FOCUS, here
from one SentencePiece vocabulary to another). The rows are centred, reduced (or padded)
to the student's width with PCA, and scaled to the unit variance torch gives a fresh
nn.Embedding, so the LSTM's default initialisation sees inputs of the size it expects.
Only teachers whose manifest has an `embeddings` table (engine.encoders.embedding_table,
every transformer Babelfind exports) can give rows; others return None.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from engine.config import DataPaths
from engine.encoders.laser_tokenizer import SPECIAL_IDS
from engine.encoders.unigram import METASPACE as WORD_START  # SentencePiece's word-start mark

log = logging.getLogger(__name__)

PAD_TOKEN = "<pad>"


def teacher_embedding_rows(dictionary: dict[str, int], teacher: str, embed_dim: int, *,
                           paths: DataPaths | None = None, seed: int = 0) -> np.ndarray | None:
    """float32 [len(dictionary), embed_dim] first embeddings for the student's tokens.

    Returns None when `teacher` is not a transformer with an embedding table (then the
    student starts from torch's random rows).

    Raises:
        ModelError: the teacher is not installed, or its table or tokenizer is damaged.
    """
    from tokenizers import Tokenizer

    from engine.encoders.embedding_table import EmbeddingTable
    from engine.models import get_manifest, model_dir

    manifest = get_manifest(teacher, paths)
    if manifest.family != "transformer" or not manifest.embeddings:
        log.info("teacher %s has no embedding table; the student's embeddings start random", teacher)
        return None
    folder = model_dir(teacher, paths)
    table = EmbeddingTable.open(folder, manifest.embeddings)
    tokenizer = Tokenizer.from_file(str(folder / manifest.tokenizer_file))
    tokens = sorted(dictionary, key=dictionary.get)  # token of id 0, 1, ...
    pieces = [piece_teacher_ids(token, tokenizer) for token in tokens]
    rows = np.zeros((len(tokens), table.dim), dtype=np.float32)
    mapped = np.array([bool(ids) for ids in pieces])
    for i, ids in enumerate(pieces):
        if ids:
            rows[i] = table.lookup(np.array(ids)).mean(axis=0)
    log.info("student embeddings from %s: %d of %d tokens found in its vocabulary",
             teacher, int(mapped.sum()), len(tokens))
    if mapped.sum() < 2:
        return None
    fitted = fit_rows(rows, mapped, embed_dim, np.random.default_rng(seed))
    fitted[dictionary[PAD_TOKEN]] = 0.0  # LASER's padding row (nn.Embedding's padding_idx)
    return fitted


def piece_teacher_ids(token: str, tokenizer) -> list[int]:
    """The teacher's token ids whose rows stand for one student token ([] when none).

    The same piece in the teacher's vocabulary first (SentencePiece teachers share the
    "▁" convention), or its capitalised form: the student's pieces are lower case (LASER
    lower-cases its input), a cased teacher may know only "▁Bahnhof". Else the teacher's
    own tokenisation of the piece's text, its unknown tokens and a bare "▁" left out (it
    would pull every such piece towards one row). LASER's special symbols match only by
    exact name.
    """
    for candidate in (token, _capitalised(token)):
        exact = tokenizer.token_to_id(candidate)
        if exact is not None:
            return [exact]
    if token in SPECIAL_IDS:
        return []
    text = token.replace(WORD_START, " ").strip()
    if not text:
        return []
    encoding = tokenizer.encode(text, add_special_tokens=False)
    unknown = {tokenizer.token_to_id(t) for t in _unknown_tokens(tokenizer)} - {None}
    ids = [i for i in encoding.ids if i not in unknown]
    return [i for i in ids if tokenizer.id_to_token(i) != WORD_START] or ids


def _capitalised(token: str) -> str:
    body = token.removeprefix(WORD_START)
    return token[:len(token) - len(body)] + body[:1].upper() + body[1:]


def _unknown_tokens(tokenizer) -> Sequence[str]:
    model = tokenizer.model
    unk = getattr(model, "unk_token", None)
    return [unk] if isinstance(unk, str) else ["<unk>", "[UNK]"]


def fit_rows(rows: np.ndarray, mapped: np.ndarray, embed_dim: int,
             rng: np.random.Generator) -> np.ndarray:
    """`rows` [V, D] centred, projected on their top `embed_dim` principal axes, unit variance.

    Rows not `mapped` (no teacher token) become the centre (zero). With embed_dim > D the
    extra columns are small noise (a tenth of the unit scale), so no unit starts dead.
    """
    known = rows[mapped].astype(np.float64)
    mean = known.mean(axis=0)
    centred = known - mean
    # principal axes of the mapped rows: the directions along which the teacher tells pieces
    # apart (eigenvectors of the D x D covariance: cheaper than an SVD of the V x D rows)
    spread, vectors = np.linalg.eigh(centred.T @ centred)  # ascending
    spread, axes = np.clip(spread[::-1], 0, None), vectors[:, ::-1].T  # axes [D, D], largest first
    keep = min(embed_dim, axes.shape[0], len(known) - 1)
    log.info("teacher rows -> %d dims: %.0f%% of their variance kept", embed_dim,
             100 * spread[:keep].sum() / max(spread.sum(), 1e-12))
    projected = centred @ axes[:keep].T  # [n, keep]
    projected /= max(float(np.sqrt((projected ** 2).sum(axis=1).mean() / embed_dim)), 1e-12)
    out = np.zeros((len(rows), embed_dim), dtype=np.float32)
    out[mapped, :keep] = projected
    if keep < embed_dim:
        out[:, keep:] = 0.1 * rng.standard_normal((len(rows), embed_dim - keep))
    return out
