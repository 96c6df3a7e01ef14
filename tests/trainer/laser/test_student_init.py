"""trainer.laser.student_init: a LASER student's first embeddings from its teacher's table."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer

from engine.config import DataPaths
from engine.errors import InputError
from engine.encoders.embedding_table import EmbeddingTable
from engine.encoders.laser_tokenizer import SPECIAL_IDS
from engine.models import get_manifest, model_dir
from laser_models import make_tiny_laser, training_sentences
from tiny_models import WORDS, register_tiny_model
from trainer.laser.student import StudentFinished, train_student
from trainer.laser.student_config import StudentConfig
from trainer.laser.student_init import fit_rows, piece_teacher_ids, teacher_embedding_rows
from trainer.mixcse.train import TrainWarning

SMALL = dict(vocab_size=150, embed_dim=16, batch_size=16, held_out=40, one_per_line=True, lr=3e-3)
# the student's pieces as a LASER dictionary: specials at 0-3, then word starts and parts;
# more distinct teacher rows than the teacher's 32 dimensions, so PCA keeps them all
DICTIONARY = dict(SPECIAL_IDS) | {token: 4 + i for i, token in enumerate(dict.fromkeys(
    ["\u2581house", "\u2581House", "\u2581hous", "\u2581ca", "ts", "\u2581", "\u2581qqqq"]
    + [f"\u2581{word}" for word in WORDS]))}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """'tiny' (random BERT, dim 32, with an embedding table), 'laser' (a LASER model: no
    table), a corpus."""
    from trainer.laser.bilstm import export_laser

    paths = DataPaths(tmp_path_factory.mktemp("init-home"))
    register_tiny_model(paths, "tiny")
    files = make_tiny_laser(paths.home / "laser-files")
    export_laser(files.checkpoint, files.spm, files.cvocab, "laser", paths=paths)
    corpus = paths.home / "corpus.txt"
    corpus.write_text("\n".join(training_sentences(400)) + "\n", encoding="utf-8")
    return paths, corpus


def teacher_parts(paths, name="tiny"):
    manifest = get_manifest(name, paths)
    folder = model_dir(name, paths)
    return (EmbeddingTable.open(folder, manifest.embeddings),
            Tokenizer.from_file(str(folder / manifest.tokenizer_file)))


def test_a_piece_maps_to_the_same_teacher_token_else_to_its_tokenisation(home):
    _table, tokenizer = teacher_parts(home[0])
    house = tokenizer.token_to_id("house")
    # WordPiece has no "▁": the piece's text is tokenised ("house" is one word there)
    assert piece_teacher_ids("\u2581house", tokenizer) == [house]
    assert piece_teacher_ids("\u2581hous", tokenizer) == [tokenizer.token_to_id(t) for t in
                                                           ("h", "##o", "##u", "##s")]
    assert piece_teacher_ids("[SEP]", tokenizer) == [tokenizer.token_to_id("[SEP]")]  # exact name
    assert piece_teacher_ids("</s>", tokenizer) == []  # a LASER special the teacher lacks
    assert piece_teacher_ids("\u2581", tokenizer) == []  # nothing but the word-start mark
    assert piece_teacher_ids("\u2581\u0416", tokenizer) == []  # only the teacher's [UNK]


def test_a_cased_sentencepiece_teacher_gives_the_lower_case_piece_its_capitalised_row():
    from tokenizers import models, pre_tokenizers

    vocab = [("<unk>", 0.0), ("\u2581", -1.0), ("\u2581Bahnhof", -2.0), ("bahn", -3.0),
             ("hof", -3.0), ("ing", -3.0)] + [(c, -5.0) for c in "abfhino"]
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=0))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    assert piece_teacher_ids("\u2581bahnhof", tokenizer) == [2]  # "▁Bahnhof"
    assert piece_teacher_ids("ing", tokenizer) == [5]
    # not a whole teacher piece: its tokenisation "▁", "bahn", "hof", "bahn", the bare "▁" left out
    assert piece_teacher_ids("\u2581bahnhofbahn", tokenizer) == [3, 4, 3]


def test_fit_rows_centres_projects_and_scales():
    rng = np.random.default_rng(0)
    rows = (rng.standard_normal((200, 8)) * np.arange(1, 9)[::-1] + 5.0).astype(np.float32)
    mapped = np.ones(200, dtype=bool)
    mapped[:3] = False
    fitted = fit_rows(rows, mapped, 4, rng)
    assert fitted.shape == (200, 4) and fitted.dtype == np.float32
    assert np.all(fitted[:3] == 0)  # unmapped rows sit at the centre
    known = fitted[mapped]
    assert np.allclose(known.mean(axis=0), 0, atol=1e-5)
    assert np.isclose((known ** 2).sum(axis=1).mean() / 4, 1.0, atol=1e-4)  # unit variance
    spread = known.var(axis=0)
    assert np.all(np.diff(spread) < 0)  # principal axes, largest first
    # same width: a rotation and one scale, so the rows' geometry is the teacher's
    full = fit_rows(rows, mapped, 8, rng)[mapped]
    centred = rows[mapped] - rows[mapped].mean(axis=0)
    gram, reference = full @ full.T, centred @ centred.T
    assert np.allclose(gram / gram[0, 0], reference / reference[0, 0], atol=1e-3)
    wide = fit_rows(rows, mapped, 12, rng)
    assert wide.shape == (200, 12) and 0 < np.abs(wide[:, 8:]).max() < 1  # small noise columns


def test_teacher_rows_follow_the_teacher_table(home):
    paths, _ = home
    rows = teacher_embedding_rows(DICTIONARY, "tiny", 32, paths=paths)
    table, tokenizer = teacher_parts(paths)
    assert rows.shape == (len(DICTIONARY), 32)
    assert np.all(rows[SPECIAL_IDS["<pad>"]] == 0)
    # "▁House" and "▁house" are one teacher token (the tokenizer lower-cases): one row
    assert np.array_equal(rows[DICTIONARY["\u2581house"]], rows[DICTIONARY["\u2581House"]])
    # the geometry of the teacher's rows is kept (same width: PCA is a rotation)
    tokens = sorted(DICTIONARY, key=DICTIONARY.get)
    teacher = {t: table.lookup(np.array(ids)).mean(axis=0) for t in tokens
               if (ids := piece_teacher_ids(t, tokenizer))}
    assert "\u2581qqqq" in teacher and "</s>" not in teacher  # [UNK] aside, q is a piece
    mean = np.mean(list(teacher.values()), axis=0)
    names = ("\u2581house", "\u2581cat", "ts", "\u2581qqqq")
    unit = lambda m: m / np.linalg.norm(m, axis=1, keepdims=True)  # noqa: E731
    expected = unit(np.stack([teacher[t] - mean for t in names]))
    student = unit(rows[[DICTIONARY[t] for t in names]])
    assert np.allclose(student @ student.T, expected @ expected.T, atol=1e-4)
    assert np.all(rows[DICTIONARY["</s>"]] == 0)  # no teacher token: the centre


def test_a_teacher_without_a_table_gives_none(home):
    assert teacher_embedding_rows(DICTIONARY, "laser", 16, paths=home[0]) is None


def first_embeddings(config: StudentConfig, paths) -> tuple[list, torch.Tensor]:
    """(events, the embedding rows the run saved at step 0: its first best.pt)."""
    events = list(train_student(config, paths=paths))
    finished = next(e for e in events if isinstance(e, StudentFinished))
    return events, torch.load(finished.best_checkpoint, weights_only=True)["model"]["embed_tokens.weight"]


def test_a_run_starts_from_the_teacher_rows_and_can_opt_out(home, tmp_path):
    paths, corpus = home
    config = StudentConfig(teacher="tiny", corpus=(str(corpus),), out_dir=tmp_path / "on",
                           steps=1, eval_steps=1, lr=1e-9, **{k: v for k, v in SMALL.items() if k != "lr"})
    _events, weights = first_embeddings(config, paths)
    from trainer.laser.vocab import read_student_vocab

    dictionary = read_student_vocab(tmp_path / "on" / "vocab").dictionary
    expected = teacher_embedding_rows(dictionary, "tiny", 16, paths=paths, seed=config.seed)
    assert torch.allclose(weights, torch.from_numpy(expected), atol=1e-5)  # lr ~0: unchanged
    off = StudentConfig(**(config.to_dict() | dict(out_dir=tmp_path / "off", corpus=(str(corpus),),
                                                   init_from_teacher=False, pairs=())))
    _events, random_weights = first_embeddings(off, paths)
    assert not torch.allclose(random_weights, weights, atol=1e-2)


def test_a_teacher_without_a_table_warns_and_trains_from_random_rows(home, tmp_path):
    paths, corpus = home
    config = StudentConfig(teacher="laser", corpus=(str(corpus),), out_dir=tmp_path / "run",
                           steps=2, eval_steps=2, **SMALL)
    events = list(train_student(config, paths=paths))
    assert any(isinstance(e, TrainWarning) and "no token embedding table" in e.message
               for e in events)
    assert isinstance(events[-1], StudentFinished)


def trained_weights(home, out, **overrides) -> dict:
    paths, corpus = home
    config = StudentConfig(teacher="tiny", corpus=(str(corpus),), out_dir=out, steps=6,
                           eval_steps=100, held_out=0, **({k: v for k, v in SMALL.items()
                                                           if k != "held_out"} | overrides))
    events = list(train_student(config, paths=paths))
    return torch.load(events[-1].best_checkpoint, weights_only=True)["model"]


def test_embedding_lr_scale_slows_or_freezes_the_teacher_rows(home, tmp_path):
    from trainer.laser.vocab import read_student_vocab

    moved = {scale: trained_weights(home, tmp_path / f"s{scale}", embedding_lr_scale=scale)
             for scale in (1.0, 0.1, 0.0)}
    dictionary = read_student_vocab(tmp_path / "s0.0" / "vocab").dictionary
    start = torch.from_numpy(teacher_embedding_rows(dictionary, "tiny", 16, paths=home[0], seed=42))
    shift = {s: float((w["embed_tokens.weight"] - start).abs().max()) for s, w in moved.items()}
    assert shift[0.0] == 0.0 < shift[0.1] < shift[1.0]
    # frozen embeddings, training LSTMs: their weights are not those of a run that hardly moved
    still = trained_weights(home, tmp_path / "still", lr=1e-12)["lstm.weight_ih_l0"]
    assert (moved[0.0]["lstm.weight_ih_l0"] - still).abs().max() > 1e-3


@pytest.mark.parametrize("scale", [-0.1, 1.5])
def test_embedding_lr_scale_outside_0_1_is_refused(scale, tmp_path):
    with pytest.raises(InputError, match="embedding_lr_scale"):
        StudentConfig(teacher="t", corpus=("x",), out_dir=tmp_path, embedding_lr_scale=scale)
