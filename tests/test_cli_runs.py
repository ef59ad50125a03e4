"""`factres runs` (issue 34, item 4): every run of the results folder, then the committed
ones, marked which, with id, label, mode, plan sets, data, sizes, pooled EM and date."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from test_oracle_paths import write_tiny

from oracle.cli import main

COMMITTED = Path(__file__).resolve().parents[1] / "results"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_runs_lists_mine_then_the_committed_ones_with_their_mode(tmp_path):
    data = write_tiny(tmp_path)
    results = tmp_path / "results"
    assert invoke("run", "--data", data, "--results-dir", results, "--name", "mine").exit_code == 0
    assert invoke("run", "--data", data, "--results-dir", results, "--mode", "plain").exit_code == 0
    listed = invoke("runs", "--results-dir", results, "--json")
    assert listed.exit_code == 0 and listed.stderr == ""
    entries = json.loads(listed.stdout)
    mine = [e for e in entries if e["where"] == "results dir"]
    assert [(e["run_id"].rsplit("-", 1)[0], e["label"], e["mode"]) for e in mine] == [
        ("dev-6k-plain", "factres plain", "plain"), ("dev-6k-search", "mine", "search")]
    assert all(e["data"] == ["tiny.json"] and e["sizes"] == ["6k"] for e in mine)
    assert mine[1]["plan_sets"] == ["live:rules", "live:lexicon"]
    committed = {e["run_id"]: e for e in entries if e["where"] == "committed"}
    assert set(committed) == {p.name for p in COMMITTED.iterdir()
                              if (p / "meta.json").is_file()}
    assert committed["dev-6k-plain-confidence"]["mode"] == "plain"
    assert committed["dev-6k-search-confidence"]["em"] == 0.97
    assert committed["imported-nous-6k"]["label"] == "nous-memoryAgentBench"
    assert committed["imported-nous-6k"]["mode"] == "imported"
    table = invoke("runs", "--results-dir", results)
    lines = table.stdout.splitlines()
    assert lines[0] == ("| run id | where | label | mode | plan sets | data | sizes | "
                        "EM (pooled) | date |")
    assert any(line.startswith("| dev-6k-search-confidence | committed | factres search | "
                               "search | live:rules + live:lexicon | factconsolidation_6k.json "
                               "| 6k | 97.0 |") for line in lines)


def test_a_folder_that_does_not_read_is_named_not_dropped(tmp_path):
    results = tmp_path / "results"
    (results / "broken").mkdir(parents=True)
    (results / "broken" / "meta.json").write_text("{")
    listed = invoke("runs", "--results-dir", results)
    assert listed.exit_code == 0
    assert listed.stderr.startswith(f"warning: skipped {results / 'broken'}: ")
