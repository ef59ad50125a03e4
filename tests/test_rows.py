"""Rows of every shape: `haystack.read_row` reads the good ones, never splits a gold string into
letters, and names the file, row and what was expected for the bad ones. A fuzz test drives
`factres parse` and `factres run` over row shapes: each ends with a result or a clean error,
never a traceback."""
from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolver.cli import main
from resolver.errors import InputError
from resolver.haystack import load, read_row
from resolver.run.config import RunConfig
from resolver.run.runs import execute

SMALL = Path(__file__).parent / "data" / "runs_small.json"
CONTEXT = ("Here is a list of facts:\n0. Paris is located in the country of France.\n"
           "1. The capital of France is Paris.\n")


def row(**kw) -> dict:
    base = {"context": CONTEXT, "questions": ["What is the capital of France?"],
            "answers": [["Paris"]], "metadata": {"source": "factconsolidation_sh_6k",
                                                 "qa_pair_ids": ["q0"]}}
    base.update(kw)
    return base


def write(tmp_path, obj, name="rows.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(obj))
    return path


def invoke(*args):
    return CliRunner().invoke(main, list(args))


# ---- gold ------------------------------------------------------------------------------------
def test_gold_given_as_a_plain_string_is_one_answer_and_noted(tmp_path):
    path = write(tmp_path, [row(answers=["Paris"])])
    dataset, gold = load([path])
    assert gold["q0"] == ("Paris",)
    assert dataset.notes == (f"{path}: row 0: 1 answer list(s) given as a plain string, each "
                             "read as one answer, never as letters (first: question 0)",)


def test_nonsense_gold_as_plain_strings_scores_nothing(tmp_path):
    # the audit's case: every gold replaced by a nonsense string scored 100 EM, because each
    # string was split into letters and any prediction holding an "a" matched
    rows = orjson.loads(SMALL.read_bytes())
    for r in rows:
        r["answers"] = ["aeiou xq"] * len(r["questions"])
    run = execute(RunConfig(data=(str(write(tmp_path, rows)),)), results=tmp_path / "r",
                  run_id="nonsense")
    assert all(r["em"] == 0 for r in run.predictions)
    assert run.meta["notes"][0].endswith("read as one answer, never as letters (first: "
                                         "question 0)")


@pytest.mark.parametrize("changes, message", [
    ({"questions": ["What is the capital of France?", None],
      "answers": [["Paris"], ["x"]]}, "row 0: question 1 is null (expected each question a "
                                      "string)"),
    ({"questions": "What is the capital of France?"},
     "row 0: 'questions' is a string (expected a list in the Hugging Face row layout"),
    ({"answers": [None]}, "row 0: the answers of question 0 are null (expected a list of "
                          "answer strings)"),
    ({"answers": [["Paris", None]]}, "row 0: an answer of question 0 is null (expected answers "
                                     "as strings)"),
    ({"answers": "Paris"}, "row 0: 'answers' is a string"),
    ({"metadata": ["x"]}, "row 0: 'metadata' is a list (expected an object"),
    ({"metadata": {"source": 3}}, "row 0: metadata.source is a number"),
    ({"questions": ["a?", "b?"], "answers": [["x"], ["y"]],
      "metadata": {"qa_pair_ids": ["only-one"]}},
     "row 0: metadata.qa_pair_ids is 1 ids for 2 questions (expected one id per question)"),
    ({"metadata": {"qa_pair_ids": "q0"}}, "row 0: metadata.qa_pair_ids is a string for 1 "
                                          "questions"),
    ({"metadata": {"qa_pair_ids": [None]}}, "row 0: metadata.qa_pair_ids[0] is null"),
    ({"context": None}, "row 0: no string 'context' ('context' is null)"),
])
def test_bad_rows_are_named(tmp_path, changes, message):
    path = write(tmp_path, [row(**changes)])
    with pytest.raises(InputError) as err:
        load([path])
    assert str(err.value).startswith(f"{path}: {message}")


def test_read_row_is_the_one_check_of_a_row():
    read = read_row(row(answers=[["Paris", 1889]]), "x.json", 4)
    assert (read.number, read.source, read.qids, read.answers) == (
        4, "factconsolidation_sh_6k", ("q0",), (("Paris", "1889"),))
    bare = read_row({"context": CONTEXT}, "data/x.json", 2)
    assert (bare.source, bare.qids, bare.questions, bare.answers) == ("x_row2", (), (), None)


# ---- files -----------------------------------------------------------------------------------
def test_a_file_with_no_rows_is_an_error(tmp_path):
    path = write(tmp_path, {"data": []})
    for args in (("parse", "--json", str(path)), ("parse", str(path))):
        result = invoke(*args)
        assert result.exit_code == 1
        assert result.output == (f"Error: {path}: no rows (expected a row, a list of rows or "
                                 "{\"data\": [rows]})\n")


def test_a_corrupt_parquet_file_is_an_error(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "rows.parquet"
    path.write_bytes(b"PAR1 this is not parquet PAR1")
    result = invoke("parse", str(path))
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: not a readable Parquet file: ")
    assert result.output.endswith("(expected a Parquet table of rows (context, questions, "
                                  "answers, metadata))\n")


def test_a_context_error_names_the_row_and_the_context_line(tmp_path):
    bad = "Here is a list of facts:\n0. A is owned by B.\n0. C is owned by D.\n"
    path = write(tmp_path, [row(), row(context=bad, metadata={"qa_pair_ids": ["q1"]})])
    with pytest.raises(InputError) as err:
        load([path])
    assert str(err.value) == (f"{path}: row 1, context line 3: duplicate serial 0: also on "
                              "line 2 (expected each serial once)\n    0. C is owned by D.")


def test_strict_names_row_and_context_line_and_cuts_a_long_line(tmp_path):
    long_line = "7. " + "x" * 1_000_000
    context = CONTEXT + long_line + "\n"
    path = write(tmp_path, [row(context=context)])
    result = invoke("parse", "--strict", str(path))
    assert result.exit_code == 1
    assert result.output.splitlines()[-2:] == [
        f"Error: {path}: row 0, context line 4: 1 line fits no fact template (expected "
        "\"<serial>. <fact sentence>.\" in one of the MQuAKE templates)",
        f"    {long_line[:200]}... (999803 more characters)"]


# ---- fuzz ------------------------------------------------------------------------------------
TEXT = st.one_of(st.text(max_size=12), st.sampled_from(
    ["What is the capital of France?", "Which country is Paris located in?", ""]))
JSONISH = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), TEXT,
                    st.lists(TEXT, max_size=2), st.dictionaries(TEXT, TEXT, max_size=2))
CONTEXTS = st.one_of(st.just(CONTEXT), st.just(CONTEXT), st.just(CONTEXT + "2. fits nothing\n"),
                     st.just("1. A is owned by B.\n0. C is owned by D.\n"), TEXT)
# Where a row can break: a field replaced by any JSON value, or deleted.
BREAKS = ("context", "questions", "answers", "metadata", "source", "qa_pair_ids", "answer",
          "question", "id")


@st.composite
def rows(draw) -> dict:
    """A well-formed row, then zero to two of its fields broken."""
    n = draw(st.integers(0, 3))
    questions = draw(st.lists(TEXT, min_size=n, max_size=n))
    row = {"context": draw(CONTEXTS), "questions": questions,
           "answers": [draw(st.one_of(st.lists(TEXT, min_size=1, max_size=2), TEXT))
                       for _ in questions],
           "metadata": {"source": draw(st.sampled_from(["factconsolidation_sh_6k",
                                                        "factconsolidation_mh_32k", "x"])),
                        "qa_pair_ids": [f"q{draw(st.integers(0, 10**6))}" for _ in questions]}}
    for where in draw(st.lists(st.sampled_from(BREAKS), max_size=2)):
        value = draw(JSONISH)
        delete = draw(st.booleans())
        meta = row["metadata"] if isinstance(row.get("metadata"), dict) else None
        lists = {"answer": row.get("answers"), "question": row.get("questions"),
                 "id": meta.get("qa_pair_ids") if meta else None}
        if where in lists:
            target = lists[where]
            if isinstance(target, list) and target:
                if delete:
                    target.pop()
                else:
                    target[0] = value
            continue
        holder = meta if where in ("source", "qa_pair_ids") else row
        if holder is None:
            continue
        if delete:
            holder.pop(where, None)
        else:
            holder[where] = value
    return row


FILES = st.one_of(st.lists(rows(), max_size=3), rows(), st.fixed_dictionaries(
    {"data": st.lists(rows(), max_size=2)}), JSONISH)


def clean_end(result) -> bool:
    """Exit 0, or exit 1 with a one-message error; never an uncaught exception."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return False
    if result.exit_code == 0:
        return True
    return result.exit_code == 1 and result.output.startswith("Error: ") \
        and "Traceback" not in result.output


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(FILES, st.sampled_from([".json", ".jsonl"]))
def test_any_row_shape_gives_a_result_or_a_clean_error(obj, suffix):
    folder = Path(tempfile.mkdtemp(prefix="factres-fuzz-"))
    path = folder / f"rows{suffix}"
    if suffix == ".jsonl" and isinstance(obj, list):
        path.write_bytes(b"\n".join(orjson.dumps(r) for r in obj))
    else:
        path.write_bytes(orjson.dumps(obj))
    parsed = invoke("parse", "--json", str(path))
    assert clean_end(parsed), (parsed.output, parsed.exception)
    ran = invoke("run", "--data", str(path), "--results-dir", str(folder / "results"),
                 "--no-progress")
    assert clean_end(ran), (ran.output, ran.exception)
    if ran.exit_code == 0:
        assert "written to" in ran.output
