"""Host tooling for tern: run images in the board emulators, decode the kernel
trace, compute the seed-000 metrics and drive the seed-000 benchmark sweep."""
from __future__ import annotations

__all__ = ["__version__"]
__version__ = "0.1.0"
