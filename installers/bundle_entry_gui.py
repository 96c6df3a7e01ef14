"""The bundle's `babelfind-gui` executable (PyInstaller starts here; see babelfind.spec)."""

import multiprocessing
import sys

from app.gui import main

if __name__ == "__main__":
    # the OCR worker is a spawned process: in a frozen executable it starts here too
    multiprocessing.freeze_support()
    sys.exit(main())
