"""Model registry: round trip through a zip, active model rules, and damaged files."""

from __future__ import annotations

import json
import shutil
import zipfile

import numpy as np
import pytest

from engine.config import DataPaths
from engine.errors import InputError, ModelError
from engine.models import active_model_name, export_model, get_manifest, import_model, list_models, load_encoder, model_dir, remove_model, set_active
from engine.model_manifest import read_manifest, sha256_file

TEXTS = ["the cat sat on the mat", "hello world", "der hund und die katze", "a"]


@pytest.fixture
def registry(tiny_registry, tmp_path) -> DataPaths:
    """A private copy of the session's tiny registry that a test may damage."""
    paths = DataPaths(tmp_path / "home")
    shutil.copytree(tiny_registry.models, paths.models)
    return paths


def _rewrite_checksum(paths: DataPaths, name: str, filename: str) -> None:
    """Makes the manifest agree with a replaced file, so only the content is wrong."""
    folder = model_dir(name, paths)
    data = json.loads((folder / "manifest.json").read_text())
    data["files"][filename] = sha256_file(folder / filename)
    (folder / "manifest.json").write_text(json.dumps(data))
    (folder / ".verified.json").unlink(missing_ok=True)


def test_registry_round_trip_through_zip(registry, tmp_path):
    before = get_manifest("tiny", registry)
    vectors = load_encoder("tiny", paths=registry, variant="fp32").encode(TEXTS)
    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    remove_model("tiny", registry)
    assert [m.name for m in list_models(registry)] == []
    imported = import_model(archive, registry)
    assert imported == before and get_manifest("tiny", registry) == before
    again = load_encoder("tiny", paths=registry, variant="fp32").encode(TEXTS)
    np.testing.assert_array_equal(vectors, again)


def test_import_from_folder_and_refuse_duplicate(registry, tmp_path):
    copy = shutil.copytree(model_dir("tiny", registry), tmp_path / "copy")
    with pytest.raises(InputError, match="already installed"):
        import_model(copy, registry)
    remove_model("tiny", registry)
    assert import_model(copy, registry).name == "tiny"


def test_import_of_a_damaged_zip_names_the_file(registry, tmp_path):
    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(damaged, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith("model.onnx"):
                data = data[: len(data) // 2]
            dst.writestr(item, data)
    remove_model("tiny", registry)
    with pytest.raises(ModelError, match=r"model\.onnx"):
        import_model(damaged, registry)
    assert list_models(registry) == []
    not_a_zip = tmp_path / "x.zip"
    not_a_zip.write_bytes(b"no")
    with pytest.raises(ModelError, match="not a model archive"):
        import_model(not_a_zip, registry)


def test_active_model_rules(registry):
    assert active_model_name(registry) is None
    with pytest.raises(ModelError, match="no active model"):
        load_encoder(paths=registry)
    set_active("tiny", registry)
    assert active_model_name(registry) == "tiny"
    assert load_encoder(paths=registry).name == "tiny"
    with pytest.raises(InputError, match="active model"):
        remove_model("tiny", registry)
    with pytest.raises(ModelError, match="no model named 'nope'"):
        set_active("nope", registry)


def test_bad_names_are_input_errors(registry):
    for name in ("../evil", "", "a/b", "x" * 80):
        with pytest.raises(InputError):
            get_manifest(name, registry)


def test_missing_model_file_names_the_file(registry):
    (model_dir("tiny", registry) / "model.onnx").unlink()
    with pytest.raises(ModelError, match=r"missing: .*model\.onnx") as info:
        load_encoder("tiny", paths=registry, variant="fp32")
    assert info.value.path.name == "model.onnx"


def test_truncated_model_file_names_the_file(registry):
    path = model_dir("tiny", registry) / "model.onnx"
    load_encoder("tiny", paths=registry, variant="fp32")  # records a verified stamp first
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(ModelError, match=r"truncated .*model\.onnx") as info:
        load_encoder("tiny", paths=registry, variant="fp32")
    assert info.value.path == path


def test_file_that_is_not_onnx_names_the_file(registry):
    path = model_dir("tiny", registry) / "model.onnx"
    path.write_bytes(b"this is not an onnx file at all")
    _rewrite_checksum(registry, "tiny", "model.onnx")
    with pytest.raises(ModelError, match=r"model\.onnx is not a loadable ONNX model") as info:
        load_encoder("tiny", paths=registry, variant="fp32")
    assert info.value.path == path


def test_onnx_with_wrong_output_shape_names_the_file(registry):
    import onnx
    from onnx import TensorProto, helper

    # a valid body graph: rows [batch, seq, 32] -> mean over dim, + mask -> mean over seq -> [batch, 1]
    nodes = [helper.make_node("ReduceMean", ["token_embeddings"], ["f"], keepdims=0, axes=[2]),
             helper.make_node("Add", ["f", "g"], ["h"]),
             helper.make_node("Cast", ["attention_mask"], ["g"], to=TensorProto.FLOAT),
             helper.make_node("ReduceMean", ["h"], ["embedding"], keepdims=1, axes=[1])]
    graph = helper.make_graph(
        nodes, "wrong",
        [helper.make_tensor_value_info("token_embeddings", TensorProto.FLOAT, ["batch", "seq", 32]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", 1])])
    graph.node.sort(key=lambda n: n.op_type not in ("Cast", "ReduceMean") or n.output[0] == "embedding")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = model_dir("tiny", registry) / "model.onnx"
    onnx.save(model, str(path))
    _rewrite_checksum(registry, "tiny", "model.onnx")
    with pytest.raises(ModelError, match=r"model\.onnx: output shape .* is not \[batch, 32\]"):
        load_encoder("tiny", paths=registry, variant="fp32")


def test_damaged_manifest_names_the_file(registry):
    manifest = model_dir("tiny", registry) / "manifest.json"
    manifest.write_text("{not json")
    with pytest.raises(ModelError, match=r"manifest\.json"):
        read_manifest(manifest.parent)
    assert list_models(registry) == []  # skipped, not fatal


def test_variant_choice_and_missing_variant(registry):
    # the tiny model's int8 has no gate evidence (or was refused): CPU serves fp32
    assert load_encoder("tiny", paths=registry, device="cpu").variant == "fp32"
    with pytest.raises(InputError):
        load_encoder("tiny", paths=registry, variant="int4")


def _int8_manifest(int8: dict, **others) -> "ModelManifest":
    from engine.model_manifest import ModelManifest

    variants = {"fp32": {"file": "model.onnx"}, "int8": int8} | others
    return ModelManifest("m", "transformer", 4, "mean", 8, variants=variants)


def _gated(gate: str, languages: int = 112, sts_b: float | None = 83.9, reason: str = "ok") -> dict:
    return {"file": "model.int8.onnx", "gate": gate, "reason": reason,
            "tatoeba": {"languages": languages}, "sts_b": {"fp32": 84.0, "int8": sts_b}}


@pytest.fixture
def int8_cpu(monkeypatch):
    """Sets whether this CPU's int8 kernels saturate 8-bit weights: call it with True/False."""
    from engine.encoders import int8_kernels

    def set_saturating(saturates: bool) -> None:
        monkeypatch.setattr(int8_kernels, "pair_sums_saturate", lambda: saturates)

    set_saturating(False)
    return set_saturating


def test_cpu_prefers_int8_only_when_its_gate_passed_with_full_evidence(int8_cpu):
    from engine.models import choose_variant

    assert choose_variant(_int8_manifest(_gated("passed")), "cpu", None) == "int8"
    fp16 = {"fp16": {"file": "model.fp16.onnx"}}
    assert choose_variant(_int8_manifest(_gated("passed"), **fp16), "cuda", None) == "fp16"
    for int8 in (_gated("refused", reason="est +4.45 points"), _gated("incomplete"),
                 _gated("not run"), _gated("passed", languages=15),
                 _gated("passed", sts_b=None), {"file": "model.int8.onnx"},
                 {"file": None, "reason": "mean cosine 0.98"}):
        assert choose_variant(_int8_manifest(int8), "cpu", None) == "fp32", int8


def test_asking_for_int8_works_whenever_its_file_exists(int8_cpu):
    from engine.models import choose_variant

    refused = _int8_manifest(_gated("refused", reason="est +4.45 points"))
    assert choose_variant(refused, "cpu", "int8") == "int8"
    absent = _int8_manifest({"file": None, "gate": "refused", "reason": "est +4.45 points"})
    with pytest.raises(ModelError, match="no int8 variant: est \\+4.45 points"):
        choose_variant(absent, "cpu", "int8")


def test_int8_not_default_reason_says_why(int8_cpu):
    from engine.models import int8_not_default_reason

    assert int8_not_default_reason(_int8_manifest(_gated("passed"))) is None
    refused = _gated("refused", reason="est +4.45 points Tatoeba error (gate: <= 2 per language)")
    assert int8_not_default_reason(_int8_manifest(refused)) == refused["reason"]
    assert "has not run" in int8_not_default_reason(_int8_manifest({"file": "model.int8.onnx"}))
    assert "15 Tatoeba languages" in int8_not_default_reason(
        _int8_manifest(_gated("passed", languages=15)))
    assert "no STS-B" in int8_not_default_reason(_int8_manifest(_gated("passed", sts_b=None)))
    assert int8_not_default_reason(_int8_manifest({})) == "no int8 variant was made"


def test_8_bit_int8_is_not_served_where_the_cpu_saturates_it(int8_cpu):
    """A file made where int8 products add exactly (a bundle's prepared model, a copied
    home) gives wrong sums on a CPU without VNNI: fp32 is served, asking for it fails;
    a 7-bit file is served everywhere."""
    from engine.models import choose_variant, int8_not_default_reason

    int8_cpu(True)
    eight_bit, before_levels_were_recorded = _gated("passed") | {"weight_levels": 127}, _gated("passed")
    for int8 in (eight_bit, before_levels_were_recorded):
        manifest = _int8_manifest(int8)
        assert choose_variant(manifest, "cpu", None) == "fp32"
        assert "saturate this CPU's int8 kernels" in int8_not_default_reason(manifest)
        with pytest.raises(ModelError, match="int8 would give wrong vectors here: its 8-bit weights"):
            choose_variant(manifest, "cpu", "int8")
    seven_bit = _int8_manifest(_gated("passed") | {"weight_levels": 63})
    assert choose_variant(seven_bit, "cpu", None) == "int8" == choose_variant(seven_bit, "cpu", "int8")
    int8_cpu(False)
    assert choose_variant(_int8_manifest(eight_bit), "cpu", None) == "int8"
