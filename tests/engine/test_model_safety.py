"""Crafted manifests, folders and archives: nothing outside the model folder is served,
copied or exported, wrong-type values are one ModelError, and zip bombs stop early."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from engine import model_archive
from engine.config import DataPaths
from engine.errors import ModelError
from engine.model_files import contained
from engine.models import export_model, get_manifest, import_model, list_models, load_encoder, model_dir, remove_model
from engine.model_manifest import read_manifest, sha256_file


@pytest.fixture
def registry(tiny_registry, tmp_path) -> DataPaths:
    paths = DataPaths(tmp_path / "home")
    shutil.copytree(tiny_registry.models, paths.models)
    return paths


def edit_manifest(folder: Path, **changes) -> None:
    path = folder / "manifest.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        data[key] = value
    path.write_text(json.dumps(data))
    (folder / ".verified.json").unlink(missing_ok=True)


def test_contained_refuses_every_way_out(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "secret").write_text("x")
    (folder / "link").symlink_to(tmp_path / "secret")
    assert contained(folder, "sub/model.onnx") == folder / "sub" / "model.onnx"
    for name in ("../secret", "/etc/hostname", "a/../../secret", "C:\\x", "..\\secret", "", None, 3,
                 "link"):
        with pytest.raises(ModelError):
            contained(folder, name)


def test_a_variant_pointing_at_another_model_is_refused(registry, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(model_dir("tiny", registry), other)
    folder = model_dir("tiny", registry)
    data = json.loads((folder / "manifest.json").read_text())
    outside = os.path.relpath(other / "model.onnx", folder)
    data["files"][outside] = sha256_file(other / "model.onnx")
    data["variants"]["fp32"]["file"] = outside
    (folder / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(ModelError, match="outside"):
        load_encoder("tiny", paths=registry, variant="fp32")


def test_listed_files_outside_the_folder_are_neither_imported_nor_exported(registry, tmp_path):
    folder = model_dir("tiny", registry)
    data = json.loads((folder / "manifest.json").read_text())
    data["files"]["../../etc/hostname"] = "0" * 64
    (folder / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(ModelError, match="outside"):
        export_model("tiny", tmp_path / "out.zip", registry)
    assert not (tmp_path / "out.zip").exists()
    copy = shutil.copytree(folder, tmp_path / "copy")
    remove_model("tiny", registry)
    with pytest.raises(ModelError, match="outside"):
        import_model(copy, registry)
    assert list_models(registry) == []


def test_folder_import_refuses_symlinks(registry, tmp_path):
    copy = shutil.copytree(model_dir("tiny", registry), tmp_path / "copy")
    (tmp_path / "shadow").write_text("root:secret")
    (copy / "tokenizer.json").unlink()
    (copy / "tokenizer.json").symlink_to(tmp_path / "shadow")
    remove_model("tiny", registry)
    with pytest.raises(ModelError, match="symbolic link"):
        import_model(copy, registry)
    assert list_models(registry) == []


def test_folder_import_copies_only_listed_files(registry, tmp_path):
    copy = shutil.copytree(model_dir("tiny", registry), tmp_path / "copy")
    (copy / "huge-unlisted.bin").write_bytes(b"\0" * 1000)
    remove_model("tiny", registry)
    import_model(copy, registry)
    assert not (model_dir("tiny", registry) / "huge-unlisted.bin").exists()


def _rezip(archive: Path, out: Path, extra: dict[str, bytes] | None = None, drop: str = "",
           symlink: str | None = None) -> Path:
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename != drop:
                dst.writestr(info, src.read(info))
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
        if symlink:
            link = zipfile.ZipInfo(symlink)
            link.external_attr = (0o120777 << 16)
            dst.writestr(link, "/etc/shadow")
    return out


def test_zip_bomb_and_unlisted_files_are_refused(registry, tmp_path):
    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    remove_model("tiny", registry)
    bomb = _rezip(archive, tmp_path / "bomb.zip", {"tiny/padding.bin": b"\0" * (64 << 20)})
    with pytest.raises(ModelError, match="zip bomb"):
        import_model(bomb, registry)
    unlisted = _rezip(archive, tmp_path / "unlisted.zip", {"tiny/notes.bin": b"x" * 100})
    with pytest.raises(ModelError, match="does not list: tiny/notes.bin"):
        import_model(unlisted, registry)
    linked = _rezip(archive, tmp_path / "link.zip", symlink="tiny/shadow")
    with pytest.raises(ModelError, match="symbolic link"):
        import_model(linked, registry)
    missing = _rezip(archive, tmp_path / "missing.zip", drop="tiny/tokenizer.json")
    with pytest.raises(ModelError, match="lacks listed file"):
        import_model(missing, registry)
    assert list_models(registry) == [] and [p.name for p in registry.models.iterdir()] == []


def test_many_members_that_each_pass_the_ratio_bound_are_refused_together(registry, tmp_path):
    """8 listed members of 16 MiB of zeros: each is at the per-member bound, together they
    are 128 MiB from ~130 KB (issue 24: 64 such members imported 1.1 GB in 9.7 s)."""
    import hashlib

    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    remove_model("tiny", registry)
    zeros = bytes(model_archive._RATIO_FROM)
    digest = hashlib.sha256(zeros).hexdigest()
    names = [f"padding-{i}.bin" for i in range(8)]
    out = tmp_path / "padded.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "tiny/manifest.json":
                manifest = json.loads(data)
                manifest["files"].update(dict.fromkeys(names, digest))
                data = json.dumps(manifest).encode()
            dst.writestr(info.filename, data)
        for name in names:
            dst.writestr(f"tiny/{name}", zeros)
    with pytest.raises(ModelError, match=r"expands 128 MiB from 0\.\d MiB .*zip bomb"):
        import_model(out, registry)
    assert list_models(registry) == []


def test_archive_members_must_be_stored_or_deflated(registry, tmp_path):
    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    remove_model("tiny", registry)
    out = tmp_path / "lzma.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_LZMA) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    with pytest.raises(ModelError, match="compression method 14"):
        import_model(out, registry)


def test_archive_larger_than_the_bound_is_refused_before_extracting(registry, tmp_path, monkeypatch):
    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    remove_model("tiny", registry)
    monkeypatch.setattr(model_archive, "MAX_MODEL_BYTES", 1000)
    with pytest.raises(ModelError, match="more than a model may take"):
        import_model(archive, registry)


def test_member_larger_than_declared_stops_extraction(registry, tmp_path, monkeypatch):
    archive = export_model("tiny", tmp_path / "tiny.zip", registry)
    remove_model("tiny", registry)
    real_open = zipfile.ZipFile.open

    def lying_open(self, member, *args, **kwargs):  # as if the header under-declared the size
        handle = real_open(self, member, *args, **kwargs)
        if isinstance(member, zipfile.ZipInfo) and member.filename.endswith(".onnx"):
            member.file_size = 10
        return handle

    monkeypatch.setattr(zipfile.ZipFile, "open", lying_open)
    with pytest.raises(ModelError, match="larger than it declares"):
        import_model(archive, registry)


@pytest.mark.parametrize("changes, message", [
    ({"dim": "abc"}, "'dim' must be a whole number"),
    ({"dim": 0}, "'dim' must be a whole number"),
    ({"dim": True}, "'dim' must be a whole number"),
    ({"max_length": -1}, "'max_length' must be a whole number"),
    ({"max_length": 1.5}, "'max_length' must be a whole number"),
    ({"pad_token_id": "x"}, "'pad_token_id'"),
    ({"files": ["model.onnx"]}, "'files' must be a JSON object"),
    ({"files": {"model.onnx": 5}}, "not a SHA-256"),
    ({"variants": {"fp32": "model.onnx"}}, "variant 'fp32' must be a JSON object"),
    ({"variants": {"fp32": {"file": "unlisted.onnx"}}}, "not listed"),
    ({"tokenizer_file": 7}, "'tokenizer_file' must be a string"),
    ({"tokenizer_file": "../x.json"}, "outside"),
    ({"preprocessing": {"vocab_file": "/etc/passwd"}}, "outside"),
    ({"prefixes": {"query": 1}}, "'prefixes' must map"),
    ({"languages": "en"}, "'languages' must be a list"),
    ({"name": None}, "'name' must be a string"),
])
def test_wrong_type_manifest_values_are_one_model_error(registry, changes, message):
    edit_manifest(model_dir("tiny", registry), **changes)
    with pytest.raises(ModelError, match=message):
        read_manifest(model_dir("tiny", registry))


def test_manifest_that_is_a_list_or_lacks_fields(registry):
    folder = model_dir("tiny", registry)
    (folder / "manifest.json").write_text("[1, 2]")
    with pytest.raises(ModelError, match="must be a JSON object, not a list"):
        get_manifest("tiny", registry)
    (folder / "manifest.json").write_text(json.dumps({"name": "tiny", "family": "transformer"}))
    with pytest.raises(ModelError, match="lacks 'dim'"):
        read_manifest(folder)
