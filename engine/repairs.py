"""Caches that healed themselves: the one line a person should see, and the log.

    >>> repaired("the keyword index %s was damaged (%s); rebuilt it from the database", path, why)

The side files beside the database (keyword index, FAISS file, hubness penalties) are
caches of it: damage to one costs a rebuild, never a search. Such a repair is worth one
line on the terminal or in the status bar (it takes time, and damage may mean a failing
disk), so its records go to REPAIR_LOGGER, which the front ends show (app/logging_setup.py)
as well as log. So does a cache rebuilt once after an update (`updated`, at INFO).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

REPAIR_LOGGER = "engine.repairs"
_log = logging.getLogger(REPAIR_LOGGER)


def repaired(message: str, *args) -> None:
    """Logs one repair at WARNING on REPAIR_LOGGER; `message` is %-formatted with `args`."""
    _log.warning(message, *args)


def updated(message: str, *args) -> None:
    """Logs, at INFO on REPAIR_LOGGER, a cache built again because this version writes it
    in another format: worth the same one line (it takes time), but no sign of damage."""
    _log.info(message, *args)


def move_aside(path: Path) -> Path | None:
    """Renames whatever that is not a regular file sits at `path` (a folder, a FIFO) out of
    the way of a side file, so that it is kept, not deleted; returns its new name.

    Example: move_aside(indexes / "keywords.sqlite")  # -> .../keywords.sqlite.moved-1767225600
    """
    path = Path(path)
    if not os.path.lexists(path) or (path.is_file() and not path.is_symlink()):
        return None
    aside = path.with_name(f"{path.name}.moved-{int(time.time())}")
    os.replace(path, aside)
    repaired("%s was not a file Babelfind wrote; moved it to %s", path, aside)
    return aside
