"""factres's own statistics against scipy.stats on the committed folders.

- The run intervals (`scoring.bootstrap_means`, `interval`, the pooled rows) stay numpy: moving
  them onto scipy would load scipy.stats (about a second) in every scored run. They are
  scipy.stats.bootstrap's percentile intervals: for every cell of every committed score run,
  the same stream gives the identical bootstrap distribution (to the bit), and the committed
  metrics.json intervals (per source, and pooled as the mean over the cells' resamples) are
  what scipy's give at the 6 decimals metrics.json keeps.
- `oracle signals` stays numpy too (scipy.stats would add about a second to every call, a
  quarter of its time on the 6K rows): its AUC is scipy.stats.mannwhitneyu's U over the
  number of pairs, exactly, on every signal of the committed oracle-signals-6k folder; its
  permutation p reproduces the committed values, and scipy.stats.permutation_test with the
  same statistic agrees with each within Monte Carlo error."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pytest
from scipy import stats as scipy_stats

from oracle.signals import PERMUTATIONS, SEED, _separation, auc, permutation_p
from resolver.metrics.scoring import bootstrap_means, interval
from resolver.metrics.stats import percentile_interval, stream

RESULTS = Path(__file__).resolve().parent.parent / "results"
SCORED = sorted(p.parent.name for p in RESULTS.glob("*/metrics.json")
                if orjson.loads(p.read_bytes())["scored"])


def _outcomes(run: str) -> dict[str, list[int]]:
    """source -> EM per question, in the order of predictions.jsonl (the order scored)."""
    out: dict[str, list[int]] = {}
    for line in (RESULTS / run / "predictions.jsonl").read_bytes().splitlines():
        row = orjson.loads(line)
        out.setdefault(row["source"], []).append(row["em"])
    return out


def _scipy_distribution(values: list[int], name: str, resamples: int, seed: int) -> np.ndarray:
    return scipy_stats.bootstrap((np.asarray(values, float),), np.mean, n_resamples=resamples,
                                 vectorized=True, method="percentile",
                                 rng=stream(seed, name)).bootstrap_distribution


def _rounded(ci) -> list[float]:
    return [round(float(ci[0]), 6), round(float(ci[1]), 6)]


def test_the_committed_score_runs_are_all_checked():
    assert len(SCORED) >= 20 and "imported-nous-6k" in SCORED and "dev-6k-plain" in SCORED


@pytest.mark.parametrize("run", SCORED)
def test_run_intervals_are_scipys_percentile_bootstrap(run):
    metrics = orjson.loads((RESULTS / run / "metrics.json").read_bytes())
    resamples, seed = metrics["bootstrap"]["resamples"], metrics["bootstrap"]["seed"]
    level = metrics["bootstrap"]["level"]
    outcomes = _outcomes(run)
    dists = {}
    for row in metrics["rows"]:
        if row["pooled"]:
            continue
        values = outcomes[row["source"]]
        ours = bootstrap_means(values, row["source"], resamples, seed)
        theirs = _scipy_distribution(values, row["source"], resamples, seed)
        assert np.array_equal(ours, theirs), row["source"]
        result = scipy_stats.bootstrap((np.asarray(values, float),), np.mean,
                                       n_resamples=resamples, vectorized=True,
                                       method="percentile", confidence_level=level,
                                       rng=stream(seed, row["source"]))
        ci = result.confidence_interval
        # the same linear quantile; scipy's arithmetic may differ from numpy's in the last bit
        assert interval(ours, level) == pytest.approx((ci.low, ci.high), abs=1e-12)
        assert row["ci"] == _rounded((ci.low, ci.high)), row["source"]
        dists[row["source"]] = (row["kind"], theirs)
    for row in metrics["rows"]:
        if not row["pooled"] or row["ci"] is None:
            continue
        group = [d for kind, d in dists.values() if row["kind"] in (kind, "all")]
        assert row["ci"] == _rounded(percentile_interval(np.mean(group, axis=0), level)), \
            row["label"]


# ---- oracle signals ----------------------------------------------------------------------
SIGNALS_DIR = RESULTS / "oracle-signals-6k"


@pytest.fixture(scope="module")
def committed_signals() -> dict:
    return orjson.loads((SIGNALS_DIR / "signals.json").read_bytes())


def _groups(report: dict, name: str, control: str) -> tuple[list[float], list[float]]:
    """The older hops' values of a signal and the control group's (as _separation picks)."""
    hops = report["hop_rows"]
    a = [h["signals"][name] for h in hops if h["group"] == "older"
         and h["signals"][name] is not None]
    b = [h["signals"][name] for h in hops if h["group"] == "latest"
         and (control == "latest" or h["versions"] > 1) and h["signals"][name] is not None]
    return a, b


def _pairs(report: dict):
    return [(name, control) for name in report["signals"]
            for control in ("latest", "latest_updated")]


def test_signals_recomputed_from_the_committed_hops_reproduce_the_committed_figures(
        committed_signals):
    """AUC and permutation p, over the committed hop rows, give the committed table exactly."""
    again = _separation(committed_signals["hop_rows"])
    assert again["signals"] == committed_signals["signals"]
    assert again["separating"] == committed_signals["separating"] == ["fact_decile"]


def test_auc_is_scipys_mann_whitney_u_over_the_pairs(committed_signals):
    """On every signal of the committed folder, against both controls, and on the committed
    figure itself."""
    for name, control in _pairs(committed_signals):
        a, b = _groups(committed_signals, name, control)
        u = scipy_stats.mannwhitneyu(a, b, alternative="two-sided",
                                     method="asymptotic").statistic
        assert auc(a, b) == u / (len(a) * len(b)), (name, control)
        assert round(u / (len(a) * len(b)), 6) == \
            committed_signals["signals"][name][f"vs_{control}"]["auc"]
    assert auc([2, 3], [1]) == 1.0 and auc([1], [1]) == 0.5 and auc([], [1]) is None


def test_permutation_p_agrees_with_scipys_permutation_test(committed_signals):
    """scipy.stats.permutation_test of the same statistic (|difference of means|, one-sided on
    it, so two-sided on the difference), as many draws: each p lies within five standard errors
    of the difference of two Monte Carlo estimates of the committed p."""
    assert (committed_signals["permutations"], committed_signals["seed"]) == (PERMUTATIONS, SEED)
    rng = np.random.default_rng(SEED)
    checked = 0
    for name, control in _pairs(committed_signals):
        a, b = _groups(committed_signals, name, control)
        committed = committed_signals["signals"][name][f"vs_{control}"]["p"]
        result = scipy_stats.permutation_test(
            (np.asarray(a, float), np.asarray(b, float)),
            lambda x, y, axis: np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis)),
            permutation_type="independent", vectorized=True, n_resamples=PERMUTATIONS,
            alternative="greater", rng=rng)
        spread = math.sqrt(2 * committed * (1 - committed) / PERMUTATIONS)
        assert abs(result.pvalue - committed) <= 5 * spread + 2 / PERMUTATIONS, (name, control)
        checked += 1
    assert checked == 14
    # and the hand-written test reproduces a committed p by itself
    a, b = _groups(committed_signals, "other_question_key", "latest")
    assert round(permutation_p(a, b), 6) == \
        committed_signals["signals"]["other_question_key"]["vs_latest"]["p"]
