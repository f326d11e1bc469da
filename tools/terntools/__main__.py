"""`python -m terntools` is the `./tern` command."""
from __future__ import annotations

import sys

from terntools.cli import main

if __name__ == "__main__":
    sys.exit(main())
