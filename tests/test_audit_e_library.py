"""Audit E (issue 30), the cases of the memory, the files and the Python API: one test (or a
few) per case, each failing on the code before its fix. The server's cases are tested beside the
server.

- E07: a line break other than LF inside a line is reported by `factres parse` and by the memory
  alike, whole or cut anywhere, never read as a fact.
- E39: a memorize-frame boundary anywhere in the first few hundred characters (the header
  among them) reads the facts; a failed read leaves the memory as it was.
- E60, E62, E63: a CSV separated by another character than the comma, a cell past the csv
  module's limit, a quote never closed; CR line endings named as CR, once.
- E64: a hand-written question set is in neither split for `run`, `score` and `tables`.
- E70, E71, E72: one string where a list is wanted is one item; `RunConfig` and
  `compare_runs` refuse bad arguments with the library's error naming them.
- E48, E49: `copy.copy`, `copy.deepcopy` and `pickle` of a memory give an independent memory
  that answers and reads on as the original would.
- E59: every command that takes --out names an empty value and a file in the way.
"""
from __future__ import annotations

import copy
import csv
import io
import pickle
import threading
from pathlib import Path

import click
import orjson
import pytest
from click.testing import CliRunner
from conftest import bundled_context
from test_audit2 import clean_error

import resolver.api as api
import resolver.escape as escape
from oracle.cli import main
from resolver.haystack import bundled_path
from resolver.mab import harness
from resolver.memory import stream
from resolver.memory.memory import Memory
from resolver.text.facts import parse_context

ROOT = Path(__file__).resolve().parents[1]

# ---- E07: line breaks other than LF ----------------------------------------------------------
BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
FACTS = ("0. Tim Cook is employed by Apple.", "1. Tim Cook is employed by Google.",
         "2. The capital of France is Paris.", "3. Paris is located in the country of France.")
HEADER = "Here is a list of facts:\n"


def _facts(facts, lines: bool) -> list[tuple]:
    return [(f.serial, f.subject, f.relation, f.object, f.text) + ((f.line,) if lines else ())
            for f in facts]


def _reports(reports, lines: bool) -> list[tuple]:
    # a piece's text is its line without surrounding blanks (docs/memory.md)
    return [(r.text.strip(" \t"), r.reason) + ((r.line,) if lines else ()) for r in reports]


def _parsed(text: str, lines: bool):
    parsed = parse_context(text)
    return _facts(parsed.facts, lines), _reports(parsed.unparsed, lines)


def _remembered(chunks, lines: bool, peek: bool = False):
    memory, reports = Memory(), []
    for chunk in chunks:
        reports += memory.ingest(chunk).reports
        if peek:
            len(memory.store)            # a query's view of the tail between chunks
    reports += memory.flush().reports
    return _facts(memory.store, lines), _reports(reports, lines)


def _with_break(brk: str) -> list[tuple[str, bool]]:
    """Texts holding `brk` between facts, at a fact's edges, and on a line of several facts
    (True: every line holds one piece, so the lines compare too)."""
    one, several = True, False
    return [
        (HEADER + FACTS[0] + brk + FACTS[1] + "\n" + FACTS[2] + "\n", one),
        (HEADER + FACTS[0] + brk + "\n" + FACTS[1] + "\n", one),
        (HEADER + FACTS[0] + "\n" + brk + FACTS[1] + "\n" + FACTS[2], one),
        (HEADER + FACTS[0] + "\n" + FACTS[1] + " " + brk, one),
        (HEADER + FACTS[0] + "\r\n" + FACTS[1] + brk + FACTS[2] + "\r\n" + FACTS[3], one),
        (HEADER + FACTS[0] + " " + FACTS[1] + brk + FACTS[2] + " " + FACTS[3] + "\n", several),
        (HEADER + FACTS[0] + "\n" + brk + "\n" + FACTS[1] + "\n", several),   # a blank line
    ]


@pytest.mark.parametrize("brk", BREAKS, ids=lambda b: f"U+{ord(b):04X}")
def test_e07_a_line_break_other_than_lf_is_reported_as_parse_reports_it(brk):
    for text, lines in _with_break(brk):
        want = _parsed(text, lines)
        assert not any(brk in fact[4] for fact in want[0]), "a fact read across a break"
        assert _remembered([text], lines) == want, repr(text)
        assert _remembered(list(text), lines) == want, repr(text)
        for cut in range(1, len(text)):
            assert _remembered([text[:cut], text[cut:]], lines, peek=True) == want, \
                (repr(text), cut)


def test_e07_the_audit_example_is_reported_with_the_break_it_holds():
    text = HEADER + FACTS[0] + "\r" + FACTS[1] + "\n"
    memory = Memory()
    reports = memory.ingest(text).reports + memory.flush().reports
    assert len(memory.store) == 0
    assert [(r.kind, r.line, r.text, r.reason) for r in reports] == [
        ("unparsed", 2, FACTS[0] + "\r" + FACTS[1],
         "line break U+000D (carriage return without a line feed) at column 34: lines end at "
         "LF or CRLF")]
    parsed = parse_context(text)
    assert parsed.facts == () and [(u.line, u.reason) for u in parsed.unparsed] == [
        (2, reports[0].reason)]
    assert memory.query("Who is Tim Cook employed by?").text == ""


def test_e07_crlf_and_lf_still_end_lines_alike():
    text = HEADER + "\r\n".join(FACTS) + "\r\n"
    want = _parsed(text, True)
    assert len(want[0]) == 4 and want[1] == []
    for cut in range(1, len(text)):
        assert _remembered([text[:cut], text[cut:]], True) == want


# ---- E39: a frame boundary in the header -----------------------------------------------------
def _store(memory: Memory) -> list[tuple]:
    return [(f.serial, f.subject, f.relation, f.object, f.line, f.text) for f in memory.store]


def _fed(chunks) -> tuple[list[tuple], list[tuple]]:
    memory, reports = Memory(), []
    for chunk in chunks:
        reports += memory.ingest(chunk).reports
    reports += memory.flush().reports
    return _store(memory), [(r.kind, r.line, r.text, r.reason) for r in reports]


def _start_of_6k() -> str:
    """The 6K context's header and first 40 facts (the cuts are in its first 400 characters)."""
    context = bundled_context("6k")
    return context[:context.index("\n40. ") + 1]


def test_e39_a_frame_boundary_anywhere_in_the_first_characters_reads_the_facts():
    context = _start_of_6k()
    whole = _fed([context])
    assert len(whole[0]) == 40 and whole[1] == []
    for cut in range(0, 400):
        left, right = context[:cut], context[cut:]
        frames = [harness.frame_chunk(left, "t0"), harness.frame_chunk(right, "t1")]
        got = _fed(frames)
        # A frame boundary is a sentence boundary: the two sides are joined with one space.
        joined = left.rstrip(" \n") + " " + right.lstrip(" \n") if left.strip() else right
        assert got == _fed([joined]), cut
        if cut == 0 or left[-1].isspace() or right[0].isspace():
            assert got == whole, cut              # a cut between words: the context's facts
        else:
            assert len(got[0]) >= 39, cut         # a word cut in two reads as two words


def test_e39_the_audit_cut_reads_the_header_and_answers():
    text = HEADER + FACTS[0] + "\n" + FACTS[1] + "\n"
    memory = Memory()
    first = memory.ingest(harness.frame_chunk("Here is a"))
    second = memory.ingest(harness.frame_chunk(text[len("Here is a"):]))
    assert first.committed == 0 and second.passed_over["header"] == 1
    assert memory.query("Who is Tim Cook employed by?").text == "Google"
    memory.flush()
    assert _store(memory) == _fed([text])[0]


def test_e39_a_framed_context_cut_at_every_character_of_its_start_reads_alike():
    framed = harness.frame_chunk(_start_of_6k(), "2025-01-01 00:00:00")
    whole = _fed([framed])
    assert len(whole[0]) == 40
    for cut in range(1, 400):
        assert _fed([framed[:cut], framed[cut:]]) == whole, cut


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_e39_a_read_that_fails_leaves_the_memory_as_it_was(monkeypatch, as_bytes):
    text = HEADER + FACTS[0] + "\n" + FACTS[1] + "\n" + "4. Café is located in the country of " \
        "France.\n"
    data = text.encode("utf-8") if as_bytes else text
    cut = text.encode("utf-8").index("é".encode("utf-8")) + 1 if as_bytes else 40
    memory, fresh = Memory(), Memory()
    memory.ingest(data[:cut])
    fresh.ingest(data[:cut])
    before = (memory.tail, memory._held)
    assert memory._held or not as_bytes                      # a character held half-read

    def broken(*args, **kwargs):
        raise RuntimeError("a reader bug")
    with monkeypatch.context() as patch:
        patch.setattr(stream, "parse_fact_lines", broken)
        patch.setattr(stream, "parse_fact_block", broken)
        with pytest.raises(RuntimeError):
            memory.ingest(data[cut:])
    assert (memory.tail, memory._held) == before
    results = [memory.ingest(data[cut:]), memory.flush()]
    expected = [fresh.ingest(data[cut:]), fresh.flush()]
    assert [(r.committed, r.passed_over, r.reports) for r in results] == \
        [(r.committed, r.passed_over, r.reports) for r in expected]
    assert _store(memory) == _store(fresh) == _fed([text])[0]
    assert len(_store(memory)) == 3
    assert memory.query("Who is Tim Cook employed by?").text == "Google"


# ---- E60, E62, E63: CSV imports, CR line endings ----------------------------------------------
def invoke(*args):
    """The command as a user runs it: exit code and everything printed (stderr too)."""
    return CliRunner().invoke(main, [str(a) for a in args])


def _gold_records() -> list[tuple[str, str]]:
    """(question id, its first gold answer) of the bundled 6K rows: a perfect prediction file."""
    rows = orjson.loads(bundled_path().read_bytes())["data"]
    return [(qid, answers[0]) for row in rows
            for qid, answers in zip(row["metadata"]["qa_pair_ids"], row["answers"])]


def _csv(records, delimiter: str = ",", newline: str = "\r\n") -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator=newline)
    writer.writerow(["qid", "prediction"])
    writer.writerows(records)
    return out.getvalue()


def _scored(result, folder: Path) -> dict:
    assert result.exit_code == 0, result.output
    (run,) = folder.iterdir()
    return {row["qid"]: (row["prediction"], row["em"]) for row in
            map(orjson.loads, (run / "predictions.jsonl").read_bytes().splitlines())}


def test_e63_an_unterminated_quote_is_refused_naming_its_line(tmp_path):
    records = _gold_records()
    lines = _csv(records).split("\r\n")
    lines[5] = lines[5].split(",")[0] + ',"Paris'          # line 6: the quote is never closed
    lines[6:] = [line.replace('"', "") for line in lines[6:]]   # and no later quote closes it
    path = tmp_path / "preds.csv"
    path.write_text("\r\n".join(lines), "utf-8")
    result = invoke("score", path, "--results-dir", tmp_path / "r")
    clean_error(result, f"{path}:6: a quote opened in this record is never closed: the rest of "
                        f"the file (to line {len(lines) - 1}) would be one cell (expected a "
                        'closing quote ("), and "" for a quote inside a quoted cell)')
    # a quote closed on a later line makes one cell of the lines between: named where it began
    lines[40] = lines[40].split(",")[0] + ',x"y'
    path.write_text("\r\n".join(lines), "utf-8")
    result = invoke("score", path, "--results-dir", tmp_path / "r")
    assert result.exit_code == 1 and result.output.startswith(f"Error: {path}:6: bad quoting")


def test_e62_a_cell_longer_than_the_csv_module_allows_is_scored_as_in_jsonl(tmp_path):
    records = _gold_records()
    long = "x" * 140_000 + " " + records[1][1]
    records[1] = (records[1][0], long)
    csv_path, jsonl_path = tmp_path / "preds.csv", tmp_path / "preds.jsonl"
    csv_path.write_text(_csv(records), "utf-8")
    jsonl_path.write_text("".join(orjson.dumps({"qid": q, "prediction": p}).decode() + "\n"
                                  for q, p in records), "utf-8")
    from_csv = _scored(invoke("score", csv_path, "--results-dir", tmp_path / "a"), tmp_path / "a")
    from_jsonl = _scored(invoke("score", jsonl_path, "--results-dir", tmp_path / "b"),
                         tmp_path / "b")
    assert from_csv == from_jsonl
    assert from_csv[records[1][0]] == (long, 1)
    assert csv.field_size_limit() == 131_072               # the module's setting is left as it was


@pytest.mark.parametrize("delimiter, name", [(";", "semicolons (;)"), ("\t", "tabs"),
                                             ("|", "vertical bars (|)")])
def test_e60_a_csv_separated_by_another_character_is_named(tmp_path, delimiter, name):
    path = tmp_path / "preds.csv"
    path.write_text(_csv(_gold_records()[:3] + [("x", "a,b")], delimiter), "utf-8")
    for extra in ((), ("--field", f"id=qid{delimiter}prediction")):
        result = invoke("score", path, *extra, "--results-dir", tmp_path / "r")
        clean_error(result, f'{path}:1: the header is one column, "qid{escape.terminal(delimiter)}'
                            f'prediction": the file seems separated by {name}, not commas '
                            "(expected comma-separated values: save it as CSV with commas)")


def test_e60_cr_line_endings_are_named_as_cr_once(tmp_path):
    records = _gold_records()
    csv_path = tmp_path / "preds.csv"
    csv_path.write_text(_csv(records, newline="\r"), "utf-8")
    result = invoke("score", csv_path, "--results-dir", tmp_path / "r")
    assert result.exit_code == 0
    assert result.stderr.count("note:") == 1 and result.stderr == (
        f"note: {csv_path}: CR line endings (a carriage return without a line feed) read as "
        "line ends\n")
    jsonl_path = tmp_path / "preds.jsonl"
    jsonl_path.write_text("".join(orjson.dumps({"qid": q, "prediction": p}).decode() + "\r"
                                  for q, p in records), "utf-8")
    assert _scored(invoke("score", jsonl_path, "--results-dir", tmp_path / "j"),
                   tmp_path / "j") == _scored(result, tmp_path / "r")
    # a context with CR line endings: one note, about CR, and its lines reported
    context = tmp_path / "cr.txt"
    context.write_bytes(b"Here is a list of facts:\r0. Tim Cook is employed by Apple.\r")
    result = invoke("parse", context)
    notes = [line for line in result.output.splitlines() if line.startswith("note:")]
    assert notes == ["note: CR line endings (a carriage return without a line feed) on 1 "
                     "line(s), the first line 1: a CR alone ends no line (lines end at LF or "
                     "CRLF), so those lines are reported"]
    assert "unparsed lines: 1" in result.output


# ---- E64: hand-written question sets are in neither split ------------------------------------
def test_e64_a_hand_written_set_is_in_neither_split_for_run_score_and_tables(tmp_path):
    row = orjson.loads(bundled_path().read_bytes())["data"][0]
    source = "mine_mh_32k"                      # named for a size, but no official source
    qids = [f"{source}_no{i}" for i in range(3)]
    rows = tmp_path / "mine.json"
    rows.write_bytes(orjson.dumps({"data": [{
        "context": row["context"], "questions": row["questions"][:3],
        "answers": row["answers"][:3], "metadata": {"source": source, "qa_pair_ids": qids}}]}))
    note = (f"note: {source} is no official FactConsolidation source "
            "(factconsolidation_sh/mh_<size>): in neither split (dev is 6K; test is 32K, 64K and "
            "262K), and in no column of the mab-fc table")
    results = tmp_path / "r"
    ran = invoke("run", "--data", rows, "--results-dir", results, "--run-id", "mine-run")
    assert ran.exit_code == 0, ran.output
    assert note in ran.stderr.splitlines()
    predictions = tmp_path / "mine.jsonl"
    predictions.write_text("".join(orjson.dumps({"qid": q, "prediction": a[0]}).decode() + "\n"
                                   for q, a in zip(qids, row["answers"])), "utf-8")
    scored = invoke("score", predictions, "--data", rows, "--results-dir", results,
                    "--run-id", "mine-score")
    assert scored.exit_code == 0, scored.output
    assert note in scored.stderr.splitlines()
    assert "test-split" not in scored.stderr
    meta = orjson.loads((results / "mine-score" / "meta.json").read_bytes())
    assert meta["splits"] == {source: "neither"} and meta["split"] == "neither"
    tables = invoke("tables", "--results-dir", results, "--table", "mab-fc", "--out",
                    tmp_path / "t")
    clean_error(tables, "table mab-fc: no score run of an official FactConsolidation source "
                        "(factconsolidation_sh/mh_<size>) to build it from: mine-run, mine-score "
                        f"hold only {source}, in neither split (expected at least one score run "
                        "of an official FactConsolidation source)")


# ---- E70, E71, E72: the Python API's arguments -----------------------------------------------
RUNS = ROOT / "results"
BASE, OTHER = "dev-6k-plain-confidence", "dev-6k-search-confidence"


def test_e70_one_string_where_a_list_is_wanted_stands_for_itself():
    path = bundled_path()
    dataset, gold = api.load(str(path))
    assert dataset.paths == (str(path),) and len(dataset.questions) == 200
    assert api.load(path)[0].paths == dataset.paths               # a Path alone, likewise
    (rules,) = api.plan_sets(dataset, "live:rules")
    assert rules.set_id == "live:rules"
    assert api.resolve(dataset, rules, mode="plain") == api.resolve(dataset, [rules],
                                                                    mode="plain")
    with pytest.raises(api.InputError, match="plan_sets must be PlanSet objects, not str"):
        api.resolve(dataset, "live:rules")
    config = api.RunConfig(data=str(path), plans="live:rules")
    assert config.data == (str(path),) and config.plans == ("live:rules",)
    assert api.RunConfig(data=path).data == (str(path),)
    with pytest.raises(api.InputError, match=r"^1 run given"):
        api.compare_runs(BASE, RUNS)
    with pytest.raises(api.InputError, match="paths must be file paths"):
        api.load(3)


@pytest.mark.parametrize("field, value, expected", [
    ("mode", "Search", "search or plain; or None: the frozen configuration's, else search"),
    ("timeout", float("nan"), "a finite number of seconds above 0"),
    ("timeout", 0, "a finite number of seconds above 0"),
    ("timeout", True, "a finite number of seconds above 0"),
    ("split", "Dev", "dev or test"),
    ("abstain_below", "hi", "low, medium or high; or None: never"),
    ("strict", "yes", "True or False"),
    ("reader", "", "None or a name (reader and repair: ollama:MODEL)"),
    ("plans", ("live:rules", 3), "plan set specs (live:rules, live:lexicon or a set id)"),
    ("data", 3, "a tuple of file paths"),
])
def test_e71_run_config_refuses_what_a_user_gets_wrong(field, value, expected):
    with pytest.raises(api.InputError) as caught:
        api.RunConfig(**{field: value})
    assert caught.value.expected == expected
    assert caught.value.detail.startswith(f"RunConfig.{field} ")


def test_e71_execute_refuses_a_mode_it_would_not_run(tmp_path):
    with pytest.raises(api.InputError, match=r"RunConfig.mode is 'Search'"):
        api.execute(api.RunConfig(mode="Search"), results_dir=tmp_path)
    assert not (tmp_path / "dev-6k").exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argument, value, expected", [
    ("resamples", 0, "an integer from 1 to 100,000 (10,000 by default)"),
    ("resamples", -5, "an integer from 1 to 100,000 (10,000 by default)"),
    ("resamples", 1e9, "an integer from 1 to 100,000 (10,000 by default)"),
    ("resamples", 10**9, "an integer from 1 to 100,000 (10,000 by default)"),
    ("resamples", True, "an integer from 1 to 100,000 (10,000 by default)"),
    ("level", 1.5, "a number between 0 and 1, such as 0.95 (the default)"),
    ("level", float("nan"), "a number between 0 and 1, such as 0.95 (the default)"),
    ("seed", None, "an integer from 0 (20240601 by default)"),
    ("seed", -1, "an integer from 0 (20240601 by default)"),
])
def test_e72_compare_runs_names_a_bootstrap_argument_out_of_range(argument, value, expected):
    with pytest.raises(api.InputError) as caught:
        api.compare_runs([BASE, OTHER], RUNS, **{argument: value})
    assert caught.value.detail == f"{argument} is {value!r}"
    assert caught.value.expected == expected


def test_e72_a_small_bootstrap_in_range_is_computed():
    comparison = api.compare_runs([BASE, OTHER], RUNS, resamples=50, seed=0, level=0.5)
    assert comparison.resamples == 50 and comparison.level == 0.5


# ---- E48, E49: copies and pickles of a memory ------------------------------------------------
QUESTIONS = ("Who is Tim Cook employed by?", "What is the capital of France?")


def _half_fed() -> tuple[Memory, bytes]:
    """A memory fed the 6K context up to a cut inside a UTF-8 character (bytes held) and inside
    a fact (a tail pending), and asked a question meanwhile (the tail seen provisionally);
    and the rest of the context's bytes."""
    data = bundled_context("6k").encode("utf-8")
    cut = next(i for i in range(len(data) // 2, len(data)) if data[i] & 0xC0 == 0x80)
    memory = Memory()
    memory.ingest(data[:cut])
    memory.query(QUESTIONS[0])
    assert memory.tail and memory._held                      # both states are in the copy
    return memory, data[cut:]


def _state(memory: Memory) -> tuple:
    return (_store(memory), memory.tail, memory.frontier(),
            [memory.query(q).to_json() for q in QUESTIONS])


def _read_on(memory: Memory, rest: bytes) -> list[tuple]:
    results = [memory.ingest(rest), memory.flush()]
    return [(r.committed, r.passed_over, r.reports, r.facts, r.pending) for r in results]


@pytest.mark.parametrize("make", [copy.copy, copy.deepcopy,
                                  lambda m: pickle.loads(pickle.dumps(m))],
                         ids=["copy", "deepcopy", "pickle"])
def test_e48_e49_a_copy_or_an_unpickled_memory_is_independent_and_reads_on_alike(make):
    original, rest = _half_fed()
    before = _state(original)
    twin = make(original)
    assert twin is not original and twin._lock is not original._lock
    assert twin.store is not original.store
    assert _state(twin) == before                             # answers as the original
    read = _read_on(twin, rest)
    assert _state(original) == before                         # the original is left alone
    assert _read_on(original, rest) == read                   # and reads on alike
    assert _state(twin) == _state(original)
    assert len(twin.store) == 455 and twin.query(QUESTIONS[0]).text == \
        original.query(QUESTIONS[0]).text


def test_e49_a_pickled_memory_holds_no_lock_and_keeps_the_ledger():
    memory, _ = _half_fed()
    data = pickle.dumps(memory)
    again = pickle.loads(data)
    assert isinstance(again._lock, type(threading.RLock()))
    key = next(iter(memory.frontier()))
    assert again.history(key[0]) == memory.history(key[0])


# ---- E59: --out empty or under a file ---------------------------------------------------------
def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))
        else:
            yield prefix + (name,), command


OUT_COMMANDS = sorted(path for path, command in _commands(main)
                      if any("--out" in p.opts for p in command.params))


def test_e59_the_commands_that_take_out_are_all_checked():
    assert {" ".join(p) for p in OUT_COMMANDS} >= {"compare", "export", "tables",
                                                    "oracle ceiling", "oracle nbest"}


@pytest.mark.parametrize("command", OUT_COMMANDS, ids=" ".join)
def test_e59_out_empty_or_under_a_file_is_named(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    for value, message in [("", "--out is empty: name a folder to write into"),
                           ("  ", "--out is empty: name a folder to write into"),
                           ("afile/x", "--out afile/x: afile is a file, not a folder"),
                           ("afile/x/y", "--out afile/x/y: afile is a file, not a folder"),
                           ("afile", "--out afile: afile is a file, not a folder")]:
        result = invoke(*command, "--out", value)
        assert result.exit_code == 2, (value, result.output)
        assert result.output.endswith(f"\nError: {message}\n"), (value, result.output)
        assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]     # nothing written


RESULTS_COMMANDS = sorted(path for path, command in _commands(main)
                          if any("--results-dir" in p.opts for p in command.params))


@pytest.mark.parametrize("command", RESULTS_COMMANDS, ids=" ".join)
def test_e59_results_dir_empty_or_under_a_file_is_named_as_out_is(command, tmp_path,
                                                                   monkeypatch):
    """Verification U: `--results-dir ''` was read as the default folder (`run` wrote into
    ./factres-results), `--results-dir afile/x` listed nothing or said "Not a directory"."""
    assert {"run", "runs", "tables", "compare", "oracle ceiling"} <= {" ".join(c)
                                                                       for c in RESULTS_COMMANDS}
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    (tmp_path / "afile").write_text("x")
    empty = ("--results-dir is empty: name the results folder, or leave the option out for "
             "$FACTRES_RESULTS, else ./factres-results")
    for value, message in [("", empty), (" ", empty),
                           ("afile/x", "--results-dir afile/x: afile is a file, not a folder"),
                           ("afile", "--results-dir afile: afile is a file, not a folder")]:
        result = invoke(*command, "--results-dir", value)
        assert result.exit_code == 2, (value, result.output)
        assert result.output.endswith(f"\nError: {message}\n"), (value, result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]     # nothing written
