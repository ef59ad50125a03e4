"""Imported runs (`resolver.exchange.imported`, `mab.result_files`): the harness's answer parsing, the real
MemoryAgentBench samples reproducing their own scores, and synthetic files covering every shape
the issue names (string gold, missing records, duplicated ids, ids of another source, CRLF/BOM,
empty data, outputs with and without an "Answer:" line, generic JSONL/CSV/JSON with a field
map)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest

from resolver.errors import InputError, RunExistsError
from resolver.exchange.imported import findings, id_list, score_files
from resolver.haystack import bundled_path, load
from resolver.mab.exact_match import harness_score, normalize_answer, parse_output
from resolver.mab.result_files import parse_field_map, read_file
from resolver.results.result_schema import loads_lines

SAMPLES = Path(__file__).parent / "data" / "mab-outputs"
HARNESS_NAME = ("factconsolidation_{}_6k_unknown_in6000_size10_shots0_max_samplesunknown"
                "_results.json")
SH_FILE = SAMPLES / HARNESS_NAME.format("sh")
MH_FILE = SAMPLES / HARNESS_NAME.format("mh")
NOUS_FILE = SAMPLES / "nous_replay_n320_6k_only.jsonl"
SHA256 = {SH_FILE: "19aedda546db909067f23f3d0189cef5c477bff6106a6dd824508da73c0fe88f",
          MH_FILE: "97ee664cea962b56958209f01f87116c3300a11c79ce096012f6d67101508365",
          NOUS_FILE: "dfe0c9c3801607e89f64ec0a5f5fa8b4305fb2c8bfed94870e517bd38dca3f9d"}
SH = "factconsolidation_sh_6k"
MH = "factconsolidation_mh_6k"


def _rows_of_6k():
    dataset, gold = load([bundled_path()])
    return {q.qid: q for q in dataset.questions}, gold


QUESTIONS, GOLD = _rows_of_6k()


def harness_file(tmp_path, name, records, source=SH, averaged=None, **top) -> Path:
    """A file in the harness's layout (json.dumps with indent 4, as the harness writes)."""
    obj = {"agent_config": {"agent_name": "toy_agent", "model": "toy"},
           "dataset_config": {"dataset": "Conflict_Resolution", "sub_dataset": source},
           "data": records, "metrics": {}, "time_cost": [],
           "averaged_metrics": averaged if averaged is not None else {}}
    obj.update(top)
    path = tmp_path / name
    path.write_text(json.dumps(obj, indent=4), encoding="utf-8")
    return path


def record(qid, output, answer=None, sub_em=None):
    rec = {"output": output, "parsed_output": parse_output(output),
           "answer": answer if answer is not None else list(GOLD[qid]), "qa_pair_id": qid,
           "query_id": int(qid.rsplit("_no", 1)[1])}
    if sub_em is not None:
        rec["substring_exact_match"] = sub_em
    return rec


def gold0(qid) -> str:
    return GOLD[qid][0]


# ---- the harness's scoring -------------------------------------------------------------------
@pytest.mark.parametrize("output, parsed", [
    ("Paris", "Paris"),
    ("Answer: Paris", "Paris"),
    ("I think so.\nAnswer: Paris\nBecause...", "Paris"),      # after "Answer:", that line only
    ("answer:  Paris  ", "Paris"),                             # any case, stripped
    ("Answer: Answer: Paris", "Paris"),                        # an echoed prefix is dropped once
    ("Paris\nRome", "Paris"),                                  # no "Answer:": the first line
    ("Answer: Paris\r\nx", "Paris"),                           # CRLF: "\r" goes in the strip
    ("\nParis", ""),                                           # the first line is empty
    ("", ""),
])
def test_parse_output_is_the_harness_rule(output, parsed):
    assert parse_output(output) == parsed


def test_harness_score_is_the_max_over_the_output_and_its_parsed_answer():
    assert harness_score("Answer: Paris", ["paris"]) == 1
    assert harness_score("The capital is Rome.\nAnswer: Paris", ["Paris"]) == 1
    # The parsed answer alone would miss a gold later in the output: the raw output still scores.
    assert harness_score("Answer: unsure\nParis", ["Paris"]) == 1
    assert parse_output("Answer: unsure\nParis") == "unsure"
    assert harness_score("Rome", ["Paris"]) == 0
    assert harness_score("", ["Paris"]) == 0
    # An empty answer scores 0 (factres's rule); the harness would differ only for a gold that
    # normalises to "", and no bundled gold does.
    assert all(normalize_answer(a) for answers in GOLD.answers.values() for a in answers)


# ---- the real samples ---------------------------------------------------------------------------
def test_the_samples_are_the_files_provenance_names():
    for path, digest in SHA256.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, path.name
        assert digest in (SAMPLES / "PROVENANCE.md").read_text()


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    return score_files([SH_FILE, MH_FILE], results=tmp_path_factory.mktemp("results"))


def test_the_harness_samples_reproduce_their_own_scores_exactly(sample_run):
    meta = sample_run.meta
    assert meta["kind"] == "imported"
    assert meta["system"] == "Long_context_agent_gemini-2.5-flash-lite"
    assert meta["system_from"] == "agent_config.agent_name"
    by_path = {f["path"]: f for f in meta["files"]}
    rows = {r["qid"]: r for r in sample_run.predictions}
    for path, reported in ((SH_FILE, 65.0), (MH_FILE, 4.0)):
        raw = orjson.loads(path.read_bytes())
        assert raw["averaged_metrics"]["substring_exact_match"] == reported
        check = by_path[str(path)]
        assert check["format"] == "mab" and check["records"] == 100
        assert check["reported_score"] == reported and check["factres_score"] == reported
        assert check["agrees"] is True and check["differing"] == []
        # record by record, against the rows' gold, the file's own value comes out
        for rec in raw["data"]:
            assert rows[rec["qa_pair_id"]]["em"] == int(rec["substring_exact_match"])
            assert rows[rec["qa_pair_id"]]["parsed_prediction"] == rec["parsed_output"]
    assert meta["counts"] == {"questions": 200, "records": 200, "answered": 200, "missing": 0,
                              "empty": 0, "gold_disagreements": 0, "files_disagreeing": 0}
    assert meta["splits"] == {SH: "dev", MH: "dev"} and meta["split"] == "dev"


def test_the_sample_run_folder_honours_the_contract(sample_run):
    path = sample_run.path
    assert sorted(p.name for p in path.iterdir()) == ["meta.json", "metrics.json",
                                                      "predictions.jsonl", "table.md",
                                                      "table.tex", "traces.jsonl"]
    assert (path / "traces.jsonl").read_bytes() == b""
    meta = orjson.loads((path / "meta.json").read_bytes())
    assert meta["data"] == [str(bundled_path())]
    assert meta["data_sha256"] == {str(bundled_path()): hashlib.sha256(
        bundled_path().read_bytes()).hexdigest()}
    for f in meta["files"]:
        assert f["sha256"] == SHA256[Path(f["path"])]
        assert f["fields"] == {"id": "qa_pair_id", "prediction": "output", "gold": "answer",
                               "em": "substring_exact_match"}
    rows = loads_lines((path / "predictions.jsonl").read_bytes())
    assert [r["qid"] for r in rows] == [q for q in QUESTIONS]     # every question, data order
    for r in rows:
        assert {"qid", "source", "question", "prediction", "gold", "em"} <= set(r)
        assert r["gold"] == list(GOLD[r["qid"]]) and r["em"] in (0, 1)
    metrics = orjson.loads((path / "metrics.json").read_bytes())
    cells = {m["label"]: m for m in metrics["rows"]}
    assert cells[SH]["em"] == 0.65 and cells[MH]["em"] == 0.04
    # the stale rate: single-hop misses that are an earlier value of the asked key
    assert cells[SH]["stale"] == sum(1 for r in rows if r["stale"]) == 35
    assert cells[SH]["stale_eligible"] == sum(1 for r in rows if r["stale"] is not None)
    assert (path / "table.md").read_text() == sample_run.table


def test_the_nous_sample_reproduces_its_correct_field(tmp_path):
    run = score_files([NOUS_FILE], name="nous", results=tmp_path,
                      fields=parse_field_map(["prediction=answer", "em=correct"]))
    (check,) = run.meta["files"]
    assert check["fields"] == {"id": "qa_pair_id", "prediction": "answer", "gold": "golds",
                               "source": "source", "em": "correct"}
    assert check["reported_score"] == check["factres_score"] == 100 * 71 / 80
    assert check["agrees"] is True and check["differing"] == []
    assert check["sources"] == [MH, SH]
    rows = run.predictions
    answered = [r for r in rows if r["record"] is not None]
    assert len(answered) == 80
    for kind, right in (("sh", 38), ("mh", 33)):
        mine = [r for r in answered if r["source"] == f"factconsolidation_{kind}_6k"]
        assert len(mine) == 40 and sum(r["em"] for r in mine) == right
    # the 60 questions per source it never asked are unanswered, wrong, and listed
    assert run.meta["missing"] == [r["qid"] for r in rows if r["record"] is None]
    assert len(run.meta["missing"]) == 120 and all(r["em"] == 0 for r in rows
                                                   if r["record"] is None)
    assert run.meta["gold_disagreements"] == []
    cells = {m["label"]: m for m in run.metrics["rows"]}
    assert (cells[SH]["em"], cells[SH]["answered"]) == (0.38, 0.4)
    assert (cells[MH]["em"], cells[MH]["answered"]) == (0.33, 0.4)


# ---- synthetic files: every shape ------------------------------------------------------------
def sh(i):
    return f"{SH}_no{i}"


def test_string_answer_and_outputs_with_and_without_an_answer_line(tmp_path):
    records = [record(sh(0), f"Answer: {gold0(sh(0))}", answer=gold0(sh(0))),   # string gold
               record(sh(1), f"Let me see.\nAnswer: {gold0(sh(1))}"),
               record(sh(2), f"{gold0(sh(2))}\nextra words"),
               record(sh(3), "Answer: nothing like it")]
    path = harness_file(tmp_path, "f.json", records)
    run = score_files([path], results=tmp_path / "r")
    rows = {r["qid"]: r for r in run.predictions}
    assert [rows[sh(i)]["em"] for i in range(4)] == [1, 1, 1, 0]
    assert rows[sh(1)]["parsed_prediction"] == gold0(sh(1))
    assert rows[sh(2)]["parsed_prediction"] == gold0(sh(2))
    assert rows[sh(0)]["file_gold"] == [gold0(sh(0))]
    assert run.meta["gold_disagreements"] == []          # a string equal to the one answer
    assert run.meta["files"][0]["agrees"] is None        # the file reports no score


def test_missing_records_count_as_unanswered_and_wrong_and_are_listed(tmp_path):
    path = harness_file(tmp_path, "f.json", [record(sh(i), gold0(sh(i))) for i in range(0, 100, 2)])
    run = score_files([path], results=tmp_path / "r")
    assert run.meta["missing"] == [sh(i) for i in range(1, 100, 2)]
    assert run.meta["counts"]["missing"] == 50 and run.meta["counts"]["questions"] == 100
    row = next(m for m in run.metrics["rows"] if m["label"] == SH)
    assert (row["n"], row["em"], row["answered"]) == (100, 0.5, 0.5)
    lines = findings(run.meta)
    assert any(line.startswith("warning: 50 of 100 question(s) have no record in the import "
                               "and count as unanswered and wrong: ") for line in lines)
    # only the covered source is in the run: the multi-hop questions are not "missing"
    assert {r["source"] for r in run.predictions} == {SH}


def test_an_empty_data_list_leaves_every_question_of_its_source_unanswered(tmp_path):
    path = harness_file(tmp_path, "empty.json", [], source=MH,
                        averaged={"substring_exact_match": float("nan")})
    run = score_files([path], results=tmp_path / "r")
    assert len(run.meta["missing"]) == 100 and run.meta["counts"]["answered"] == 0
    assert run.metrics["rows"][0]["em"] == 0.0
    check = run.meta["files"][0]
    assert check["records"] == 0 and check["factres_score"] is None and check["agrees"] is None


def test_duplicated_ids_are_an_error_naming_both_records(tmp_path):
    path = harness_file(tmp_path, "dup.json", [record(sh(0), "x"), record(sh(1), "y"),
                                               record(sh(0), "z")])
    with pytest.raises(InputError) as err:
        score_files([path], results=tmp_path / "r")
    assert str(err.value) == (f"{path}: record 3: question '{sh(0)}' again (first at record 1) "
                              "(expected one record per question)")


def test_a_question_answered_in_two_files_is_an_error(tmp_path):
    a = harness_file(tmp_path, "a.json", [record(sh(0), "x")])
    b = tmp_path / "b.jsonl"
    b.write_text(json.dumps({"qid": sh(0), "prediction": "y"}) + "\n")
    with pytest.raises(InputError, match=rf"line 1: question '{sh(0)}' is answered twice "
                                         rf"\(also {a} record 1\)"):
        score_files([a, b], results=tmp_path / "r")


def test_ids_from_another_source_are_an_error_naming_them(tmp_path):
    path = harness_file(tmp_path, "f.json", [record(sh(0), "x"), record(f"{MH}_no5", "y")])
    with pytest.raises(InputError) as err:
        score_files([path], results=tmp_path / "r")
    assert f"{path} record 2: {MH}_no5 is a question of {MH}, not {SH}" in str(err.value)


def test_ids_that_match_no_question_are_an_error_naming_them(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"qid": q, "prediction": "x"}) + "\n"
                            for q in (sh(0), "factconsolidation_sh_32k_no1", "nonsense")))
    with pytest.raises(InputError) as err:
        score_files([path], results=tmp_path / "r")
    message = str(err.value)
    assert message.startswith(f"{path}: 2 record id(s) match no question of the rows: "
                              f"{path} line 2: factconsolidation_sh_32k_no1; {path} line 3: "
                              "nonsense (expected ids of questions in the rows in --data")
    assert "\n" not in message


def test_a_source_the_rows_lack_is_an_error(tmp_path):
    path = harness_file(tmp_path, "f.json", [], source="factconsolidation_sh_64k")
    with pytest.raises(InputError, match="is for source 'factconsolidation_sh_64k'"):
        score_files([path], results=tmp_path / "r")


def test_crlf_and_a_byte_order_mark_are_read_and_noted(tmp_path):
    lines = [json.dumps({"qa_pair_id": sh(i), "prediction": gold0(sh(i))}) for i in range(3)]
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    harness = harness_file(tmp_path, "m.json", [record(f"{MH}_no{i}", "Answer: x\r\n")
                                                for i in range(2)], source=MH)
    harness.write_bytes(b"\xef\xbb\xbf" + harness.read_bytes().replace(b"\n", b"\r\n"))
    run = score_files([path, harness], results=tmp_path / "r")
    assert [r["em"] for r in run.predictions if r["record"]][-3:] == [1, 1, 1]
    for f in run.meta["files"]:
        assert f["notes"] == ["byte-order mark removed", "CRLF line endings read as LF"]
    assert f"note: {path}: byte-order mark removed" in findings(run.meta)
    rows = {r["qid"]: r for r in run.predictions}
    assert rows[f"{MH}_no0"]["prediction"] == "Answer: x\r\n"      # inside a JSON string: kept
    assert rows[f"{MH}_no0"]["parsed_prediction"] == "x"


def test_generic_csv_and_json_with_a_field_map(tmp_path):
    csv_path = tmp_path / "p.csv"
    csv_path.write_text("id,reply,truth\n"
                        f"{sh(0)},\"{gold0(sh(0))}\",\"[\"\"{gold0(sh(0))}\"\"]\"\n"
                        f"{sh(1)},wrong,{gold0(sh(1))}\n", encoding="utf-8")
    json_path = tmp_path / "p.json"
    json_path.write_text(json.dumps([{"qid": f"{MH}_no0", "prediction": gold0(f"{MH}_no0")}]))
    fields = parse_field_map(["id=id", "prediction=reply", "gold=truth"])
    with pytest.raises(InputError, match=r"no id field: the first record has 'id', 'reply', "
                                         r"'truth' \(expected one of qa_pair_id, qid, or "
                                         r"--field id=NAME\)"):
        score_files([csv_path], results=tmp_path / "r")
    run = score_files([csv_path], results=tmp_path / "r", fields=fields, name="toy")
    rows = {r["qid"]: r for r in run.predictions}
    assert (rows[sh(0)]["em"], rows[sh(1)]["em"]) == (1, 0)
    assert rows[sh(0)]["file_gold"] == [gold0(sh(0))] and rows[sh(0)]["record"] == "line 2"
    assert run.meta["files"][0]["format"] == "csv"
    run = score_files([json_path], results=tmp_path / "r", name="toy")
    assert run.meta["files"][0]["format"] == "json"
    assert run.meta["files"][0]["fields"] == {"id": "qid", "prediction": "prediction"}
    assert [r["em"] for r in run.predictions if r["record"]] == [1]


def test_bad_fields_and_values_name_the_file_and_record(tmp_path):
    with pytest.raises(InputError, match="bad --field 'answer'"):
        parse_field_map(["answer"])
    with pytest.raises(InputError, match="bad --field 'reply=x'"):
        parse_field_map(["reply=x"])
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"qid": sh(0), "prediction": 1997}) + "\n")
    with pytest.raises(InputError) as err:
        read_file(path)
    assert str(err.value) == (f"{path}: line 1: 'prediction' is a number 1997 (expected a string "
                              "(or null for no answer))")
    path.write_text(json.dumps({"qid": sh(0), "answer": "x"}) + "\n")
    with pytest.raises(InputError,
                       match="no prediction field: the first record has 'answer', 'qid'"):
        read_file(path)
    path.write_text(json.dumps({"qid": sh(0), "prediction": "x"}) + "\n{not json\n")
    with pytest.raises(InputError, match=rf"{path}:2: not valid JSON"):
        read_file(path)
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="no records"):
        read_file(empty)
    nodata = tmp_path / "n.json"
    nodata.write_text(json.dumps({"results": []}))
    with pytest.raises(InputError, match="no 'data' list at the top level"):
        read_file(nodata)


def test_a_gold_in_the_file_is_only_compared(tmp_path):
    records = [record(sh(0), gold0(sh(0)), answer=["something else"]),
               record(sh(1), "something else", answer="something else", sub_em=True)]
    path = harness_file(tmp_path, "f.json", records,
                        averaged={"substring_exact_match": 100.0})
    run = score_files([path], results=tmp_path / "r")
    rows = {r["qid"]: r for r in run.predictions}
    assert (rows[sh(0)]["em"], rows[sh(1)]["em"]) == (1, 0)          # the rows' gold decides
    assert run.meta["gold_disagreements"] == [
        {"qid": sh(0), "file": str(path), "record": "record 1",
         "file_gold": ["something else"], "gold": list(GOLD[sh(0)])},
        {"qid": sh(1), "file": str(path), "record": "record 2",
         "file_gold": ["something else"], "gold": list(GOLD[sh(1)])}]
    check = run.meta["files"][0]
    assert (check["reported_score"], check["factres_score"], check["agrees"]) == (100.0, 50.0,
                                                                                   False)
    assert check["differing"] == [{"qid": sh(1), "record": "record 2", "reported": 1,
                                   "factres": 0, "file_gold_differs": True}]
    lines = findings(run.meta)
    assert (f"warning: {path}: reports 100 (averaged_metrics.substring_exact_match) over 2 "
            f"record(s); factres scores 50; scored differently: {sh(1)} (file 1, factres 0; "
            "the file's gold differs)") in lines
    assert sum(1 for line in lines if "the rows' gold was scored" in line) == 2


def test_run_ids_are_new_and_default_ids_name_the_system(tmp_path):
    path = harness_file(tmp_path, "f.json", [record(sh(0), "x")])
    first = score_files([path], results=tmp_path / "r")
    second = score_files([path], results=tmp_path / "r")
    assert first.run_id.startswith("imported-toy_agent-6k-")
    assert second.run_id == first.run_id + "-2"
    assert (first.path / "predictions.jsonl").read_bytes() == \
        (second.path / "predictions.jsonl").read_bytes()
    with pytest.raises(RunExistsError):
        score_files([path], results=tmp_path / "r", run_id=first.run_id)
    other = harness_file(tmp_path, "g.json", [record(f"{MH}_no0", "x")], source=MH,
                         agent_config={"agent_name": "another"})
    with pytest.raises(InputError, match=r"the files name 2 systems \(another, toy_agent\)"):
        score_files([path, other], results=tmp_path / "r")
    assert score_files([path, other], results=tmp_path / "r", name="both").meta["system"] == \
        "both"


def test_id_list_shortens_runs_of_numbered_ids():
    assert id_list([sh(1), sh(2), sh(3), f"{MH}_no0", "odd", sh(5)]) == \
        f"{sh(1)}-no3, {MH}_no0, odd, {sh(5)}"


@pytest.mark.parametrize("run_id, files, fields", [
    ("imported-gemini-2.5-flash-lite-6k", (SH_FILE, MH_FILE), {}),
    ("imported-nous-6k", (NOUS_FILE,), {"prediction": "answer", "em": "correct"})])
def test_the_committed_imported_runs_reproduce(run_id, files, fields, tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[1]
    committed = root / "results" / run_id
    meta = orjson.loads((committed / "meta.json").read_bytes())
    monkeypatch.chdir(root)                 # the committed meta names files relative to it
    # the committed id again, in another folder: as from an install outside the checkout
    monkeypatch.setattr("resolver.run.run_folder.committed_results", lambda: None)
    run = score_files([str(p.relative_to(root)) for p in files], data=meta["data"],
                      name=meta["system"], fields=fields, results=tmp_path, run_id=run_id)
    assert [f["path"] for f in run.meta["files"]] == [f["path"] for f in meta["files"]]
    for name in ("predictions.jsonl", "metrics.json"):
        assert (run.path / name).read_bytes() == (committed / name).read_bytes(), name
    # the score table gained its mode column since: the committed folder's own metrics, as
    # the table is rendered now
    from resolver.run.tables import score_table
    rows = orjson.loads((committed / "metrics.json").read_bytes())["rows"]
    assert (run.path / "table.md").read_text() == score_table(meta, rows, "md")
    assert (run.path / "table.tex").read_text() == score_table(meta, rows, "latex")
