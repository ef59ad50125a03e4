"""Paired statistics over per-question outcomes: the difference of two systems' EM with a paired
bootstrap interval (one cell, or stratified over sizes for a pooled row) and the exact McNemar
test on the discordant pairs (one cell, or stratified over sizes). Pure functions over 0/1
vectors given in the same question order; nothing here reads a file or gold.

scipy.stats does the statistics (`bootstrap` resamples, `binomtest` gives the exact p), imported
inside each function: loading scipy.stats costs about a second, which only the commands that
compute these statistics should pay (tests/test_startup.py checks who loads it).

Conventions, shared with the run's own intervals (`scoring.bootstrap_means`):
- The difference is B - A: the second system minus the first (the baseline).
- Resampling is over questions, with the same resample for both systems (paired), percentile
  intervals, a fixed seed, and one random stream per cell, seeded by (seed, crc32(name)), so a
  cell's interval does not depend on which other cells are computed beside it.
- Pooled rows follow the benchmark's convention, the mean over sizes (each size weighs the same
  whatever its question count): the stratified bootstrap resamples within each size, from that
  size's own stream, and averages the sizes' resampled differences resample by resample. A
  pooled interval is therefore consistent with the per-size ones: its resamples are their means.
- A pooled row's test (`stratified_mcnemar`) is the exact McNemar test stratified by size,
  which is the exact test on the discordant questions summed over the sizes.
"""
from __future__ import annotations

import math
import numbers
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from resolver.errors import InputError

if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 10000          # a paper figure: 10,000 resamples keep the interval's ends stable
# The most resamples a comparison takes: scipy draws them at once, 8 bytes per question per
# resample (100,000 resamples of 1,000 questions: 0.8 GB), and ten times the paper's figure
# already moves no interval end a visible digit.
MAX_RESAMPLES = 100_000
SEED = 20240601            # the run intervals' seed (scoring.BOOTSTRAP_SEED)
LEVEL = 0.95


@dataclass(frozen=True)
class PairedDifference:
    """EM of two systems over the same questions and the difference B - A with its interval."""
    n: int                        # questions (summed over the strata when stratified)
    em_a: float                   # EM of A (stratified: the mean of the strata's EMs)
    em_b: float                   # EM of B (likewise)
    difference: float             # em_b - em_a
    ci: tuple[float, float]       # percentile bootstrap interval of the difference
    level: float                  # the interval's confidence level
    resamples: int
    seed: int
    strata: tuple[str, ...]       # the stream names: (name,), or the strata in the order given


@dataclass(frozen=True)
class McNemar:
    """The exact McNemar test of two systems over the same questions."""
    n: int                        # questions
    a_only: int                   # questions A answers right and B wrong
    b_only: int                   # questions B answers right and A wrong
    p: float                      # two-sided exact p; 1.0 when no pair is discordant


def check_bootstrap(resamples, seed, level) -> None:
    """InputError naming the argument when a bootstrap setting is out of its range: `resamples`
    an integer from 1 to MAX_RESAMPLES, `seed` an integer from 0, `level` a number strictly
    between 0 and 1 (a bool is none of them)."""
    def integer(value) -> bool:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not integer(resamples) or not 1 <= resamples <= MAX_RESAMPLES:
        raise InputError(f"resamples is {resamples!r}",
                         expected=f"an integer from 1 to {MAX_RESAMPLES:,} ({RESAMPLES:,} by "
                                  "default)")
    if not integer(seed) or seed < 0:
        raise InputError(f"seed is {seed!r}", expected=f"an integer from 0 ({SEED} by default)")
    if isinstance(level, bool) or not isinstance(level, numbers.Real) \
            or not math.isfinite(level) or not 0 < level < 1:
        raise InputError(f"level is {level!r}",
                         expected=f"a number between 0 and 1, such as {LEVEL} (the default)")


def stream(seed: int, name: str) -> np.random.Generator:
    """The random stream of the cell `name`: the fixed seed and the cell's name, so that cells
    do not share resampling patterns (the run intervals' seeding, scoring.bootstrap_means)."""
    import numpy as np  # lazily, as everywhere in run/: commands that compute nothing skip it
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def _outcomes(a: Sequence[int], b: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Both vectors as float arrays, checked: the same length, every value 0 or 1."""
    import numpy as np
    x, y = np.asarray(a), np.asarray(b)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError("outcomes must be flat sequences of 0 and 1, one per question")
    if len(x) != len(y):
        raise ValueError(f"the two systems' outcomes differ in length ({len(x)} and {len(y)}): "
                         "a paired statistic needs the same questions in the same order")
    for name, v in (("A", x), ("B", y)):
        if v.size and not np.isin(v, (0, 1)).all():
            raise ValueError(f"{name}'s outcomes must be 0 or 1 (EM per question)")
    return x.astype(float), y.astype(float)


def _difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """The statistic resampled: EM of B minus EM of A (vectorised along `axis`)."""
    import numpy as np
    return np.mean(y, axis=axis) - np.mean(x, axis=axis)


def paired_distribution(a: Sequence[int], b: Sequence[int], *, name: str = "",
                        resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The bootstrap distribution of EM(B) - EM(A): `resamples` resamples of the questions
    (with replacement, the same questions for both systems), from the stream of `name`.

    scipy.stats.bootstrap draws them (paired, vectorised); one question has a single possible
    resample, which scipy refuses, so its distribution is that question's difference repeated."""
    import numpy as np
    x, y = _outcomes(a, b)
    if not len(x):
        raise ValueError("no questions to resample")
    if len(x) == 1:
        return np.full(resamples, float(y[0] - x[0]))
    # Lazily: scipy.stats takes about a second to load.
    from scipy.stats import bootstrap
    result = bootstrap((x, y), _difference, n_resamples=resamples, paired=True,
                       vectorized=True, method="percentile", rng=stream(seed, name))
    return result.bootstrap_distribution


def percentile_interval(distribution: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The percentile interval of a bootstrap distribution: numpy's linear percentile, the
    quantile scipy.stats.bootstrap takes for method="percentile" (its arithmetic may differ in
    the last bit). One function for the cells and the pooled rows, so a pool of one stratum
    gives the cell's interval exactly."""
    import numpy as np
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(distribution, [tail, 100 - tail])
    return float(low), float(high)


def paired_bootstrap(a: Sequence[int], b: Sequence[int], *, name: str = "",
                     resamples: int = RESAMPLES, seed: int = SEED,
                     level: float = LEVEL) -> PairedDifference:
    """EM of A and B over the same questions (0/1 per question, same order) and the difference
    B - A with a paired percentile bootstrap interval, resampled from the stream of `name`
    (give each cell its own name, e.g. its source)."""
    x, y = _outcomes(a, b)
    dist = paired_distribution(x, y, name=name, resamples=resamples, seed=seed)
    em_a, em_b = float(x.mean()), float(y.mean())
    return PairedDifference(len(x), em_a, em_b, em_b - em_a, percentile_interval(dist, level),
                            level, resamples, seed, (name,))


def stratified_paired_bootstrap(strata: Mapping[str, tuple[Sequence[int], Sequence[int]]], *,
                                resamples: int = RESAMPLES, seed: int = SEED,
                                level: float = LEVEL) -> PairedDifference:
    """The pooled row's difference: `strata` maps each stratum (a size, or a source) to its
    (A, B) outcomes. EMs and the difference are means over the strata, each weighing the same;
    the interval resamples within each stratum (from the stream named by the stratum, so a
    stratum's resamples are those `paired_bootstrap(..., name=stratum)` draws) and averages
    the strata's differences resample by resample."""
    import numpy as np
    if not strata:
        raise ValueError("no strata to pool")
    names = tuple(strata)
    pairs = [_outcomes(*strata[s]) for s in names]
    dists = [paired_distribution(x, y, name=s, resamples=resamples, seed=seed)
             for s, (x, y) in zip(names, pairs)]
    em_a = float(np.mean([x.mean() for x, _ in pairs]))
    em_b = float(np.mean([y.mean() for _, y in pairs]))
    return PairedDifference(sum(len(x) for x, _ in pairs), em_a, em_b, em_b - em_a,
                            percentile_interval(np.mean(dists, axis=0), level), level,
                            resamples, seed, names)


def mcnemar_exact(a: Sequence[int], b: Sequence[int]) -> McNemar:
    """The exact (conditional) McNemar test: among the discordant questions (one system right,
    the other wrong), is B's share of them different from one half? Two-sided p of the binomial
    test (scipy.stats.binomtest) of B-only-right out of the discordant; 1.0 when there is no
    discordant question (nothing to test; binomtest refuses n = 0)."""
    x, y = _outcomes(a, b)
    a_only = int(((x == 1) & (y == 0)).sum())
    b_only = int(((x == 0) & (y == 1)).sum())
    if a_only + b_only == 0:
        return McNemar(len(x), 0, 0, 1.0)
    from scipy.stats import binomtest  # lazily: scipy.stats takes about a second to load
    p = binomtest(b_only, a_only + b_only, 0.5, alternative="two-sided").pvalue
    return McNemar(len(x), a_only, b_only, float(p))


def stratified_mcnemar(strata: Mapping[str, tuple[Sequence[int], Sequence[int]]]) -> McNemar:
    """The pooled row's test: the exact McNemar test stratified by `strata` (sizes), which is
    the exact test on the discordant questions summed over the strata.

    Why the two are one test: conditional on a stratum's discordant count d_s, its B-only count
    is Binomial(d_s, 1/2) under the null hypothesis (in every stratum, A-only and B-only are
    equally likely), the strata are independent, and a sum of independent Binomial(d_s, 1/2)
    is Binomial(sum d_s, 1/2); the exact conditional test of the summed B-only count is
    therefore `binomtest` over the summed discordant pairs. Each discordant question weighs the
    same, not each stratum: it tests "no difference in any size", and with unequal question
    counts per size it is not a test of the mean-over-sizes difference, whose interval
    `stratified_paired_bootstrap` gives."""
    if not strata:
        raise ValueError("no strata to pool")
    tests = [mcnemar_exact(*strata[s]) for s in strata]
    a_only = sum(t.a_only for t in tests)
    b_only = sum(t.b_only for t in tests)
    n = sum(t.n for t in tests)
    if a_only + b_only == 0:
        return McNemar(n, 0, 0, 1.0)
    from scipy.stats import binomtest  # lazily, as in mcnemar_exact
    p = binomtest(b_only, a_only + b_only, 0.5, alternative="two-sided").pvalue
    return McNemar(n, a_only, b_only, float(p))
