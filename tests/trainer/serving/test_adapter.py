"""The adapter: made from two state dicts, written, read back with its hash checked, and
folded with numpy into the torch-free build so that it gives what torch gives."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from engine.config import DataPaths
from engine.errors import ModelError
from engine.models import load_encoder
from tiny_models import make_tiny_bert, random_sentences, tiny_bert_weights
from trainer.serving.adapter import Adapter, fold_adapter, make_adapter, read_adapter, write_adapter
from trainer.serving.bert_build import register_bert

TEXTS = random_sentences(24, seed=11)
QUERY = "encoder.layer.0.attention.self.query.weight"


@pytest.fixture(scope="module")
def tiny_src(tmp_path_factory):
    pytest.importorskip("torch")
    return make_tiny_bert(tmp_path_factory.mktemp("tiny-src"))


def _tuned(state: dict[str, np.ndarray], seed: int = 3) -> dict[str, np.ndarray]:
    """`state` as training with trainable="body" leaves it: every bias, norm and layer
    matrix moved, the embedding tables as they were."""
    rng = np.random.default_rng(seed)
    return {name: (w if "embeddings." in name and w.ndim == 2
                   else w + rng.normal(0, 0.05, w.shape).astype(np.float32)) for name, w in state.items()}


def _adapter(state: dict[str, np.ndarray], rank: int) -> Adapter:
    return make_adapter(state, _tuned(state), rank=rank, meta={"kind": "test", "base_sha256": "b" * 64})


def test_vectors_fold_exactly_and_matrices_at_full_rank(tiny_src):
    state, _, _ = tiny_bert_weights(tiny_src)
    tuned = _tuned(state)
    folded, _ = fold_adapter(state, None, make_adapter(state, tuned, rank=64))
    for name, weight in tuned.items():
        np.testing.assert_allclose(folded[name], weight, atol=1e-5, err_msg=name)


def test_bias_and_norm_adapter_has_no_matrices_and_keeps_the_word_table_out(tiny_src):
    state, _, _ = tiny_bert_weights(tiny_src)
    adapter = _adapter(state, rank=0)
    assert not adapter.low_rank and adapter.deltas
    assert all(d.ndim == 1 for d in adapter.deltas.values())
    assert not any("word_embeddings" in name for name in adapter.deltas)


def test_low_rank_update_keeps_the_largest_directions(tiny_src):
    state, _, _ = tiny_bert_weights(tiny_src)
    rng = np.random.default_rng(0)
    change = (rng.normal(size=(32, 2)) @ rng.normal(size=(2, 32))).astype(np.float32)  # rank 2
    tuned = state | {QUERY: state[QUERY] + change}
    up, down = make_adapter(state, tuned, rank=2).low_rank[QUERY]
    assert up.shape == (32, 2) and down.shape == (2, 32)
    np.testing.assert_allclose(up @ down, change, atol=1e-5)


def test_file_round_trip_and_its_hash(tiny_src, tmp_path):
    state, _, _ = tiny_bert_weights(tiny_src)
    adapter = _adapter(state, rank=4)
    path = tmp_path / "a.adapter"
    sha = write_adapter(path, adapter)
    assert sha == hashlib.sha256(path.read_bytes()).hexdigest()
    back = read_adapter(path, sha256=sha)
    assert back.meta["kind"] == "test" and back.parameters == adapter.parameters
    for name, delta in adapter.deltas.items():
        np.testing.assert_array_equal(back.deltas[name], delta)
    for name, (up, down) in adapter.low_rank.items():
        np.testing.assert_array_equal(back.low_rank[name][0], up)
        np.testing.assert_array_equal(back.low_rank[name][1], down)


def test_a_changed_byte_fails_the_hash(tiny_src, tmp_path):
    state, _, _ = tiny_bert_weights(tiny_src)
    path = tmp_path / "a.adapter"
    sha = write_adapter(path, _adapter(state, rank=0))
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="not the file this version of Babelfind ships") as caught:
        read_adapter(path, sha256=sha)
    assert caught.value.path == path


@pytest.mark.parametrize("content", [b"", b"\x05\x00\x00\x00\x00\x00\x00\x00{}", b"PK\x03\x04 not it"])
def test_files_that_are_not_adapters_name_themselves(tmp_path, content):
    path = tmp_path / "bad.adapter"
    path.write_bytes(content)
    with pytest.raises(ModelError, match="adapter") as caught:
        read_adapter(path)
    assert caught.value.path == path


def test_a_safetensors_file_that_is_no_adapter_is_refused(tiny_src):
    with pytest.raises(ModelError, match="babelfind-adapter"):
        read_adapter(tiny_src / "model.safetensors")


def test_missing_file_is_a_model_error(tmp_path):
    with pytest.raises(ModelError, match="cannot read the adapter"):
        read_adapter(tmp_path / "absent.adapter")


def test_an_adapter_for_other_base_weights_is_not_folded(tiny_src):
    state, _, _ = tiny_bert_weights(tiny_src)
    with pytest.raises(ModelError, match="made for base weights"):
        fold_adapter(state, None, _adapter(state, rank=0), base_sha256="c" * 64)
    with pytest.raises(ModelError, match="lacks"):
        fold_adapter({k: v for k, v in state.items() if "query.bias" not in k}, None, _adapter(state, rank=0))


def _torch_with_adapter(tiny_src, adapter: Adapter, dequantised: dict[str, np.ndarray] | None = None):
    """The torch reference: the adapter applied without folding (deltas added to the
    parameters, each low-rank update as a second path beside its Linear, as LoRA runs)."""
    import torch

    from trainer.serving.export import TorchEncoder

    encoder = TorchEncoder(tiny_src, max_length=64)
    model = encoder.head.model
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, weight in (dequantised or {}).items():
            params[name].copy_(torch.from_numpy(weight))
        for name, delta in adapter.deltas.items():
            params[name].add_(torch.from_numpy(delta))
    modules = dict(model.named_modules())
    for name, (up, down) in adapter.low_rank.items():
        up_t, down_t = torch.from_numpy(up), torch.from_numpy(down)
        modules[name.removesuffix(".weight")].register_forward_hook(
            lambda _m, args, out, u=up_t, d=down_t: out + args[0] @ d.T @ u.T)
    return encoder


@pytest.mark.parametrize("rank", [0, 4])
def test_numpy_fold_equals_torch_applying_the_adapter(tiny_src, tmp_path, rank):
    state, config, tokenizer = tiny_bert_weights(tiny_src)
    adapter = _adapter(state, rank)
    folded, _ = fold_adapter(state, None, adapter)
    paths = DataPaths(tmp_path / "home")
    register_bert(folded, config, tokenizer, "tiny", max_length=64, variants=(), paths=paths,
                  table_dtypes=("float32",))
    built = load_encoder("tiny", paths=paths, variant="fp32").encode(TEXTS)
    reference = _torch_with_adapter(tiny_src, adapter).encode(TEXTS)
    assert np.abs(built - reference).max() <= 1e-5
    plain = _torch_with_adapter(tiny_src, Adapter({}, {})).encode(TEXTS)
    assert np.abs(plain - reference).max() > 1e-2  # the adapter changes the vectors


def test_4_bit_build_keeps_its_blocks_except_where_a_matrix_changed(tiny_src, tmp_path):
    from engine.encoders import q4

    state, config, tokenizer = tiny_bert_weights(tiny_src)
    body = [n for n in state if n.startswith("encoder.") and n.endswith(".weight") and state[n].ndim == 2]
    blocks = {n: q4.quantise_rows(state[n]) for n in body}
    dequantised = {n: q4.dequantise_rows(b) for n, b in blocks.items()}
    state = state | dequantised
    adapter = _adapter(state, rank=4)
    adapter = Adapter(adapter.deltas, {QUERY: adapter.low_rank[QUERY]}, adapter.meta)  # one matrix changed
    folded, kept = fold_adapter(state, blocks, adapter)
    assert set(kept) == set(blocks) - {QUERY}
    assert fold_adapter(state, blocks, Adapter(adapter.deltas, {}))[1].keys() == blocks.keys()
    paths = DataPaths(tmp_path / "home")
    register_bert(folded, config, tokenizer, "tiny", max_length=64, variants=(), paths=paths,
                  table_dtypes=("float32",), q4_blocks=kept)
    built = load_encoder("tiny", paths=paths, variant="fp32").encode(TEXTS)
    reference = _torch_with_adapter(tiny_src, adapter, dequantised).encode(TEXTS)
    assert np.abs(built - reference).max() <= 1e-5
