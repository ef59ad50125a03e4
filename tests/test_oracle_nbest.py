"""Plan recall@N and success@N on a hand-made run over the tiny haystack."""
from test_oracle_misses import MH, SH, cand, write_run
from test_oracle_paths import write_tiny

from oracle.nbest import analyse


def test_recall_and_success_by_n(tmp_path):
    run = write_run(tmp_path, write_tiny(tmp_path), {
        SH + "0": ("Newcap", 1, [cand("live:rules", "Xland", ["capital"], "Newcap", 1)]),
        # The rules plan could reach the gold but its search took another version; the
        # lexicon's candidate is right and scores higher.
        MH + "0": ("Ycity", 1, [cand("live:lexicon", "Alpha", ["born_in"], "Ycity", 0.9),
                                cand("live:rules", "Alpha", ["citizenship", "capital"],
                                     "Newcap", 0.5)]),
        MH + "4": ("Zed", 0, [cand("search", "Beta", ["married_to", "died_in"], "Zed", 2)]),
    })
    analysis = analyse(run)
    report = analysis.payload
    assert report["plan_sets"] == ["live:rules", "live:lexicon", "search"]
    mh = report["sources"]["factconsolidation_mh_6k"]
    assert [(r["plan_recall"], r["strict_plan_recall"], r["candidate_recall"], r["success"])
            for r in mh["by_n"]] == [(1, 1, 0, 0), (1, 1, 1, 1), (1, 1, 1, 1)]
    sh = report["sources"]["factconsolidation_sh_6k"]
    assert [(r["plan_recall"], r["success"]) for r in sh["by_n"]] == [(1, 1)] * 3
    assert (mh["rerun_agrees"], sh["rerun_agrees"]) == (2, 1)
