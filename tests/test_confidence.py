"""resolver/search/confidence.py: the labels, what lowers them, that they never change the
answer, and `factres run --abstain-below`."""
from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from oracle.cli import main
from resolver.plan.plans import Plan
from resolver.results.result_schema import PREDICTIONS_FILE, loads_lines
from resolver.run.config import RunConfig
from resolver.run.runs import execute
from resolver.search.candidates import Candidate, Hop
from resolver.search.confidence import (
    HIGH,
    LEVELS,
    LOW,
    MEDIUM,
    NONE,
    Confidence,
    assess,
    below,
    rank,
)


def hop(obj="B", version=0, passed=(), reverse=False):
    return Hop("A", "employer", obj, 5, 6, "5. A is employed by B.", version, reverse, passed,
               "active")


def cand(answer="B", score=2.0, terms=(("cue:employer<-'employ*'", 1.0),), hops=None):
    plan = Plan("A", ("employer",), "any", "lexicon")
    return Candidate(plan, "live:lexicon", hops or (hop(answer),), answer, score, terms)


def test_levels_are_ordered_and_unknown_ones_named():
    assert [rank(x) for x in LEVELS] == [0, 1, 2, 3] and LEVELS == (NONE, LOW, MEDIUM, HIGH)
    with pytest.raises(ValueError, match="known, lowest first: none, low, medium, high"):
        rank("certain")


def test_a_clean_path_is_high_and_no_answer_is_none():
    assert assess(cand(), (cand(),)) == Confidence(HIGH, ())
    assert assess(None).label == NONE


@pytest.mark.parametrize("winner, rivals, label, reason", [
    (cand(score=-0.3), (), LOW, "negative score -0.30"),
    (cand(hops=(hop(version=1),)), (), MEDIUM, "older version taken at hop 1"),
    (cand(terms=(("uncued:employer", -1.0),)), (), MEDIUM, "uncued hop: employer"),
    (cand(terms=(("type-mismatch:city!person", -1.2),)), (), MEDIUM,
     "answer not of the asked type"),
    (cand(hops=(hop(reverse=True),)), (), MEDIUM, "followed back from object to subject"),
    (cand(hops=(hop(passed=((1, 2),)), hop(passed=((3, 4),)))), (), MEDIUM,
     "hops 1, 2 read keys with other versions"),
    (cand(), (cand("C", score=1.7),), LOW, "close rival 'C' (1.70 against 2.00)"),
    (cand(hops=(hop(version=1),), terms=(("uncued:employer", -1.0),)), (), LOW, "uncued"),
])
def test_each_signal_lowers_the_label_and_says_why(winner, rivals, label, reason):
    got = assess(winner, (winner,) + rivals)
    assert got.label == label
    assert any(reason in r for r in got.reasons), got.reasons


def test_a_distant_rival_or_the_same_answer_is_no_rival():
    assert assess(cand(), (cand(), cand("C", score=1.4))).label == HIGH
    assert assess(cand(), (cand(), cand("b", score=1.99))).label == HIGH


def test_below_never_abstains_from_no_answer():
    assert below(Confidence(LOW), MEDIUM) and not below(Confidence(MEDIUM), MEDIUM)
    assert not below(Confidence(NONE), HIGH) and not below(Confidence(LOW), None)


def test_abstain_below_empties_answers_with_the_reason_and_is_recorded(tmp_path, monkeypatch):
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    plain = execute(RunConfig(), results=tmp_path, run_id="all")
    run = execute(RunConfig(abstain_below="high"), results=tmp_path, run_id="sure")
    assert run.meta["config"]["abstain_below"] == "high"
    assert run.meta["config_identity"]["abstain_below"] == "high"
    assert "abstain_below" not in plain.meta["config_identity"]
    before = {r["qid"]: r for r in plain.predictions}
    abstained = 0
    for row in run.predictions:
        old = before[row["qid"]]
        assert row["confidence"] == old["confidence"]             # the label never moves
        if old["confidence"]["label"] == HIGH:
            assert row["prediction"] == old["prediction"]
        else:
            abstained += 1
            assert row["prediction"] == "" and row["em"] == 0
            # the resolver's own answer is kept (the third audit: abstained rows lost it)
            assert row["resolver_answer"] == old["resolver_answer"] != ""
            assert row["reason"].startswith(f"abstained: confidence "
                                            f"{old['confidence']['label']}, below high")
    assert abstained == run.meta["counts"]["abstained"] > 0
    traces = loads_lines((run.path / "traces.jsonl").read_bytes())
    assert all(t["winner"] and t["answer"] == t["winner"]["answer"] != "" for t in traces
               if t["reason"].startswith("abstained"))


def test_cli_abstain_below_takes_only_levels(tmp_path):
    result = CliRunner().invoke(main, ["run", "--abstain-below", "sure", "--results-dir",
                                       str(tmp_path)])
    assert result.exit_code == 2 and "'sure' is not one of 'low', 'medium', 'high'" in \
        result.output
    assert "--abstain-below LEVEL" in CliRunner().invoke(main, ["run", "-h"]).output


def test_committed_runs_record_a_label_on_every_row():
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent / "results"
    for run in ("dev-6k-search-confidence", "dev-6k-plain-confidence"):
        rows = loads_lines((root / run / PREDICTIONS_FILE).read_bytes())
        assert {r["confidence"]["label"] for r in rows} <= set(LEVELS)
        meta = orjson.loads((root / run / "meta.json").read_bytes())
        assert meta["config"]["abstain_below"] is None
