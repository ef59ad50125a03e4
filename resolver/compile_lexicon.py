"""Lexicon compiler (placeholder until the lexicon lands)."""
from __future__ import annotations

from .plans import Compiled

COMPILER = "lexicon"


def compile_question(text: str, store) -> Compiled:
    return Compiled((), "lexicon compiler not built yet")
