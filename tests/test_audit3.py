"""The third reliability audit (run folders, result files and output formats), one test per
case whose verdict was not "held", each failing on the code before the fix.

Most cases edit one file of a real run over the bundled 6K rows (`base`, and `abst`, made with
`--abstain-below high`) as an adversarial user would, then ask the command the audit asked: the
one reader (`resolver.results.reader`, with `resolver.results.derived`) must refuse in one message
naming the file, the line (JSONL) and the field with both values, never pass the edit on."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import orjson
import pytest
from run_folders import rewrite_lines
from test_audit2 import clean_error, invoke  # the same command-line checks

from resolver.results.result_schema import dumps
from resolver.run.config import RunConfig
from resolver.run.runs import execute

MH, SH = "factconsolidation_mh_6k", "factconsolidation_sh_6k"
NO44 = f"{MH}_no44"          # a miss of the default run: it answers Oderzo, the gold is London
NO82 = f"{MH}_no82"          # a miss whose winning path ends at Donald Trump


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


# ---- rows with hostile names: sources and question ids -------------------------------------
def hostile_rows(tmp_path: Path, source_prefix: str = "", ids=None) -> Path:
    """The tiny haystack of test_oracle_paths with the multi-hop source renamed (a prefix
    before `_mh_6k`) and, optionally, its question ids."""
    from test_oracle_paths import CONTEXT
    from test_oracle_paths import MH as TINY_MH
    source = f"{source_prefix}_mh_6k" if source_prefix else MH
    rows = [{"context": CONTEXT, "questions": [q for q, _ in TINY_MH],
             "answers": [[a] for _, a in TINY_MH],
             "metadata": {"source": source, "qa_pair_ids": ids or [
                 f"{source}_no{i}" for i in range(len(TINY_MH))]}}]
    path = tmp_path / "hostile.json"
    path.write_bytes(orjson.dumps({"data": rows}))
    return path


def _run_of(tmp_path: Path, data: Path, run_id: str = "hostile") -> Path:
    return execute(RunConfig(data=(str(data),)), results=tmp_path / "results",
                   run_id=run_id).path


# ---- C32: a references file's text is escaped in the Markdown footnotes ----------------------
def test_c32_references_text_is_escaped_in_the_footnotes(tmp_path):
    refs = orjson.loads((Path(__file__).resolve().parent.parent / "resolver" / "data" /
                         "references.json").read_bytes())
    refs["sources"]["A"]["name"] = "<!-- A"
    refs["protocols"]["A-resolver"] = ("proto <img src=x onerror=alert(1)> **bold** "
                                       "[link](http://evil) -->")
    path = tmp_path / "refs-html.json"
    path.write_bytes(orjson.dumps(refs))
    result = invoke("tables", "dev-6k-search-confidence", "--with-references", "--references",
                    path, "--out", tmp_path / "t", "--table", "mab-fc")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-fc.md").read_text()
    opened = [line for line in text.splitlines() if "<!--" in line]
    assert all(line.startswith("<!-- ") and line.endswith(" -->") for line in opened)
    assert len(opened) == 2                       # factres's own comment lines only
    assert "<img" not in text and "-->" not in text.split("-->", 2)[-1]
    assert "source A: &lt;\\!-- A, " in text
    # no live link either (verification V11: C32 was weak while `[`, `]` stayed as they were)
    assert "protocol A-resolver: proto &lt;img src=x onerror=alert(1)&gt; \\*\\*bold\\*\\* " \
           "\\[link\\]\\(http://evil) --&gt;." in text


# ---- C33: source names escaped in oracle misses and nbest ------------------------------------
def test_c33_misses_and_nbest_escape_a_source_name(tmp_path):
    from resolver import escape
    source = "evil|x\n<!-- \\input{pwn} \x1b[2J\x07"
    run = _run_of(tmp_path, hostile_rows(tmp_path, source))
    escaped = escape.markdown(source + "_mh_6k")
    assert escaped.startswith("evil\\|x\\\\n&lt;\\!-- ")
    for command, file in (("misses", "misses.md"), ("nbest", "nbest.md")):
        out = tmp_path / command
        result = invoke("oracle", command, run, "--out", out)
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output and "\x07" not in result.output
        text = (out / file).read_text()
        # (the explain command's ids sit in a code span, where nothing is markup)
        prose = "\n".join(x for x in text.splitlines() if not x.startswith("Why each"))
        assert "<!--" not in prose and "\x1b" not in text and "\x07" not in text
        assert escaped in text
    header = (tmp_path / "misses" / "misses.md").read_text().splitlines()[2]
    assert header == f"| bucket | {escaped} | all |"
    assert (tmp_path / "nbest" / "nbest.md").read_text().rstrip().endswith(
        f"agrees with the run's answer on: {escaped} 5/5.")


# ---- C34, C35: abstentions in oracle misses and calibration ----------------------------------
def test_c34_misses_puts_abstentions_in_their_own_bucket(runs, tmp_path):
    result = invoke("oracle", "misses", runs["abst"], "--out", tmp_path / "m")
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / "m" / "misses.json").read_bytes())
    buckets = report["summary"][MH]["buckets"]
    assert buckets["abstained"] == 72 and buckets["selection_error"] == 0
    no0 = row_of(report["misses"], f"{MH}_no0")
    assert (no0["bucket"], no0["detail"]) == (
        "abstained", "label medium; the resolver said 'Belgium', which was right")
    wrong = [m for m in report["misses"] if "which was wrong" in m["detail"]]
    assert len(wrong) == 6 and all(m["bucket"] == "abstained" for m in wrong)
    assert "abstained: left unanswered by the run (--abstain-below high" in result.output


def test_c35_calibration_judges_labels_on_the_resolvers_answer(runs, tmp_path):
    result = invoke("oracle", "calibration", runs["abst"], "--out", tmp_path / "c")
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / "c" / "calibration.json").read_bytes())
    labels = {r["label"]: (r["questions"], r["right"]) for r in report["runs"][0]["labels"]}
    assert labels["medium"] == (63, 58) and labels["low"] == (10, 9)     # as in the base run
    assert (report["runs"][0]["abstained"], report["runs"][0]["abstained_right"]) == (73, 67)
    assert ("note: abst: made with --abstain-below high; 73 answer(s) abstained from (left "
            "unanswered) are judged here on the resolver's own answer, which their label "
            "labels; 67 of them were right.") in result.output


def test_c34_an_abstained_row_keeps_the_resolvers_answer(runs):
    rows = [orjson.loads(x) for x in (runs["abst"] / "predictions.jsonl").read_bytes()
            .splitlines()]
    no0 = row_of(rows, f"{MH}_no0")
    assert (no0["prediction"], no0["resolver_answer"]) == ("", "Belgium")
    assert no0["reason"].startswith("abstained: confidence medium, below high")


# ---- C38: calibration names a run by its folder ------------------------------------------------
def test_c38_calibration_names_a_copied_folder_by_its_name(runs, tmp_path):
    copy_a = _copy(runs["base"], tmp_path / "copyA")
    result = invoke("oracle", "calibration", copy_a, "--results-dir", tmp_path / "r")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "r" / "oracle-calibration-copyA"
    report = orjson.loads((folder / "calibration.json").read_bytes())
    assert [(r["run"], r["run_id"]) for r in report["runs"]] == [("copyA", "base")]
    # a copy beside its original is one run given twice, known by its content since
    # verification W03 (it was listed twice, not pooled): refused, as tables and compare do
    both = invoke("oracle", "calibration", runs["base"], copy_a, "--out", tmp_path / "both")
    clean_error(both, f"runs base and copyA are one run: the same run id 'base' and the same "
                      f"prediction rows ('{runs['base']}' and '{copy_a}'): a copy (expected each "
                      "run once)")
    clean_error(invoke("oracle", "calibration", copy_a, copy_a, "--out", tmp_path / "x"),
                f"run copyA is given twice ('{copy_a}' and '{copy_a}') (expected each run once)")


# ---- C44: a write that fails while drawing names the file -------------------------------------
def test_c44_a_figure_that_cannot_be_written_names_its_file(tmp_path):
    pytest.importorskip("matplotlib")
    import resource
    import signal
    import subprocess
    import sys

    def small_files():                     # a full disk for files past 30 KB: the PNG's size
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (30_000, 30_000))
    out = tmp_path / "t"
    factres = Path(sys.executable).parent / "factres"
    done = subprocess.run([str(factres), "tables",
                           str(FIXTURES / "oracle-nbest-dev-small"), "--out", str(out),
                           "--table", "mab-nbest", "--plot"], capture_output=True, text=True,
                          preexec_fn=small_files, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 1
    assert done.stderr == f"Error: {out / 'mab-nbest.png'}: File too large\n"
    assert not (out / "mab-nbest.png").exists()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]     # no temporary file


# ---- C47-C53: tables ---------------------------------------------------------------------------
def test_c47_cells_a_baseline_could_not_test_are_named(tmp_path):
    result = invoke("tables", FIXTURES / "dev-small", "--baseline", FIXTURES / "heldout-other",
                    "--out", tmp_path / "t", "--table", "mab-fc")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-fc.md").read_text()
    # the row's name, its label (the run's id is in the rows' footnote)
    assert ("not tested against the baseline (no question in common with it, so no arrow can "
            "show): factres search: 6K sh, 6K mh, 32K sh, 32K mh, mean sh, mean mh.") in text


def test_c48_the_same_folder_twice_is_refused(runs, tmp_path):
    clean_error(invoke("tables", "base", runs["base"], "--results-dir", runs["base"].parent,
                       "--table", "mab-fc", "--out", tmp_path / "t"),
                f"folder base is given twice ('base' and '{runs['base']}') (expected each "
                "folder once)")


def test_c49_a_run_made_with_abstain_below_is_marked(runs, tmp_path):
    result = invoke("tables", runs["base"], runs["abst"], "--table", "mab-fc", "--out",
                    tmp_path / "t", "--columns", "run,plan-sets,mode,reader,split,commit",
                    "--label", f"{runs['abst']}=abst", "--label", f"{runs['base']}=base")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-fc.md").read_text()
    assert "| abst | abst | live:rules + live:lexicon | search¶ | none | dev |" in text
    assert "| base | base | live:rules + live:lexicon | search | none | dev |" in text
    assert ("¶ made with --abstain-below: answers labelled below the level were left "
            "unanswered and count as wrong: abst below high, 73 of 200 questions.") in text
    assert "search\\textsuperscript{\\P}" in (tmp_path / "t" / "mab-fc.tex").read_text()
    # without the mode column, its mark goes on the row's name
    invoke("tables", runs["base"], runs["abst"], "--table", "mab-fc", "--out", tmp_path / "u",
           "--columns", "commit")
    assert "| factres search (2)¶ |" in (tmp_path / "u" / "mab-fc.md").read_text()
    compared = invoke("compare", runs["base"], runs["abst"]).output
    assert "- B: abst: live:rules + live:lexicon, search, abstaining below high, 200 " \
           "questions" in compared
    assert "| abst¶ | factconsolidation_sh_6k |" in compared
    assert ("¶ abst: made with --abstain-below high: 73 of its 200 questions were left "
            "unanswered (their label was below it) and count as wrong.") in compared


def test_c50_the_imported_footnote_names_the_column_of_the_system(tmp_path):
    result = invoke("tables", "imported-nous-6k", "--table", "mab-fc", "--out", tmp_path / "t")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-fc.md").read_text()
    # the system's name is the row's name; the footnote says what an imported row is
    assert "| nous-memoryAgentBench§ |" in text
    assert ("imported: another system's predictions, scored by factres score against the rows' "
            "gold (its commit: factres's).") in text


def test_c51_files_left_from_an_earlier_build_are_named(tmp_path):
    out = tmp_path / "t"
    assert invoke("tables", FIXTURES / "dev-small", "--out", out).exit_code == 0
    result = invoke("tables", FIXTURES / "dev-plain-dirty", "--out", out, "--format", "md",
                    "--table", "mab-fc")
    assert result.exit_code == 0
    assert (f"note: left from an earlier build in {out}, not rewritten now: mab-fc.tex, "
            "mab-ref.md, mab-ref.tex, preview.tex (they may show other folders than this "
            "build)") in result.output


def test_c52_a_checked_figure_its_quote_does_not_give_is_refused(tmp_path):
    refs = orjson.loads((Path(__file__).resolve().parent.parent / "resolver" / "data" /
                         "references.json").read_bytes())
    entry = next(e for e in refs["references"] if e["id"] == "A-main")
    entry["sizes"]["6k"]["mh"] = 99                   # its quote still says "from 88 to 93"
    path = tmp_path / "refs-changed.json"
    path.write_bytes(orjson.dumps(refs))
    clean_error(invoke("tables", "dev-6k-search-confidence", "--with-references",
                       "--references", path, "--out", tmp_path / "t", "--table", "mab-fc"),
                f"{path}: entry 'A-main' is marked checked, but its figure 6k.mh is 99, which "
                "its quote does not give (numbers there: 100, 67, 84.5, 88, 89, 93, 97, 98, "
                "98.3) (expected a checked entry's figures as its quote and the transcription "
                "give them (or checked: false))")


def test_c52_a_checked_table_figure_is_compared_with_the_transcription(tmp_path):
    refs = orjson.loads((Path(__file__).resolve().parent.parent / "resolver" / "data" /
                         "references.json").read_bytes())
    entry = next(e for e in refs["references"] if e["id"] == "CAR-gpt-4o")
    entry["sizes"]["262k"]["mh"] = 44
    path = tmp_path / "refs.json"
    path.write_bytes(orjson.dumps(refs))
    clean_error(invoke("tables", "dev-6k-search-confidence", "--references", path, "--out",
                       tmp_path / "t", "--table", "mab-ref"),
                f"{path}: entry 'CAR-gpt-4o' is marked checked, but its figure 262k.mh is 44, "
                "and the transcription's row 'CAR pipeline' has 41 (expected a checked entry's "
                "figures as its quote and the transcription give them (or checked: false))")


def test_c53_an_unknown_folder_path_is_named_once(tmp_path):
    result = invoke("tables", "nope/x", "--out", tmp_path / "t")
    assert result.output.startswith("Error: no folder 'nope/x' (expected ")


# ---- C56: oracle paths with no multi-hop source ------------------------------------------------
def test_c56_paths_of_data_without_a_multi_hop_source_is_refused(tmp_path):
    from test_oracle_paths import write_tiny
    rows = orjson.loads(write_tiny(tmp_path).read_bytes())
    rows["data"] = [r for r in rows["data"] if r["metadata"]["source"] == SH]
    data = tmp_path / "sh.json"
    data.write_bytes(orjson.dumps(rows))
    clean_error(invoke("oracle", "paths", "--data", data, "--out", tmp_path / "p"),
                f"{data}: no multi-hop source (the kind comes from the source name): nothing "
                f"analysed; the data's sources are {SH} (expected rows of a source named "
                "<name>_mh_<size>, e.g. factconsolidation_mh_6k)")


# ---- C57: the suggested explain command is shell-safe -----------------------------------------
def test_c57_the_explain_command_misses_suggests_pastes_into_a_shell(tmp_path):
    import subprocess
    ids = ["q|0|44", "q\u202e1", "it's", "plain", "q;rm"]
    run = _run_of(tmp_path, hostile_rows(tmp_path, ids=ids))
    result = invoke("oracle", "misses", run, "--out", tmp_path / "m")
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("Why each"))
    command = line[line.index("`") + 1:line.rindex("`")]
    report = orjson.loads((tmp_path / "m" / "misses.json").read_bytes())
    missed = [m["qid"] for m in report["misses"]]
    assert "q\u202e1" in missed or "q|0|44" in missed
    assert "$'q\\u202e1'" in command or "q\u202e1" not in missed
    # bash reads the words back as the ids, byte for byte
    words = subprocess.run(["bash", "-c", "printf '%s\\0' " + command.removeprefix(
        "factres explain ")], capture_output=True, check=True).stdout.split(b"\0")[:-1]
    # the run by its folder's path: its name is no run of the results folder (verification V12)
    assert [w.decode() for w in words] == [str(run.resolve())] + missed


# ---- C31: export writes inside --out, never over a file ---------------------------------------
@pytest.mark.parametrize("config, name", [
    ({"tag": "../../../../victim/q", "max_test_samples": "/../../z"},
     f"{MH}_.-.-.-.-victim-q_inunknown_sizeunknown_shotsunknown_max_samples-.-.-z_results.json"),
    ({"tag": "x\ny", "context_max_length": "\n", "max_test_samples": "a\\b"},
     f"{MH}_x-y_in-_sizeunknown_shotsunknown_max_samplesa-b_results.json"),
], ids=["traversal", "newline"])
def test_c31_export_names_files_safely_inside_out(tmp_path, config, name):
    first = tmp_path / "first"
    assert invoke("export", "imported-nous-6k", "--out", first).exit_code == 0
    (harness,) = (first / "Conflict_Resolution").glob(f"{MH}_*")
    payload = orjson.loads(harness.read_bytes())
    payload["dataset_config"].update(config)
    payload["agent_config"] = {"agent_name": "trav", "model": "m"}
    crafted = tmp_path / "crafted.json"
    crafted.write_bytes(orjson.dumps(payload))
    results = tmp_path / "results"
    assert invoke("score", crafted, "--run-id", "trav", "--results-dir", results).exit_code == 0
    victim = tmp_path / "out" / "z_results.json"           # where "/../../z" used to land
    victim.parent.mkdir()
    victim.write_text("precious")
    before = sorted(p for p in tmp_path.rglob("*"))
    result = invoke("export", "trav", "--results-dir", results, "--out",
                    tmp_path / "out" / "a" / "exp")
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "precious"
    written = tmp_path / "out" / "a" / "exp" / "Conflict_Resolution" / name
    assert result.stdout == f"wrote {written} ({len(payload['data'])} records)\n"
    after = sorted(p for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before] == [
        tmp_path / "out" / "a", tmp_path / "out" / "a" / "exp", written.parent, written]
    assert result.stderr.startswith(f"warning: {MH}: the imported file's dataset_config.")
    assert "(a file name holds no path separator, '..' or control character)" in result.stderr


def test_c31_a_folder_never_gets_a_file_outside_it(tmp_path):
    from resolver.errors import InputError
    from resolver.run.run_folder import write_new_folder
    for name in ("../escape.json", "/abs.json", "a/../../b.json", "x\n.json", "a\\b.json"):
        with pytest.raises(InputError, match="would not be a file inside"):
            write_new_folder(tmp_path / "new", {name: "x"}, "test")
        assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ---- C54: a relative data path, from where the run was made ------------------------------------
def test_c54_a_relative_data_path_is_read_from_where_the_run_started(tmp_path, monkeypatch):
    from resolver.haystack import bundled_path
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    made = tmp_path / "made"
    (made / "data").mkdir(parents=True)
    shutil.copy(bundled_path(), made / "data" / "fc6k.json")
    monkeypatch.chdir(made)
    results = tmp_path / "deep" / "res"
    run = execute(RunConfig(data=("data/fc6k.json",)), results=results, run_id="rel").path
    assert orjson.loads((run / "meta.json").read_bytes())["cwd"] == str(made)
    # another working folder, with another file of that relative name
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "data").mkdir(parents=True)
    (elsewhere / "data" / "fc6k.json").write_text('{"data": []}')
    monkeypatch.chdir(elsewhere)
    result = invoke("explain", run, NO82)
    assert result.exit_code == 0, result.output
    # the original gone: the bundled file with the recorded sha256, whatever its name
    shutil.rmtree(made)
    result = invoke("explain", run, NO82, "--json")
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)[0]["qid"] == NO82


# ---- C55: values in messages as JSON writes them ------------------------------------------------
@pytest.mark.parametrize("prediction, shown", [
    (True, "a boolean true"), ({"a": "Belgium"}, 'an object {"a": "Belgium"}'),
    (1945, "a number 1945"), (["Belgium", "France"], 'a list ["Belgium", "France"]')])
def test_c55_a_prediction_of_another_type_is_shown_as_json(tmp_path, prediction, shown):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"qid": f"{SH}_no0", "prediction": prediction}) + "\n")
    clean_error(invoke("score", path, "--results-dir", tmp_path / "r"),
                f"{path}: line 1: 'prediction' is {shown} (expected a string (or null for no "
                "answer))")


# ---- C58: a line break in a name quoted by an error ---------------------------------------------
def test_c58_an_error_quoting_a_name_with_a_line_break_stays_one_line(runs, tmp_path):
    run = _run_of(tmp_path, hostile_rows(tmp_path, "evil|x\n<!-- "))
    result = invoke("compare", runs["base"], run)
    assert result.exit_code == 1
    assert result.output.startswith("Error: the runs cover different questions: ")
    assert result.output.count("\n") == 1 and "evil|x\\n<!-- _mh_6k: 5" in result.output


# ---- C59: a 2 MB prediction is cut in explain ---------------------------------------------------
def test_c59_explain_cuts_a_long_value_and_says_how_much(tmp_path):
    path = tmp_path / "huge.jsonl"
    path.write_text(json.dumps({"qid": f"{SH}_no1", "prediction": "x" * 2_000_000}) + "\n")
    results = tmp_path / "r"
    assert invoke("score", path, "--run-id", "huge", "--results-dir", results).exit_code == 0
    result = invoke("explain", "huge", f"{SH}_no1", "--results-dir", results)
    assert result.exit_code == 0, result.output
    assert len(result.output) < 5_000
    assert "answer: " + "x" * 90 in result.output          # wrapped at the terminal's width
    assert "... (1999800 more characters)" in " ".join(result.output.split())
    full = invoke("explain", "huge", f"{SH}_no1", "--results-dir", results, "--json")
    assert orjson.loads(full.stdout)[0]["prediction"] == "x" * 2_000_000


def test_the_reader_knows_an_abstention_by_the_reason_the_run_writes():
    from resolver.results import derived
    from resolver.search import confidence
    assert derived.ABSTAINED == confidence.ABSTAINED
    assert derived.abstained({"reason": confidence.abstention(
        confidence.Confidence("low", ("a reason",)), "high")})
