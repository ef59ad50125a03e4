"""The verification of audit A's fixes (its new cases V01-V14, and C32 again): one test per case
whose verdict was not "held", each failing on the code before the fix.

As in test_audit3, most cases edit a copy of a real run over the bundled 6K rows (`base`, and
`abst`, made with `--abstain-below high`) the way the verification did, then ask the commands
it asked: the one reader (`resolver.results.reader` with `resolver.results.derived`) must refuse the
edit in one message, or say in a note what it could not check."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import orjson
import pytest
from run_folders import rewrite_lines
from test_audit3 import (
    FIXTURES,
    MH,
    NO44,
    NO82,
    SH,
    _copy,
    _run_of,
    abst,  # noqa: F401  (fixtures)
    base,  # noqa: F401
    clean_error,
    edit_json,
    hostile_rows,
    invoke,
    line_of,
    row_of,
    runs,  # noqa: F401
)

from resolver import escape


def rows_of(path: Path) -> list[dict]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def refused(result, *parts: str) -> str:
    """A refusal: exit 1, one `Error:` line holding each part, no traceback."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    for part in parts:
        assert part in result.output, (part, result.output)
    return result.output


def forge_metrics(folder: Path) -> None:
    """metrics.json made to agree with one mh_6k miss turned right: its EM and the pooled ones
    raised by one question, each interval the EM itself (in its bounds)."""
    edit_json(folder / "metrics.json", lambda m: [
        r.update(em=round(r["em"] + d, 6), ci=[round(r["em"] + d, 6)] * 2)
        for r, d in zip(m["rows"], (0, 0.01, 0, 0.01, 0.005))])


# ---- V02: the gold against the data, for every command -----------------------------------------
def test_v02_a_gold_forged_with_its_em_and_metrics_is_refused_by_table_and_tables(base, tmp_path):
    rewrite_lines(base / "predictions.jsonl",
                  lambda rows: row_of(rows, NO44).update(gold=["Oderzo"], em=1))
    forge_metrics(base)
    line = line_of(base / "predictions.jsonl", NO44)
    message = (f"{base / 'predictions.jsonl'}:{line}: question '{NO44}': field 'gold' is "
               '["Oderzo"], but the run\'s data has ["London"] (expected the gold of the run\'s '
               "data; edited?)")
    clean_error(invoke("table", base), message)
    clean_error(invoke("tables", base, "--out", tmp_path / "t"), message)
    assert not (tmp_path / "t").exists()


def test_v02_data_that_cannot_be_found_is_said_in_a_note(tmp_path):
    run = _run_of(tmp_path, hostile_rows(tmp_path))
    (tmp_path / "hostile.json").unlink()
    result = invoke("table", run)
    assert result.exit_code == 0, result.output
    assert f"note: hostile: its questions and gold are not compared with the data: " \
           f"{run / 'meta.json'}: the run's data file {tmp_path / 'hostile.json'} is gone" \
           in result.output
    result = invoke("tables", run, "--out", tmp_path / "t", "--table", "mab-fc")
    assert result.exit_code == 0 and "note: hostile: its questions and gold are not " \
                                      "compared with the data" in result.output


def test_v02_compare_says_too_that_a_runs_data_cannot_be_found(tmp_path):
    # compare reads run folders through the same reader: what it could not check is said
    data = hostile_rows(tmp_path)
    first = _run_of(tmp_path, data)
    second = _run_of(tmp_path, data, "hostile-plain")
    data.unlink()
    result = invoke("compare", first, second)
    assert result.exit_code == 0, result.output
    for name in ("hostile", "hostile-plain"):
        assert f"note: {name}: its questions and gold are not compared with the data: " \
               in result.output


# ---- V03: a forged prediction whose trace was left as it was ----------------------------------
def _forge_no82(folder: Path) -> str:
    """no82 (a miss) answered with its gold in predictions.jsonl and metrics.json; returns it."""
    gold = row_of(rows_of(folder / "predictions.jsonl"), NO82)["gold"][0]
    rewrite_lines(folder / "predictions.jsonl", lambda rows: row_of(rows, NO82).update(
        prediction=gold, resolver_answer=gold, em=1))
    forge_metrics(folder)
    return gold


@pytest.mark.parametrize("command", [("table",), ("tables", "--out", "OUT"),
                                     ("compare", "BASE"), ("export", "--out", "OUT"),
                                     ("oracle", "calibration", "--out", "OUT")])
def test_v03_a_prediction_against_its_untouched_trace_is_refused_everywhere(runs, base, tmp_path,
                                                                            command):
    gold = _forge_no82(base)
    winner = row_of(rows_of(base / "traces.jsonl"), NO82)["answer"]
    args = [runs["base"] if a == "BASE" else tmp_path / "o" if a == "OUT" else a
            for a in command]
    args.insert(2 if command[0] == "oracle" else 1, base)
    clean_error(invoke(*args), f"{base / 'traces.jsonl'}: the run's files disagree: the trace of "
                               f"'{NO82}' has answer {winner!r}, predictions.jsonl {gold!r} "
                               "(expected the trace of the prediction (edited?))")


def test_v03_a_run_without_traces_is_refused_since_w12(base):
    # it read with a note until verification W12: a resolver run always writes its traces
    (base / "traces.jsonl").unlink()
    clean_error(invoke("table", base), f"{base}: the run has no traces.jsonl (deleted?): a "
                "resolver run (search mode) writes one row per question, and its predictions "
                "are not read without it (expected the traces.jsonl the run wrote)")


# ---- V04: a winner of no hop --------------------------------------------------------------------
def test_v04_a_winner_without_hops_is_refused(base):
    gold = _forge_no82(base)
    rewrite_lines(base / "traces.jsonl", lambda rows: row_of(rows, NO82).update(
        answer=gold, winner=dict(row_of(rows, NO82)["winner"], answer=gold, hops=[])))
    line = line_of(base / "traces.jsonl", NO82)
    message = (f"{base / 'traces.jsonl'}:{line}: the trace of '{NO82}': the winner answers "
               f"{json.dumps(gold)} with no hop (expected a candidate of at least one hop, its "
               "answer where the last hop lands; edited?)")
    clean_error(invoke("explain", base, NO82), message)
    clean_error(invoke("oracle", "misses", base, "--out", base.parent / "m"), message)


def test_v04_hops_that_do_not_connect_are_refused(base):
    def cut(rows):
        winner = row_of(rows, NO82)["winner"]
        winner["hops"][1]["subject"] = "Somebody Else"
    rewrite_lines(base / "traces.jsonl", cut)
    refused(invoke("table", base), f"the trace of '{NO82}': the winner's hop 1 starts at "
                                   '"Somebody Else", but hop 0 lands at')


# ---- V05: a hop's version and status ------------------------------------------------------------
def test_v05_a_version_outside_the_key_and_an_unknown_status_are_refused(base):
    def version(rows):
        row_of(rows, NO82)["winner"]["hops"][0]["version"] = 1000
    rewrite_lines(base / "traces.jsonl", version)
    line = line_of(base / "traces.jsonl", NO82)
    refused(invoke("table", base), f"traces.jsonl:{line}: the trace of '{NO82}': the winner's hop "
                                   "0 takes version 1000 of a key with ")
    rewrite_lines(base / "traces.jsonl", lambda rows: row_of(rows, NO82)["winner"]["hops"][0]
                  .update(version=0, status="bogus"))
    refused(invoke("table", base), f"traces.jsonl:{line}: field 'winner.hops[0].status' is a "
                                   'string ("bogus")')


def test_v05_a_version_the_store_does_not_have_there_is_named_by_explain(base):
    traces = rows_of(base / "traces.jsonl")
    # a winning hop on a key of several versions: another version of it is in range, but the
    # store's history puts this fact elsewhere
    trace, i = next((t, i) for t in traces if t["winner"]
                    for i, h in enumerate(t["winner"]["hops"]) if h["passed_over"])
    hop = trace["winner"]["hops"][i]
    moved = 1 if hop["version"] == 0 else 0

    def edit(rows):
        row_of(rows, trace["qid"])["winner"]["hops"][i]["version"] = moved
    rewrite_lines(base / "traces.jsonl", edit)
    result = invoke("explain", base, trace["qid"])
    assert result.exit_code == 0, result.output
    assert "hop(s) of the run's trace are" in result.output
    assert f"(line {hop['line']}, version {moved})" in result.output


# ---- V06, V07: ceiling.json -------------------------------------------------------------------
def test_v06_optimal_with_a_bound_above_the_optimum_is_refused(tmp_path):
    edited = _copy(FIXTURES / "oracle-ceiling-sizes", tmp_path / "ce")
    haystack = "c" * 64

    def proven(d):
        d["status"] = "OPTIMAL"
        d["per_haystack"][haystack]["status"] = "OPTIMAL"
        for c in d["components"]:
            c["status"] = "OPTIMAL" if c["best"] == c["bound"] else c["status"]
        for s in ("factconsolidation_mh_262k", "factconsolidation_sh_262k"):
            d["per_source"][s]["status"] = "OPTIMAL"
    edit_json(edited / "ceiling.json", proven)
    refused(invoke("tables", edited, "--out", tmp_path / "t"),
            f"{edited / 'ceiling.json'}: per_haystack.{haystack}: status \"OPTIMAL\", but its "
            "components are FEASIBLE, FEASIBLE")

    def components_too(d):
        for c in d["components"]:
            c["status"] = "OPTIMAL"
    edit_json(edited / "ceiling.json", components_too)
    refused(invoke("tables", edited, "--out", tmp_path / "t"),
            "components[4]: status OPTIMAL with best 2 and bound 3")
    assert not (tmp_path / "t").exists()


def test_v07_an_optimum_its_components_do_not_add_up_to_is_refused(tmp_path):
    edited = _copy(FIXTURES / "oracle-ceiling-sizes", tmp_path / "ce")
    haystack = "a" * 64

    def raised(d):
        # one more question answered, at every level: source, haystack, totals (and bounds)
        d["per_source"]["factconsolidation_mh_32k"]["optimal"] += 1
        d["per_haystack"][haystack]["optimal"] += 1
        d["per_haystack"][haystack]["bound"] += 1
        d["optimal"] += 1
        d["bound"] += 1
    edit_json(edited / "ceiling.json", raised)
    clean_error(invoke("tables", edited, "--out", tmp_path / "t"),
                f"{edited / 'ceiling.json'}: per_haystack.{haystack}: optimum 20, but "
                "questions_free 12 + the components' best 4 + 3 = 19 (expected the optimum as "
                "the oracle adds it up: questions_free plus each component's best; edited?)")


def test_v07_a_source_optimum_its_question_rows_do_not_count_is_refused(tmp_path):
    committed = Path(__file__).resolve().parent.parent / "results" / "oracle-ceiling-6k-2"
    edited = _copy(committed, tmp_path / "ce")

    def raised(d):
        # one more mh question answered, at every level but the question rows
        d["per_source"][MH]["optimal"] += 1
        for level in [d, *d["per_haystack"].values()]:
            level["optimal"] += 1
            level["bound"] += 1
    edit_json(edited / "ceiling.json", raised)
    clean_error(invoke("tables", edited, "--out", tmp_path / "t"),
                f"{edited / 'ceiling.json'}: per_source.{MH}: optimal is 98, but its question "
                "rows count 97 (expected optimal counted from rows; edited?)")


# ---- V10: an abstaining run is marked wherever its score is printed -----------------------------
def test_v10_the_run_table_and_mab_nbest_mark_an_abstaining_run(runs, tmp_path):
    table = invoke("table", runs["abst"])
    assert table.exit_code == 0, table.output
    assert f"| {MH} | mh | search | none | 100 | " in table.output
    assert all("]¶ | " in line for line in table.output.splitlines()
               if line.startswith("| factconsolidation") or line.startswith("| pooled"))
    assert table.output.rstrip().endswith("¶ made with --abstain-below high: 73 of its 200 "
                                          "questions were left unanswered (their label was "
                                          "below it) and count as wrong.")
    assert "¶" not in invoke("table", runs["base"]).output
    # the run's own table.md, written by the run, says the same
    assert (runs["abst"] / "table.md").read_text() == table.output
    nbest = invoke("oracle", "nbest", runs["abst"], "--out", tmp_path / "nb")
    assert nbest.exit_code == 0, nbest.output
    result = invoke("tables", tmp_path / "nb", "--out", tmp_path / "t", "--table", "mab-nbest")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-nbest.md").read_text()
    assert f"| abst¶ | {MH} | 1 |" in text
    assert ("¶ made with --abstain-below: success@N judges the answer the resolver selected, "
            "also where the run abstained from it (its EM, in mab-fc, counts those questions as "
            "unanswered): abst below high, 73 questions abstained from.") in text
    assert "abst\\textsuperscript{\\P}" in (tmp_path / "t" / "mab-nbest.tex").read_text()


# ---- V11 (and C32): no live link from a name -----------------------------------------------------
def test_v11_markdown_escapes_links_and_images():
    assert escape.markdown("[click](http:evil.example) ![x](y) [r][1] f(x) a]b") == \
        "\\[click\\]\\(http:evil.example) \\!\\[x\\]\\(y) \\[r\\]\\[1\\] f(x) a\\]b"


def test_v11_a_folder_named_as_a_link_is_no_link_in_mab_fc(runs, tmp_path):
    folder = _copy(runs["base"], tmp_path / "[click](http:evil.example)")
    result = invoke("tables", folder, "--out", tmp_path / "t", "--table", "mab-fc")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-fc.md").read_text()
    assert "[click](" not in text
    # the run's folder name is in the rows' footnote, or in its column when asked for
    assert "run \\[click\\]\\(http:evil.example)," in text
    result = invoke("tables", folder, "--out", tmp_path / "t2", "--table", "mab-fc",
                    "--columns", "run")
    text = (tmp_path / "t2" / "mab-fc.md").read_text()
    assert "[click](" not in text
    assert "| \\[click\\]\\(http:evil.example) |" in text


# ---- V12: the explain command misses suggests names a folder elsewhere by its path ------------
def test_v12_a_run_outside_the_results_dir_is_named_by_its_path(runs, tmp_path):
    folder = _copy(runs["base"], tmp_path / "elsewhere dir" / "copyA")
    result = invoke("oracle", "misses", folder, "--results-dir", tmp_path / "res", "--out",
                    tmp_path / "m")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("Why each"))
    command = line[line.index("`") + 1:line.rindex("`")]
    words = shlex.split(command)
    assert words[:3] == ["factres", "explain", str(folder.resolve())]
    explained = invoke("explain", *words[2:4], "--results-dir", tmp_path / "res")
    assert explained.exit_code == 0, explained.output
    # found by its name, a run keeps its name
    inside = invoke("oracle", "misses", "base", "--results-dir", runs["base"].parent, "--out",
                    tmp_path / "m2")
    assert "`factres explain base " in inside.output, inside.output


# ---- V13: two systems over the same rows under other ids ---------------------------------------
def test_v13_calibration_does_not_pool_the_same_questions_under_other_ids(tmp_path):
    first = _run_of(tmp_path, hostile_rows(tmp_path), "first")
    other = tmp_path / "other"
    other.mkdir()
    renamed = hostile_rows(other, "renamed", ids=[f"r{i}" for i in range(5)])
    second = _run_of(tmp_path, renamed, "second")
    result = invoke("oracle", "calibration", first, second, "--out", tmp_path / "c")
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / "c" / "calibration.json").read_bytes())
    assert report["pooled"] is None
    assert report["not_pooled"] == [{"runs": ["first", "second"], "shared_questions": 5}]
    assert "Not pooled: runs first and second share 5 question(s) (the same id, or the same " \
           "question over the same context)" in result.output


# ---- V14: two copies of one folder --------------------------------------------------------------
def test_v14_a_copy_of_an_nbest_folder_is_refused(tmp_path):
    committed = Path(__file__).resolve().parent.parent / "results"
    copy = _copy(committed / "oracle-nbest-dev-6k-search-reading", tmp_path / "pl" / "nb-$x$")
    result = invoke("tables", "oracle-nbest-dev-6k-search-reading", copy, "--out",
                    tmp_path / "t")
    refused(result, "folders oracle-nbest-dev-6k-search-reading and nb-$x$ hold the same "
                    "nbest.json content (sha256 ", "a copy (expected each folder once)")
    assert not (tmp_path / "t").exists()


def test_v14_a_copy_in_the_results_dir_is_read_once_with_a_warning(runs, tmp_path):
    results = tmp_path / "res"
    _copy(runs["base"], results / "base")
    _copy(runs["base"], results / "base-copy")
    result = invoke("tables", "--results-dir", results, "--table", "mab-fc")
    assert result.exit_code == 0, result.output
    assert "warning: skipped base-copy: the same run (run id base, the same " \
           "prediction rows) as base: a copy, read once" in result.output
    assert "| base-copy |" not in (results / "tables" / "mab-fc.md").read_text()


# ---- V01: the stale counts and the interval, bounded tighter -----------------------------------
def test_v01_a_stale_count_above_the_wrong_answers_is_refused(base):
    rows = rows_of(base / "predictions.jsonl")
    wrong = sum(1 for r in rows if r["source"] == SH and r["em"] == 0 and r["prediction"])
    metrics = orjson.loads((base / "metrics.json").read_bytes())
    sh = next(r for r in metrics["rows"] if r["source"] == SH)
    assert wrong + 1 <= sh["stale_eligible"]          # the edit stays in the old bounds

    def stale(m):
        for r in m["rows"]:
            if r["kind"] in ("sh", "all"):
                r["stale"] = wrong + 1
                r["stale_rate"] = round((wrong + 1) / r["stale_eligible"], 6)
    edit_json(base / "metrics.json", stale)
    clean_error(invoke("table", base), f"{base / 'metrics.json'}: rows[0] ({SH}): stale "
                                       f"{wrong + 1}, but only {wrong} of its answered questions "
                                       "are wrong (expected stale <= the wrong answers given; "
                                       "edited?)")


def test_v01_an_interval_wider_than_a_bootstrap_gives_is_refused(base):
    edit_json(base / "metrics.json", lambda m: m["rows"][1].update(ci=[0.5, 0.99]))
    refused(invoke("table", base), f"rows[1] ({MH}): field 'ci' is [0.5,0.99] for em 0.94, "
                                   "reaching 0.440000 from it with a standard error of "
                                   "0.023749 (expected a bootstrap interval: within 8 standard "
                                   "errors of the em")


def test_v01_a_run_whose_answers_are_all_right_has_its_em_as_interval(tmp_path):
    from run_folders import write_run_folder
    from test_oracle_paths import SH as TINY_SH
    from test_oracle_paths import write_tiny
    data = write_tiny(tmp_path)
    run = write_run_folder(tmp_path / "results" / "r", [str(data)], {
        f"{SH}_no{i}": (answer, 1, []) for i, (_, answer) in enumerate(TINY_SH)})
    assert invoke("table", run).exit_code == 0
    edit_json(run / "metrics.json", lambda m: m["rows"][0].update(ci=[0.9, 1.0]))
    clean_error(invoke("table", run), f"{run / 'metrics.json'}: rows[0] ({SH}): field 'ci' is "
                                      "[0.9,1.0] for em 1.0, reaching 0.100000 from it with a "
                                      "standard error of 0.000000 (expected a bootstrap "
                                      "interval: within 8 standard errors of the em (the em "
                                      "itself when every answer is right, or every one wrong); "
                                      "edited?)")
