"""trainer.laser.bilstm: official-format LASER BiLSTM checkpoints -> torch module -> ONNX -> registry."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.config import DataPaths
from engine.errors import ModelError
from laser_models import make_tiny_laser
from trainer.laser.bilstm import (LaserLstm, LaserOnnxGraph, export_laser, export_laser_onnx,
                           load_laser_checkpoint, torch_encode)


@pytest.fixture(scope="module")
def laser_files(tmp_path_factory):
    return make_tiny_laser(tmp_path_factory.mktemp("laser"))


def random_lstm(num_layers: int, bidirectional: bool, seed: int = 1) -> LaserLstm:
    torch.manual_seed(seed)
    module = LaserLstm(num_embeddings=30, padding_idx=1, embed_dim=6, hidden_size=5,
                       num_layers=num_layers, bidirectional=bidirectional)
    with torch.no_grad():
        for p in module.lstm.parameters():
            p.uniform_(-0.7, 0.7)
    return module.eval()


def stepwise_reference(module: LaserLstm, row: list[int]) -> torch.Tensor:
    """One unpadded sentence through LSTMCells, step by step, then max over time: [units]."""
    x = module.embed_tokens.weight[torch.tensor(row)]  # [len, embed]
    for layer in range(module.num_layers):
        outputs = []
        for suffix, order in (("", range(len(row))), ("_reverse", reversed(range(len(row))))):
            if suffix and not module.bidirectional:
                continue
            cell = torch.nn.LSTMCell(x.shape[1], module.hidden_size)
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(cell, kind).data.copy_(getattr(module.lstm, f"{kind}_l{layer}{suffix}"))
            h = c = torch.zeros(1, module.hidden_size)
            out = [None] * len(row)
            for t in order:
                h, c = cell(x[t:t + 1], (h, c))
                out[t] = h[0]
            outputs.append(torch.stack(out))
        x = torch.cat(outputs, dim=-1)  # [len, units]
    return x.max(dim=0).values


def padded_batch(rows: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(r) for r in rows])
    tokens = torch.full((len(rows), int(lengths.max())), pad)
    for i, row in enumerate(rows):
        tokens[i, :len(row)] = torch.tensor(row)
    return tokens, lengths


ROWS = [[5, 9, 12, 7, 2], [8, 2], [4, 4, 11, 3, 6, 20, 13, 2], [2], [17, 6, 2]]


def test_checkpoint_loads_with_official_keys(laser_files):
    module, params, dictionary = load_laser_checkpoint(laser_files.checkpoint)
    assert isinstance(module, LaserLstm) and not module.training
    assert params["hidden_size"] == 8 and params["bidirectional"] is True
    assert module.output_units == 16
    assert {k: dictionary[k] for k in ("<s>", "<pad>", "</s>", "<unk>")} == {
        "<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    saved = torch.load(laser_files.checkpoint, weights_only=True)["model"]
    assert torch.equal(module.lstm.weight_hh_l1_reverse, saved["lstm.weight_hh_l1_reverse"])


@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True), (3, True)])
def test_torch_module_matches_stepwise_reference(num_layers, bidirectional):
    module = random_lstm(num_layers, bidirectional)
    tokens, lengths = padded_batch(ROWS, pad=1)
    with torch.no_grad():
        batched = module(tokens, lengths)
        reference = torch.stack([stepwise_reference(module, row) for row in ROWS])
    torch.testing.assert_close(batched, reference, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True)])
def test_onnx_graph_matches_torch_on_mixed_lengths(tmp_path, num_layers, bidirectional):
    import onnxruntime as ort

    module = random_lstm(num_layers, bidirectional)
    path = export_laser_onnx(module, tmp_path / "laser.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    tokens, lengths = padded_batch(ROWS, pad=1)
    # whatever sits in the padding must not change a vector
    noisy = tokens.clone()
    noisy[torch.arange(tokens.shape[1])[None, :] >= lengths[:, None]] = 13
    with torch.no_grad():
        expected = torch.nn.functional.normalize(module(tokens, lengths), dim=-1).numpy()
        graph = LaserOnnxGraph(module)(noisy, lengths).numpy()
    got = session.run(None, {"input_ids": noisy.numpy(), "lengths": lengths.numpy()})[0]
    np.testing.assert_allclose(graph, expected, atol=1e-5)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert len({tuple(np.round(v, 4)) for v in got}) == len(ROWS)


def test_export_registers_laser_model(laser_files, tmp_path):
    from engine.encoders.laser_onnx import LaserOnnxEncoder
    from engine.encoders.laser_tokenizer import LaserTokenizer
    from engine.models import list_models, load_encoder

    paths = DataPaths(tmp_path / "home")
    steps = []
    manifest = export_laser(laser_files.checkpoint, laser_files.spm, laser_files.cvocab,
                            "tiny-laser", paths=paths, languages=("eng", "deu"),
                            progress=lambda f, m: steps.append(f))
    assert manifest.family == "laser" and manifest.dim == 16 and manifest.pooling == "max"
    assert manifest.export_parity["min_cosine"] >= 0.9999
    assert manifest.preprocessing["cvocab"]["agreeing"] == manifest.preprocessing["cvocab"]["tokens"]
    assert manifest.preprocessing["spm"]["known"] == manifest.preprocessing["spm"]["pieces"]
    assert manifest.preprocessing["l2_normalised"] == "in the ONNX graph"
    assert {"model.onnx", "laser.spm", "laser_vocab.json", "laser.cvocab"} <= set(manifest.files)
    assert manifest.licence and manifest.source and steps[-1] == 1.0
    assert [m.name for m in list_models(paths)] == ["tiny-laser"]

    encoder = load_encoder("tiny-laser", paths=paths, device="cpu")
    assert isinstance(encoder, LaserOnnxEncoder) and encoder.variant == "fp32"
    texts = ["The cat sits on a mat.", "Wo ist der Hund?", "Мы встретимся завтра", "x"]
    module, _, vocab = load_laser_checkpoint(laser_files.checkpoint)
    reference = torch_encode(module, LaserTokenizer(laser_files.spm, vocab), texts)
    np.testing.assert_allclose(encoder.encode(texts), reference, atol=1e-5)


def test_checkpoint_without_params_names_the_file(laser_files, tmp_path):
    state = torch.load(laser_files.checkpoint, weights_only=True)
    del state["params"]
    path = tmp_path / "no-params.pt"
    torch.save(state, path)
    with pytest.raises(ModelError, match="missing key.*params") as excinfo:
        load_laser_checkpoint(path)
    assert excinfo.value.path == path and str(path) in str(excinfo.value)


def test_truncated_checkpoint_names_the_file(laser_files, tmp_path):
    path = tmp_path / "truncated.pt"
    data = laser_files.checkpoint.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(ModelError, match="truncated") as excinfo:
        load_laser_checkpoint(path)
    assert excinfo.value.path == path


def test_fairseq_transformer_checkpoint_is_refused(tmp_path):
    path = tmp_path / "laser3-transformer.pt"
    torch.save({"cfg": {"model": {"arch": "transformer"}},
                "model": {"encoder.layers.0.self_attn.k_proj.weight": torch.zeros(4, 4)}}, path)
    with pytest.raises(ModelError, match="transformer") as excinfo:
        load_laser_checkpoint(path)
    assert excinfo.value.path == path


def test_transformer_weights_under_laser_params_are_refused(laser_files, tmp_path):
    state = torch.load(laser_files.checkpoint, weights_only=True)
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    state["model"] = {"embed_tokens.weight": state["model"]["embed_tokens.weight"]}
    state["model"] |= {f"layers.0.{k}": v for k, v in layer.state_dict().items()}
    path = tmp_path / "transformer-as-laser.pt"
    torch.save(state, path)
    with pytest.raises(ModelError, match="do not fit a LASER BiLSTM") as excinfo:
        load_laser_checkpoint(path)
    assert excinfo.value.path == path


def test_cvocab_of_another_model_is_refused(laser_files, tmp_path):
    wrong = tmp_path / "other.cvocab"
    lines = laser_files.cvocab.read_text(encoding="utf-8").splitlines()
    wrong.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    paths = DataPaths(tmp_path / "home")
    with pytest.raises(ModelError, match="checkpoint's vocabulary") as excinfo:
        export_laser(laser_files.checkpoint, laser_files.spm, wrong, "wrong", paths=paths)
    assert excinfo.value.path == wrong
    assert not (paths.models / "wrong").exists()


def test_spm_model_of_another_checkpoint_is_refused(laser_files, tmp_path):
    state = torch.load(laser_files.checkpoint, weights_only=True)
    state["dictionary"] = {f"zz{token}": i for token, i in state["dictionary"].items()}
    checkpoint = tmp_path / "other-dictionary.pt"
    torch.save(state, checkpoint)
    paths = DataPaths(tmp_path / "home")
    with pytest.raises(ModelError, match="SentencePiece model") as excinfo:
        export_laser(checkpoint, laser_files.spm, None, "wrong", paths=paths)
    assert excinfo.value.path == laser_files.spm
    assert not (paths.models / "wrong").exists()


def test_cvocab_with_a_few_differences_is_recorded_not_refused(laser_files, tmp_path, caplog):
    nearly = tmp_path / "nearly.cvocab"
    lines = laser_files.cvocab.read_text(encoding="utf-8").splitlines()
    lines[3] = "▁not-in-the-dictionary 5"
    nearly.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = export_laser(laser_files.checkpoint, laser_files.spm, nearly, "nearly",
                            paths=DataPaths(tmp_path / "home"))
    assert manifest.preprocessing["cvocab"] == {"tokens": len(lines), "agreeing": len(lines) - 1}
    assert "1 of" in caplog.text and "nearly.cvocab" in caplog.text


# laser_encoders' own test: LASER2's raw vector of this sentence begins with these values
OFFICIAL_SENTENCE = "This is a test sentence."
OFFICIAL_PIECES = "▁this ▁is ▁a ▁test ▁sent ence .".split()
OFFICIAL_LASER2_HEAD = [1.0424625e-02, 6.3254288e-03, -3.0326222e-05, 9.0334769e-03,
                        2.9379339e-04, 4.4892207e-03, 2.3345212e-03, -9.4273005e-04,
                        -1.5715354e-04, 2.0958080e-03]


@pytest.mark.data
@pytest.mark.slow
def test_official_laser2_checkpoint_gives_published_vector(shared_data, tmp_path):
    """Runs when laser2.pt/.spm/.cvocab are placed in ../shared/data/laser/."""
    from engine.encoders.laser_tokenizer import LaserTokenizer
    from engine.models import load_encoder

    folder = shared_data / "laser"
    files = [folder / f"laser2.{ext}" for ext in ("pt", "spm", "cvocab")]
    if not all(f.is_file() for f in files):
        pytest.skip(f"official LASER2 files not found in {folder}")
    module, _, vocab = load_laser_checkpoint(files[0])
    tokenizer = LaserTokenizer(files[1], vocab)
    assert tokenizer.pieces(OFFICIAL_SENTENCE) == OFFICIAL_PIECES
    tokens = torch.tensor([tokenizer.ids(OFFICIAL_SENTENCE)])
    with torch.no_grad():
        raw = module(tokens, torch.tensor([tokens.shape[1]]))[0]
    np.testing.assert_allclose(raw[:10].numpy(), OFFICIAL_LASER2_HEAD, atol=1e-3)
    paths = DataPaths(tmp_path / "home")
    export_laser(files[0], files[1], files[2], "laser2", paths=paths)
    served = load_encoder("laser2", paths=paths, device="cpu").encode([OFFICIAL_SENTENCE])[0]
    np.testing.assert_allclose(served, (raw / raw.norm()).numpy(), atol=1e-5)


@pytest.mark.parametrize("changes, message", [
    ({"num_embeddings": 10**12}, "num_embeddings = 1000000000000 is not a size"),
    ({"num_embeddings": 1e12}, "lacks an integer 'num_embeddings'"),
    ({"hidden_size": 10**9}, "hidden_size = 1000000000 is not a size"),
    ({"embed_dim": 0}, "embed_dim = 0 is not a size"),
    ({"num_layers": "2"}, "num_layers = '2' is not a size"),
    ({"bidirectional": "yes"}, "bidirectional must be true or false"),
    ({"padding_idx": 10**6}, "padding_idx 1000000 is not one of"),
    ({"num_embeddings": 5_000_000}, r"embed_tokens.weight has shape \(181, 12\), not \(5000000, 12\)"),
    ({"hidden_size": 4096}, "lstm.weight_ih_l0 has shape"),
    ({"num_layers": 40}, "they lack 'lstm.weight_ih_l2'"),
])
def test_absurd_sizes_are_refused_before_allocating(laser_files, tmp_path, monkeypatch, changes, message):
    state = torch.load(laser_files.checkpoint, weights_only=True)
    state["params"] = state["params"] | changes
    path = tmp_path / "absurd.pt"
    torch.save(state, path)
    monkeypatch.setattr(torch.nn.Embedding, "__init__", _no_allocation)
    with pytest.raises(ModelError, match=message) as excinfo:
        load_laser_checkpoint(path)
    assert excinfo.value.path == path


def _no_allocation(*args, **kwargs):
    raise AssertionError("LaserLstm was built before its sizes were checked")
