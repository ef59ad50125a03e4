"""Gold matching for the oracle: MemoryAgentBench's substring exact match, taken from
`resolver.metrics.scoring` (the one place that reproduces the benchmark's scoring).

Results are cached per (name, golds) because the path search tests every entity it reaches."""
from __future__ import annotations

from functools import lru_cache

from resolver.mab.exact_match import score_answer, substring_exact_match


@lru_cache(maxsize=1 << 16)
def _match(name: str, golds: tuple[str, ...]) -> bool:
    return substring_exact_match(name, golds) == 1


class GoldMatcher:
    """`matcher(name)` is True when `substring_exact_match(name, golds)` scores 1."""

    def __init__(self, golds) -> None:
        self.golds = tuple(golds)

    def __call__(self, name: str) -> bool:
        return _match(name, self.golds)


def is_hit(answer: str, golds) -> bool:
    """An answer counts as right exactly when a run row would score EM 1 (`score_answer`:
    an unanswered question never does)."""
    return score_answer(answer, tuple(golds)) == 1
