"""`factres oracle calibration RUN [RUN ...]`: precision and coverage per confidence label, per
run and pooled; rows marked unanswerable are right only when left unanswered."""
from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from oracle.calibration import analyse
from oracle.cli import main
from resolver.run.config import RunConfig
from resolver.run.runs import execute

RESULTS = Path(__file__).resolve().parent.parent / "results"
CONTEXT = ("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
           "1. Tim Cook is employed by Google.\n2. Paris is located in the country of France.\n")


def test_the_committed_dev_run_per_label(tmp_path):
    out = tmp_path / "cal"
    result = CliRunner().invoke(main, ["oracle", "calibration", "dev-6k-search-confidence",
                                       "dev-6k-plain-confidence", "--results-dir",
                                       str(RESULTS), "--out", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = orjson.loads((out / "calibration.json").read_bytes())
    run = report["runs"][0]
    rows = {r["label"]: r for r in run["labels"]}
    predictions = [orjson.loads(line) for line in (RESULTS / "dev-6k-search-confidence" /
                                                   "predictions.jsonl").read_bytes().splitlines()]
    for label, row in rows.items():
        mine = [p for p in predictions if p["confidence"]["label"] == label]
        assert row["questions"] == len(mine) and row["right"] == sum(p["em"] for p in mine)
    assert rows["none"]["coverage"] == 1.0 and rows["high"]["precision"] == 1.0
    # two systems over the same 200 questions: no pool of 400 (the third audit, C40)
    assert report["pooled"] is None
    assert report["not_pooled"] == [{"runs": ["dev-6k-search-confidence",
                                              "dev-6k-plain-confidence"],
                                     "shared_questions": 200}]
    assert "| pooled |" not in result.output and "| dev-6k-search-confidence | low |" in \
        result.output
    assert ("Not pooled: runs dev-6k-search-confidence and dev-6k-plain-confidence share 200 "
            "question(s) (the same id, or the same question over the same context), which a "
            "pool would count twice") in (out / "calibration.md").read_text()
    assert (out / "calibration.md").read_text().startswith("# Confidence labels")


def _blind_rows(tmp_path, answerable: bool) -> Path:
    rows = [{"context": CONTEXT, "questions": ["Who is the CEO of Atlantis?",
                                               "Which country is Paris located in?"],
             "metadata": {"source": "mine_sh_6k", "unanswerable": True,
                          "qa_pair_ids": ["none1", "none2"]}}]
    if answerable:
        rows.insert(0, {"context": CONTEXT, "questions": ["Who is Tim Cook employed by?"],
                        "answers": [["Google"]], "metadata": {"source": "mine_sh_6k",
                                                             "qa_pair_ids": ["ok"]}})
    data = tmp_path / "rows.json"
    data.write_bytes(orjson.dumps({"data": rows}))
    return data


def test_unanswerable_rows_are_right_only_when_unanswered(tmp_path, monkeypatch):
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    execute(RunConfig(data=(str(_blind_rows(tmp_path, False)),), split="test",
                      allow_dirty=True), results=tmp_path, run_id="blind")
    payload = analyse(["blind"], tmp_path).payload
    records = {r["qid"]: r for r in payload["runs"][0]["records"]}
    assert (records["none1"]["answer"], records["none1"]["right"]) == ("", True)
    assert (records["none2"]["answer"], records["none2"]["right"]) == ("France", False)
    assert payload["runs"][0]["unanswerable"] == 2
    none_row = next(r for r in payload["runs"][0]["labels"] if r["label"] == "none")
    assert (none_row["questions"], none_row["right"]) == (1, 1)


def test_a_test_split_run_with_gold_is_refused(tmp_path, monkeypatch):
    """The third audit (C39): a --split test run's gold is never read, so calibration refuses
    one whose answerable questions have gold, as misses, compare and export do."""
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    execute(RunConfig(data=(str(_blind_rows(tmp_path, True)),), split="test",
                      allow_dirty=True), results=tmp_path, run_id="blind")
    result = CliRunner().invoke(main, ["oracle", "calibration", "blind", "--results-dir",
                                       str(tmp_path), "--out", str(tmp_path / "x")])
    assert result.exit_code == 1 and not (tmp_path / "x").exists()
    assert result.output == (f"Error: {tmp_path / 'blind'}: run 'blind' was made with --split "
                             "test (unscored: factres never read its gold), and 1 of its "
                             "questions have gold (first: ok): calibrating them would read it "
                             "(expected a dev run, or a test run of rows marked unanswerable "
                             "only)\n")


def test_runs_without_labels_are_refused(tmp_path):
    result = CliRunner().invoke(main, ["oracle", "calibration", "dev-6k-search-reading",
                                       "--results-dir", str(RESULTS), "--out",
                                       str(tmp_path / "x")])
    assert result.exit_code == 1
    assert "has no confidence labels" in result.output
