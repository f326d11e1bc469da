"""Writes table.inc: the 256 entries of the CRC-16 (polynomial 0x1021) table."""
from __future__ import annotations

import sys


def entry(i: int) -> int:
    c = i << 8
    for _ in range(8):
        c = ((c << 1) ^ 0x1021) if c & 0x8000 else c << 1
    return c & 0xFFFF


rows = (", ".join(f"0x{entry(i):04X}" for i in range(j, j + 8)) for j in range(0, 256, 8))
sys.stdout.write(",\n".join(rows) + "\n")
