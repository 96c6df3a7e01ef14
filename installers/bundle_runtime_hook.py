"""Runs first in both bundled executables: point Babelfind at what the bundle carries.

- BABELFIND_PREPARED_MODELS: the default models, prepared at build time; a fresh
  BABELFIND_HOME copies them in (seconds) instead of building them (trainer.serving.default_models).
- BABELFIND_RESOURCES: icons, style sheet, sample corpus and the int8 gate evidence.
- BABELFIND_EXTRACT_WORKER: this run is the indexer's document reader, not the app.
A value the user set already wins.
"""

import os
import sys

_inside = getattr(sys, "_MEIPASS", os.path.dirname(os.path.abspath(sys.executable)))
os.environ.setdefault("BABELFIND_PREPARED_MODELS", os.path.join(_inside, "models"))
os.environ.setdefault("BABELFIND_RESOURCES", os.path.join(_inside, "resources"))

# The indexer reads documents in a child process started as this same executable with
# BABELFIND_EXTRACT_WORKER set (engine/extract/isolated.py): serve, never start the app.
if os.environ.get("BABELFIND_EXTRACT_WORKER") == "1":
    from engine.extract.isolated import serve

    serve()
    sys.exit(0)
