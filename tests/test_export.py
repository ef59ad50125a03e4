"""`factres export` (resolver/exchange/export.py, result_records.harness_metrics): the harness's per-record
metrics against every record of the two real result files, an imported harness run exported
back to its own files field for field, the round trip through `factres score` for a resolver
run and two imported runs, the folder (new, named as the harness names it, written whole), and
the refusals."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import orjson
import pytest
from click.testing import CliRunner
from run_folders import write_run_folder
from test_oracle_paths import MH, SH, write_tiny

from resolver.cli import main
from resolver.exchange.export import export_run
from resolver.mab import result_records
from resolver.mab.harness import prompt
from resolver.mab.result_records import file_name, harness_metrics

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
HARNESS = Path(__file__).parent / "data" / "mab-outputs"
REAL = sorted(HARNESS.glob("*_results.json"))
SEARCH, GEMINI, NOUS = ("dev-6k-search-confidence", "imported-gemini-2.5-flash-lite-6k",
                        "imported-nous-6k")
LEFT_OUT = ("input_len", "output_len", "memory_construction_time", "query_time_len",
            "rougeL_f1", "rougeL_recall", "rougeLsum_f1", "rougeLsum_recall")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _rows(folder: Path) -> dict[str, dict]:
    lines = (folder / "predictions.jsonl").read_bytes().splitlines()
    return {r["qid"]: r for r in map(orjson.loads, lines)}


# ---- the harness's metrics ------------------------------------------------------------------
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name[:25])
def test_harness_metrics_reproduce_every_record_of_the_real_files(path):
    """exact_match, f1 and substring_exact_match of all 200 records, value and type (bool, the
    integer 0 or a float), and the averages the file reports."""
    payload = json.loads(path.read_text())
    for record in payload["data"]:
        got = harness_metrics(record["output"], record["answer"])
        want = {k: record[k] for k in got}
        assert got == want and [type(v) for v in got.values()] == \
            [type(v) for v in want.values()], record["qa_pair_id"]
    for metric in result_records.METRICS:
        values = [r[metric] for r in payload["data"]]
        assert float(np.mean(values) * 100) == payload["averaged_metrics"][metric]


def test_harness_metrics_take_the_better_of_output_and_parsed_output():
    # the raw output misses the exact match that its "Answer:" line makes
    got = harness_metrics("Let me think.\nAnswer: Paris", ["Paris"])
    assert got == {"exact_match": True, "f1": 1.0, "substring_exact_match": True}
    assert harness_metrics("", ["Paris"]) == {"exact_match": False, "f1": 0,
                                              "substring_exact_match": False}
    # "city of paris" against "paris": precision 1/3, recall 1, F1 0.5 (the better gold)
    assert harness_metrics("the city of Paris", ["Lyon", "Paris"])["f1"] == 0.5


def test_file_names_are_the_harness_names_of_the_real_files():
    for path in REAL:
        assert file_name(json.loads(path.read_text())["dataset_config"]) == path.name
    assert file_name({"sub_dataset": "factconsolidation_sh_6k", "shots": 0}) == (
        "factconsolidation_sh_6k_unknown_inunknown_sizeunknown_shots0_max_samplesunknown_"
        "results.json")


# ---- exports --------------------------------------------------------------------------------
def test_an_imported_harness_run_is_exported_back_to_its_own_files(tmp_path):
    result = invoke("export", GEMINI, "--results-dir", RESULTS, "--out", tmp_path / "g")
    assert result.exit_code == 0 and result.stderr == ""
    folder = tmp_path / "g" / "Conflict_Resolution"
    assert sorted(p.name for p in folder.iterdir()) == [p.name for p in REAL]
    assert result.stdout == "".join(f"wrote {folder / p.name} (100 records)\n"
                                    for p in REAL)          # the run's order: mh, then sh
    for path in REAL:
        original = json.loads(path.read_text())
        text = (folder / path.name).read_text()
        exported = json.loads(text)
        assert text == json.dumps(exported, indent=4)     # the harness's layout, ASCII
        assert list(exported) == ["agent_config", "dataset_config", "data", "metrics",
                                  "averaged_metrics", "factres"]
        assert exported["agent_config"] == original["agent_config"]
        assert exported["dataset_config"] == original["dataset_config"]
        for mine, theirs in zip(exported["data"], original["data"], strict=True):
            # every field written is the harness's own, byte for byte (the query included),
            # in the harness's order; what factres cannot know is left out
            assert mine == {k: theirs[k] for k in mine}
            assert list(mine) == [k for k in theirs if k in mine]
            assert set(theirs) - set(mine) == set(LEFT_OUT)
        for metric in result_records.METRICS:
            assert exported["metrics"][metric] == original["metrics"][metric]
            assert exported["averaged_metrics"][metric] == original["averaged_metrics"][metric]
        assert "time_cost" not in exported
        assert exported["factres"] == {"run_id": GEMINI, "kind": "imported",
                                       "version": "0.1.0"}


def test_a_resolver_run_is_exported_with_what_factres_knows(tmp_path):
    result = export_run(SEARCH, RESULTS, out=tmp_path / "s")
    assert result.warnings == [] and [n for _, n in result.files] == [100, 100]
    rows = _rows(RESULTS / SEARCH)
    for path, _ in result.files:
        payload = json.loads(path.read_text())
        source = payload["dataset_config"]["sub_dataset"]
        assert path.name == (f"{source}_unknown_inunknown_sizeunknown_shots0_max_samples"
                             "unknown_results.json")
        assert payload["agent_config"] == {"agent_name": f"factres:{SEARCH}", "model": None}
        assert payload["dataset_config"] == {"dataset": "Conflict_Resolution",
                                             "sub_dataset": source, "shots": 0,
                                             "max_test_samples": None, "tag": None}
        for i, record in enumerate(payload["data"]):
            row = rows[record["qa_pair_id"]]
            assert row["source"] == source and record["query_id"] == i
            assert record["qa_pair_id"] == f"{source}_no{i}"
            assert (record["output"], record["parsed_output"], record["answer"]) == (
                row["prediction"], row["prediction"], row["gold"])
            assert record["query"] == prompt(row["question"])
            assert record["substring_exact_match"] is bool(row["em"])
        em = [r["substring_exact_match"] for r in payload["data"]]
        assert payload["averaged_metrics"]["substring_exact_match"] == 100 * sum(em) / len(em)


@pytest.mark.parametrize("run", [SEARCH, GEMINI, NOUS])
def test_factres_score_on_the_export_reproduces_the_run(tmp_path, run):
    out = tmp_path / "export"
    assert invoke("export", run, "--results-dir", RESULTS, "--out", out).exit_code == 0
    files = sorted((out / "Conflict_Resolution").iterdir())
    scored = invoke("score", *files, "--results-dir", tmp_path / "r", "--run-id", "again")
    assert scored.exit_code == 0, scored.output
    before, after = _rows(RESULTS / run), _rows(tmp_path / "r" / "again")
    assert list(after) == list(before)
    assert {q: (r["em"], r["prediction"]) for q, r in after.items()} == \
        {q: (r["em"], r["prediction"]) for q, r in before.items()}
    # each file's own score is what factres scores it
    meta = orjson.loads((tmp_path / "r" / "again" / "meta.json").read_bytes())
    assert [f["agrees"] for f in meta["files"]] == [True, True]
    if run == NOUS:        # its unasked questions had no record: still none, still wrong
        assert meta["counts"]["missing"] == 120 and meta["counts"]["records"] == 80
        assert meta["system"] == "nous-memoryAgentBench"


def test_the_export_is_deterministic(tmp_path):
    a = export_run(SEARCH, RESULTS, out=tmp_path / "a")
    b = export_run(SEARCH, RESULTS, out=tmp_path / "b")
    for (pa, _), (pb, _) in zip(a.files, b.files, strict=True):
        assert pa.read_bytes() == pb.read_bytes()


def test_a_recorded_em_the_harness_would_not_give_is_refused_by_the_reader(tmp_path):
    """A run whose recorded em is not its prediction's score (edited by hand) never reaches the
    harness's files: the reader recomputes every em (it used to be exported with a warning)."""
    data = write_tiny(tmp_path)
    cases = {f"factconsolidation_sh_6k_no{i}": (answer, 1, []) for i, (_, answer) in
             enumerate(SH)}
    cases.update({f"factconsolidation_mh_6k_no{i}": ("nothing", 0, []) for i in range(len(MH))})
    cases["factconsolidation_sh_6k_no1"] = (SH[1][1], 0, [])      # right, recorded wrong
    write_run_folder(tmp_path / "results" / "odd", [str(data)], cases)
    result = invoke("export", "odd", "--results-dir", tmp_path / "results", "--out",
                    tmp_path / "out")
    assert result.exit_code == 1 and not (tmp_path / "out").exists()
    assert "predictions.jsonl:2: question 'factconsolidation_sh_6k_no1': field 'em' is 0, " \
           f"but prediction {json.dumps(SH[1][1])} scores 1 against gold" in result.stderr


# ---- the folder and the refusals ------------------------------------------------------------
def test_an_existing_folder_is_refused_and_left_alone(tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = invoke("export", SEARCH, "--results-dir", RESULTS, "--out", out)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"Error: {out} exists: factres export writes a new folder and "
                             "never overwrites; choose another --out\n")
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_the_default_folder_is_named_after_the_run(tmp_path, monkeypatch):
    """Under the results folder, never in the working folder (a clone's checkout)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    result = invoke("export", RESULTS / NOUS)
    assert result.exit_code == 0
    assert [p.name for p in tmp_path.iterdir()] == ["factres-results"]
    folder = tmp_path / "factres-results" / f"{NOUS}-mab"
    assert sorted(p.name for p in (folder / "Conflict_Resolution").iterdir())\
        == ["factconsolidation_mh_6k_unknown_inunknown_sizeunknown_shotsunknown_max_samples"
            "unknown_results.json",
            "factconsolidation_sh_6k_unknown_inunknown_sizeunknown_shotsunknown_max_samples"
            "unknown_results.json"]


def test_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    from resolver.run import run_folder
    write_file = run_folder.write_file

    def full_disk(path, data):          # the marker is written; the first result file is not
        if path.suffix == ".json":
            raise OSError(28, "No space left on device", str(path))
        write_file(path, data)
    monkeypatch.setattr(run_folder, "write_file", full_disk)
    result = invoke("export", SEARCH, "--results-dir", RESULTS, "--out", tmp_path / "x")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {tmp_path / '.tmp-x'}/Conflict_Resolution/")
    assert result.stderr.endswith(": No space left on device\n")
    assert list(tmp_path.iterdir()) == []


def test_unscored_and_foreign_runs_are_refused(tmp_path):
    tables = Path(__file__).parent / "data" / "tables"
    result = invoke("export", tables / "test-262k-unfrozen", "--out", tmp_path / "a")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tables / 'test-262k-unfrozen'}: run test-262k-unfrozen "
                             "is unscored (split test: its gold was never read); "
                             "MemoryAgentBench result files hold each question's answer and "
                             "scores (expected a scored run (the dev split, or an imported "
                             "run))\n")
    result = invoke("export", tables / "heldout-other", "--out", tmp_path / "b")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tables / 'heldout-other'}: run heldout-other has "
                             "source(s) heldout_mh_32k, which MemoryAgentBench "
                             "FactConsolidation does not name (expected a run of "
                             "factconsolidation_sh|mh_<size> sources)\n")
    result = invoke("export", "dev-6k-nope", "--results-dir", RESULTS)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: no run 'dev-6k-nope' in {RESULTS}/ (")
    assert list(tmp_path.iterdir()) == []


def test_help_ends_with_an_example_that_runs(tmp_path, monkeypatch):
    assert invoke("export", "-h").exit_code == 0
    text = " ".join(main.get_command(None, "export").help.split())    # as written
    example = "factres export dev-6k-search-confidence"
    assert text.endswith(f"Example: {example}")
    # as written, from a checkout (the run is found under ./results); the folder goes under
    # the results folder
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("FACTRES_RESULTS", str(tmp_path / "results"))
    assert invoke(*example.split()[1:]).exit_code == 0
    assert (tmp_path / "results" / f"{SEARCH}-mab" / "Conflict_Resolution").is_dir()
