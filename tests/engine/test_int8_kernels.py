"""engine.encoders.int8_kernels: the shipped probe is the one the code writes, and a
probe that cannot run takes the choice that is exact on every CPU. (Whether its verdict
matches a whole int8 layer on this CPU: tests/trainer/serving/test_rowwise_int8.py.)"""

from __future__ import annotations

import logging

import pytest

from engine.encoders import int8_kernels
from engine.resources import resources_dir


@pytest.fixture
def fresh_probe():
    int8_kernels.pair_sums_saturate.cache_clear()
    yield
    int8_kernels.pair_sums_saturate.cache_clear()


def test_the_shipped_probe_file_is_the_one_the_code_writes():
    shipped = resources_dir() / "models" / int8_kernels.PROBE_FILE
    assert shipped.read_bytes() == int8_kernels.probe_model_bytes(), (
        "rewrite it: python -c 'from engine.encoders.int8_kernels import probe_model_bytes as b; "
        "open(\"resources/models/int8_probe.onnx\", \"wb\").write(b())'")


def test_a_missing_probe_counts_as_saturating(tmp_path, monkeypatch, fresh_probe, caplog):
    (tmp_path / "models").mkdir()
    monkeypatch.setenv("BABELFIND_RESOURCES", str(tmp_path))
    with caplog.at_level(logging.WARNING):
        assert int8_kernels.pair_sums_saturate() is True
    assert int8_kernels.weight_levels_for_this_cpu() == int8_kernels.SAFE_WEIGHT_LEVELS
    assert "int8 kernel probe failed" in caplog.text


def test_a_damaged_probe_counts_as_saturating(tmp_path, monkeypatch, fresh_probe):
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / int8_kernels.PROBE_FILE).write_bytes(b"not an onnx file")
    monkeypatch.setenv("BABELFIND_RESOURCES", str(tmp_path))
    assert int8_kernels.pair_sums_saturate() is True


def test_the_safe_weights_fit_int16_pair_sums():
    assert 2 * 255 * int8_kernels.SAFE_WEIGHT_LEVELS <= 32767 < 2 * 255 * int8_kernels.FULL_WEIGHT_LEVELS
