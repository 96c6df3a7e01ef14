"""Runs first in both bundled executables: point Babelfind at what the bundle carries.

- BABELFIND_PREPARED_MODELS: the default models, prepared at build time; a fresh
  BABELFIND_HOME copies them in (seconds) instead of building them (trainer.serving.default_models).
- BABELFIND_RESOURCES: icons, style sheet, sample corpus and the int8 gate evidence.
A value the user set already wins.
"""

import os
import sys

_inside = getattr(sys, "_MEIPASS", os.path.dirname(os.path.abspath(sys.executable)))
os.environ.setdefault("BABELFIND_PREPARED_MODELS", os.path.join(_inside, "models"))
os.environ.setdefault("BABELFIND_RESOURCES", os.path.join(_inside, "resources"))
