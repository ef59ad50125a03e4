"""The paired statistics (resolver/metrics/stats.py) against worked values: the exact McNemar p of
hand-computable and published cases, bootstrap intervals that can be computed by hand, the
stratified convention (the mean over sizes), determinism, and scipy.stats.bootstrap itself."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from resolver.metrics.stats import (
    McNemar,
    mcnemar_exact,
    paired_bootstrap,
    paired_distribution,
    percentile_interval,
    stratified_mcnemar,
    stratified_paired_bootstrap,
    stream,
)


def _pairs(both: int, a_only: int, b_only: int, neither: int) -> tuple[list[int], list[int]]:
    """Outcome vectors with the given counts of (A, B) = (1, 1), (1, 0), (0, 1), (0, 0)."""
    a = [1] * both + [1] * a_only + [0] * b_only + [0] * neither
    b = [1] * both + [0] * a_only + [1] * b_only + [0] * neither
    return a, b


# ---- McNemar ---------------------------------------------------------------------------------
def test_no_discordant_pair_gives_p_one():
    assert mcnemar_exact(*_pairs(7, 0, 0, 3)) == McNemar(10, 0, 0, 1.0)
    assert mcnemar_exact([], []) == McNemar(0, 0, 0, 1.0)


def test_ten_against_none_is_twice_a_half_to_the_tenth():
    result = mcnemar_exact(*_pairs(50, 0, 10, 40))
    assert (result.a_only, result.b_only) == (0, 10)
    assert result.p == 2 * 0.5 ** 10
    # the test is symmetric in the two systems
    assert mcnemar_exact(*_pairs(50, 10, 0, 40)).p == 2 * 0.5 ** 10


def test_a_published_exact_mcnemar_example():
    """Fagerland, Lydersen & Laake (2013), "The McNemar test for binary matched-pairs data",
    BMC Med Res Methodol 13:91, the airway hyper-responsiveness example (Bentur et al.): 1 and 7
    discordant pairs; exact conditional p = 0.070 as published, 2 * (1 + 8) / 2^8 by hand. (The
    concordant counts do not enter the exact test; those below are any.)"""
    result = mcnemar_exact(*_pairs(1, 1, 7, 12))
    assert (result.n, result.a_only, result.b_only) == (21, 1, 7)
    assert result.p == pytest.approx(18 / 256, abs=1e-15)
    assert round(result.p, 3) == 0.070


def test_balanced_discordance_is_not_significant():
    assert mcnemar_exact(*_pairs(0, 5, 5, 0)).p == 1.0
    # 3 against 9: 2 * P(X <= 3 | 12, 1/2) = 2 * 299 / 4096
    assert mcnemar_exact(*_pairs(0, 3, 9, 0)).p == pytest.approx(2 * 299 / 4096, abs=1e-15)


@pytest.mark.parametrize("a, b, message", [
    ([1, 0], [1], "differ in length (2 and 1)"),
    ([1, 2], [1, 0], "A's outcomes must be 0 or 1"),
    ([1, 0], [0.5, 0], "B's outcomes must be 0 or 1"),
    ([[1], [0]], [[1], [0]], "flat sequences"),
])
def test_bad_outcomes_are_refused(a, b, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mcnemar_exact(a, b)
    with pytest.raises(ValueError):
        paired_bootstrap(a, b)


# ---- paired bootstrap ------------------------------------------------------------------------
def test_identical_systems_differ_by_exactly_zero():
    a = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1]
    result = paired_bootstrap(a, a, name="cell")
    assert (result.em_a, result.em_b, result.difference, result.ci) == (0.6, 0.6, 0.0, (0.0, 0.0))


def test_a_constant_difference_has_a_point_interval():
    # every question flips from right to wrong: every resample's difference is -1
    result = paired_bootstrap([1] * 30, [0] * 30)
    assert (result.difference, result.ci) == (-1.0, (-1.0, -1.0))
    # one question: the one possible resample
    assert paired_bootstrap([0], [1]).ci == (1.0, 1.0)
    with pytest.raises(ValueError, match="no questions"):
        paired_bootstrap([], [])


def test_pairing_removes_the_shared_variance():
    """B = A except two questions A missed and B got: the difference only ever moves with those
    two questions, so the interval lies in [0, 2/n], far narrower than unpaired EMs allow."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 100)
    b = a.copy()
    b[np.flatnonzero(a == 0)[:2]] = 1
    result = paired_bootstrap(a, b, name="x")
    assert result.difference == pytest.approx(0.02)
    assert 0.0 <= result.ci[0] <= 0.02 <= result.ci[1] <= 0.07


def test_same_seed_same_interval_and_streams_differ_by_name():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 80), rng.integers(0, 2, 80)
    first = paired_bootstrap(a, b, name="factconsolidation_mh_6k")
    assert paired_bootstrap(a, b, name="factconsolidation_mh_6k") == first
    assert paired_bootstrap(a, b, name="factconsolidation_sh_6k").ci != first.ci
    assert paired_bootstrap(a, b, name="factconsolidation_mh_6k", seed=1).ci != first.ci
    assert (first.resamples, first.seed, first.level) == (10000, 20240601, 0.95)


def test_the_interval_is_scipys_paired_bootstrap():
    """The distribution is scipy.stats.bootstrap's (paired, percentile) and so is the interval:
    computed here once more with a plain numpy paired resampling from the same stream."""
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 2, 60), rng.integers(0, 2, 60)
    result = paired_bootstrap(a, b, name="cell", resamples=2000)
    direct = scipy_stats.bootstrap(
        (a.astype(float), b.astype(float)),
        lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis), paired=True,
        vectorized=True, method="percentile", n_resamples=2000, rng=stream(20240601, "cell"))
    # the same linear quantile; scipy's arithmetic may differ from numpy's in the last bit
    assert result.ci == pytest.approx((direct.confidence_interval.low,
                                       direct.confidence_interval.high), abs=1e-12)
    index = stream(20240601, "cell").integers(0, 60, size=(2000, 60))
    by_hand = b[index].mean(axis=1) - a[index].mean(axis=1)
    assert np.array_equal(paired_distribution(a, b, name="cell", resamples=2000), by_hand)
    assert percentile_interval(by_hand) == result.ci


# ---- stratified (pooled rows) ----------------------------------------------------------------
def test_stratified_is_the_mean_over_strata_not_over_questions():
    """10 questions that all flip to right and 1000 that agree: pooled over questions the
    difference would be 10/1010; the benchmark pools the sizes, so it is (1 + 0) / 2."""
    strata = {"6k": ([0] * 10, [1] * 10), "262k": ([1] * 500 + [0] * 500,) * 2}
    result = stratified_paired_bootstrap(strata, resamples=500)
    assert (result.n, result.em_a, result.em_b, result.difference) == (1010, 0.25, 0.75, 0.5)
    assert result.ci == (0.5, 0.5)
    assert result.strata == ("6k", "262k")


def test_one_stratum_is_the_unstratified_bootstrap():
    rng = np.random.default_rng(9)
    a, b = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    alone = paired_bootstrap(a, b, name="factconsolidation_mh_6k", resamples=1000)
    pooled = stratified_paired_bootstrap({"factconsolidation_mh_6k": (a, b)}, resamples=1000)
    assert pooled == alone


def test_stratified_resamples_are_the_means_of_the_strata_resamples():
    rng = np.random.default_rng(11)
    strata = {s: (rng.integers(0, 2, n), rng.integers(0, 2, n))
              for s, n in (("6k", 40), ("32k", 70), ("64k", 55))}
    pooled = stratified_paired_bootstrap(strata, resamples=800)
    each = [paired_distribution(a, b, name=s, resamples=800) for s, (a, b) in strata.items()]
    assert pooled.ci == percentile_interval(np.mean(each, axis=0))
    assert pooled.difference == pytest.approx(np.mean([np.mean(b) - np.mean(a)
                                                       for a, b in strata.values()]))
    assert stratified_paired_bootstrap(strata, resamples=800) == pooled       # deterministic
    with pytest.raises(ValueError, match="no strata"):
        stratified_paired_bootstrap({})


# ---- stratified McNemar (pooled rows) ---------------------------------------------------------
def test_stratified_mcnemar_sums_the_discordant_pairs_over_strata():
    strata = {"6k": _pairs(5, 0, 4, 1), "32k": _pairs(10, 1, 3, 6), "64k": _pairs(3, 0, 0, 2)}
    result = stratified_mcnemar(strata)
    assert (result.n, result.a_only, result.b_only) == (35, 1, 7)
    assert result.p == pytest.approx(18 / 256, abs=1e-15)     # 1 against 7, as above
    assert stratified_mcnemar({"6k": _pairs(4, 0, 0, 4)}) == McNemar(8, 0, 0, 1.0)
    one = _pairs(2, 3, 9, 1)
    assert stratified_mcnemar({"6k": one}) == mcnemar_exact(*one)
    with pytest.raises(ValueError, match="no strata"):
        stratified_mcnemar({})


def test_the_stratified_exact_test_is_the_convolution_of_the_strata():
    """Conditional on each size's discordant count, B-only is Binomial(d, 1/2) per size; the
    exact null distribution of the summed B-only count is the convolution of those, and its
    two-sided p (the mass of outcomes no more likely than the observed) is the pooled test's."""
    strata = {"6k": ([1, 1, 0, 0, 0, 1], [0, 1, 1, 1, 1, 1]),   # 1 A-only, 3 B-only
              "32k": ([0, 0, 0, 1, 1], [1, 1, 0, 1, 0])}         # 1 A-only, 2 B-only
    dist = np.array([1.0])
    for x, y in strata.values():
        t = mcnemar_exact(x, y)
        d = t.a_only + t.b_only
        dist = np.convolve(dist, [_pmf(k, d) for k in range(d + 1)])
    observed = dist[3 + 2]
    by_hand = dist[dist <= observed * (1 + 1e-7)].sum()
    assert stratified_mcnemar(strata).p == pytest.approx(by_hand, abs=1e-12)
    assert (stratified_mcnemar(strata).a_only, stratified_mcnemar(strata).b_only) == (2, 5)


def _pmf(k: int, n: int) -> float:
    from math import comb
    return comb(n, k) / 2 ** n
