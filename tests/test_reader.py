"""The one reader of run and oracle folders (`resolver.results.reader`), the schema it validates
against (`resolver.results.result_schema`), strict JSON (`resolver.strict_json`) and the escapes per
output format (`resolver.escape`)."""
from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from run_folders import rewrite_lines, write_run_folder
from test_oracle_paths import write_tiny

from resolver import escape
from resolver.errors import ForeignFolderError, InputError
from resolver.results.reader import read_oracle, read_run
from resolver.results.result_schema import dumps
from resolver.strict_json import loads

RESULTS = Path(__file__).resolve().parent.parent / "results"
SH = "factconsolidation_sh_6k"


def _committed() -> list[str]:
    return sorted(p.name for p in RESULTS.iterdir() if (p / "meta.json").is_file())


@pytest.mark.parametrize("name", _committed())
def test_every_committed_run_reads_whole_with_its_data(name):
    run = read_run(RESULTS / name, traces=True)
    assert len(run.predictions) == run.meta["counts"]["questions"]
    assert (run.traces == {}) == (run.kind == "imported")
    dataset, _ = run.load_data()
    assert {r["qid"] for r in run.predictions} <= {q.qid for q in dataset.questions}


@pytest.mark.parametrize("name, file", [
    (p.name, f) for p in sorted(RESULTS.iterdir()) for f in ("nbest.json", "ceiling.json")
    if (p / f).is_file()])
def test_every_committed_oracle_folder_the_tables_read_validates(name, file):
    assert read_oracle(RESULTS / name, file)["command"] == file.removesuffix(".json")


@pytest.fixture
def run(tmp_path):
    data = write_tiny(tmp_path)
    return write_run_folder(tmp_path / "results" / "r", [str(data)],
                            {f"{SH}_no0": ("Newcap", 1, []), f"{SH}_no1": ("Yland", 0, [])})


def test_unknown_keys_and_a_confidence_object_are_read(run):
    # a newer factres adds fields, inside the `confidence` object of every row too
    def newer(rows):
        for row in rows:
            row["confidence"] = {"label": "high", "reasons": [], "score": 0.5}
            row["added_later"] = [1, 2]
    rewrite_lines(run / "predictions.jsonl", newer)
    rewrite_lines(run / "traces.jsonl", newer)
    meta = orjson.loads((run / "meta.json").read_bytes())
    meta["new_section"] = {"x": 1}
    (run / "meta.json").write_bytes(dumps(meta))
    folder = read_run(run, traces=True)
    assert folder.predictions[0]["confidence"]["score"] == 0.5
    assert folder.traces[f"{SH}_no0"]["added_later"] == [1, 2]


@pytest.mark.parametrize("field, value, expected", [
    ("em", True, "field 'em' is a boolean (true) (expected an integer)"),
    ("em", 1.0, "field 'em' is a number (1.0) (expected an integer)"),
    ("prediction", None, "field 'prediction' is null (expected a string)"),
    ("gold", "Newcap", 'field \'gold\' is a string ("Newcap") (expected a list)'),
    ("confidence", [0.5], "field 'confidence' is a list (expected an object)"),
])
def test_field_types_are_strict(run, field, value, expected):
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[1].update({field: value}))
    with pytest.raises(InputError) as info:
        read_run(run)
    assert str(info.value) == f"{run / 'predictions.jsonl'}:2: {expected}"


def test_a_missing_field_is_named(run):
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[0].pop("qid"))
    with pytest.raises(InputError, match=r"predictions.jsonl:1: no field 'qid'$"):
        read_run(run)


def test_traces_in_another_order_or_with_another_answer_are_refused(run):
    rewrite_lines(run / "traces.jsonl", lambda rows: rows.reverse())
    with pytest.raises(InputError, match=r"the run's files disagree: row 1 is the trace of "
                                         rf"'{SH}_no1', predictions.jsonl row 1 is '{SH}_no0'"):
        read_run(run, traces=True)
    rewrite_lines(run / "traces.jsonl", lambda rows: rows.reverse())
    rewrite_lines(run / "traces.jsonl", lambda rows: rows[0].update(answer="Oldcap"))
    with pytest.raises(InputError, match=rf"the trace of '{SH}_no0' has answer 'Oldcap', "
                                         "predictions.jsonl 'Newcap'"):
        read_run(run, traces=True)


def test_a_short_traces_file_names_the_questions_without_one(run):
    rewrite_lines(run / "traces.jsonl", lambda rows: rows[:1])
    for traces in (True, False):
        # traces are read whenever the run has them, for the score table too (verification
        # V03: a prediction edited with its trace left as it was passed where they were not)
        with pytest.raises(InputError) as info:
            read_run(run, traces=traces)
        assert str(info.value) == (f"{run / 'traces.jsonl'}: traces.jsonl has 1 rows for the "
                                   f"run's 2 questions (no trace for {SH}_no1) (expected one "
                                   "trace row per question (cut short?))")
    # a resolver run always writes traces.jsonl: one without it is refused, by every command
    # (verification W12), test_verify_c covers the commands
    (run / "traces.jsonl").unlink()
    with pytest.raises(InputError) as info:
        read_run(run)
    assert str(info.value) == (f"{run}: the run has no traces.jsonl (deleted?): a resolver run "
                               "(search mode) writes one row per question, and its predictions "
                               "are not read without it (expected the traces.jsonl the run "
                               "wrote)")


def test_a_question_twice_and_a_prediction_against_the_resolver_answer_are_refused(run):
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[1].update(qid=f"{SH}_no0"))
    with pytest.raises(InputError, match=rf"question '{SH}_no0' twice \(also row 1\)"):
        read_run(run)
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[1].update(qid=f"{SH}_no1",
                                                                         prediction="Xland"))
    with pytest.raises(InputError, match="field 'prediction' is \"Xland\", but resolver_answer is "
                                         "\"Yland\" in a run without a reader"):
        read_run(run)


def test_a_foreign_meta_json_is_its_own_error(run):
    (run / "meta.json").write_text('{"schema": "othertool/3", "run_id": "r"}')
    with pytest.raises(ForeignFolderError, match="meta.json's schema is 'othertool/3'"):
        read_run(run)


def test_an_unknown_run_names_the_first_few_and_the_count(tmp_path, run):
    for i in range(7):
        shutil.copytree(run, run.parent / f"r{i}")
    with pytest.raises(InputError) as info:
        read_run("nope", run.parent)
    assert str(info.value).startswith(f"no run 'nope' in {run.parent}/ (8 runs there: r, r0, r1, "
                                      "r2, r3 and 3 more) or in ")
    assert str(info.value).endswith("(expected a run id under the results folder "
                                    "(--results-dir, $FACTRES_RESULTS or ./factres-results) or "
                                    "the repository's committed results/, or a run folder path)")


def test_an_oracle_folder_of_the_wrong_shape_is_refused(tmp_path):
    folder = tmp_path / "oracle-nbest-x"
    folder.mkdir()
    (folder / "nbest.json").write_text('{"command": "nbest", "run": "x", "plan_sets": [], '
                                       '"sources": {"s": {"questions": "3", "rerun_agrees": 0, '
                                       '"by_n": []}}}')
    with pytest.raises(InputError) as info:
        read_oracle(folder, "nbest.json")
    assert str(info.value) == (f"{folder / 'nbest.json'}: field 'sources.s.questions' is a "
                               'string ("3") (expected an integer)')


# ---- strict JSON ----------------------------------------------------------------------------
def test_a_key_twice_is_found_wherever_it_is():
    with pytest.raises(InputError, match=r"key 'b' given twice in data\[1\]\.x "):
        loads(b'{"data": [{}, {"x": {"a": 1, "b": 2, "b": 3}}]}', path="f.json")
    assert loads(b'{"a": {"b": 1}, "c": [{"b": 2}]}', path="f.json") == \
        {"a": {"b": 1}, "c": [{"b": 2}]}


@pytest.mark.parametrize("doc, where", [
    (b'{"a": 1, "a" : 2}', "the top-level object"),                  # blanks before a colon
    (b'{"a": "\\u0022:", "a": 1}', "the top-level object"),          # a quote spelled \u0022
    (b'{"s": "x\\" :", "s": "\\" :"}', "the top-level object"),     # key ends inside strings
    (b'[{"k": "\\":"}, {"y": 1, "y": 1}]', r"\[1\]"),
    (b"[" * 300 + b'{"a": 1, "a": 2}' + b"]" * 300, r"\[0\]" * 3),     # deeper than orjson writes
])
def test_a_key_twice_is_found_past_the_fast_count(doc, where):
    # The reader counts key ends in the file and in orjson's writing of the value; these are
    # the documents where the two could be fooled, each still refused.
    with pytest.raises(InputError, match=f"given twice in {where}"):
        loads(doc, path="f.json")


def test_strings_that_look_like_keys_are_no_repeat():
    assert loads(b'{"s": "a\\":b", "t": "\\u0022 :"}') == {"s": 'a":b', "t": '" :'}
    deep = b"[" * 300 + b'{"a": 1}' + b"]" * 300
    assert loads(deep, path="f.json") is not None


def test_nan_only_where_allowed_and_no_lone_surrogates():
    assert loads('{"x": NaN}', path="h.json", allow_nan=True)["x"] != 0
    with pytest.raises(InputError, match="not valid JSON"):
        loads(b'{"x": NaN}', path="r.json")
    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        loads('{"x": "\\ud800"}', path="h.json", allow_nan=True)


# ---- escapes --------------------------------------------------------------------------------
def test_the_terminal_sees_control_characters_as_escapes():
    assert escape.terminal("Germany\x07 \x1b[31mred\x00 a\u2028b\tc\nd\u202e") == \
        "Germany\\x07 \\x1b[31mred\\x00 a\\u2028b\\tc\\nd\\u202e"
    assert escape.terminal("two\nlines\x07", lines=True) == "two\nlines\\x07"
    assert escape.terminal("Zürich 漢字 😀") == "Zürich 漢字 😀"


def test_markdown_cells_and_comments_cannot_be_broken():
    assert escape.markdown("a|b --> <x> *y* `z` ~w~ § † ‡ c\\d\ne") == \
        "a\\|b --&gt; &lt;x&gt; \\*y\\* \\`z\\` \\~w\\~ \\§ \\† \\‡ c\\\\d\\\\ne"


def test_latex_escapes_every_special_character_and_keeps_unicode():
    assert escape.latex("\\ & % $ # _ { } ~ ^") == (
        "\\textbackslash{} \\& \\% \\$ \\# \\_ \\{ \\} \\textasciitilde{} "
        "\\textasciicircum{}")
    assert escape.latex("x\n\\input{y}\x07") == \
        "x\\textbackslash{}n\\textbackslash{}input\\{y\\}\\textbackslash{}x07"
    assert escape.latex("§†‡ — – Zürich 漢字") == (
        "\\textbackslash{}\\S{}\\textbackslash{}\\dag{}\\textbackslash{}\\ddag{} --- -- "
        "Zürich 漢字")
    assert escape.latex_comment("a\nb\u2028c") == "a\\nb\\u2028c"


def test_an_em_is_0_or_1(run):
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[0].update(em=2))
    with pytest.raises(InputError) as info:
        read_run(run)
    assert str(info.value) == (f"{run / 'predictions.jsonl'}:1: field 'em' is a number (2) "
                               "(expected at most 1)")
