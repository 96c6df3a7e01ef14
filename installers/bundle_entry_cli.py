"""The bundle's `babelfind` executable (PyInstaller starts here; see babelfind.spec)."""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
