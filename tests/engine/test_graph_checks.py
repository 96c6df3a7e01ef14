"""Graphs are checked before they serve (issue 24: an imported model whose ConstantOfShape
depended on the input took 4.5 GB in 12 s, then failed with a raw onnxruntime traceback).

An allocation sized by the input's values is refused without running anything; one sized
by the input's shape is refused by the warm-up, whose memory is bounded; the message names
the model; an active model refused at load gives way to the default model."""

from __future__ import annotations

import logging
import shutil
import time

import pytest
from hostile_models import poison_graph

from engine.config import DataPaths
from engine.encoders.graph_check import GraphRefusedError, check_graph
from engine.models import (
    DEFAULT_MODEL,
    active_model_name,
    export_model,
    import_model,
    list_models,
    load_encoder,
    model_dir,
    remove_model,
    set_active,
)
from engine.repairs import REPAIR_LOGGER


@pytest.fixture
def registry(tiny_registry, tmp_path) -> DataPaths:
    paths = DataPaths(tmp_path / "home")
    shutil.copytree(tiny_registry.models, paths.models)
    return paths


def poisoned_archive(registry: DataPaths, tmp_path, sized_by: str):
    """The tiny model with a poisoned fp32 graph, exported as a zip; the registry emptied."""
    poison_graph(model_dir("tiny", registry), "model.onnx", sized_by)
    archive = export_model("tiny", tmp_path / f"{sized_by}.zip", registry)
    remove_model("tiny", registry)
    return archive


def test_the_shipped_kinds_of_graph_pass(registry):
    for name in ("model.onnx", "model.fp16.onnx", "model.int8.onnx"):
        if (model_dir("tiny", registry) / name).exists():
            check_graph(model_dir("tiny", registry) / name, "tiny")


def test_an_allocation_sized_by_input_values_is_refused_before_anything_runs(registry, tmp_path):
    archive = poisoned_archive(registry, tmp_path, "values")
    started = time.monotonic()
    with pytest.raises(GraphRefusedError) as refused:
        import_model(archive, registry)
    assert time.monotonic() - started < 30
    message = str(refused.value)
    assert message.startswith("model 'tiny' refused: ") and "ConstantOfShape" in message, message
    assert "\n" not in message and list_models(registry) == []


@pytest.mark.timeout(300)
def test_an_allocation_sized_by_input_shape_fails_its_bounded_warm_up(registry, tmp_path):
    archive = poisoned_archive(registry, tmp_path, "shape")
    with pytest.raises(GraphRefusedError, match=r"model 'tiny' refused: its warm-up failed within \d\.\d GiB"):
        import_model(archive, registry)
    assert list_models(registry) == []


def test_an_active_model_refused_at_load_gives_way_to_the_default(registry, tmp_path, caplog):
    shutil.copytree(model_dir("tiny", registry), model_dir(DEFAULT_MODEL, registry))
    from engine.model_manifest import read_manifest, write_manifest
    from dataclasses import replace

    default = model_dir(DEFAULT_MODEL, registry)
    write_manifest(default, replace(read_manifest(default), name=DEFAULT_MODEL))
    set_active("tiny", registry)
    # installed by a version that did not check graphs: poisoned after the import
    poison_graph(model_dir("tiny", registry), "model.onnx", "values")
    (model_dir("tiny", registry) / ".graph-checks.json").unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING, logger=REPAIR_LOGGER):
        encoder = load_encoder(variant="fp32", device="cpu", paths=registry)
    assert encoder.name == DEFAULT_MODEL and active_model_name(registry) == DEFAULT_MODEL
    lines = [r.getMessage() for r in caplog.records if r.name == REPAIR_LOGGER]
    assert len(lines) == 1 and "model 'tiny' refused" in lines[0] and DEFAULT_MODEL in lines[0]
    with pytest.raises(GraphRefusedError, match="model 'tiny' refused"):  # asked for by name: refused
        load_encoder("tiny", variant="fp32", device="cpu", paths=registry)


def test_a_graph_that_passed_is_not_parsed_again(registry, monkeypatch):
    import engine.encoders.graph_check as graph_check

    load_encoder("tiny", variant="fp32", device="cpu", paths=registry)
    monkeypatch.setattr(graph_check, "check_graph", lambda *a: pytest.fail("checked twice"))
    load_encoder("tiny", variant="fp32", device="cpu", paths=registry)
