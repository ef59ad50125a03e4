"""Signals on the tiny haystack of test_oracle_paths, and the separation measures."""
from test_oracle_paths import write_tiny

from oracle.paths import find_paths
from oracle.signals import auc, permutation_p, signals_report
from resolver.haystack import load
from resolver.plan.planning import live_plan_sets


def test_hop_groups_and_signals(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    rules = live_plan_sets(dataset, ("rules",))
    report = signals_report(find_paths(dataset, gold, rules), rules, dataset)
    assert (report["hops"], report["older_hops"], report["latest_hops"],
            report["latest_updated_hops"]) == (12, 5, 7, 3)
    hops = {(h["qid"], h["hop"]): h["signals"] for h in report["hop_rows"]}
    # sh1 takes "0. Alpha is a citizen of Xland." (the first of two versions).
    assert hops[("factconsolidation_sh_6k_no1", 0)] == {
        "object_degree": 3, "object_has_facts": 1, "tied_back": 0, "other_question_key": 0,
        "serial_distance": None, "fact_decile": 0, "update_decile": 2}
    # mh1's first hop is the same fact; sh1's rule plan (another question) needs its key.
    assert hops[("factconsolidation_mh_6k_no1", 0)]["other_question_key"] == 1
    assert hops[("factconsolidation_mh_6k_no1", 0)]["serial_distance"] == 1
    # "5. Beta is married to Gamma." followed back from Gamma: tied back by nothing else.
    assert hops[("factconsolidation_sh_6k_no2", 0)]["tied_back"] == 0
    assert report["signals"]["fact_decile"]["older"]["n"] == 5


def test_separation_measures():
    assert auc([2, 3], [1]) == 1.0
    assert auc([1], [1]) == 0.5
    assert auc([], [1]) is None
    assert permutation_p([1, 1], [1, 1]) == 1.0
    assert permutation_p([10, 11, 12, 13], [0, 1, 2, 3]) < 0.05
