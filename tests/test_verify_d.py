"""The verification of the audit fixes on a snapshot of main (verify-d, docs/audits/verify-d.md):
one test per weak case the project fixes (D01, D02, D03, D05, D06, D07, D09, D10), each failing
on the code before the fix. M13 stays a documented limit (docs/memory.md, docs/server.md).

As in test_verify_c, most cases edit a copy of a real run over the bundled 6K rows, or of an
oracle folder, the way the verification did, then ask the commands it asked."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from run_folders import rewrite_lines
from test_audit3 import (
    MH,
    SH,
    _run_of,
    edit_json,
    hostile_rows,
    invoke,
    runs,  # noqa: F401  (fixtures)
)
from test_verify_a import refused
from test_verify_c import assert_not_pooled

from resolver.errors import InputError
from resolver.memory.memory import Memory
from resolver.serve.conversation import remember, split
from resolver.serve.request import Message

COMMITTED = Path(__file__).resolve().parent.parent / "results"
SETS = ("rules", "lexicon")
from resolver.results.reader import read_oracle
from resolver.results.result_schema import NBEST_FILE


@pytest.fixture(scope="module")
def nbest_abst(runs, tmp_path_factory):
    """oracle nbest of the run made with --abstain-below high (73 of 200 abstained)."""
    out = tmp_path_factory.mktemp("verify-d") / "oracle-nbest-abst"
    result = invoke("oracle", "nbest", runs["abst"], "--out", out)
    assert result.exit_code == 0, result.output
    return out


def _nbest_edited(src, dst, change):
    shutil.copytree(src, dst)
    edit_json(dst / NBEST_FILE, change)
    return dst


# ---- D06: the same question lower-cased or without its "?" is not pooled ---------------------------
def test_d06_calibration_does_not_pool_the_same_questions_cased_or_without_their_mark(tmp_path):
    first = _run_of(tmp_path, hostile_rows(tmp_path), "first")
    for name, change in (("lower", str.lower), ("nomark", lambda q: q.rstrip("?")),
                         ("upper", lambda q: q.upper().rstrip("?") + " ?")):
        assert_not_pooled(tmp_path, first, name, lambda row, change=change: row.update(
            questions=[change(q) for q in row["questions"]]))


# ---- D10: an abstaining run's nbest.json without its top-level mark ---------------------------------
def test_d10_an_nbest_json_whose_top_level_and_sources_disagree_on_abstention_is_refused(
        nbest_abst, tmp_path):
    payload = read_oracle(nbest_abst, NBEST_FILE)
    assert payload["abstained"] == 73 and payload["abstain_below"] == "high"
    edits = {
        "notop": (lambda d: [d.pop("abstain_below"), d.pop("abstained")],
                  "but the top level has no abstain_below"),
        "nolevel": (lambda d: d.pop("abstain_below"), "the top level has abstained without"),
        "zero": (lambda d: d.update(abstained=0), "its sources count 73"),
        "nosource": (lambda d: d["sources"][SH].pop("abstained"),
                     f"sources.{SH} has no abstained count"),
        "lowered": (lambda d: [d.update(abstained=72), d["sources"][SH].update(abstained=0)],
                    f"sources.{SH}.abstained is 0, but 1 of its question rows"),
    }
    for name, (change, words) in edits.items():
        folder = _nbest_edited(nbest_abst, tmp_path / name, change)
        with pytest.raises(InputError) as err:
            read_oracle(folder, NBEST_FILE)
        assert words in str(err.value), (name, str(err.value))
        result = invoke("tables", folder, "--table", "mab-nbest", "--out", tmp_path / f"t-{name}")
        assert result.exit_code != 0 and words in result.output, name
    # the file as written reads, marked
    result = invoke("tables", nbest_abst, "--table", "mab-nbest", "--out", tmp_path / "t")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-nbest.md").read_text()
    assert "abst¶" in text and "below high, 73 questions abstained from" in text


# ---- D09: a ceiling lowered the same way everywhere -------------------------------------------------
def _lower_cricket(d):
    """The verification's edit (e): the one-key component (cricket, country_of_origin) kept in
    version 1 (needed by no44) rather than 0 (no33, no57, no89), the rows' flags and every
    count made to agree, and no33's latest_wins turned off with every latest-wins count."""
    key = next(k for k in d["contested_keys"]
               if (k["subject"], k["relation"]) == ("cricket", "country_of_origin"))
    assert {n["version"]: len(n["questions"]) for n in key["needed"]} == {0: 3, 1: 1}
    key["optimal_version"] = 1
    rows = {r["qid"]: r for r in d["rows"]}
    for n in key["needed"]:
        for qid in n["questions"]:
            assert rows[qid]["alternatives"] == 1
            rows[qid]["optimal"] = n["version"] == 1
    component = next(c for c in d["components"]
                     if c["members"] == [["cricket", "country_of_origin"]])
    component["best"] -= 2
    component["bound"] -= 2
    d["per_source"][f"{MH}"]["optimal"] -= 2
    for level in [d, *d["per_haystack"].values()]:
        level["optimal"] -= 2
        level["bound"] -= 2
    rows[f"{MH}_no33"]["latest_wins"] = False
    d["per_source"][MH]["latest_wins"] -= 1
    for level in [d, *d["per_haystack"].values()]:
        level["latest_wins"] -= 1


def test_d09_a_one_key_component_keeping_the_version_fewer_questions_need_is_refused(tmp_path):
    edited = tmp_path / "ce"
    shutil.copytree(COMMITTED / "oracle-ceiling-6k-2", edited)
    edit_json(edited / "ceiling.json", _lower_cricket)
    with pytest.raises(InputError) as err:
        read_oracle(edited, "ceiling.json")
    assert ('one key ("cricket", "country_of_origin") (contested_keys[0]), proven optimal, '
            "keeps version 1, which 1 question(s) need, but 3 question(s) of one alternative "
            "need version 0") in str(err.value)
    result = invoke("tables", edited, "--out", tmp_path / "t")
    assert result.exit_code != 0 and "proven optimal, keeps version 1" in result.output
    # every committed ceiling folder still reads
    for name in ("oracle-ceiling-6k", "oracle-ceiling-6k-2"):
        assert read_oracle(COMMITTED / name, "ceiling.json")["rows"]


# ---- D07: copies that differ only in a field that carries no result ---------------------------------
def _reason_blank(rows):
    for r in rows:
        r["reason"] += " "


def _reasons_reversed(rows):
    reordered = 0
    for r in rows:
        reasons = (r.get("confidence") or {}).get("reasons") or []
        reordered += len(reasons) > 1
        reasons.reverse()
    assert reordered


def test_d07_a_run_copy_with_its_free_text_edited_is_a_copy(runs, tmp_path):
    for name, change in (("cpreason", _reason_blank), ("cpconf", _reasons_reversed)):
        copy = tmp_path / "results" / name
        shutil.copytree(runs["base"], copy)
        rewrite_lines(copy / "predictions.jsonl", change)
        assert invoke("table", copy).exit_code == 0          # it reads as a run of its own
        refused(invoke("tables", runs["base"], copy, "--out", tmp_path / "t"),
                f"folders base and {name} hold the same run (run id base, the same prediction "
                "rows)", "a copy (expected each folder once)")
        for result in (invoke("compare", runs["base"], copy),
                       invoke("oracle", "calibration", runs["base"], copy, "--out",
                              tmp_path / "c")):
            refused(result, f"runs base and {name} are one run: the same run id 'base'",
                    "a copy (expected each run once)")
    # a run whose results differ is another run
    assert invoke("compare", runs["base"], runs["abst"]).exit_code == 0


def test_d07_an_nbest_json_with_its_paths_spelled_otherwise_is_a_copy(runs, tmp_path):
    result = invoke("oracle", "nbest", runs["base"], "--out", tmp_path / "nb")
    assert result.exit_code == 0, result.output
    original = tmp_path / "nb"
    for name, change in (
            ("nbrun", lambda d: d.update(run=f"t/../res/{d['run']}")),
            ("nbdata", lambda d: d.update(data=[p.replace("/fc/", "/fc/../fc/")
                                                for p in d["data"]]))):
        copy = _nbest_edited(original, tmp_path / name, change)
        refused(invoke("tables", original, copy, "--out", tmp_path / "t"),
                f"folders nb and {name} hold the same nbest.json content (sha256 ",
                "a copy (expected each folder once)")
    # an older nbest.json without a run id: its run folder's name, however spelled
    old = _nbest_edited(original, tmp_path / "old", lambda d: d.pop("run_id"))
    copy = _nbest_edited(old, tmp_path / "oldrun", lambda d: d.update(run="./x/../" + d["run"]))
    refused(invoke("tables", old, copy, "--out", tmp_path / "t"), "a copy")
    other = _nbest_edited(old, tmp_path / "otherrun", lambda d: d.update(run="another"))
    assert invoke("tables", old, other, "--out", tmp_path / "t2").exit_code == 0


# ---- D01, D02, D03, D05: the question at the end of a plain user message ---------------------------
HEAD = "Here is a list of facts:\n"
FACTS = (HEAD + "0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by IBM.\n"
         "2. The capital of St. Kitts is Basseterre.\n")
NAMES = (HEAD + "0. The author of Part 1. The Beginning is Tom Smith.\n"
         "1. The capital of United States is Washington, D.C..\n"
         "2. The capital of St. Kitts is Basseterre.\n"
         "3. The author of Part 1. What Lies Beneath is Eve Adams.\n"
         "4. The capital of St. Who is Sandy Point.\n")


def asked(text: str) -> tuple[str, str, int, tuple]:
    """(the question found, the memory's answer to it, facts in memory, reports)."""
    conversation = split((Message("user", text),))
    remembered = remember(conversation, SETS, "search")
    answer = remembered.memory.query(conversation.question).text
    return conversation.question, answer, remembered.facts, remembered.reports


@pytest.mark.parametrize("tail, question, answer", [
    # D01: lower case, a "Question:" label, over two lines
    ("what is the capital of St. Kitts?", "what is the capital of St. Kitts?", "Basseterre"),
    ("Question: What is the capital of St. Kitts?", "What is the capital of St. Kitts?",
     "Basseterre"),
    ("Question: what is the capital of St. Kitts?", "what is the capital of St. Kitts?",
     "Basseterre"),
    ("Q: who is tim cook employed by?", "who is tim cook employed by?", "IBM"),
    ("Question: Who is Tim Cook employed by?\nAnswer:", "Who is Tim Cook employed by?", "IBM"),
    ("What is the capital\nof St. Kitts?", "What is the capital of St. Kitts?", "Basseterre"),
    ("What is the capital of St.\nKitts?", "What is the capital of St. Kitts?", "Basseterre"),
    # D05: text after the question
    ("What is the capital of St. Kitts? Answer briefly.", "What is the capital of St. Kitts?",
     "Basseterre"),
    ("What is the capital of St. Kitts?\nAnswer briefly, please.",
     "What is the capital of St. Kitts?", "Basseterre"),
    # what held before (D04) still holds
    ("What a day. Who is Tim Cook employed by?", "Who is Tim Cook employed by?", "IBM"),
    ("Please answer. What is the capital of St. Kitts?", "What is the capital of St. Kitts?",
     "Basseterre"),
    ("Tell me, who is Tim Cook employed by?", "Tell me, who is Tim Cook employed by?", "IBM"),
    ("Is Tim Cook employed by IBM?", "Is Tim Cook employed by IBM?", "IBM"),
])
def test_d01_d05_a_plain_question_is_found_whole_in_any_case_label_or_layout(tail, question,
                                                                             answer):
    assert asked(FACTS + tail) == (question, answer, 3, ())


@pytest.mark.parametrize("question, answer", [
    ("What is the capital of St. Kitts?", "Basseterre"),
    ("what is the capital of St. Kitts?", "Basseterre"),
    ("Who is the author of Part 1. The Beginning?", "Tom Smith"),
    ("who is the author of Part 1. The Beginning?", "Tom Smith"),
    ("What is the capital of United States?", "Washington, D.C."),
    # D02: the part after ". " opens with an interrogative
    ("Who is the author of Part 1. What Lies Beneath?", "Eve Adams"),
    ("What is the capital of St. Who?", "Sandy Point"),
])
def test_d02_names_holding_a_full_stop_stay_in_the_question(question, answer):
    for text in (NAMES + question, NAMES + "Please answer. " + question,
                 NAMES + "Question: " + question, NAMES + question + " Answer briefly."):
        assert asked(text) == (question, answer, 5, ()), text


def test_d03_a_question_glued_to_the_last_facts_full_stop_in_lower_case():
    text = HEAD + "0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by IBM.who is " \
                  "Tim Cook employed by?"
    assert asked(text) == ("who is Tim Cook employed by?", "IBM", 2, ())
    # glued after a fact that does not read as one: the lower-case word is no question start,
    # the whole numbered line is asked (and nothing of it is memory)
    text = HEAD + "0. Tim Cook is employed by Apple.\n1. Tim Cook is what else.who is Tim " \
                  "Cook employed by?"
    question, answer, facts, _ = asked(text)
    assert question == "Tim Cook is what else.who is Tim Cook employed by?" and facts == 1
    # glued, with a name holding ". " in the question
    text = HEAD + "0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by IBM.What is " \
                  "the capital of St. Kitts?"
    assert asked(text)[:3] == ("What is the capital of St. Kitts?", "", 2)


def test_d01_the_same_line_as_the_facts_and_a_fact_opening_with_a_question_word():
    text = HEAD + "0. The capital of St. Kitts is Sandy Point. 1. The capital of St. Kitts is " \
                  "Basseterre. what is the capital of St. Kitts?"
    assert asked(text) == ("what is the capital of St. Kitts?", "Basseterre", 2, ())
    text = HEAD + "0. Who Framed Roger Rabbit is employed by Apple. 1. Who Framed Roger " \
                  "Rabbit is employed by Disney. Who is Who Framed Roger Rabbit employed by?"
    assert asked(text) == ("Who is Who Framed Roger Rabbit employed by?", "Disney", 2, ())


def test_memory_query_reads_a_labelled_question_as_the_server_does():
    memory = Memory(SETS, "search")
    memory.ingest(FACTS)
    memory.flush()
    for question in ("Question: What is the capital of St. Kitts?",
                     "Q: what is the capital of St. Kitts?\nAnswer:"):
        assert memory.query(question).text == "Basseterre"
