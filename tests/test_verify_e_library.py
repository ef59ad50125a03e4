"""verify-e's cases of the memory, the files and the Python API that did not hold: one test (or
a few) per case, each failing on the code before its fix. The server's are in
test_serve_verify_e.py.

- F02: lines ending "\\r\\r\\n" (a CRLF file converted a second time) end there for `factres
  parse`, the memory and the server alike, and the CRLF note is printed once.
- F05: a quote opened on one line and closed by a stray quote lines later, swallowing records of
  the file into one cell, is refused naming the line; Excel's "sep=," first line is read.
- F19: an int or bytes where the public API takes several names or plan sets is refused with
  the library's error naming the argument (one shared check, `errors.several`).
- E22 (verify-e): the process-wide name memo keeps no question-length name, so distinct long
  questions leave nothing behind in it (benchmarks/serve.py measures the server's memory).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from click.testing import CliRunner
from test_audit2 import clean_error
from test_audit_e_library import FACTS, HEADER, _csv, _gold_records, _parsed, _remembered, _scored

import resolver.api as api
from oracle.cli import main
from resolver.haystack import bundled_path
from resolver.memory.memory import Memory


def invoke(*args):
    """The command as a user runs it: exit code and everything printed (stderr too)."""
    return CliRunner().invoke(main, [str(a) for a in args])


# ---- F02: "\r\r\n" line ends -------------------------------------------------------------------
TWICE = HEADER.replace("\n", "\r\r\n") + "\r\r\n".join(FACTS) + "\r\r\n"


def test_f02_cr_cr_lf_ends_a_line_in_parse_and_in_the_memory_alike():
    want = _parsed(TWICE, True)
    assert len(want[0]) == 4 and want[1] == []
    assert _remembered([TWICE], True) == want
    for cut in range(1, len(TWICE)):
        assert _remembered([TWICE[:cut], TWICE[cut:]], True, peek=True) == want, cut
    memory = Memory()
    memory.ingest(TWICE)
    assert memory.query("Who is Tim Cook employed by?").text == "Google"


def test_f02_a_carriage_return_before_other_text_is_still_reported():
    text = HEADER + FACTS[0] + "\r\r" + FACTS[1] + "\r\r\n"
    facts, reports = _parsed(text, True)
    assert facts == [] and len(reports) == 1
    assert _remembered([text], True) == (facts, reports)


def test_f02_parse_notes_crlf_once(tmp_path: Path):
    path = tmp_path / "twice.txt"
    path.write_bytes(TWICE.encode())
    result = invoke("parse", "--no-cache", path)
    assert result.exit_code == 0, result.output
    assert "facts: 4\n" in result.output and "unparsed lines: 0\n" in result.output
    assert result.output.count("note: CRLF line endings read as LF") == 1


# ---- F05: a stray quote closing a quote opened lines before; Excel's sep= line ----------------
def test_f05_records_swallowed_into_a_quoted_cell_are_refused_naming_the_line(tmp_path):
    lines = _csv(_gold_records()).split("\r\n")
    lines[5] = lines[5].split(",")[0] + ',"' + lines[5].split(",", 1)[1]   # line 6 opens it
    lines[8] = lines[8] + '"'                                              # line 9 closes it
    path = tmp_path / "preds.csv"
    path.write_text("\r\n".join(lines), "utf-8")
    result = invoke("score", path, "--results-dir", tmp_path / "r")
    qid, swallowed = lines[5].split(",")[0], lines[6]
    clean_error(result, f"{path}:6: the 'prediction' cell of {qid!r} holds line 7, "
                        f"\"{swallowed}\", which reads as a record of this file: a quote opened "
                        "on line 6 is closed only on line 9 (a stray quote?), and lines 7 to 9 "
                        "would be one cell (expected a cell quoted whole (\"...\", with \"\" for "
                        "a quote inside))")
    # a quoted cell holding a line break and other text is a value, scored
    good = _csv([(q, p + "\nsee above, twice" if i == 3 else p)
                 for i, (q, p) in enumerate(_gold_records())])
    path.write_text(good, "utf-8")
    scored = _scored(invoke("score", path, "--results-dir", tmp_path / "ok"), tmp_path / "ok")
    assert len(scored) == 200 and all(em == 1 for _, em in scored.values())


@pytest.mark.parametrize("sep", [",", ";"])
def test_f05_excels_sep_line_names_the_separator(tmp_path, sep):
    records = _gold_records()
    path = tmp_path / "preds.csv"
    path.write_text(f"sep={sep}\r\n" + _csv(records, delimiter=sep), "utf-8")
    result = invoke("score", path, "--results-dir", tmp_path / "r")
    scored = _scored(result, tmp_path / "r")
    assert scored == {q: (p, 1) for q, p in records}
    assert f"note: {path}: the first line, 'sep={sep}' (Excel's), names the separator: cells " \
           f"read as separated by {sep!r}, the header on line 2" in result.output
    # errors name the file's own lines, the sep= line counted
    lines = (f"sep={sep}\r\n" + _csv(records, delimiter=sep)).split("\r\n")
    lines[5] = lines[5] + sep + "extra"
    path.write_text("\r\n".join(lines), "utf-8")
    result = invoke("score", path, "--results-dir", tmp_path / "r2")
    assert result.exit_code == 1 and result.output.startswith(f"Error: {path}:6: 3 cells")


# ---- F19: ints and bytes in the public API ------------------------------------------------------
@pytest.fixture(scope="module")
def dataset():
    return api.load(bundled_path())[0]


F19 = [
    ("plan_sets(dataset, 5)", lambda d: api.plan_sets(d, 5),
     "specs must be plan set specs, not int 5"),
    ("resolve(dataset, 5)", lambda d: api.resolve(d, 5),
     "plan_sets must be PlanSet objects, not int 5"),
    ("compare_runs(5)", lambda d: api.compare_runs(5),
     "refs must be runs (run ids or folder paths), not int 5"),
    ("plan_sets(dataset, b'live:rules')", lambda d: api.plan_sets(d, b"live:rules"),
     "specs must be plan set specs, not bytes (b'live:rules')"),
    ("RunConfig(plans=b'live:rules')", lambda d: api.RunConfig(plans=b"live:rules"),
     "RunConfig.plans must be plan set specs, not bytes (b'live:rules')"),
    ("RunConfig(data=b'/tmp/x')", lambda d: api.RunConfig(data=b"/tmp/x"),
     "RunConfig.data must be file paths, not bytes (b'/tmp/x')"),
    ("compare_runs(b'good')", lambda d: api.compare_runs(b"good"),
     "refs must be runs (run ids or folder paths), not bytes (b'good')"),
    ("load(b'/tmp/x')", lambda d: api.load(b"/tmp/x"),
     "paths must be file paths, not bytes (b'/tmp/x')"),
    ("Memory(plan_sets=b'rules')", lambda d: api.Memory(plan_sets=b"rules"),
     "plan_sets must be names, not bytes (b'rules')"),
    ("plan_sets(dataset, [5])", lambda d: api.plan_sets(d, [5]),
     "specs must be plan set specs: item 0 is int 5"),
]


@pytest.mark.parametrize("call, make, message", F19, ids=[c[0] for c in F19])
def test_f19_ints_and_bytes_are_refused_naming_the_argument(dataset, call, make, message):
    with pytest.raises(api.InputError) as caught:
        make(dataset)
    assert str(caught.value).startswith(message + " (expected ")
    if "bytes" in message:
        assert str(caught.value).endswith("; text (str), not bytes)")


def test_f19_compare_runs_keeps_its_signature_and_docstring():
    import inspect

    from resolver.report.compare import compare_runs
    assert inspect.signature(api.compare_runs) == inspect.signature(compare_runs)
    assert api.compare_runs.__doc__ == compare_runs.__doc__


# ---- E22: the name memo keeps no question-length name ------------------------------------------
def test_e22_distinct_long_questions_leave_nothing_in_the_name_memo():
    from resolver.store import fact_store
    memory = Memory()
    memory.ingest(HEADER + FACTS[0] + "\n" + FACTS[1] + "\n")
    memory.flush()
    question = "Who is the chief executive officer of the employer of Tim Cook {} Zyx{}?"
    memory.query(question.format("x" * 900, 0))
    before = fact_store._norm_memo.cache_info().currsize
    for n in range(1, 50):
        # a template takes the ~900-character rest as its entity, a name to normalise
        memory.query(question.format("Qwv Bnm " * 110, n))
    assert fact_store._norm_memo.cache_info().currsize == before
    long = "Tim Cook " * 40
    assert fact_store.norm(long) == ("tim cook " * 40).strip()     # normalised, not kept
    assert fact_store._norm_memo.cache_info().currsize == before
