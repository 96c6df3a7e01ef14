"""`python -m app` opens the desktop window."""

import sys

from app.gui import main

sys.exit(main())
