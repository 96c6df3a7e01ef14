"""engine.diagnostics: what `babelfind doctor` finds, with and without optional packages."""

from __future__ import annotations

import shutil
from importlib import metadata

import pytest

from engine import diagnostics
from engine.config import DataPaths, save_settings


def by_name(report, section):
    return {c.name: c for c in report.checks if c.section == section}


def test_fresh_home_is_reported_without_creating_anything(tmp_path):
    home = tmp_path / "never-used"
    report = diagnostics.collect(DataPaths(home))
    assert report.ok
    assert "not created yet" in by_name(report, "data")["folder"].value
    assert "no models installed" in by_name(report, "models")["registry"].value
    assert "not created yet" in by_name(report, "database")["url"].value
    assert not home.exists()


def test_missing_optional_packages_are_information_with_what_needs_them(monkeypatch, tmp_path):
    real = metadata.version

    def version(name):
        if name in ("torch", "transformers", "onnxruntime-gpu"):
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(diagnostics.metadata, "version", version)
    report = diagnostics.collect(DataPaths(tmp_path))
    versions = by_name(report, "versions")
    assert versions["torch"].status == "info"
    assert "training" in versions["torch"].value
    assert versions["onnxruntime"].status == "ok"
    assert report.ok  # nothing a search needs is missing


def test_a_missing_core_package_is_an_error(monkeypatch, tmp_path):
    real = metadata.version

    def version(name):
        if name == "faiss-cpu":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(diagnostics.metadata, "version", version)
    report = diagnostics.collect(DataPaths(tmp_path))
    assert by_name(report, "versions")["faiss-cpu"].status == "error"
    assert not report.ok


@pytest.mark.parametrize("providers, gpus, status, says", [
    (["CPUExecutionProvider"], 0, "ok", "cpu"),
    (["CUDAExecutionProvider", "CPUExecutionProvider"], 2, "ok", "cuda (2 GPUs)"),
    (["CUDAExecutionProvider", "CPUExecutionProvider"], 0, "warn", "no GPU"),
    (["CPUExecutionProvider"], 1, "info", "unused"),
])
def test_the_encoding_device_and_why(monkeypatch, providers, gpus, status, says):
    import onnxruntime

    import engine.encoders.onnx as onnx_module

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: providers)
    monkeypatch.setattr(onnx_module, "cuda_device_count", lambda: gpus)
    report = diagnostics.Report()
    diagnostics.check_onnxruntime(report)
    device = by_name(report, "encoders")["device"]
    assert device.status == status and says in device.value


def test_models_say_which_variant_they_serve_and_damage_shows_with_verify(tmp_path, tiny_registry):
    paths = DataPaths(tmp_path / "home")
    shutil.copytree(tiny_registry.models, paths.models)
    save_settings(paths, active_model="tiny")
    models = by_name(diagnostics.collect(paths), "models")
    assert models["tiny (active)"].status == "ok"
    assert "serves" in models["tiny (active)"].value
    onnx_file = paths.models / "tiny" / "model.onnx"
    onnx_file.write_bytes(onnx_file.read_bytes()[:-10] + b"0123456789")
    (paths.models / "tiny" / ".verified.json").unlink(missing_ok=True)
    assert by_name(diagnostics.collect(paths), "models")["tiny (active)"].status == "ok"
    damaged = by_name(diagnostics.collect(paths, verify_models=True), "models")["tiny (active)"]
    assert damaged.status == "error" and "checksum" in damaged.value


def test_an_active_model_that_is_not_installed_is_an_error(tmp_path, tiny_registry):
    paths = DataPaths(tmp_path / "home")
    shutil.copytree(tiny_registry.models, paths.models)
    save_settings(paths, active_model="gone")
    report = diagnostics.collect(paths)
    assert by_name(report, "models")["active model"].status == "error"
    assert not report.ok


def test_database_reports_documents_and_hides_passwords(tmp_path):
    from engine.store import Store

    url = f"sqlite:///{tmp_path / 'x.db'}"
    Store.open(url).close()
    report = diagnostics.Report()
    diagnostics.check_database(report, url)
    assert by_name(report, "database")["url"].status == "ok"
    assert "0 documents" in by_name(report, "database")["url"].value

    unreachable = diagnostics.Report()
    diagnostics.check_database(unreachable, "postgresql+psycopg://me:s3cret@127.0.0.1:1/db")
    check = by_name(unreachable, "database")["url"]
    assert check.status == "error" and "s3cret" not in check.value and "***" in check.value


def test_a_missing_driver_or_a_bad_url_is_one_error(tmp_path):
    for url in ("mysql+nosuchdriver://u@h/db", "not a url"):
        report = diagnostics.Report()
        diagnostics.check_database(report, url)
        assert by_name(report, "database")["url"].status == "error"


def test_format_tools_and_ocr_engines_are_listed(monkeypatch, tmp_path):
    import engine.extract.ocr as ocr
    import engine.extract.tools as tools

    real = tools.find_tool
    monkeypatch.setattr(tools, "find_tool", lambda name: real(name) if name == "tesseract" else None)
    formats = by_name(diagnostics.collect(DataPaths(tmp_path)), "formats")
    assert formats["antiword"].status == "info" and "sudo apt-get install antiword" in formats["antiword"].hint
    assert "catdoc" in formats  # antiword is missing, so catdoc would be used
    if real("tesseract"):
        assert formats["tesseract"].status == "ok"
        assert "eng" in formats["OCR languages"].value.split(", ")
        assert formats["OCR"].value == "on, engine auto"
    monkeypatch.setattr(tools, "find_tool", lambda name: None)
    monkeypatch.setattr(ocr, "rapidocr_installed", lambda: False)
    formats = by_name(diagnostics.collect(DataPaths(tmp_path)), "formats")
    assert formats["OCR"].status == "warn" and "tesseract-ocr" in formats["OCR"].hint
    save_settings(DataPaths(tmp_path), ocr=False)
    assert "turned off" in by_name(diagnostics.collect(DataPaths(tmp_path)), "formats")["OCR"].value
