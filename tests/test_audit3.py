"""The third reliability audit (run folders, result files and output formats), one test per
case whose verdict was not "held", each failing on the code before the fix.

Most cases edit one file of a real run over the bundled 6K rows (`base`, and `abst`, made with
`--abstain-below high`) as an adversarial user would, then ask the command the audit asked: the
one reader (`resolver.run.reader`, with `resolver.run.derived`) must refuse in one message
naming the file, the line (JSONL) and the field with both values, never pass the edit on."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from run_folders import rewrite_lines

from oracle.cli import main
from resolver.run.config import RunConfig
from resolver.run.result_schema import dumps
from resolver.run.runs import execute

MH, SH = "factconsolidation_mh_6k", "factconsolidation_sh_6k"
NO44 = f"{MH}_no44"          # a miss of the default run: it answers Oderzo, the gold is London
NO82 = f"{MH}_no82"          # a miss whose winning path ends at Donald Trump


def invoke(*args):
    """The command as a user runs it: exit code and everything printed (stderr too)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def clean_error(result, message: str) -> None:
    """A refusal: exit 1, one `Error:` message, no traceback."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    assert "Traceback" not in result.output
    assert result.output == f"Error: {message}\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The default run over the bundled 6K rows, and the same with --abstain-below high."""
    results = tmp_path_factory.mktemp("audit3") / "results"
    mp = pytest.MonkeyPatch()
    mp.delenv("FACTRES_PLANS", raising=False)
    try:
        return {name: execute(config, results=results, run_id=name).path
                for name, config in (("base", RunConfig()),
                                     ("abst", RunConfig(abstain_below="high")))}
    finally:
        mp.undo()


@pytest.fixture
def base(runs, tmp_path):
    """A fresh copy of the default run to edit, under tmp_path/results/."""
    return _copy(runs["base"], tmp_path / "results" / "base")


@pytest.fixture
def abst(runs, tmp_path):
    return _copy(runs["abst"], tmp_path / "results" / "abst")


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def edit_json(path: Path, change) -> None:
    value = orjson.loads(path.read_bytes())
    change(value)
    path.write_bytes(dumps(value))


def row_of(rows: list[dict], qid: str) -> dict:
    return next(r for r in rows if r["qid"] == qid)


def line_of(path: Path, qid: str) -> int:
    return next(i for i, line in enumerate(path.read_bytes().splitlines(), 1)
                if orjson.loads(line)["qid"] == qid)


# ---- C24: metrics.json recomputed from predictions.jsonl --------------------------------------
def test_c24_an_edited_em_in_metrics_json_is_refused(base):
    edit_json(base / "metrics.json",
              lambda m: m["rows"][1].update(em=0.99, ci=[0.97, 1.0]))
    clean_error(invoke("table", base),
                f"{base / 'metrics.json'}: rows[1] ({MH}): field 'em' is 0.99, but the "
                "predictions give 0.94 (expected em as the rows of predictions.jsonl give it; "
                "edited?)")


@pytest.mark.parametrize("change, message", [
    (lambda m: m["rows"][0].update(em=5.0),
     f"rows[0] ({SH}): field 'em' is 5.0, but the predictions give 1.0 (expected em as the "
     "rows of predictions.jsonl give it; edited?)"),
    (lambda m: m["rows"][0].update(ci=[7.0, -2.0]),
     f"rows[0] ({SH}): field 'ci' is [7.0,-2.0] for em 1.0 (expected a 95% interval [low, "
     "high] with 0 <= low <= em <= high <= 1; edited?)"),
    (lambda m: m["rows"][1].update(answered=-1.0),
     f"rows[1] ({MH}): field 'answered' is -1.0, but the predictions give 1.0 (expected "
     "answered as the rows of predictions.jsonl give it; edited?)"),
    (lambda m: m["rows"][0].update(stale=900),
     f"rows[0] ({SH}): stale 900 of stale_eligible 74 with n 100 (expected 0 <= stale <= "
     "stale_eligible <= n; edited?)"),
    (lambda m: m["rows"][2].update(em=0.5),
     "rows[2] (pooled sh): field 'em' is 0.5, but the predictions give 1.0 (expected em as the "
     "rows of predictions.jsonl give it; edited?)"),
], ids=["em", "ci", "answered", "stale", "pooled"])
def test_c24_figures_out_of_range_are_refused(base, change, message):
    edit_json(base / "metrics.json", change)
    clean_error(invoke("table", base), f"{base / 'metrics.json'}: {message}")


def test_c24_a_source_given_twice_in_metrics_json_is_refused(base):
    def twice(m):
        extra = copy.deepcopy(m["rows"][1])
        extra["em"] = 0.5
        m["rows"].insert(1, extra)
    edit_json(base / "metrics.json", twice)
    clean_error(invoke("table", base),
                f"{base / 'metrics.json'}: rows[2] is a second row of '{MH}' (also rows[1]) "
                "(expected one row per source; edited?)")


# ---- C25: an edited em is refused by every reader ---------------------------------------------
@pytest.mark.parametrize("command", [("compare", "BASE"), ("oracle", "misses")])
def test_c25_an_em_flipped_on_a_miss_is_refused(runs, base, tmp_path, command):
    rewrite_lines(base / "predictions.jsonl", lambda rows: row_of(rows, NO44).update(em=1))
    args = [runs["base"] if a == "BASE" else a for a in command] + [base]
    if command[0] == "oracle":
        args += ["--out", tmp_path / "out"]
    line = line_of(base / "predictions.jsonl", NO44)
    clean_error(invoke(*args),
                f"{base / 'predictions.jsonl'}:{line}: question '{NO44}': field 'em' is 1, but "
                'prediction "Oderzo" scores 0 against gold ["London"] (expected the em its '
                "prediction scores (substring exact match; an empty prediction scores 0); "
                "edited?)")


# ---- C26: export checks the gold against the run's data --------------------------------------
def test_c26_export_refuses_a_gold_edited_in_predictions_jsonl(base, tmp_path):
    rewrite_lines(base / "predictions.jsonl",
                  lambda rows: row_of(rows, NO44).update(gold=["Oderzo"], em=1))
    edit_json(base / "metrics.json", lambda m: [r.update(em=round(r["em"] + d, 6)) for r, d in
                                                zip(m["rows"], (0, 0.01, 0, 0.01, 0.005))])
    # metrics.json agrees with the forged row, and the ci holds the em: only the data can tell
    edit_json(base / "metrics.json", lambda m: [r.update(ci=[r["em"], r["em"]])
                                                for r in m["rows"]])
    line = line_of(base / "predictions.jsonl", NO44)
    result = invoke("export", base, "--out", tmp_path / "out")
    clean_error(result, f"{base / 'predictions.jsonl'}:{line}: question '{NO44}': field 'gold' "
                        'is ["Oderzo"], but the run\'s data has ["London"] (expected the gold of '
                        "the run's data; edited?)")
    assert not (tmp_path / "out").exists()


# ---- C27: an answer that contradicts its own winning path ------------------------------------
def test_c27_a_trace_answer_its_winning_path_does_not_reach_is_refused(base):
    gold = row_of([orjson.loads(x) for x in (base / "predictions.jsonl").read_bytes()
                   .splitlines()], NO82)["gold"][0]

    def answer(rows):
        row_of(rows, NO82).update(prediction=gold, resolver_answer=gold, em=1)
    rewrite_lines(base / "predictions.jsonl", answer)
    rewrite_lines(base / "traces.jsonl", lambda rows: row_of(rows, NO82).update(answer=gold))
    edit_json(base / "metrics.json", lambda m: [
        r.update(em=round(r["em"] + d, 6), ci=[round(r["em"] + d, 6)] * 2)
        for r, d in zip(m["rows"], (0, 0.01, 0, 0.01, 0.005))])
    winner = row_of([orjson.loads(x) for x in (base / "traces.jsonl").read_bytes()
                     .splitlines()], NO82)["winner"]["answer"]
    line = line_of(base / "traces.jsonl", NO82)
    for command in (("explain", base, NO82), ("oracle", "misses", base, "--out",
                                              base.parent / "m")):
        clean_error(invoke(*command),
                    f"{base / 'traces.jsonl'}:{line}: the trace of '{NO82}' answers "
                    f"{json.dumps(gold)}, but its winning path ends at {json.dumps(winner)} "
                    "(expected the winner's answer as the trace's; edited?)")


# ---- C28: an imported run's `missing` checked against its rows --------------------------------
def test_c28_an_emptied_missing_list_is_refused(tmp_path):
    nous = Path(__file__).resolve().parent.parent / "results" / "imported-nous-6k"
    rows = [orjson.loads(x) for x in (nous / "predictions.jsonl").read_bytes().splitlines()]
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps({"qid": r["qid"], "prediction": r["prediction"]}) + "\n"
                            for r in rows[:150]))
    results = tmp_path / "results"
    assert invoke("score", part, "--run-id", "part", "--results-dir", results).exit_code == 0
    folder = results / "part"

    def forget(meta):
        meta["missing"] = []
        meta["counts"]["missing"] = 0
    edit_json(folder / "meta.json", forget)
    first = next(r["qid"] for r in rows[150:])
    result = invoke("tables", folder, "--out", tmp_path / "t", "--table", "mab-fc")
    clean_error(result, f"{folder / 'meta.json'}: field 'missing' names 0 question(s), the rows "
                        f"of predictions.jsonl give 50; \"{first}\" is in predictions.jsonl "
                        "only (expected the missing questions of predictions.jsonl; edited?)")


# ---- C29: nbest.json and ceiling.json in their bounds ------------------------------------------
FIXTURES = Path(__file__).resolve().parent / "data" / "tables"


@pytest.mark.parametrize("folder, file, change, message", [
    ("oracle-nbest-dev-small", "nbest.json",
     lambda d: d["sources"]["factconsolidation_mh_6k"]["by_n"][1].update(plan_recall=150),
     "sources.factconsolidation_mh_6k.by_n[1]: success 5, candidate recall 5, strict plan "
     "recall 6, plan recall 150 of 10 questions (expected 0 <= success <= candidate recall <= "
     "plan recall <= questions, and strict plan recall <= plan recall; edited?)"),
    ("oracle-nbest-dev-small", "nbest.json",
     lambda d: d["sources"]["factconsolidation_mh_6k"]["by_n"][1].update(success=-3),
     "sources.factconsolidation_mh_6k.by_n[1]: success -3, candidate recall 5, strict plan "
     "recall 6, plan recall 6 of 10 questions (expected 0 <= success <= candidate recall <= "
     "plan recall <= questions, and strict plan recall <= plan recall; edited?)"),
    ("oracle-ceiling-sizes", "ceiling.json",
     lambda d: d["per_source"]["factconsolidation_mh_32k"].update(with_gold_path=500),
     "per_source.factconsolidation_mh_32k: latest wins 7, optimum 9, gold path 500, questions "
     "10 (expected 0 <= latest wins <= optimum <= gold path <= questions; edited?)"),
    ("oracle-ceiling-sizes", "ceiling.json",
     lambda d: d["per_source"]["factconsolidation_mh_32k"].update(optimal=3),
     "per_source.factconsolidation_mh_32k: latest wins 7, optimum 3, gold path 10, questions "
     "10 (expected 0 <= latest wins <= optimum <= gold path <= questions; edited?)"),
], ids=["recall-150", "success-negative", "gold-path-500", "optimum-below-latest"])
def test_c29_impossible_oracle_figures_are_refused(tmp_path, folder, file, change, message):
    edited = _copy(FIXTURES / folder, tmp_path / folder)
    edit_json(edited / file, change)
    clean_error(invoke("tables", edited, "--out", tmp_path / "t"),
                f"{edited / file}: {message}")
    assert not (tmp_path / "t").exists()


def test_c29_a_haystack_that_does_not_sum_to_its_sources_is_refused(tmp_path):
    edited = _copy(FIXTURES / "oracle-ceiling-sizes", tmp_path / "ce")

    def more(d):
        haystack = next(iter(d["per_haystack"].values()))
        haystack["latest_wins"] += 1
        haystack["optimal"] = haystack["bound"] = haystack["optimal"] + 1
    edit_json(edited / "ceiling.json", more)
    result = invoke("tables", edited, "--out", tmp_path / "t")
    clean_error(result, f"{edited / 'ceiling.json'}: per_haystack: latest_wins sums to 46, the "
                        "sources' to 45 (expected per_haystack summing to per_source; edited?)")


# ---- C30: schema-valid but malformed traces ---------------------------------------------------
@pytest.mark.parametrize("change, field, found", [
    (lambda t: t["candidates"][1].update(terms=[["only-name"]]),
     "candidates[1].terms[0]", 'a list of 1 item(s)'),
    (lambda t: t["candidates"][1].update(terms=[["a", "b"]]),
     "candidates[1].terms[0][1]", None),
    (lambda t: [c["hops"][0].update(passed_over=[[]])
                for c in [t["winner"]] + t["candidates"][:1]] and None,
     "winner.hops[0].passed_over[0]", 'a list of 0 item(s)'),
], ids=["one-item-term", "string-value", "empty-passed-over"])
@pytest.mark.parametrize("command", ["explain", "misses", "nbest"])
def test_c30_a_term_or_a_passed_over_version_that_is_no_pair_is_refused(base, tmp_path, change,
                                                                         field, found, command):
    rewrite_lines(base / "traces.jsonl", lambda rows: change(row_of(rows, NO82)))
    args = (("explain", base, NO82) if command == "explain"
            else ("oracle", command, base, "--out", tmp_path / "o"))
    result = invoke(*args)
    line = line_of(base / "traces.jsonl", NO82)
    expected = ("a pair: a list of exactly 2 items" if found else "a number")
    shown = found or 'a string ("b")'
    clean_error(result, f"{base / 'traces.jsonl'}:{line}: field '{field}' is {shown} "
                        f"(expected {expected})")
