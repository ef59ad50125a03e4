"""`factres run` and `factres table`."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from resolver.cli import main

ROOT = Path(__file__).resolve().parent.parent
SMALL = Path(__file__).parent / "data" / "runs_small.json"
# runs_small.json has one 32K source: a dev run over it is noted as off the protocol's split.
NOTE_32K = ("note: factconsolidation_sh_32k is a source of the test split (dev is 6K; test is "
            "32K, 64K and 262K); recorded in meta.json\n")


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_run_with_no_arguments_runs_the_bundled_dev_rows(results):
    result = invoke("run")
    assert result.exit_code == 0
    (folder,) = results.iterdir()
    meta = orjson.loads((folder / "meta.json").read_bytes())
    assert Path(meta["data"][0]).name == "factconsolidation_6k.json"
    assert meta["counts"]["questions"] == 200
    table = (folder / "table.md").read_text()
    assert result.output == f"{table}\nrun {folder.name} written to {folder}/\n"
    assert table.splitlines()[2].startswith("| factconsolidation_sh_6k | sh | search | none | 100 | ")
    assert table.splitlines()[3].startswith("| factconsolidation_mh_6k | mh | search | none | 100 | ")


def test_run_with_options(results):
    result = invoke("run", "--data", str(SMALL), "--plans", "live:rules", "--run-id", "mine")
    assert result.exit_code == 0
    assert result.stdout.endswith(f"\nrun mine written to {results / 'mine'}/\n")
    meta = orjson.loads((results / "mine" / "meta.json").read_bytes())
    assert [s["set_id"] for s in meta["plan_sets"]] == ["live:rules"]


def test_results_dir_option_wins_over_the_environment(results, tmp_path):
    result = invoke("run", "--data", str(SMALL), "--run-id", "x", "--results-dir",
                    str(tmp_path / "elsewhere"))
    assert result.exit_code == 0
    assert (tmp_path / "elsewhere" / "x" / "metrics.json").is_file()
    assert not results.exists()


def test_taken_run_id_is_an_error(results):
    invoke("run", "--data", str(SMALL), "--run-id", "r1")
    result = invoke("run", "--data", str(SMALL), "--run-id", "r1")
    assert result.exit_code == 1
    assert result.output == (f"Error: run 'r1' exists in {results}/: results are never "
                             "overwritten; choose another --run-id or omit it\n")


def test_unknown_live_plan_set_is_an_error(results):
    result = invoke("run", "--data", str(SMALL), "--plans", "live:nope")
    assert result.exit_code == 1
    assert result.output == ("Error: unknown live plan set 'live:nope' (expected "
                             "live:rules, live:lexicon)\n")


@pytest.mark.parametrize("split", ["dev", "test"])
def test_a_bare_context_is_refused_on_either_split(results, tmp_path, split):
    context = tmp_path / "facts.txt"
    context.write_text("Here is a list of facts:\n0. Jane Austen is a citizen of France.\n")
    result = invoke("run", "--data", str(context), "--split", split, "--allow-dirty")
    assert result.exit_code == 1
    assert result.output == (f"Error: {context}: the data has no questions: nothing to resolve "
                             "(a bare context?) (expected rows with questions; the 32K, 64K "
                             "and 262K rows with questions (the test split) load with --data "
                             "hf:ai-hyz/MemoryAgentBench (pip install 'factres[hf]'), or from "
                             "row files saved from it)\n")
    assert not results.exists()


def test_test_split_prints_an_unscored_table(results):
    result = invoke("run", "--data", str(SMALL), "--split", "test", "--run-id", "t",
                    "--allow-dirty")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[2].startswith("| factconsolidation_sh_6k | sh | search | none | 3 | unscored | ")
    preds = [orjson.loads(line) for line in
             (results / "t" / "predictions.jsonl").read_bytes().splitlines()]
    assert all(p["gold"] is None and p["em"] is None for p in preds)


def test_table_rerenders_from_metrics(results):
    invoke("run", "--data", str(SMALL), "--run-id", "r1")
    md = invoke("table", "r1")
    assert md.exit_code == 0
    assert md.output == (results / "r1" / "table.md").read_text()
    tex = invoke("table", "r1", "--format", "latex")
    assert tex.output == (results / "r1" / "table.tex").read_text()
    by_path = invoke("table", str(results / "r1"))
    assert by_path.output == md.output


def test_table_of_a_missing_run_is_an_error(results):
    result = invoke("table", "nope")
    assert result.exit_code == 1
    # the results folder first, then the repository's committed runs (read only), each with
    # the runs it holds
    committed = ROOT / "results"
    assert result.output.startswith(f"Error: no run 'nope' in {results}/ (no runs there) or in "
                                    f"{committed}/ (")
    # the first committed run by name (new committed runs change which one)
    first = sorted(p.name for p in committed.iterdir() if (p / "meta.json").is_file())[0]
    assert f"runs there: {first}, " in result.output
    assert result.output.endswith(" (expected a run id under the results folder (--results-dir, "
                                  "$FACTRES_RESULTS or ./factres-results) or the repository's "
                                  "committed results/, or a run folder path)\n")
    invoke("run", "--data", str(SMALL), "--run-id", "r1")
    assert invoke("table", "nope").output.startswith(f"Error: no run 'nope' in {results}/ (1 "
                                                     "run there: r1) or in ")


@pytest.mark.parametrize("command", ["run", "table"])
def test_help_ends_with_an_example(command):
    result = invoke(command, "-h")
    assert result.exit_code == 0
    assert "Example: factres " + command in result.output


def test_missing_archived_plan_set_is_an_error(results, tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_PLANS", str(tmp_path / "plans"))
    result = invoke("run", "--data", str(SMALL), "--plans", "nope")
    assert result.exit_code == 1
    assert result.output == (f"Error: no plan set 'nope' (no folder {tmp_path / 'plans' / 'nope'});"
                             " `factres plans list` shows the archive ($FACTRES_PLANS, else the "
                             "repository's plans/)\n")
    assert not results.exists()


def test_progress_bars_go_to_stderr_only(results):
    quiet = invoke("run", "--data", str(SMALL), "--run-id", "a")
    loud = invoke("run", "--data", str(SMALL), "--run-id", "b", "--progress")
    assert quiet.stderr == NOTE_32K
    assert "resolving" in loud.stderr
    assert loud.stdout == quiet.stdout.replace("run a written", "run b written").replace(
        str(results / "a"), str(results / "b"))


def test_a_reader_that_never_answers_records_no_run(results, monkeypatch):
    class DeadReader:
        name = "ollama:dead"
        last_error = "invalid json: reply is not JSON: 'x'"

        def answer(self, question_text, fact_lines):
            return ""
    monkeypatch.setattr("resolver.models.reader.make_reader",
                        lambda spec, host=None, timeout=30.0: DeadReader())
    result = invoke("run", "--data", str(SMALL), "--reader", "ollama:dead", "--run-id", "r")
    assert result.exit_code == 1
    assert result.output == ("Error: every reader call failed (7 of 7; first: invalid json: "
                             "reply is not JSON: 'x'); the run was not recorded\n")
    assert list(results.iterdir()) == []


def test_reader_failures_are_reported(results, monkeypatch):
    class FlakyReader:
        name = "ollama:flaky"
        last_error = ""

        def answer(self, question_text, fact_lines):
            self.last_error = "connection refused" if "Ruritania" in question_text else ""
            return "" if self.last_error else "France"
    monkeypatch.setattr("resolver.models.reader.make_reader",
                        lambda spec, host=None, timeout=30.0: FlakyReader())
    result = invoke("run", "--data", str(SMALL), "--reader", "ollama:flaky", "--run-id", "r")
    assert result.exit_code == 0
    assert result.stderr == NOTE_32K + ("warning: the reader gave no answer for 1 of 7 "
                                        "question(s); see the reader field of traces.jsonl\n")
    assert "| factconsolidation_sh_6k | sh | search | ollama:flaky | 3 |" in result.stdout
