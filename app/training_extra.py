"""Whether training can run here, and the one line that says how to make it so.

    >>> require_training("babelfind train")     # raises TrainingNotInstalled without torch

Search, indexing and mining never need torch; training (`babelfind train`, the wizard,
`babelfind models import-laser`) does, and it comes with the `train` extra. The check
looks the packages up without importing them, so asking costs nothing.
"""

from __future__ import annotations

import importlib.util
import sys

from engine.errors import InputError

TRAINING_PACKAGES = ("torch", "transformers")
INSTALL_HINT = "pip install 'babelfind[train]'"
# The desktop bundle leaves torch out (a GB) and has no pip: training needs the source.
SOURCE_INSTALL_HINT = ("install Babelfind from its source folder, where training works: "
                       "python3 -m venv .venv && .venv/bin/pip install -c requirements.lock '.[train]' "
                       "(or make run), then start .venv/bin/babelfind-gui")


class TrainingNotInstalled(InputError):
    """`what` needs torch and transformers, which this install left out; the CLI exits 2."""

    def __init__(self, what: str, missing: list[str]):
        self.missing = missing
        super().__init__(training_missing_message(what, missing))


def missing_training_packages() -> list[str]:
    """The training packages that are not installed: [] where training can run."""
    return [name for name in TRAINING_PACKAGES if not _installed(name)]


def training_missing_message(what: str, missing: list[str]) -> str:
    """One line: what is missing and the command that installs it; in the desktop bundle,
    which pip cannot change, how to get an install that trains."""
    if in_bundle():
        return (f"{what} is not part of the desktop bundle ({' and '.join(missing)} are left out to "
                f"keep it small); {SOURCE_INSTALL_HINT}")
    return (f"{what} needs {' and '.join(missing)}, which this install leaves out; "
            f"install them with: {INSTALL_HINT}")


def in_bundle() -> bool:
    """True inside the PyInstaller desktop bundle (installers/babelfind.spec)."""
    return bool(getattr(sys, "frozen", False))


def require_training(what: str) -> None:
    """Raises TrainingNotInstalled when `what` cannot run for lack of the training packages."""
    missing = missing_training_packages()
    if missing:
        raise TrainingNotInstalled(what, missing)


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a blocked or half-removed package counts as absent
        return False
