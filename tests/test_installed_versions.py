"""The environment the tests run in is the locked one (`make test` installs from the lock).

Runs only under `make test`, which names the lock in BABELFIND_LOCKED_INSTALL; a drift
check (`make test-latest`) or a developer's own environment skips it.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCK = os.environ.get("BABELFIND_LOCKED_INSTALL")
# Installers, not dependencies: the Makefile pins pip itself; the project is editable.
NOT_LOCKED = {"pip", "setuptools", "wheel", "babelfind"}

pytestmark = pytest.mark.skipif(not LOCK, reason="not a locked install (make test sets it)")


def locked_versions(lock: Path) -> dict[str, Version]:
    """{name: version} of the lock's lines whose markers hold on this machine."""
    pins = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate():
            (spec,) = requirement.specifier
            pins[canonicalize_name(requirement.name)] = Version(spec.version)
    return pins


def installed_versions() -> dict[str, Version]:
    return {canonicalize_name(d.metadata["Name"]): Version(d.version)
            for d in metadata.distributions()}


def test_every_installed_package_is_the_locked_version():
    pins = locked_versions(REPO_ROOT / LOCK)
    drift = {}
    for name, version in installed_versions().items():
        if name in NOT_LOCKED:
            continue
        # a local build of the locked release (torch's "+cpu" wheel) is that release
        if name not in pins or Version(version.public) != pins[name]:
            drift[name] = f"{version} installed, lock says {pins.get(name, 'nothing')}"
    assert not drift, f"the environment differs from {LOCK}: {drift}"


def test_the_lock_covers_every_dependency_of_the_project():
    pins = locked_versions(REPO_ROOT / LOCK)
    requires = [Requirement(line) for line in metadata.requires("babelfind") or []]
    extras = locked_extras(requires)
    missing = []
    for requirement in requires:
        if canonicalize_name(requirement.name) == "babelfind":
            continue  # `test` takes `train` and `english` by naming the project itself
        extras_ok = requirement.marker is None or any(
            requirement.marker.evaluate({"extra": extra}) for extra in extras)
        if extras_ok and canonicalize_name(requirement.name) not in pins:
            missing.append(requirement.name)
    assert not missing, f"run 'make lock': {missing} are not in {LOCK}"


def locked_extras(requires: list[Requirement]) -> set[str]:
    """The extras `make lock` resolves (test, bundle), with those they name in turn."""
    extras, grew = {"", "test", "bundle"}, True
    while grew:
        named = {extra for r in requires if canonicalize_name(r.name) == "babelfind"
                 and r.marker is not None and any(r.marker.evaluate({"extra": e}) for e in extras)
                 for extra in r.extras}
        grew = not named <= extras
        extras |= named
    return extras
