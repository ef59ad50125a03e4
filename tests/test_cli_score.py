"""`factres score`, and `factres table` / `factres oracle misses` on the run it writes."""
from __future__ import annotations

import json

import orjson
import pytest
from click.testing import CliRunner
from test_imported import MH_FILE, NOUS_FILE, SH_FILE

from oracle.cli import main
from resolver.haystack import bundled_path


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_RESULTS", str(tmp_path / "results"))
    return tmp_path / "results"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_score_the_harness_samples(results):
    result = invoke("score", SH_FILE, MH_FILE)
    assert result.exit_code == 0
    (folder,) = results.iterdir()
    table = (folder / "table.md").read_text()
    assert result.stdout == f"{table}\nrun {folder.name} written to {folder}/\n"
    assert table.splitlines()[2] == ("| factconsolidation_sh_6k | sh | imported | "
                                     "Long_context_agent_gemini-2.5-flash-lite | 100 | "
                                     "65.0 [55.0, 74.0] | 100.0 | 47.3 (35/74) |")
    assert result.stderr == (
        f"note: {SH_FILE}: reports 65 (averaged_metrics.substring_exact_match) over 100 "
        "record(s); factres scores the same\n"
        f"note: {MH_FILE}: reports 4 (averaged_metrics.substring_exact_match) over 100 "
        "record(s); factres scores the same\n")
    # the run's table re-renders, and the oracle sorts its misses
    again = invoke("table", folder.name)
    assert again.exit_code == 0 and again.stdout == table
    misses = invoke("oracle", "misses", folder, "--out", results.parent / "misses")
    assert misses.exit_code == 0
    payload = orjson.loads((results.parent / "misses" / "misses.json").read_bytes())
    assert payload["summary"]["factconsolidation_sh_6k"]["misses"] == 35


def test_score_a_generic_file_with_a_field_map(results):
    result = invoke("score", NOUS_FILE, "--field", "prediction=answer", "--field", "em=correct",
                    "--name", "nous", "--run-id", "nous-6k")
    assert result.exit_code == 0
    assert result.stdout.endswith(f"run nous-6k written to {results / 'nous-6k'}/\n")
    assert result.stderr.splitlines() == [
        f"note: {NOUS_FILE}: reports 88.75 (mean of 'correct') over 80 record(s); factres "
        "scores the same",
        "warning: 120 of 200 question(s) have no record in the import and count as unanswered "
        "and wrong: factconsolidation_mh_6k_no40-no99, factconsolidation_sh_6k_no40-no99"]
    meta = orjson.loads((results / "nous-6k" / "meta.json").read_bytes())
    assert meta["system"] == "nous" and meta["system_from"] == "--name"


def test_bad_input_is_one_clean_line(results, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"qid": "factconsolidation_sh_6k_no0", "prediction": ["x"]})
                    + "\n")
    result = invoke("score", path)
    assert result.exit_code == 1
    assert result.output == (f"Error: {path}: line 1: 'prediction' is a list [\"x\"] (expected a "
                             "string (or null for no answer))\n")
    result = invoke("score", SH_FILE, "--field", "prediction")
    assert result.exit_code == 1
    assert result.output == ("Error: bad --field 'prediction' (expected FIELD=NAME "
                             "with FIELD one of id, prediction, gold, source, em)\n")
    assert not results.exists()


def test_help_ends_with_an_example():
    result = invoke("score", "-h")
    assert result.exit_code == 0
    assert "Example: factres score" in result.output


def test_what_the_rows_loader_noted_is_said_and_recorded(results, tmp_path):
    """Gold given as plain strings and a fact line that fits no template: `score` says both, as
    `run` does, and records them in meta.json."""
    from resolver.haystack import bundled_path
    doc = json.loads(bundled_path().read_text("utf-8"))
    odd = "0. Thomas Kyd likes the city of London."
    for row in doc["data"]:
        row["answers"] = [a[0] for a in row["answers"]]
        row["context"] = row["context"].replace(
            "0. Thomas Kyd was born in the city of London.", odd)
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps(doc), "utf-8")
    result = invoke("score", SH_FILE, "--data", str(rows), "--run-id", "odd")
    assert result.exit_code == 0, result.output
    assert (f"note: {rows}: row 0: 100 answer list(s) given as a plain string, each read as one "
            "answer, never as letters (first: question 0)") in result.stderr
    assert (f"warning: 1 fact line(s) of the rows' contexts fit no template and were not read "
            "(the stale rate and misses see a store without them; recorded in meta.json); the "
            f"first: {rows}: row 0, context line 2: {odd}") in result.stderr
    meta = orjson.loads((results / "odd" / "meta.json").read_bytes())
    assert meta["unparsed"]["count"] == 1 and len(meta["notes"]) == 2


def test_a_field_map_for_harness_files_alone_is_refused(results):
    result = invoke("score", SH_FILE, "--field", "prediction=parsed_output")
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert ("--field prediction=parsed_output names fields of generic files, and every file "
            "here is a MemoryAgentBench harness output") in result.output
    # read as generic records, the same file takes the map
    again = invoke("score", SH_FILE, "--format", "json", "--field", "prediction=parsed_output",
                   "--run-id", "parsed")
    assert again.exit_code == 0, again.output
    rows = [json.loads(line) for line in (results / "parsed" / "predictions.jsonl").open()]
    harness = json.loads(open(SH_FILE, encoding="utf-8").read())["data"]
    by_qid = {r["qa_pair_id"]: r["parsed_output"] for r in harness}
    assert all(r["prediction"] == by_qid[r["qid"]] for r in rows if r["qid"] in by_qid)


def test_a_generic_data_object_with_a_field_map(results, tmp_path):
    harness = json.loads(open(SH_FILE, encoding="utf-8").read())["data"]
    generic = {"data": [{"qid": r["qa_pair_id"], "pred": r["output"]} for r in harness]}
    path = tmp_path / "generic.json"
    path.write_text(json.dumps(generic), "utf-8")
    result = invoke("score", path, "--field", "id=qid", "--field", "prediction=pred",
                    "--run-id", "generic")
    assert result.exit_code == 0, result.output
    meta = orjson.loads((results / "generic" / "meta.json").read_bytes())
    assert meta["files"][0]["format"] == "json"


def test_the_harness_output_folder_is_scored_as_its_result_files(tmp_path):
    """Issue 34, item 9: `factres score FOLDER` reads every *_results.json under the harness's
    output folder, as if each were named."""
    import shutil
    folder = tmp_path / "outputs" / "agent" / "Conflict_Resolution"
    folder.mkdir(parents=True)
    for f in (SH_FILE, MH_FILE):
        shutil.copy(f, folder)
    (folder / "notes.txt").write_text("not a result file")
    by_folder = invoke("score", tmp_path / "outputs", "--results-dir", tmp_path / "r",
                       "--run-id", "by-folder")
    by_files = invoke("score", SH_FILE, MH_FILE, "--results-dir", tmp_path / "r",
                      "--run-id", "by-files")
    assert by_folder.exit_code == 0, by_folder.output
    assert by_folder.stdout.split("\nrun ")[0] == by_files.stdout.split("\nrun ")[0]
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = invoke("score", empty, "--results-dir", tmp_path / "r")
    assert refused.exit_code == 1
    assert refused.output == (f"Error: {empty}: no MemoryAgentBench result file "
                              "(*_results.json) under the folder (expected the harness's "
                              "output folder, or prediction files)\n")
