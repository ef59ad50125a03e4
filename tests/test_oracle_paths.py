"""Gold paths on a tiny haystack whose every path is known by hand."""
import orjson
import pytest

from oracle.gold import GoldMatcher
from oracle.paths import Graph, find_paths, paths_report, plan_paths
from resolver.haystack import load
from resolver.plan.plans import Plan

# (Alpha, citizenship) and (Xland, capital) have two versions, (Delta, born_in) three.
CONTEXT = """Here is a list of facts:
0. Alpha is a citizen of Xland.
1. The capital of Xland is Oldcap.
2. Alpha is a citizen of Yland.
3. The capital of Yland is Ycity.
4. The capital of Xland is Newcap.
5. Beta is married to Gamma.
6. Gamma died in the city of Zed.
7. Delta was born in the city of Aatown.
8. Delta was born in the city of Bbtown.
9. Delta was born in the city of Cctown.
"""
SH = [("What is the capital of Xland?", "Newcap"),                 # latest
      ("What is the country of citizenship of Alpha?", "Xland"),   # first of two
      ("Who is Gamma married to?", "Beta"),                       # symmetric, object -> subject
      ("Which city was Delta born in?", "Bbtown")]                # middle of three
MH = [("What is the capital of the country of citizenship of Alpha?", "Ycity"),   # L L
      ("What is the capital of the country of citizenship of Alpha?", "Oldcap"),  # O1 O1
      ("Which city did the spouse of Beta die in?", "Zed"),                        # L L
      ("What is the capital of the country of citizenship of Alpha?", "Newcap"),  # O1 L
      ("What is the capital of the country of citizenship of Alpha?", "Nowhere")]  # none


def write_tiny(tmp_path):
    rows = []
    for kind, qa in (("mh", MH), ("sh", SH)):
        source = f"factconsolidation_{kind}_6k"
        rows.append({"context": CONTEXT, "questions": [q for q, _ in qa],
                     "answers": [[a] for _, a in qa],
                     "metadata": {"source": source,
                                  "qa_pair_ids": [f"{source}_no{i}" for i in range(len(qa))]}})
    path = tmp_path / "tiny.json"
    path.write_bytes(orjson.dumps({"data": rows}))
    return path


@pytest.fixture
def tiny(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    return dataset, gold, {qp.question.qid: qp for qp in find_paths(dataset, gold)}


def test_patterns_of_best_paths(tiny):
    _, _, qps = tiny
    mh = [qps[f"factconsolidation_mh_6k_no{i}"] for i in range(5)]
    assert [qp.best().pattern() if qp.best() else None for qp in mh] == \
        ["L L", "O1 O1", "L L", "O1 L", None]
    assert [len(qp.paths) for qp in mh] == [1, 1, 1, 1, 0]
    assert [h.fact.serial for h in mh[1].best().hops] == [0, 1]


def test_symmetric_fact_followed_backwards(tiny):
    _, _, qps = tiny
    path = qps["factconsolidation_sh_6k_no2"].best()
    assert path.start == "Gamma"
    assert [(h.fact.serial, h.reverse, h.target) for h in path.hops] == [(5, True, "Beta")]


def test_single_hop_version_ranks(tiny):
    _, _, qps = tiny
    hops = [qps[f"factconsolidation_sh_6k_no{i}"].best().hops[0] for i in range(4)]
    assert [(h.version, h.versions) for h in hops] == [(0, 2), (1, 2), (0, 1), (1, 3)]


def test_max_hops_bounds_the_search(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    qps = find_paths(dataset, gold, max_hops=1)
    assert sum(qp.has_path for qp in qps if qp.question.kind == "mh") == 0
    assert sum(qp.has_path for qp in qps if qp.question.kind == "sh") == 4


def test_paths_report_counts(tiny):
    _, _, qps = tiny
    summary, rows = paths_report(list(qps.values()))
    assert summary == {"factconsolidation_mh_6k": {
        "questions": 5, "with_gold_path": 4, "from_plan_entity": 4,
        "shortest_hops": {"2": 4, "none": 1}, "best_all_latest": 2, "best_hops": 8,
        "best_hops_older": 3, "best_patterns": {"L L": 2, "O1 L": 1, "O1 O1": 1}}}
    assert [r["qid"] for r in rows] == [f"factconsolidation_mh_6k_no{i}" for i in range(5)]


def test_plan_paths_follow_the_plan_only(tiny):
    dataset, gold, _ = tiny
    graph = Graph(next(iter(dataset.haystacks.values())).store)
    right = Plan("Alpha", ("citizenship", "capital"), "city", "rule")
    family = Plan("Alpha", ("family:origin", "capital"), "city", "rule")
    wrong = Plan("Alpha", ("capital", "citizenship"), "city", "rule")
    assert [p.pattern() for p in plan_paths(graph, right, GoldMatcher(["Oldcap"]))] == ["O1 O1"]
    assert len(plan_paths(graph, family, GoldMatcher(["Ycity"]))) == 1
    assert plan_paths(graph, wrong, GoldMatcher(["Ycity"])) == []
