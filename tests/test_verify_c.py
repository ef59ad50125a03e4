"""The verification of the audit fixes on a snapshot of main (verify-c): one test per weak case
it found that the project fixes (W01, W02, W03, W06, W07, W10, W11, W12), each failing on the
code before the fix. M13 stays a documented limit (docs/memory.md, docs/server.md).

As in test_verify_a, most cases edit a copy of a real run over the bundled 6K rows (`base`, and
`abst`, made with `--abstain-below high`) or of a committed oracle folder the way the
verification did, then ask the commands it asked."""
from __future__ import annotations

import re
from pathlib import Path

import orjson
from run_folders import rewrite_lines
from test_audit3 import (
    MH,
    SH,
    _copy,
    _run_of,
    abst,  # noqa: F401  (fixtures)
    base,  # noqa: F401
    clean_error,
    edit_json,
    hostile_rows,
    invoke,
    runs,  # noqa: F401
)
from test_verify_a import _forge_no82, refused, rows_of

from resolver.serve.conversation import remember, split
from resolver.serve.request import Message

COMMITTED = Path(__file__).resolve().parent.parent / "results"
SETS = ("rules", "lexicon")


# ---- W12: a resolver run whose traces.jsonl is gone ---------------------------------------------
def test_w12_a_forged_run_without_traces_is_refused_by_table_compare_and_tables(runs, base,
                                                                               tmp_path):
    _forge_no82(base)
    (base / "traces.jsonl").unlink()
    message = (f"{base}: the run has no traces.jsonl (deleted?): a resolver run (search mode) "
               "writes one row per question, and its predictions are not read without it "
               "(expected the traces.jsonl the run wrote)")
    clean_error(invoke("table", base), message)
    clean_error(invoke("compare", runs["base"], base), message)
    clean_error(invoke("tables", base, "--out", tmp_path / "t"), message)
    assert not (tmp_path / "t").exists()


def test_w12_an_imported_run_still_reads():
    # an imported run's traces.jsonl is empty: it has nothing to check against, and reads
    result = invoke("table", COMMITTED / "imported-nous-6k")
    assert result.exit_code == 0, result.output
    assert "no traces.jsonl" not in result.output


# ---- W10: mab-ref marks an abstaining run as mab-fc does ----------------------------------------
def test_w10_mab_ref_marks_a_run_made_with_abstain_below(runs, tmp_path):
    result = invoke("tables", runs["abst"], runs["base"], "--table", "mab-ref", "--out",
                    tmp_path / "t", "--label", f"{runs['abst']}=abst run",
                    "--label", f"{runs['base']}=base run")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-ref.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| abst run", "| base run"))]
    assert [row.split(" | ")[0].endswith("¶") for row in rows] == [True, False], rows
    assert rows[0].rstrip(" |").endswith("abst") and rows[1].rstrip(" |").endswith("base")
    assert ("¶ made with --abstain-below: answers labelled below the level were left unanswered "
            "and count as wrong: abst run below high, 73 of 200 questions.") in text
    assert "\\textsuperscript{\\P}" in (tmp_path / "t" / "mab-ref.tex").read_text()
    # the base run alone: no mark, no footnote
    alone = invoke("tables", runs["base"], "--table", "mab-ref", "--out", tmp_path / "u")
    assert alone.exit_code == 0, alone.output
    assert "¶" not in (tmp_path / "u" / "mab-ref.md").read_text()


# ---- W11: oracle nbest's own output on an abstaining run ------------------------------------------
def test_w11_oracle_nbest_of_an_abstaining_run_marks_success_and_says_what_agrees(runs,
                                                                                 tmp_path):
    result = invoke("oracle", "nbest", runs["abst"], "--out", tmp_path / "nb")
    assert result.exit_code == 0, result.output
    printed = result.stdout
    assert printed == (tmp_path / "nb" / "nbest.md").read_text()
    assert "| success@N¶ |" in printed
    assert ("¶ made with --abstain-below high: 73 of its 200 questions were left unanswered, "
            "and its EM counts them as wrong; success@N judges the answer the resolver "
            "selected, also where the run abstained from it.") in printed
    line = next(x for x in printed.splitlines() if x.startswith("Re-selection"))
    assert line.startswith("Re-selection over all sets agrees with the resolver's own answer "
                           "(before the abstention: the run's prediction is empty on the "
                           f"questions abstained from) on: {MH} 100/100 (")
    per_source = [int(n) for n in re.findall(r"\((\d+) abstained from\)", line)]
    rows = rows_of(runs["abst"] / "predictions.jsonl")
    counted = [sum(1 for r in rows if r["source"] == source
                   and r["reason"].startswith("abstained")) for source in (MH, SH)]
    assert per_source == counted and sum(counted) == 73
    payload = orjson.loads((tmp_path / "nb" / "nbest.json").read_bytes())
    assert [payload["sources"][s]["abstained"] for s in (MH, SH)] == counted
    assert payload["abstained"] == 73
    # a run that abstains from nothing prints as before
    plain = invoke("oracle", "nbest", runs["base"], "--out", tmp_path / "nb2")
    assert plain.exit_code == 0, plain.output
    assert "¶" not in plain.stdout and "abstained" not in plain.stdout
    assert f"agrees with the run's answer on: {MH} 100/100, {SH} 100/100.\n" in plain.stdout


# ---- W01: a ceiling row's flag against its contested keys ------------------------------------------
def _raise_to_199(d):
    """The verification's edit: no48 and no98 (each of one alternative, each needing a
    contested key in the version the policy does not keep) marked optimal, and every count
    raised to agree: the source, the haystack and the totals (optimum and bound) and the
    7-question component (best and bound)."""
    rows = {r["qid"]: r for r in d["rows"]}
    for qid in (f"{MH}_no48", f"{MH}_no98"):
        assert rows[qid]["alternatives"] == 1 and not rows[qid]["optimal"]
        rows[qid]["optimal"] = True
    d["per_source"][MH]["optimal"] += 2
    for level in [d, *d["per_haystack"].values()]:
        level["optimal"] += 2
        level["bound"] += 2
    component = next(c for c in d["components"] if c["questions"] == 7)
    assert component["best"] == component["bound"] == 5
    component["best"] = component["bound"] = 7


def test_w01_a_row_marked_optimal_against_its_contested_key_is_refused(tmp_path):
    edited = _copy(COMMITTED / "oracle-ceiling-6k-2", tmp_path / "ce")
    edit_json(edited / "ceiling.json", _raise_to_199)
    payload = orjson.loads((edited / "ceiling.json").read_bytes())
    row = next(i for i, r in enumerate(payload["rows"]) if r["qid"] == f"{MH}_no48")
    key = next(i for i, c in enumerate(payload["contested_keys"])
               if (c["subject"], c["relation"]) == ("India", "capital"))
    refused(invoke("tables", edited, "--out", tmp_path / "t"),
            f"{edited / 'ceiling.json'}: rows[{row}] ({MH}_no48): optimal is true, but it needs "
            f'("India", "capital") in version 0 (contested_keys[{key}]) and the policy keeps '
            "version 1 (expected optimal true only when the policy keeps every version its one "
            "alternative needs; edited?)")
    assert not (tmp_path / "t").exists()


def test_w01_a_kept_version_no_question_needs_and_a_flag_turned_off_are_refused(tmp_path):
    edited = _copy(COMMITTED / "oracle-ceiling-6k-2", tmp_path / "ce")
    edit_json(edited / "ceiling.json",
              lambda d: d["contested_keys"][0].update(optimal_version=5))
    refused(invoke("tables", edited, "--out", tmp_path / "t"),
            "contested_keys[0] (", "optimal_version 5, but the key is needed in version(s) 0, 1")
    edited = _copy(COMMITTED / "oracle-ceiling-6k-2", tmp_path / "ce2")

    def off(d):
        # a question of one alternative needing no contested key (satisfied for free) marked
        # not optimal, every count lowered to agree: source, haystack and totals (optimum,
        # bound and the questions satisfied for free)
        listed = {q for c in d["contested_keys"] for n in c["needed"] for q in n["questions"]}
        row = next(r for r in d["rows"] if r["alternatives"] == 1 and r["optimal"]
                   and r["qid"] not in listed)
        row["optimal"] = False
        d["per_source"][row["source"]]["optimal"] -= 1
        for level in [d, *d["per_haystack"].values()]:
            for name in ("optimal", "bound", "questions_free"):
                level[name] -= 1
        return row["qid"]
    qid = off(orjson.loads((edited / "ceiling.json").read_bytes()))
    edit_json(edited / "ceiling.json", off)
    refused(invoke("tables", edited, "--out", tmp_path / "t"),
            f"({qid}): optimal is false, but it needs no contested key, and each other key of "
            "its one alternative is needed in one version only (kept in it)")


def test_w01_every_committed_ceiling_folder_agrees_with_its_contested_keys():
    from resolver.results.reader import read_oracle
    for name in ("oracle-ceiling-6k", "oracle-ceiling-6k-2"):
        assert read_oracle(COMMITTED / name, "ceiling.json")["rows"]


# ---- W02: the same questions with a blank more ----------------------------------------------------
def assert_not_pooled(tmp_path, first, name: str, change) -> None:
    """The tiny haystack's rows under new ids, each row changed by `change`, run and
    calibrated with `first`: the same questions, so not pooled."""
    folder = tmp_path / name
    folder.mkdir()
    path = hostile_rows(folder, "renamed", ids=[f"{name}{i}" for i in range(5)])
    data = orjson.loads(path.read_bytes())
    before = orjson.dumps(data)
    for row in data["data"]:
        change(row)
    assert orjson.dumps(data) != before
    path.write_bytes(orjson.dumps(data))
    second = _run_of(tmp_path, path, name)
    result = invoke("oracle", "calibration", first, second, "--out", tmp_path / f"c-{name}")
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / f"c-{name}" / "calibration.json").read_bytes())
    assert report["pooled"] is None, name
    assert report["not_pooled"] == [{"runs": ["first", name], "shared_questions": 5}]


def test_w02_calibration_does_not_pool_the_same_questions_with_blanks_added(tmp_path):
    first = _run_of(tmp_path, hostile_rows(tmp_path), "first")
    for name, change in (("header", lambda row: row.update(
            context=row["context"].replace("\n", " \n", 1))),
                         ("question", lambda row: row.update(
            questions=[q.replace(" ", "  ", 1) for q in row["questions"]]))):
        assert_not_pooled(tmp_path, first, name, change)


def test_w02_other_questions_over_the_same_context_are_still_pooled(tmp_path):
    first = _run_of(tmp_path, hostile_rows(tmp_path), "first")
    folder = tmp_path / "other"
    folder.mkdir()
    path = hostile_rows(folder, "renamed", ids=[f"o{i}" for i in range(5)])
    data = orjson.loads(path.read_bytes())
    data["data"][0]["questions"] = [q.replace("?", " indeed?") for q in
                                    data["data"][0]["questions"]]
    path.write_bytes(orjson.dumps(data))
    second = _run_of(tmp_path, path, "second")
    result = invoke("oracle", "calibration", first, second, "--out", tmp_path / "c")
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / "c" / "calibration.json").read_bytes())
    assert report["not_pooled"] == [] and report["pooled"]["questions"] == 10


# ---- W03: copies recognised by content ------------------------------------------------------------
def test_w03_a_re_serialised_nbest_json_is_a_copy(tmp_path):
    copy = _copy(COMMITTED / "oracle-nbest-dev-6k-search-reading", tmp_path / "nbre")
    value = orjson.loads((copy / "nbest.json").read_bytes())
    (copy / "nbest.json").write_bytes(orjson.dumps(value))          # one line, another order
    result = invoke("tables", "oracle-nbest-dev-6k-search-reading", copy, "--out", tmp_path / "t")
    refused(result, "folders oracle-nbest-dev-6k-search-reading and nbre hold the same "
                    "nbest.json content (sha256 ", "a copy (expected each folder once)")


def test_w03_a_run_copy_with_its_rows_reordered_is_a_copy_everywhere(runs, tmp_path):
    copy = _copy(runs["base"], tmp_path / "results" / "basere2")
    for name in ("predictions.jsonl", "traces.jsonl"):
        rewrite_lines(copy / name, lambda rows: rows.reverse())
    assert (copy / "predictions.jsonl").read_bytes() != \
        (runs["base"] / "predictions.jsonl").read_bytes()
    assert invoke("table", copy).exit_code == 0          # it reads as a run of its own
    refused(invoke("tables", runs["base"], copy, "--out", tmp_path / "t"),
            "folders base and basere2 hold the same run (run id base, the same prediction "
            "rows)", "a copy (expected each folder once)")
    for result in (invoke("compare", runs["base"], copy),
                   invoke("oracle", "calibration", runs["base"], copy, "--out", tmp_path / "c")):
        refused(result, "runs base and basere2 are one run: the same run id 'base' and the "
                        "same prediction rows", "a copy (expected each run once)")
    # the results folder read whole: the copy is read once, with a warning
    results = tmp_path / "res"
    _copy(runs["base"], results / "base")
    _copy(copy, results / "basere2")
    result = invoke("tables", "--results-dir", results, "--table", "mab-fc")
    assert result.exit_code == 0, result.output
    assert "warning: skipped basere2: the same run (run id base, the same prediction rows) " \
           "as base: a copy, read once" in result.output


# ---- W06, W07: where a plain question starts ------------------------------------------------------
CONTEXT = ("Here is a list of facts:\n0. The author of Part 1. The Beginning is Tom Smith.\n"
           "1. Wayne Rooney is a member of D.C. United.\n"
           "2. The capital of St. Kitts is Basseterre.\n")


def test_w06_a_plain_question_naming_st_kitts_is_asked_whole():
    for question, answer in (("What is the capital of St. Kitts?", "Basseterre"),
                             ("Who is the author of Part 1. The Beginning?", "Tom Smith"),
                             ("Which team is Wayne Rooney a member of?", "D.C. United")):
        for text in (CONTEXT + question, CONTEXT + "Please answer. " + question):
            conversation = split((Message("user", text),))
            assert conversation.question == question, text
            remembered = remember(conversation, SETS, "search")
            assert remembered.facts == 3 and remembered.reports == ()
            assert remembered.memory.query(conversation.question).text == answer


def test_w06_a_fact_opening_with_a_question_word_is_no_question():
    text = ("Here is a list of facts:\n0. What Women Want is located in the country of "
            "France. 1. Tim Cook is employed by Apple. Who is Tim Cook employed by?")
    conversation = split((Message("user", text),))
    assert conversation.question == "Who is Tim Cook employed by?"
    assert remember(conversation, SETS, "search").facts == 2


def test_w07_a_question_glued_to_the_last_facts_full_stop():
    text = ("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
            "1. Tim Cook is employed by IBM.Who is Tim Cook employed by?")
    conversation = split((Message("user", text),))
    assert conversation.question == "Who is Tim Cook employed by?"
    remembered = remember(conversation, SETS, "search")
    assert remembered.facts == 2 and remembered.reports == ()
    assert remembered.memory.query(conversation.question).text == "IBM"
    # glued to a fact that does not parse: the fact is reported, as N3's case is
    text = ("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
            "1. Tim Cook is beyond every template.Who is Tim Cook employed by?")
    conversation = split((Message("user", text),))
    assert conversation.question == "Who is Tim Cook employed by?"
    remembered = remember(conversation, SETS, "search")
    assert [(r.kind, r.serial) for r in remembered.reports] == [("unparsed", 1)]
    assert remembered.memory.query(conversation.question).text == "Apple"
