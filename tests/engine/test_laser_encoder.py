"""engine.encoders.laser_onnx / laser_tokenizer: LASER models served without torch."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from engine.config import DataPaths
from engine.encoders.laser_tokenizer import (EOS, UNK, LaserTokenizer, read_cvocab,
                                             remove_non_printing)
from engine.errors import InputError, ModelError
from engine.models import load_encoder, model_dir
from laser_models import make_tiny_laser, spm_pieces

TEXTS = ["The cat sits on a mat.", "Wo ist der Hund?", "x", "Мы встретимся завтра утром у входа.",
         "我明天要去北京出差", "", "Le chat est rapide, la maison est rouge et le soir est lent."]


@pytest.fixture(scope="module")
def laser_files(tmp_path_factory):
    return make_tiny_laser(tmp_path_factory.mktemp("laser"))


@pytest.fixture(scope="module")
def registered(laser_files, tmp_path_factory):
    """(paths, manifest) of the tiny LASER model exported into a registry."""
    from trainer.laser.bilstm import export_laser

    paths = DataPaths(tmp_path_factory.mktemp("laser-home"))
    manifest = export_laser(laser_files.checkpoint, laser_files.spm, laser_files.cvocab,
                            "tiny-laser", paths=paths)
    return paths, manifest


def tokenizer(laser_files, **kwargs) -> LaserTokenizer:
    pieces = spm_pieces(laser_files.spm)
    return LaserTokenizer(laser_files.spm, {p: i + 4 for i, p in enumerate(pieces)}, **kwargs)


def test_preprocessing_follows_laser(laser_files):
    tok = tokenizer(laser_files)
    assert remove_non_printing("a\tb\u200bc\x00d") == "a b c d"
    # Moses punctuation (Perl parity, 4.0 quotes), then lower case
    assert tok.preprocess("He said «Hello» — ‘OK’ 3 %") == 'he said "hello" - "ok" 3%'
    assert tokenizer(laser_files, lower_case=False).preprocess("ÉTÉ") == "ÉTÉ"
    # the inputs of laser_encoders' own tokenizer tests, at the text level
    assert tok.preprocess("Hello, \tWorld! ABC\x1f123") == "hello, world! abc 123"
    assert tok.preprocess("Hello!!! How are you??? I'm doing great.") == (
        "hello!!! how are you??? i'm doing great.")


def test_ids_end_with_eos_and_map_unknown_pieces(laser_files):
    tok = tokenizer(laser_files)
    ids = tok.ids("The cat sits.")
    assert ids[-1] == EOS and len(ids) == len(tok.pieces("The cat sits.")) + 1
    assert tok.vocab["▁the"] in ids
    # a piece the checkpoint's dictionary lacks becomes <unk>
    short = LaserTokenizer(laser_files.spm, {k: v for k, v in tok.vocab.items() if k != "▁the"})
    assert short.pieces("the") == ["▁the"] and short.ids("the") == [UNK, EOS]
    assert tok.ids("") == [EOS]
    truncated = tokenizer(laser_files, max_length=4).ids(TEXTS[-1])
    assert len(truncated) == 4 and truncated[-1] == EOS


def test_served_encoder_equals_torch_module(laser_files, registered):
    from trainer.laser.bilstm import load_laser_checkpoint, torch_encode

    paths, _ = registered
    encoder = load_encoder("tiny-laser", paths=paths, device="cpu")
    module, _, vocab = load_laser_checkpoint(laser_files.checkpoint)
    reference = torch_encode(module, LaserTokenizer(laser_files.spm, vocab), TEXTS, batch_size=3)
    vectors = encoder.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_input_order_is_restored_across_length_batches(registered):
    paths, _ = registered
    encoder = load_encoder("tiny-laser", paths=paths, device="cpu")
    together = encoder.encode(TEXTS, kind="query")
    one_by_one = np.vstack([encoder.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    with pytest.raises(InputError):
        encoder.encode("one string")
    with pytest.raises(InputError):
        encoder.encode(["x"], kind="title")


def test_batches_run_side_by_side_give_the_serial_vectors(registered):
    paths, _ = registered
    encoder = load_encoder("tiny-laser", paths=paths, device="cpu", threads=2)
    assert encoder.parallel_batches == 2
    texts = TEXTS * 9  # 63 texts: several batches of mixed lengths
    side_by_side = encoder.encode(texts)
    encoder.parallel_batches = 1
    np.testing.assert_array_equal(encoder.encode(texts), side_by_side)


def test_serving_never_imports_torch(registered):
    paths, _ = registered
    code = ("import sys; from pathlib import Path; from engine.config import DataPaths; from engine.models import load_encoder;"
            f"e = load_encoder('tiny-laser', paths=DataPaths(Path({str(paths.home)!r})), device='cpu');"
            "print(e.encode(['Hallo Welt']).shape);"
            "assert 'torch' not in sys.modules, 'torch was imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "(1, 16)" in result.stdout


def test_damaged_vocab_file_is_named(registered, tmp_path):
    import shutil

    paths, _ = registered
    copy = DataPaths(tmp_path / "home")
    shutil.copytree(paths.models, copy.models)
    vocab = model_dir("tiny-laser", copy) / "laser_vocab.json"
    vocab.write_text(json.dumps({"▁the": 7}), encoding="utf-8")
    with pytest.raises(ModelError, match="checksum") as excinfo:
        load_encoder("tiny-laser", paths=copy, device="cpu")
    assert excinfo.value.path == vocab


def test_bad_cvocab_line_is_named(tmp_path):
    path = tmp_path / "bad.cvocab"
    path.write_text("▁the 12\nno-count-here\n", encoding="utf-8")
    with pytest.raises(ModelError, match="line 2") as excinfo:
        read_cvocab(path)
    assert excinfo.value.path == path
    good = tmp_path / "good.cvocab"
    good.write_text("▁the 12\n<pad> 1 #fairseq:overwrite\n", encoding="utf-8")
    assert read_cvocab(good) == ["▁the", "<pad>"]


def test_missing_spm_model_is_named(laser_files, tmp_path):
    with pytest.raises(ModelError, match="missing") as excinfo:
        LaserTokenizer(tmp_path / "absent.spm", {})
    assert excinfo.value.path == tmp_path / "absent.spm"
    not_spm = tmp_path / "not.spm"
    not_spm.write_bytes(b"\x00garbage" * 10)
    with pytest.raises(ModelError, match="not a SentencePiece model"):
        LaserTokenizer(not_spm, {})


def test_zip_export_and_import_keep_the_laser_model(registered, tmp_path):
    from engine.encoders.laser_onnx import LaserOnnxEncoder
    from engine.models import export_model, import_model

    paths, manifest = registered
    archive = export_model("tiny-laser", tmp_path / "tiny-laser.zip", paths)
    other = DataPaths(tmp_path / "other-home")
    imported = import_model(archive, other)
    assert imported.family == "laser" and imported.preprocessing == manifest.preprocessing
    encoder = load_encoder("tiny-laser", paths=other, device="cpu")
    assert isinstance(encoder, LaserOnnxEncoder)
    original = load_encoder("tiny-laser", paths=paths, device="cpu")
    np.testing.assert_array_equal(encoder.encode(TEXTS), original.encode(TEXTS))


def test_transformer_graph_under_a_laser_manifest_is_named(registered, tmp_path):
    import shutil

    import onnx
    from onnx import TensorProto, helper

    from engine.model_manifest import read_manifest, write_manifest

    paths, _ = registered
    copy = DataPaths(tmp_path / "home")
    shutil.copytree(paths.models, copy.models)
    folder = model_dir("tiny-laser", copy)
    # a transformer-style graph: input_ids + attention_mask -> [batch, 16]
    graph = helper.make_graph(
        [helper.make_node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
         helper.make_node("ReduceMean", ["ids_f"], ["mean"], axes=[1], keepdims=1),
         helper.make_node("Tile", ["mean", "reps"], ["embedding"])],
        "not-laser",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor("reps", TensorProto.INT64, [2], [1, 16])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              folder / "model.onnx")
    write_manifest(folder, read_manifest(folder))
    with pytest.raises(ModelError, match="not a LASER graph") as excinfo:
        load_encoder("tiny-laser", paths=copy, device="cpu")
    assert excinfo.value.path == folder / "model.onnx"
