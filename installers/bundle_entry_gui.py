"""The bundle's `babelfind-gui` executable (PyInstaller starts here; see babelfind.spec)."""

import sys

from app.gui import main

if __name__ == "__main__":
    sys.exit(main())
