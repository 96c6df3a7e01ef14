"""Where the files Babelfind ships live: a source checkout, a bundle, or an installed prefix.

    >>> sample_corpus()
    PosixPath('/home/me/babelfind/resources/sample')

One lookup for every front end (the window's "Try the sample documents", the screenshot
script), so a bundle that moves `resources/` only has to be taught here. The places, in
order:

1. `BABELFIND_RESOURCES`, when set: the only place looked (an explicit choice must not be
   overridden by a stale checkout beside it).
2. A PyInstaller bundle: `sys._MEIPASS/resources` (the one-folder bundle's `_internal/`),
   then `resources/` beside the executable.
3. The source checkout (or an editable install): `resources/` beside `engine/`.
4. An installed data prefix (pyproject.toml's data-files): `sys.prefix/share/babelfind/resources`,
   or the user base's for `pip install --user`.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

from engine.errors import ResourceNotFoundError

RESOURCES_ENV = "BABELFIND_RESOURCES"
SAMPLE_FOLDER = "sample"
# The sample query the window suggests after indexing the sample corpus: English, and it
# finds the German text, so the first search shows the point of the tool. It is one of
# the queries in resources/README.md's table, which the end-to-end tests check.
SAMPLE_QUERY = "why are the glaciers in the Alps shrinking"


def resource_candidates() -> list[Path]:
    """The folders that may hold resources/, in the order they are tried.

    Example: resource_candidates()[0] == Path("/opt/babelfind/_internal/resources") in a bundle.
    """
    explicit = os.environ.get(RESOURCES_ENV)
    if explicit:
        return [Path(explicit).expanduser()]
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources")
    if getattr(sys, "frozen", False):
        candidates.append(Path(sys.executable).resolve().parent / "resources")
    candidates.append(Path(__file__).resolve().parents[1] / "resources")
    for base in (sys.prefix, site.getuserbase()):
        candidates.append(Path(base) / "share" / "babelfind" / "resources")
    return list(dict.fromkeys(candidates))  # a bundle's two guesses may be one folder


def resources_dir() -> Path:
    """The first candidate folder that exists.

    Example: resources_dir() / "icons" / "search.svg"

    Raises:
        ResourceNotFoundError: none of resource_candidates() is a folder.
    """
    candidates = resource_candidates()
    for folder in candidates:
        if folder.is_dir():
            return folder
    raise ResourceNotFoundError("resources folder", candidates)


def sample_corpus() -> Path:
    """The sample documents' folder (nine short texts in nine languages).

    Example: sorted(p.name for p in sample_corpus().iterdir())[0] == "beekeeping_en.md"

    The first candidate whose `sample/` holds at least one file wins, so a half-copied
    resources folder (icons only) does not hide a complete one later in the list.

    Raises:
        ResourceNotFoundError: no candidate has a non-empty sample folder.
    """
    looked = [folder / SAMPLE_FOLDER for folder in resource_candidates()]
    for folder in looked:
        if folder.is_dir() and any(p.is_file() for p in folder.iterdir()):
            return folder
    raise ResourceNotFoundError("sample corpus", looked)
