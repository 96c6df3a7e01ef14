"""Front-end fixtures: a fake model installer, and guards that fail a test if a model loads."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class InstallCalls:
    """What the fake installer was asked: one entry (the home) per install."""

    homes: list[Path] = field(default_factory=list)
    reports: list[tuple[float, str]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.homes)


@pytest.fixture
def fake_installer(monkeypatch, installed_models) -> InstallCalls:
    """trainer.serving.default_models.install_default_models replaced by links to the session's
    installed models (the real install takes a minute and torch); counts its calls.

    ensure_default_models stays real, so its "is anything missing?" logic is what runs.
    """
    import trainer.serving.default_models as default_models
    from engine.models import active_model_name, set_active

    calls = InstallCalls()

    def install(paths, progress=None, name=None, **options):
        calls.homes.append(paths.home)
        paths.models.mkdir(parents=True, exist_ok=True)
        # what the real install would install: a first run's models, and the one named
        wanted = {m.name for m in default_models.default_models() if not m.on_demand} | {name}
        installed = []
        for folder in sorted(installed_models.iterdir()):
            target = paths.models / folder.name
            if folder.name not in wanted or not folder.is_dir() or target.exists():
                continue
            target.symlink_to(folder, target_is_directory=True)
            installed.append(folder.name)
            if progress is not None:
                progress(len(installed) / 2, f"{folder.name}: installed")
                calls.reports.append((len(installed) / 2, folder.name))
        if active_model_name(paths) is None:
            set_active(default_models.DEFAULT_MODEL, paths)
        if progress is not None:
            progress(1.0, "models ready")
        return installed

    monkeypatch.setattr(default_models, "install_default_models", install)
    return calls


class ModelLoaded(AssertionError):
    """Raised by the guards: something tried to load or install a model."""


@pytest.fixture
def no_model_loads(monkeypatch):
    """Fails the test if an ONNX session is made, an encoder loaded or a model installed."""
    import onnxruntime

    import engine.library
    import engine.models
    import trainer.serving.default_models as default_models

    def refuse(*args, **kwargs):
        raise ModelLoaded("a model was loaded or installed before the arguments were checked")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse)
    monkeypatch.setattr(engine.models, "load_encoder", refuse)
    monkeypatch.setattr(engine.library, "_load_encoder", refuse)
    monkeypatch.setattr(default_models, "install_default_models", refuse)
    monkeypatch.setattr(default_models, "ensure_default_models", refuse)


@pytest.fixture
def home_with_tiny(babelfind_home, tiny_registry) -> Path:
    """This test's BABELFIND_HOME with the session's tiny model copied in and active."""
    import shutil

    from app.cli import main

    shutil.copytree(tiny_registry.models, babelfind_home / "models")
    assert main(["models", "use", "tiny"]) == 0
    return babelfind_home
