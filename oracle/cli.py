"""The full `factres` command line: resolver's commands plus the `oracle` group.

The console script points here because oracle/ may import resolver/, never the reverse."""
from __future__ import annotations

from resolver.cli import main

__all__ = ["main"]
