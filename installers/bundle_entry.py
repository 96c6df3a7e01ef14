"""The Linux bundle's one executable: `babelfind` runs the CLI; `babelfind-gui`, a link to
the same file, opens the window (PyInstaller starts here; see babelfind.spec).

One executable carries one copy of the compressed module archive (16 MB) where two
would carry two; Windows and macOS keep two (their window executable has no console).
"""

import os
import multiprocessing
import sys

GUI_NAME = "babelfind-gui"


def _main():
    invoked = os.path.basename(sys.argv[0]) if sys.argv else ""
    if invoked.startswith(GUI_NAME):
        from app.gui import main
    else:
        from app.cli import main
    return main()


if __name__ == "__main__":
    # the OCR worker is a spawned process: in a frozen executable it starts here too
    multiprocessing.freeze_support()
    sys.exit(_main())
