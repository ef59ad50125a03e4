"""Miss buckets on a hand-made run folder over the tiny haystack of test_oracle_paths."""
import pytest
from run_folders import write_run_folder
from test_oracle_paths import write_tiny

from oracle.misses import analyse, plan_error_kind
from oracle.paths import find_paths
from resolver.errors import InputError
from resolver.haystack import load
from resolver.plan.plans import Plan

SH, MH = "factconsolidation_sh_6k_no", "factconsolidation_mh_6k_no"


def cand(plan_set, entity, chain, answer, score):
    plan = {"entity": entity, "chain": list(chain), "answer_type": "any", "compiler": "rule",
            "rule": "", "note": ""}
    # one hop landing on the answer: a candidate the search wrote has walked at least one
    hop = {"subject": entity, "relation": chain[-1], "object": answer, "serial": 1, "line": 1,
           "text": "", "version": 0, "reverse": False, "passed_over": [], "status": "active"}
    return {"plan": plan, "plan_set": plan_set, "hops": [hop], "answer": answer,
            "score": score, "terms": [], "complete": True}


def write_run(tmp_path, data, cases, plan_sets=("live:rules", "live:lexicon"), **kwargs):
    """cases: qid -> (prediction, em, [candidates][, resolver_answer]); the first candidate is
    the winner."""
    return write_run_folder(tmp_path / "run-1", [str(data)], cases, plan_sets=plan_sets,
                            **kwargs)


def test_every_bucket_on_a_hand_made_run(tmp_path):
    data = write_tiny(tmp_path)
    run = write_run(tmp_path, data, {
        SH + "0": ("Aatown", 0, [cand("live:rules", "Xland", ["born_in"], "Aatown", 1)]),
        SH + "1": ("Yland", 0, [cand("live:rules", "Alpha", ["citizenship"], "Yland", 1)]),
        SH + "2": ("Zed", 0, [cand("live:rules", "Delta", ["born_in"], "Zed", 1)]),
        SH + "3": ("Cctown", 0, [cand("live:rules", "Delta", ["born_in"], "Cctown", 2),
                                 cand("live:lexicon", "Delta", ["born_in"], "Bbtown", 1)]),
        MH + "0": ("Xland", 0, [cand("live:lexicon", "Alpha", ["capital", "citizenship"],
                                     "Xland", 1)]),
        MH + "1": ("Oldcap", 1, [cand("live:lexicon", "Alpha", ["citizenship", "capital"],
                                      "Oldcap", 1)]),
        MH + "2": ("Gamma", 0, [cand("live:lexicon", "Beta", ["married_to"], "Gamma", 1)]),
        MH + "3": ("Ycity", 0, [cand("live:lexicon", "Alpha", ["citizenship", "capital"],
                                     "Ycity", 1)]),
        MH + "4": ("", 0, []),
    })
    analysis = analyse(run)
    buckets = {m["qid"]: m["bucket"] for m in analysis.payload["misses"]}
    assert buckets == {SH + "0": "plan_error:near_synonym",
                       SH + "1": "needs_older_version",
                       SH + "2": "plan_error:wrong_base_entity",
                       SH + "3": "selection_error",
                       MH + "0": "plan_error:swapped",
                       MH + "2": "plan_error:hop_short",
                       MH + "3": "needs_older_version",
                       MH + "4": "no_gold_path"}
    summary = analysis.payload["summary"]
    assert summary["factconsolidation_mh_6k"]["questions"] == 5
    assert summary["factconsolidation_mh_6k"]["misses"] == 4
    assert summary["factconsolidation_sh_6k"]["buckets"]["selection_error"] == 1
    assert "| misses | 4 | 4 | 8 |" in analysis.markdown


def test_plan_error_kinds(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    qp = next(q for q in find_paths(dataset, gold) if q.question.qid == MH + "0")

    def kind(*chain, entity="Alpha"):
        return plan_error_kind(Plan(entity, chain, "any", "rule"), qp.paths)

    assert kind("citizenship", "capital") == "exact"
    assert kind("family:origin", "capital") == "exact"
    assert kind("citizenship", "capital", "capital") == "hop_padded"
    assert kind("capital") == "hop_short"
    assert kind("capital", "citizenship") == "swapped"
    assert kind("religion", "capital") == "other"
    assert kind("capital", entity="Xland") == "wrong_base_entity"


def test_unscored_run_is_refused(tmp_path):
    run = write_run(tmp_path, write_tiny(tmp_path), {SH + "0": ("Newcap", None, [])},
                    split="test")
    with pytest.raises(InputError, match="is unscored"):
        analyse(run)


def test_reader_search_and_no_plan_buckets(tmp_path):
    run = write_run(tmp_path, write_tiny(tmp_path), {
        # The reader replaced a right resolver answer.
        SH + "0": ("Aatown", 0, [cand("live:rules", "Xland", ["capital"], "Newcap", 1)],
                   "Newcap"),
        MH + "0": ("Xland", 0, [cand("live:lexicon", "Alpha", ["citizenship", "capital"],
                                     "Oldcap", 1)], "Oldcap"),
        MH + "2": ("", 0, []),
    }, reader="ollama:some-model")
    buckets = {m["qid"]: m["bucket"] for m in analyse(run).payload["misses"]}
    assert buckets == {SH + "0": "reader_error", MH + "0": "search_error",
                       MH + "2": "plan_error:no_plan"}
