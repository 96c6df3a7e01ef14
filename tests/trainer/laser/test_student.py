"""trainer.laser.student: a LASER BiLSTM distilled from a (tiny) registered teacher."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from engine.config import DataPaths
from engine.encoders.laser_tokenizer import read_cvocab
from engine.errors import InputError
from laser_models import training_sentences
from tiny_models import register_tiny_model
from trainer.laser.bilstm import torch_encode
from trainer.laser.student import StudentFinished, StudentStarted, train_student
from trainer.laser.student_config import StudentConfig
from trainer.laser.student_data import length_batches, sentence_spans, student_items
from trainer.laser.student_files import BEST_FILE, finish_student, tokenize
from trainer.laser.student_model import new_student, to_laser
from trainer.laser.vocab import read_student_vocab, train_student_vocab
from trainer.mixcse.train import TrainCheckpoint, TrainEval, TrainStep

SMALL = dict(vocab_size=150, embed_dim=16, batch_size=16, held_out=40, one_per_line=True, lr=3e-3)


@pytest.fixture(scope="module")
def teacher_home(tmp_path_factory):
    """A registry with 'tiny' (random BERT, dim 32) and a corpus file of 500 sentences."""
    paths = DataPaths(tmp_path_factory.mktemp("student-home"))
    register_tiny_model(paths, "tiny")
    corpus = paths.home / "corpus.txt"
    corpus.write_text("\n".join(training_sentences(500)) + "\n", encoding="utf-8")
    return paths, corpus


def config_for(teacher_home, out: Path, **overrides) -> StudentConfig:
    _paths, corpus = teacher_home
    return StudentConfig(teacher="tiny", corpus=(str(corpus),), out_dir=out, **(SMALL | overrides))


def run(config, paths, **kwargs) -> list:
    return list(train_student(config, paths=paths, **kwargs))


def test_vocab_is_in_the_official_formats(tmp_path):
    vocab = train_student_vocab(training_sentences(300), tmp_path, vocab_size=120)
    tokens = read_cvocab(vocab.cvocab)
    assert [vocab.dictionary[t] for t in tokens] == list(range(4, 4 + len(tokens)))
    assert vocab.dictionary["</s>"] == 2 and vocab.dictionary["<pad>"] == 1
    assert read_student_vocab(tmp_path).dictionary == vocab.dictionary
    # the serving tokenizer reads it: lower-cased pieces, </s> last
    ids = tokenize(vocab, ["The CAT sits."], 64)[0]
    assert ids[-1] == 2 and 3 not in ids  # every piece known, none <unk>


def test_vocab_refuses_nothing_to_learn(tmp_path):
    with pytest.raises(InputError, match="no sentences"):
        train_student_vocab(["   "], tmp_path)
    with pytest.raises(InputError, match="at least"):
        train_student_vocab(["a b c"], tmp_path, vocab_size=10)


def test_pairs_add_each_side_to_the_other_vector():
    items = student_items(["a", "b"], [("a", "x")])
    assert items == [("a", "a"), ("b", "b"), ("x", "x"), ("a", "x"), ("x", "a")]


def test_spans_are_shorter_runs_of_their_sentence():
    sentences = ["the quick brown fox jumps over the lazy dog near the river bank today",
                 "too short to cut", "敏捷的棕色狐狸跳过了那只懒狗然后跑进了森林"]
    spans = sentence_spans(sentences, 3, seed=1)
    english = [s for s in spans if " " in s]
    chinese = [s for s in spans if " " not in s]
    assert english and chinese and len(spans) == len(set(spans)) <= 6
    for span in english:
        assert f" {span} " in f" {sentences[0]} " and 3 <= len(span.split()) < 14
    for span in chinese:
        assert span in sentences[2] and 5 <= len(span) <= 15
    assert not any(s in "too short to cut" for s in spans)
    assert sentence_spans(sentences, 3, seed=1) == spans  # the seed decides
    assert sentence_spans(sentences, 0, seed=1) == []


def test_length_batches_cover_each_item_once_and_sort_within_windows():
    lengths = np.random.default_rng(0).integers(1, 60, 1000)
    batches = length_batches(np.random.default_rng(1), lengths, 32, window=4)
    flat = np.concatenate(batches)
    assert len(batches) == 1000 // 32 and len(set(flat.tolist())) == len(flat)
    assert all(np.all(np.diff(lengths[b]) >= 0) for b in batches)


def test_trained_graph_is_the_laser_checkpoint_it_saves():
    params = dict(num_embeddings=40, padding_idx=1, embed_dim=6, hidden_size=5, num_layers=2,
                  bidirectional=True, left_pad=False, padding_value=0.0)
    torch.manual_seed(0)
    graph = new_student(params).eval()
    rows = [[5, 9, 12, 7, 2], [8, 2], [4, 4, 11, 3, 6, 20, 13, 2]]
    tokens = torch.full((3, 8), 1)
    for i, row in enumerate(rows):
        tokens[i, :len(row)] = torch.tensor(row)
    lengths = torch.tensor([len(r) for r in rows])
    with torch.no_grad():
        expected = graph(tokens, lengths)
        packed = torch.nn.functional.normalize(to_laser(graph, params)(tokens, lengths), dim=-1)
    assert torch.allclose(expected, packed, atol=1e-6)


def test_training_lowers_the_loss_and_exports_with_parity(teacher_home, tmp_path):
    paths, _ = teacher_home
    events = run(config_for(teacher_home, tmp_path / "run", steps=40, eval_steps=20), paths)
    started = next(e for e in events if isinstance(e, StudentStarted))
    assert started.dim == 32 and started.total_steps == 40
    losses = [e.loss for e in events if isinstance(e, TrainStep)]
    assert len(losses) == 40 and np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    scores = [e.score for e in events if isinstance(e, TrainEval)]
    assert scores[-1] > scores[0] + 3  # held-out cosine to the (centred) teacher, x 100
    finished = events[-1]
    assert isinstance(finished, StudentFinished) and finished.best_checkpoint.name == BEST_FILE

    manifest = finish_student(finished, "tiny-laser", paths=paths)
    assert (manifest.family, manifest.dim) == ("laser", 32)
    assert manifest.training["teacher"] == "tiny" and manifest.training["steps"] == 40
    from engine.models import load_encoder
    from trainer.laser.bilstm import load_laser_checkpoint
    from engine.encoders.laser_tokenizer import LaserTokenizer

    encoder, _params, vocab = load_laser_checkpoint(finished.best_checkpoint)
    texts = training_sentences(30, seed=7) + ["Где библиотека?", "我明天要去北京出差"]
    tokenizer = LaserTokenizer(tmp_path / "run" / "vocab" / "student.spm", vocab, max_length=1024)
    reference = torch_encode(encoder, tokenizer, texts)
    served = load_encoder("tiny-laser", paths=paths, device="cpu").encode(texts)
    assert np.abs(reference - served).max() <= 1e-4


def test_cancel_then_resume_gives_the_uninterrupted_result(teacher_home, tmp_path):
    paths, _ = teacher_home
    whole = run(config_for(teacher_home, tmp_path / "whole", steps=12, eval_steps=4), paths)
    config = config_for(teacher_home, tmp_path / "split", steps=12, eval_steps=4)
    events = train_student(config, paths=paths)
    for event in events:
        if isinstance(event, TrainCheckpoint) and event.step == 8:
            break
    events.close()  # cancel: the checkpoint of step 8 stays
    teacher_calls = []
    resumed = run(config, paths, resume=True, teacher=CountingTeacher(paths, teacher_calls))
    assert teacher_calls == []  # the teacher's vectors came from the run folder's cache
    steps = [e.step for e in resumed if isinstance(e, TrainStep)]
    assert steps == [9, 10, 11, 12]
    final = lambda events: torch.load(events[-1].best_checkpoint, weights_only=True)["model"]  # noqa: E731
    a, b = final(whole), final(resumed)
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_resume_refuses_a_changed_corpus(teacher_home, tmp_path):
    paths, corpus = teacher_home
    config = config_for(teacher_home, tmp_path / "run", steps=4, eval_steps=2)
    run(config, paths)
    other = tmp_path / "other.txt"
    other.write_text("\n".join(training_sentences(500, seed=3)), encoding="utf-8")
    (tmp_path / "run" / "config.json").write_text(
        config_for(teacher_home, tmp_path / "run", steps=4, eval_steps=2).to_json().replace(
            str(corpus), str(other)), encoding="utf-8")
    with pytest.raises(InputError, match="corpus changed"):
        run(config, paths, resume=True)


def test_nothing_to_resume_and_too_little_data(teacher_home, tmp_path):
    paths, _ = teacher_home
    with pytest.raises(InputError, match="nothing to resume"):
        run(config_for(teacher_home, tmp_path / "empty"), paths, resume=True)
    few = tmp_path / "few.txt"
    few.write_text("\n".join(training_sentences(8)), encoding="utf-8")  # with their spans < 2 batches
    with pytest.raises(InputError, match="too few"):
        run(StudentConfig(teacher="tiny", corpus=(str(few),), out_dir=tmp_path / "few", **SMALL), paths)


def test_a_teacher_with_an_odd_dimension_is_refused(teacher_home, tmp_path):
    paths, _ = teacher_home
    with pytest.raises(InputError, match="even number"):
        run(config_for(teacher_home, tmp_path / "odd"), paths, teacher=OddTeacher())


@pytest.mark.parametrize("bad, match", [(dict(corpus=()), "give sentences"),
                                        (dict(batch_size=1), "batch_size"),
                                        (dict(lr=0), "lr"), (dict(time_limit_s=0), "time_limit_s")])
def test_bad_settings_are_refused(bad, match, tmp_path):
    settings = dict(teacher="t", corpus=("x",), out_dir=tmp_path) | bad
    with pytest.raises(InputError, match=match):
        StudentConfig(**settings)


def test_config_round_trips_through_json(tmp_path):
    config = StudentConfig(teacher="t", corpus=("a", "b"), pairs=("p.tsv",), out_dir=tmp_path, steps=5)
    assert StudentConfig.from_json(config.to_json()) == config


class CountingTeacher:
    """The tiny teacher, recording each encode call."""

    def __init__(self, paths, calls):
        from engine.models import load_encoder

        self.inner, self.calls = load_encoder("tiny", paths=paths, device="cpu"), calls
        self.dim = self.inner.dim

    def encode(self, texts, kind="query"):
        self.calls.append(len(texts))
        return self.inner.encode(texts, kind=kind)


class OddTeacher:
    dim = 33

    def encode(self, texts, kind="query"):
        raise AssertionError("never called")


def test_pairs_keep_one_sentence_with_several_translations(tmp_path):
    from trainer.laser.student_data import read_pairs

    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("1.0\tHallo Welt\tHello world\n1.0\tBonjour le monde\tHello world\n"
                   "1.0\tHallo  Welt\tHello world\n", encoding="utf-8")
    pairs, stats = read_pairs([tsv])
    assert pairs == [("Hallo Welt", "Hello world"), ("Bonjour le monde", "Hello world")]
    assert (stats.read, stats.duplicates, stats.kept) == (3, 1, 2)


def test_held_out_sentences_are_in_no_pair(teacher_home, tmp_path):
    from trainer.laser.student import _read_data

    _paths, corpus = teacher_home
    sentences = corpus.read_text(encoding="utf-8").splitlines()
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("".join(f"1.0\t{s}\tTranslation number {i}\n" for i, s in enumerate(sentences[:300])),
                   encoding="utf-8")
    data = _read_data(config_for(teacher_home, tmp_path / "run", pairs=(str(tsv),)))
    held = {data.texts[i] for i, _ in data.held_out}
    trained = {data.texts[i] for i, _ in data.train}
    assert len(held) == 40 and not held & set(sentences[:300]) and not held & trained
    # spans of the trained sentences are trained on; none comes from a held-out sentence
    spans = trained - set(sentences) - {f"Translation number {i}" for i in range(300)}
    assert len(spans) > len(sentences)
    assert all(any(span in s for s in trained & set(sentences)) for span in spans)


def test_targets_are_centred_unit_vectors():
    from trainer.laser.student import centred

    rng = np.random.default_rng(0)
    common = rng.normal(size=8) * 5  # the direction every "sentence" shares
    raw = common + rng.normal(size=(50, 8))
    raw /= np.linalg.norm(raw, axis=1, keepdims=True)
    assert (raw @ raw.T).mean() > 0.8  # unrelated rows look alike before
    out = centred(raw)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    assert abs(float((out @ out.T)[~np.eye(50, dtype=bool)].mean())) < 0.1
