"""The ceiling on the tiny haystack of test_oracle_paths, CP-SAT against exhaustive search on
small random instances, and the time limit.

Worked by hand: keys A = (Alpha, citizenship) and X = (Xland, capital) are contested.
sh0 needs X0, sh1 A1, mh0 A0, mh1 A1+X1, mh3 A1+X0; sh2, sh3 (Delta, born_in asked in one
version only) and mh2 are free; mh4 has no gold path. Best policy A1 X0: sh0 sh1 mh3 + 3 free
= 6. Latest wins A0 X0: sh0 mh0 + sh2 mh2 = 4."""
import itertools
import random

import pytest
from test_oracle_paths import write_tiny

from oracle.ceiling import OPTIMAL, CeilingError, ceiling_markdown, optimum, solve
from oracle.paths import find_paths
from resolver.haystack import load


@pytest.fixture
def tiny_paths(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    return find_paths(dataset, gold)


def test_ceiling_counts(tiny_paths):
    report = solve(tiny_paths)
    assert (report["questions"], report["with_gold_path"], report["optimal"],
            report["latest_wins"], report["bound"], report["status"]) == (9, 8, 6, 4, 6, OPTIMAL)
    (sha,) = report["per_haystack"]
    assert report["per_source"] == {
        "factconsolidation_mh_6k": {"questions": 5, "with_gold_path": 4, "optimal": 2,
                                    "latest_wins": 2, "contested_keys": 2, "haystacks": [sha],
                                    "size": "6k", "status": OPTIMAL},
        "factconsolidation_sh_6k": {"questions": 4, "with_gold_path": 4, "optimal": 4,
                                    "latest_wins": 2, "contested_keys": 2, "haystacks": [sha],
                                    "size": "6k", "status": OPTIMAL}}
    assert report["per_haystack"][sha] == {
        "size": "6k", "sources": ["factconsolidation_mh_6k", "factconsolidation_sh_6k"],
        "questions": 9, "with_gold_path": 8, "optimal": 6, "latest_wins": 4, "bound": 6,
        "status": OPTIMAL, "keys_requested": 6, "keys_free": 4, "questions_free": 3,
        "contested_keys": 2, "components": 1}
    assert [(c["subject"], c["relation"], c["optimal_version"])
            for c in report["contested_keys"]] == [("Alpha", "citizenship", 1),
                                                   ("Xland", "capital", 0)]
    assert [(c["keys"], c["questions"], c["search_space"], c["best"], c["bound"], c["status"])
            for c in report["components"]] == [(2, 5, 4, 3, 3, OPTIMAL)]
    markdown = ceiling_markdown(report)
    assert "Status: proven optimal" in markdown
    assert f"| {sha[:12]} | 6k | factconsolidation_mh_6k, factconsolidation_sh_6k | 9 | 8 | 6 " \
           "| 6 | 4 | 2 | OPTIMAL |" in markdown


def test_contested_keys_per_source_agree_with_what_tables_count(tiny_paths):
    """resolver.report.paper_tables counts them from older ceiling.json files that lack the
    field."""
    from resolver.report.paper_tables import contested_by_source
    report = solve(tiny_paths)
    written = {s: v["contested_keys"] for s, v in report["per_source"].items()}
    old = dict(report, per_source={s: {k: x for k, x in v.items() if k != "contested_keys"}
                                   for s, v in report["per_source"].items()})
    assert contested_by_source(report) == written
    assert contested_by_source(old) == written


def _exhaustive(alts):
    """The test oracle: try every policy over the requested versions."""
    requested = {}
    for options in alts:
        for r in options:
            for k, v in r:
                requested.setdefault(k, set()).add(v)
    keys = sorted(requested)
    best = 0
    for choice in itertools.product(*(sorted(requested[k]) for k in keys)):
        policy = dict(zip(keys, choice))
        best = max(best, sum(any(all(policy[k] == v for k, v in r) for r in options)
                             for options in alts))
    return best


def _random_instance(rng):
    keys = [(f"e{i}", "r") for i in range(rng.randint(1, 6))]
    versions = {k: rng.randint(1, 3) for k in keys}
    alts = []
    for _ in range(rng.randint(1, 9)):
        options = []
        for _ in range(rng.randint(0, 3)):
            chosen = rng.sample(keys, rng.randint(1, min(3, len(keys))))
            options.append(frozenset((k, rng.randrange(versions[k])) for k in chosen))
        alts.append(options)
    return alts


def test_cp_sat_agrees_with_exhaustive_search_on_random_instances():
    rng = random.Random(14)
    for _ in range(150):
        alts = _random_instance(rng)
        solved = optimum(alts)
        assert solved.status == OPTIMAL
        assert solved.best == solved.bound == _exhaustive(alts), alts
        # the policy it reports does satisfy that many
        assert solved.best == sum(any(all(solved.policy.get(k) == v for k, v in r)
                                      for r in options) for options in alts)


def test_ties_keep_the_most_recent_version():
    a, b = ("a", "r"), ("b", "r")
    # q0 wants a0 b0 or a1 b1; q1 wants a1 b1 or a0 b0: both policies satisfy both.
    alts = [[frozenset({(a, 0), (b, 0)}), frozenset({(a, 1), (b, 1)})],
            [frozenset({(a, 1), (b, 1)}), frozenset({(a, 0), (b, 0)})]]
    assert optimum(alts).policy == {a: 0, b: 0}


def test_a_time_limit_that_stops_the_solver_says_so(tiny_paths):
    report = solve(tiny_paths, time_limit=1e-9)
    assert report["status"] == "FEASIBLE"
    assert [c["status"] for c in report["components"]] == ["UNKNOWN"]
    # what it reached: the free keys, latest wins in the component (A0 X0: sh0 mh0) + 3 free
    # questions; bound: all 5 questions of the component + 3
    assert (report["optimal"], report["bound"]) == (5, 8)
    markdown = ceiling_markdown(report)
    assert "Status: NOT proven optimal: the time limit of 1e-09 s stopped the solver first " \
           "(6k haystack" in markdown
    assert "best found 5, bound 8" in markdown
    assert "proven optimal)" not in markdown


def test_a_solver_failure_names_the_haystack_and_sources(tiny_paths, monkeypatch):
    from ortools.sat.python import cp_model
    monkeypatch.setattr(cp_model.CpSolver, "status_name", lambda self, status=None: "INFEASIBLE")
    sha = tiny_paths[0].question.context_sha256
    with pytest.raises(CeilingError) as err:
        solve(tiny_paths)
    assert str(err.value) == (f"ceiling: CP-SAT returned INFEASIBLE on a component of the 6k "
                              f"haystack {sha[:12]} (sources factconsolidation_mh_6k, "
                              "factconsolidation_sh_6k) (2 keys, 5 questions)")
