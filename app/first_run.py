"""The one place every front end makes sure the bundled models are installed before use.

    >>> ensure_models(data_paths(), progress=lambda fraction, message: print(fraction, message))
    'multilingual-e5-small'

Cheap once installed (no torch, no transformers); on a fresh BABELFIND_HOME it installs
the default models once, reporting (fraction, message) to `progress`. The CLI shows that
as one progress bar (app/cli/model_setup.py), the window as one dialog (app/gui).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from engine.config import DataPaths
from engine.errors import ModelError

Progress = Callable[[float, str], None]


def bundled_model_names() -> tuple[str, ...]:
    """The models the installer provides: ('multilingual-e5-small', 'all-minilm-l6-v2')."""
    from trainer.serving.default_models import default_models

    return tuple(m.name for m in default_models())


def models_missing(paths: DataPaths, name: str | None = None) -> bool:
    """True when using `name` (None: the active model) needs the bundled models installed.

    A name that is not a bundled model never needs them: it is the user's own model,
    installed or not (loading it says which).
    """
    from engine.models import active_model_name
    from trainer.serving.default_models import is_installed

    if name is None:
        active = active_model_name(paths)
        return active is None or not is_installed(active, paths)
    return name in bundled_model_names() and not is_installed(name, paths)


def ensure_models(paths: DataPaths, progress: Progress | None = None, name: str | None = None) -> str:
    """Makes `name` (None: the active model) usable, installing the bundled models if needed.

    Returns the model's name (the active one's when `name` is None).

    Raises:
        ModelError: the installer finished without an active model.
    """
    from app.logging_setup import quiet_onnxruntime, route_transformers_logs
    from trainer.serving import default_models  # looked up at call time so tests can replace it

    quiet_onnxruntime()  # before the first session: the install quantises with ORT
    missing = models_missing(paths, name)
    if missing:
        route_transformers_logs()  # the export loads weights with transformers
    if name is not None:
        if missing:
            default_models.install_default_models(paths, progress or _ignore, name=name)
        return name
    active = default_models.ensure_default_models(paths, progress or _ignore)
    if not active:
        raise ModelError("the bundled models were installed but none is active; "
                         "run 'babelfind models use NAME'", paths.models)
    return active


@dataclass(frozen=True)
class OfferedModel:
    """A bundled model this install can build but has not yet: what the window's model
    list shows beside the installed ones (choosing it builds it, then re-encodes)."""

    name: str
    languages: tuple[str, ...]
    source: str
    licence: str
    notes: str
    dim: int | None = None  # known once built


def offered_models(paths: DataPaths) -> list[OfferedModel]:
    """Bundled models built on demand (such as the adapted default) that are not
    installed in `paths`, in the installer's order."""
    from trainer.serving.default_models import default_models, is_installed

    return [OfferedModel(m.name, m.languages, m.source, m.licence, m.notes)
            for m in default_models() if m.on_demand and not is_installed(m.name, paths)]


@dataclass(frozen=True)
class InstallProgress:
    """How far the build of a bundled model is, for a progress row (the window's jobs)."""

    fraction: float  # 0 to 1
    message: str


def install_model(paths: DataPaths, name: str, report: Callable[[InstallProgress], None]) -> str:
    """Builds bundled model `name` if it is missing, reporting InstallProgress events;
    returns the name. Example: a window job `lambda report: install_model(paths, name, report)`."""
    return ensure_models(paths, lambda fraction, message: report(InstallProgress(fraction, message)), name)


def _ignore(fraction: float, message: str) -> None:
    return None
