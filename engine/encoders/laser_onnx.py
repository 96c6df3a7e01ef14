"""LASER (BiLSTM) sentence encoders served by ONNX Runtime; no torch.

    >>> enc = LaserOnnxEncoder(folder, manifest)       # usually via engine.models.load_encoder
    >>> enc.encode(["Hallo Welt", "Hello world"])      # float32 [2, 1024], unit rows

The ONNX graph (made by trainer.laser.bilstm) takes int64 `input_ids` [batch, seq] (right-padded
with the pad id) and `lengths` [batch] (tokens per row, </s> included) and returns
`embedding` [batch, dim]: max-pooled BiLSTM states, L2-normalised inside the graph.
Text -> ids follows LASER's own preprocessing (engine.encoders.laser_tokenizer).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from engine.encoders.base import TextKind
from engine.encoders.laser_tokenizer import LaserTokenizer, read_vocab_json
from engine.encoders.onnx import LengthBatchedEncoder
from engine.errors import InputError

log = logging.getLogger(__name__)

INPUT_NAMES = ("input_ids", "lengths")
VOCAB_FILE = "laser_vocab.json"


def laser_vocab_file(manifest) -> str:
    """The token -> id file a LASER model folder serves with."""
    return (manifest.preprocessing or {}).get("vocab_file", VOCAB_FILE)


class LaserOnnxEncoder(LengthBatchedEncoder):
    """An `Encoder` for a registered LASER model: LASER preprocessing + ORT session.

    LASER has no query/passage prefixes; `kind` is checked and otherwise ignored.
    """

    graph_kind = "a LASER graph"
    input_names = INPUT_NAMES
    exact_inputs = True

    def __init__(self, folder: Path, manifest, *, variant: str = "fp32", device: str = "auto",
                 threads: int | None = None):
        super().__init__(folder, manifest, variant=variant, device=device, threads=threads)
        self.tokenizer = self._load_tokenizer(manifest)
        self.session = self._load_session(self.model_path)
        self._warm_up()

    def _load_tokenizer(self, manifest) -> LaserTokenizer:
        prep = manifest.preprocessing or {}
        vocab = read_vocab_json(self.folder / laser_vocab_file(manifest))
        return LaserTokenizer(self.folder / manifest.tokenizer_file, vocab,
                              lang=prep.get("punct_lang", "en"),
                              lower_case=bool(prep.get("lower_case", True)),
                              max_length=int(manifest.max_length))

    def tokenize(self, texts: Sequence[str], kind: TextKind = "passage") -> list[list[int]]:
        """Token ids per text (</s> last), after LASER's preprocessing."""
        if kind not in ("query", "passage"):
            raise InputError(f"unknown text kind {kind!r}; use 'query' or 'passage'")
        return self.tokenizer.batch_ids(texts)

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        # input_ids: int64 [batch, longest], right-padded; lengths: int64 [batch]
        lengths = np.array([len(r) for r in rows], dtype=np.int64)
        input_ids = np.full((len(rows), int(lengths.max())), self.pad_id, dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, :len(row)] = row
        feeds = {"input_ids": input_ids, "lengths": lengths}
        return np.asarray(self.session.run(None, feeds)[0], dtype=np.float32)

    def __repr__(self) -> str:
        return (f"LaserOnnxEncoder({self.name!r}, dim={self.dim}, variant={self.variant!r}, "
                f"device={self.device!r}, threads={self.threads}, "
                f"parallel_batches={self.parallel_batches})")
