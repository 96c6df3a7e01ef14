"""A LASER student's run folder: vocabulary, teacher cache, checkpoints, and the export.

    >>> manifest = finish_student(finished, "notes-laser")      # registered, family "laser"

Run folder layout::

    OUT/config.json                         the StudentConfig
    OUT/vocab/student.spm, student.cvocab   SentencePiece model + fairseq dictionary
    OUT/teacher.npy, teacher.json           the teacher's vectors of every target text
    OUT/checkpoints/step-00000200/          student.pt (LASER format) + state.pt
    OUT/latest.json                         names the last complete checkpoint
    OUT/best.pt                             the best student (LASER format), what is exported

`student.pt` and `best.pt` are LASER checkpoints (params, model, dictionary) as
`laser2.pt` is; state.pt is trainer.checkpoint's (optimiser, scheduler, RNG, TrainState),
read back with weights_only. Checkpoints are written to a temporary folder and renamed,
and latest.json is replaced atomically, as in trainer.checkpoint.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from engine.config import DataPaths, data_paths
from engine.errors import InputError
from trainer import checkpoint as ckpt
from trainer.laser.student_config import StudentConfig
from trainer.laser.vocab import StudentVocab, read_student_vocab, train_student_vocab

log = logging.getLogger(__name__)

STUDENT_FILE = "student.pt"
BEST_FILE = "best.pt"
TEACHER_CACHE = "teacher.npy"
VOCAB_DIR = "vocab"
PAD_ID = 1  # LASER's <pad>


def student_params(num_embeddings: int, embed_dim: int, hidden_size: int, num_layers: int) -> dict:
    """LaserLstm's constructor arguments, as a LASER checkpoint's `params` holds them."""
    return {"num_embeddings": num_embeddings, "padding_idx": PAD_ID, "embed_dim": embed_dim,
            "hidden_size": hidden_size, "num_layers": num_layers, "bidirectional": True,
            "left_pad": False, "padding_value": 0.0}


def save_student(path: Path, graph, params: dict, dictionary: dict) -> Path:
    """Writes the student `graph` as a LASER checkpoint (params, model, dictionary), atomically."""
    from trainer.laser.student_model import to_laser

    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    state = {k: v.clone() for k, v in to_laser(graph, params).state_dict().items()}
    torch.save({"params": dict(params), "model": state, "dictionary": dict(dictionary)}, tmp)
    os.replace(tmp, path)
    return path


def load_student_weights(path: Path, graph, params: dict) -> None:
    """Loads a checkpoint's student weights into `graph` (same shape, else InputError)."""
    from trainer.laser.bilstm import load_laser_checkpoint
    from trainer.laser.student_model import load_into

    loaded, saved_params, _vocab = load_laser_checkpoint(path)
    keys = ("num_embeddings", "embed_dim", "hidden_size", "num_layers", "bidirectional")
    if any(saved_params.get(k) != params[k] for k in keys):
        raise InputError(f"{path}: a student of another shape ({saved_params}) than this run's")
    load_into(graph, loaded)


def save_checkpoint(out_dir: Path, config: StudentConfig, model, params: dict, dictionary: dict,
                    optimizer, scheduler, state: ckpt.TrainState) -> Path:
    """Checkpoint `state.step` complete on disk, latest.json naming it, older ones removed."""
    root = Path(out_dir) / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"step-{state.step:08d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    save_student(tmp / STUDENT_FILE, model, params, dictionary)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "rng": ckpt.rng_state(), "state": ckpt._plain(state)}, tmp / "state.pt")
    (tmp / "config.json").write_text(config.to_json(), encoding="utf-8")
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    ckpt._write_json(Path(out_dir) / ckpt.LATEST, {"step": state.step, "path": f"checkpoints/{name}"})
    for old in root.glob("step-*"):
        if old != final:
            shutil.rmtree(old, ignore_errors=True)
    return final


def saved_config(out_dir: Path) -> StudentConfig:
    path = Path(out_dir) / "config.json"
    if not path.is_file():
        raise InputError(f"nothing to resume in {out_dir}: no config.json")
    return StudentConfig.from_json(path.read_text(encoding="utf-8")).with_out_dir(out_dir)


def data_fingerprint(texts: Sequence[str], targets: Sequence[str], items: np.ndarray) -> str:
    from trainer.laser.student_data import fingerprint

    return fingerprint([*texts, "\0", *targets, "\0", items.tobytes().hex()])


def vocabulary(out_dir: Path, texts: Sequence[str], config: StudentConfig, resume: bool) -> StudentVocab:
    """The run's vocabulary: learnt now, or (resuming) the one the checkpoints use."""
    folder = Path(out_dir) / VOCAB_DIR
    if resume and (folder / "student.cvocab").is_file():
        return read_student_vocab(folder)
    return train_student_vocab(texts, folder, vocab_size=config.vocab_size,
                               threads=config.threads or 2)


def tokenize(vocab: StudentVocab, texts: Sequence[str], max_len: int) -> list[list[int]]:
    """Token ids per text with the serving tokenizer (what the exported model will read)."""
    from engine.encoders.laser_tokenizer import LaserTokenizer

    return LaserTokenizer(vocab.spm, vocab.dictionary, max_length=max_len).batch_ids(texts)


def finish_student(finished, name: str, *, activate: bool = False, paths: DataPaths | None = None,
                   replace_existing: bool = False, progress=None):
    """Exports the run's best student to ONNX and registers it as `name` (family "laser").

    Raises:
        InputError: `name` is taken (without `replace_existing`) or invalid.
        ModelError: the ONNX graph disagrees with torch (nothing is registered then).
    """
    from engine.models import get_manifest, set_active
    from trainer.laser.bilstm import export_laser

    paths = paths or data_paths()
    config = finished.config
    vocab = Path(finished.run_dir) / VOCAB_DIR
    teacher = get_manifest(config.teacher, paths)
    training = {"method": "LASER teacher-student distillation (1 - cosine to the teacher)",
                "teacher": config.teacher, "config": config.to_dict(),
                "best_step": finished.best_step, "steps": finished.steps,
                "metric": finished.metric, "best_score": finished.best_score,
                "run_dir": str(Path(finished.run_dir).resolve())}
    manifest = export_laser(
        finished.best_checkpoint, vocab / "student.spm", vocab / "student.cvocab", name,
        languages=teacher.languages, source=f"LASER student distilled from {config.teacher}",
        licence=f"as the teacher and the training sentences (teacher: {teacher.licence})",
        notes=f"BiLSTM {config.num_layers} layer(s), {teacher.dim // 2} units per direction, "
              f"trained {finished.steps} steps on the user's sentences",
        training=training, paths=paths, replace_existing=replace_existing, progress=progress)
    if activate:
        set_active(name, paths)
    return manifest

