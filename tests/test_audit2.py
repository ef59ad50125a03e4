"""The second reliability audit (issue 22), one test per case, each failing on the code before
the fix: silently wrong results (1-6), crashes (7-8; 9 is the scale work's) and the weak cases.

Most cases break one file of a real run folder (a resolver run over the tiny haystack of
test_oracle_paths, or an imported one) and ask the command a user would: the one reader
(`resolver.results.reader`) must refuse it in one message naming the file, the line and the field,
never analyse it as if it were whole, never print a traceback."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from run_folders import rewrite_lines, write_run_folder
from test_oracle_paths import write_tiny

from oracle.cli import main
from resolver.errors import InputError
from resolver.haystack import sha256_bytes
from resolver.run.config import RunConfig
from resolver.run.runs import execute

MH, SH = "factconsolidation_mh_6k", "factconsolidation_sh_6k"


def invoke(*args: str):
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
def made(tmp_path_factory):
    """A scored resolver run over the tiny haystack, and its data file."""
    folder = tmp_path_factory.mktemp("audit2")
    data = write_tiny(folder)
    run = execute(RunConfig(data=(str(data),)), results=folder / "results", run_id="tiny")
    return run.path, data


@pytest.fixture
def run(made, tmp_path):
    """A fresh copy of the run (under tmp_path/results/, data beside it) to break."""
    path, data = made
    copy = tmp_path / "results" / "tiny"
    shutil.copytree(path, copy)
    local = tmp_path / "tiny.json"
    shutil.copy(data, local)
    meta = orjson.loads((copy / "meta.json").read_bytes())
    meta["data"], meta["data_sha256"] = [str(local)], {str(local): meta["data_sha256"][str(data)]}
    (copy / "meta.json").write_bytes(orjson.dumps(meta))
    return copy


def missed(run: Path) -> str:
    """A question the run got wrong."""
    return next(orjson.loads(line)["qid"] for line in
                (run / "predictions.jsonl").read_bytes().splitlines()
                if orjson.loads(line)["em"] == 0)


def _rows(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# ---- 1. duplicate CSV headers and JSON keys ---------------------------------------------------
def _score(tmp_path, name: str, text: str, *extra: str):
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return invoke("score", path, "--data", write_tiny(tmp_path), "--results-dir",
                  tmp_path / "results", *extra), path


def test_1_a_csv_header_naming_a_column_twice_is_refused(tmp_path):
    # the second "prediction" column is the right one: kept silently, it scored 100
    result, path = _score(tmp_path, "p.csv",
                          f"qid,prediction,prediction\n{SH}_no0,wrong,Newcap\n")
    clean_error(result, f"{path}:1: column(s) 'prediction' named twice in the header "
                        "(expected each column name once)")


def test_1_a_json_record_with_a_key_twice_is_refused(tmp_path):
    result, path = _score(tmp_path, "p.jsonl",
                          f'{{"qid": "{SH}_no0", "prediction": "wrong", '
                          '"prediction": "Newcap"}\n')
    clean_error(result, f"{path}:1: key 'prediction' given twice in the top-level object "
                        "(expected each key of a JSON object once)")


def test_1_a_run_file_with_a_key_twice_is_refused(run):
    meta = (run / "meta.json").read_text()
    assert '"split":"dev"' in meta
    (run / "meta.json").write_text(meta.replace('"split":"dev"', '"split":"dev","split":"test"',
                                                1))
    # the first "split" of the file is the one in meta.json's config
    clean_error(invoke("table", run), f"{run / 'meta.json'}: key 'split' given twice in config "
                                      "(expected each key of a JSON object once)")


# ---- 2. traces.jsonl deleted or emptied ---------------------------------------------------------
def test_2_explain_refuses_a_run_whose_traces_are_gone(run):
    (run / "traces.jsonl").unlink()
    clean_error(invoke("explain", run, missed(run)),
                f"{run}: the run has no traces.jsonl (deleted?): a resolver run (search mode) "
                "writes one row per question, and its predictions are not read without it "
                "(expected the traces.jsonl the run wrote)")


def test_2_explain_refuses_a_run_whose_traces_are_empty(run):
    (run / "traces.jsonl").write_bytes(b"")
    clean_error(invoke("explain", run, missed(run)),
                f"{run / 'traces.jsonl'}: traces.jsonl is empty: none of the run's 9 questions "
                "has a trace (emptied?) (expected one trace row per question)")


# ---- 3. the data changed in place ---------------------------------------------------------------
@pytest.mark.parametrize("command", ["explain", "misses"])
def test_3_data_changed_in_place_is_refused_naming_both_hashes(run, command):
    meta = orjson.loads((run / "meta.json").read_bytes())
    (data,) = meta["data"]
    before = meta["data_sha256"][data]
    rows = orjson.loads(Path(data).read_bytes())
    rows["data"][1]["answers"][0] = ["Oldcap"]         # the gold of a single-hop question
    Path(data).write_bytes(orjson.dumps(rows))
    after = sha256_bytes(Path(data).read_bytes())
    args = ("explain", run, f"{SH}_no0") if command == "explain" else \
        ("oracle", "misses", run, "--out", run.parent / "m")
    clean_error(invoke(*args), f"{run / 'meta.json'}: the run's data file {data} has changed "
                               f"since the run: its sha256 is {after}, the run recorded "
                               f"{before}; no copy with the recorded sha256 found (tried "
                               f"{data}, {_bundled(data)}, every bundled file "
                               f"({_bundled(data).parent})) (expected the data the run was "
                               "made from)")


def _bundled(name: str) -> Path:
    from resolver.haystack import bundled_path
    return bundled_path(Path(name).name)


# ---- 4. predictions.jsonl cut short -------------------------------------------------------------
@pytest.mark.parametrize("command", ["misses", "nbest"])
def test_4_a_cut_predictions_file_is_refused(run, command):
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[:6])
    clean_error(invoke("oracle", command, run, "--out", run.parent / "o"),
                f"{run}: the run's files disagree: predictions.jsonl has 6 rows, meta.json "
                "counts 9 questions (expected one prediction per question (a cut or padded "
                "predictions.jsonl?))")


def test_4_metrics_counting_other_questions_are_refused(run):
    metrics = orjson.loads((run / "metrics.json").read_bytes())
    metrics["rows"][0]["n"] += 1
    (run / "metrics.json").write_bytes(orjson.dumps(metrics))
    result = invoke("table", run)
    assert result.exit_code == 1 and "the run's files disagree: questions per source: " \
        in result.output and "in metrics.json" in result.output


# ---- 5. field types ------------------------------------------------------------------------------
def test_5_an_em_of_yes_is_refused_naming_line_and_field(run):
    rewrite_lines(run / "predictions.jsonl", lambda rows: rows[2].update(em="yes"))
    clean_error(invoke("oracle", "misses", run, "--out", run.parent / "m"),
                f"{run / 'predictions.jsonl'}:3: field 'em' is a string (\"yes\") (expected an "
                "integer)")


# ---- 6. LaTeX and Markdown injection -------------------------------------------------------------
HOSTILE = ("evil\n\\input{/etc/hostname} 50% & $x$ #1 _a_ {b} ~c^ -->§†‡ [x] 漢字 😀 "
           "\x07\x1b[31m\u2028")


def _hostile_results(tmp_path) -> Path:
    """A results folder with one run whose plan set, and whose folder, have hostile names."""
    results = tmp_path / "results"
    data = write_tiny(tmp_path)
    write_run_folder(results / "run-with\nnewline -->", [str(data)],
                     {f"{SH}_no0": ("Newcap", 1, [])}, plan_sets=(HOSTILE, "[first]"))
    write_run_folder(results / "[first]-run", [str(data)], {f"{SH}_no0": ("Newcap", 1, [])},
                     plan_sets=("[first]",))
    return results


def test_6_names_cannot_inject_latex_or_markdown(tmp_path):
    results, out = _hostile_results(tmp_path), tmp_path / "tables"
    # by default the names are in the rows' footnote: escaped there as in a cell
    result = invoke("tables", "--results-dir", results, "--out", tmp_path / "notes", "--table",
                    "mab-fc")
    assert result.exit_code == 0, result.output
    tex = (tmp_path / "notes" / "mab-fc.tex").read_text("utf-8")
    assert not any(line.startswith("\\input") for line in tex.splitlines())
    assert "\\textbackslash{}input\\{/etc/hostname\\} 50\\% \\& \\$x\\$ \\#1 \\_a\\_ \\{b\\}" in tex
    # in columns, and with a row named "[...]"
    result = invoke("tables", "--results-dir", results, "--out", out, "--table", "mab-fc",
                    "--columns", "run,plan-sets", "--label", "[first]-run=[first]-run")
    assert result.exit_code == 0, result.output
    tex = (out / "mab-fc.tex").read_text("utf-8")
    # every line is a comment, a rule or a row: none starts with the name's \input
    assert not any(line.startswith("\\input") for line in tex.splitlines())
    # the long name wraps in its column (page_fit.py): it may break after an underscore
    assert "\\textbackslash{}input\\{/etc/hostname\\} 50\\% \\& \\$x\\$ \\#1 \\_a\\_ \\{b\\}" in \
        tex.replace("\\allowbreak{}", "")
    assert "evil\\textbackslash{}n" in tex and "\\textbackslash{}x07" in tex
    assert "\\textbackslash{}u2028" in tex
    # the name's § is escaped text, not factres's superscript mark
    assert "\\textbackslash{}\\S{}" in tex and "\\textsuperscript{\\S}" not in tex
    # a row opening with "[" is not taken for \\'s optional argument
    assert "\n{}[first]-run" in tex
    md = (out / "mab-fc.md").read_text("utf-8")
    comments = [line for line in md.splitlines() if line.startswith("<!--")]
    assert all(line.count("-->") == 1 and line.endswith(" -->") for line in comments)
    assert "run-with\\\\nnewline --&gt;" in md
    assert "\\§\\†\\‡" in md and "§ some questions" not in md
    assert "\x07" not in md and "\x1b" not in md and "\u2028" not in md


def test_6_the_preview_with_hostile_and_unicode_names_compiles(tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed")
    results, out = _hostile_results(tmp_path), tmp_path / "tables"
    assert invoke("tables", "--results-dir", results, "--out", out, "--format", "latex",
                  "--table", "mab-fc").exit_code == 0
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           "-no-shell-escape", "preview.tex"], cwd=out, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    log = (out / "preview.log").read_text("utf-8", "replace")
    assert "/etc/hostname" not in log          # the name's \input was never run


# ---- 7. crashes on files of the wrong shape ------------------------------------------------------
def test_7_a_trace_line_that_is_a_list(run):
    lines = (run / "traces.jsonl").read_bytes().splitlines()
    lines[1] = b"[1, 2]"
    (run / "traces.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    clean_error(invoke("oracle", "nbest", run, "--out", run.parent / "n"),
                f"{run / 'traces.jsonl'}:2: the line is a list (expected an object)")


def test_7_a_prediction_line_that_is_a_list(run):
    lines = (run / "predictions.jsonl").read_bytes().splitlines()
    lines[0] = b"[]"
    (run / "predictions.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    clean_error(invoke("table", run),
                f"{run / 'predictions.jsonl'}:1: the line is a list (expected an object)")


def test_7_metrics_of_the_wrong_shape(run):
    metrics = orjson.loads((run / "metrics.json").read_bytes())
    metrics["rows"] = {"rows": metrics["rows"]}
    (run / "metrics.json").write_bytes(orjson.dumps(metrics))
    clean_error(invoke("table", run), f"{run / 'metrics.json'}: field 'rows' is an object "
                                      "(expected a list)")


def test_7_a_meta_json_that_is_a_list_is_refused_and_skipped_by_tables(run, tmp_path):
    (run / "meta.json").write_bytes(b"[]")
    clean_error(invoke("table", run), f"{run / 'meta.json'}: the file is a list (expected an "
                                      "object)")
    good = write_run_folder(run.parent / "good", [str(tmp_path / "tiny.json")],
                            {f"{SH}_no0": ("Newcap", 1, [])})
    result = CliRunner().invoke(main, ["tables", "--results-dir", str(run.parent), "--out",
                                       str(tmp_path / "t"), "--format", "md"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        f"warning: skipped tiny: {run / 'meta.json'}: the file is a list (expected an object)")
    assert good.name in (tmp_path / "t" / "mab-fc.md").read_text()


# ---- 8. serials of 2^64 and more -----------------------------------------------------------------
def test_8_a_serial_of_2_64_is_refused_at_parse_time_naming_the_line(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("Here is a list of facts:\n1. Paris is located in the country of France.\n"
                    "18446744073709551616. Rome is located in the country of Italy.\n")
    expected = (f"{path}:3: serial 18446744073709551616 is too large (expected a serial of at "
                "most 9223372036854775807 (2^63 - 1))\n    18446744073709551616. Rome is located "
                "in the country of Italy.")
    clean_error(invoke("parse", path), expected)         # the cache write crashed here
    rows = tmp_path / "big.json"
    rows.write_text(json.dumps([{"context": path.read_text(), "questions": ["Where is Rome?"],
                                 "answers": [["Italy"]]}]))
    result = invoke("run", "--data", rows, "--results-dir", tmp_path / "r", "--no-progress")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.startswith(f"Error: {rows}: row 0, context line 3: serial "
                                    "18446744073709551616 is too large")


# ---- weak: oracle folders ------------------------------------------------------------------------
def test_weak_oracle_commands_started_together_take_different_folders(tmp_path):
    from oracle.report import Analysis, write
    # another oracle command has claimed oracle-paths-6k and is still writing it
    other = tmp_path / ".tmp-oracle-paths-6k"
    other.mkdir()
    (other / ".incomplete").write_text(json.dumps({"pid": os.getpid()}))
    (other / "paths.json").write_text("{half written")
    mine = write(Analysis("paths", "6k", {"command": "paths"}, "# x\n"), root=tmp_path)
    assert mine == tmp_path / "oracle-paths-6k-2"
    assert (other / "paths.json").read_text() == "{half written"      # left alone
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tmp-oracle-paths-6k",
                                                          "oracle-paths-6k-2"]


def test_weak_a_tmp_folder_without_its_marker_is_cleaned_once_stale(tmp_path):
    from resolver.run.run_folder import clean_stale
    orphan = tmp_path / ".tmp-oracle-misses-x"      # a full disk: the marker never written
    orphan.mkdir()
    (orphan / "misses.json").write_text("{")
    old = time.time() - 2 * 24 * 3600
    os.utime(orphan, (old, old))
    fresh = tmp_path / ".tmp-run-y"
    fresh.mkdir()
    assert clean_stale(tmp_path) == [orphan]
    assert not orphan.exists() and fresh.exists()


class _FullDisk:
    """A file whose every write fails as on a full disk: ENOSPC, and no file name."""

    def __init__(self, handle):
        self.handle = handle

    def write(self, data):
        import errno
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()

    def __getattr__(self, name):
        return getattr(self.handle, name)


def test_weak_no_space_left_names_the_file(tmp_path, monkeypatch):
    import errno
    import io
    real_open = io.open

    def full_for_misses(path, mode="r", *args, **kwargs):
        handle = real_open(path, mode, *args, **kwargs)
        writes = "w" in mode or "x" in mode
        return _FullDisk(handle) if writes and str(path).endswith("misses.json") else handle
    monkeypatch.setattr("io.open", full_for_misses)
    monkeypatch.setattr("builtins.open", full_for_misses)
    data = write_tiny(tmp_path)
    run = write_run_folder(tmp_path / "results" / "r", [str(data)],
                           {f"{SH}_no0": ("Newcap", 1, [])})
    result = invoke("oracle", "misses", run, "--results-dir", tmp_path / "results")
    clean_error(result, f"{tmp_path / 'results' / '.tmp-oracle-misses-r' / 'misses.json'}: No "
                        "space left on device")
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["r"]
    monkeypatch.undo()
    # (the third audit, C31) a file of a claimed folder is created, never written over: not
    # /dev/full, not a file or a link already there
    from resolver.run import run_folder
    (tmp_path / "there").write_text("mine")
    for path in (Path("/dev/full"), tmp_path / "there"):
        with pytest.raises(OSError) as info:
            run_folder.write_file(path, b"x" * 10)
        assert info.value.errno == errno.EEXIST and info.value.filename == str(path)
    assert (tmp_path / "there").read_text() == "mine"


# ---- weak: factres score inputs ------------------------------------------------------------------
@pytest.mark.parametrize("field", ["em", "gold", "source"])
def test_weak_a_field_map_naming_a_key_no_record_has_is_refused(tmp_path, field):
    result, path = _score(tmp_path, "p.jsonl",
                          f'{{"qid": "{SH}_no0", "prediction": "Newcap", "correct": 1}}\n',
                          "--field", f"{field}=corect")
    clean_error(result, f"{path}: --field {field}=corect: no record has 'corect' (the first "
                        "record has 'correct', 'prediction', 'qid') (expected a key the records "
                        "have)")


def test_weak_a_csv_row_with_a_missing_cell_is_refused(tmp_path):
    result, path = _score(tmp_path, "p.csv",
                          f"qid,prediction,gold\n{SH}_no0,Newcap,Newcap\n{SH}_no1\n")
    clean_error(result, f"{path}:3: 1 cells for 3 columns (expected one cell per header column "
                        "(an empty cell between commas for an empty value))")


def test_weak_a_bad_json_cell_names_its_line(tmp_path):
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerows([["qid", "prediction", "gold"], [f"{SH}_no0", "Newcap", '["Newcap"]'],
                      [f"{SH}_no1", "Xland", '["Xland"']])
    result, path = _score(tmp_path, "p.csv", text.getvalue())
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}:3: not valid JSON:")


def test_weak_a_header_with_stray_spaces_shows_the_names_quoted(tmp_path):
    result, path = _score(tmp_path, "p.csv", f"qid, prediction\n{SH}_no0,Newcap\n")
    clean_error(result, f"{path}: no prediction field: the first record has ' prediction', "
                        "'qid' (expected one of prediction, output, or --field "
                        "prediction=NAME)")


def test_weak_unknown_ids_are_counted_and_the_first_few_named(tmp_path):
    lines = "".join(f'{{"qid": "nope_{i}", "prediction": "x"}}\n' for i in range(1000))
    result, path = _score(tmp_path, "p.jsonl", lines)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: 1000 record id(s) match no question of the "
                                    f"rows: {path} line 1: nope_0; {path} line 2: nope_1; ")
    assert "line 5: nope_4 and 995 more (expected" in result.output
    assert len(result.output) < 1000


def test_weak_an_empty_name_is_refused(tmp_path):
    result, _ = _score(tmp_path, "p.jsonl", f'{{"qid": "{SH}_no0", "prediction": "x"}}\n',
                       "--name", "")
    clean_error(result, "--name '' is empty (expected the system's name, or no --name to take "
                        "the files' agent_config.agent_name)")


def _mab(tmp_path, agent_name, averaged=None) -> Path:
    path = tmp_path / "mab.json"
    doc = {"agent_config": {"agent_name": agent_name}, "dataset_config": {"sub_dataset": SH},
           "data": [{"qa_pair_id": f"{SH}_no0", "output": "Newcap", "answer": ["Newcap"],
                     "substring_exact_match": 1}]}
    if averaged is not None:
        doc["averaged_metrics"] = {"substring_exact_match": averaged}
    path.write_text(json.dumps(doc), "utf-8")
    return path


def test_weak_an_agent_name_that_is_an_object_is_refused(tmp_path):
    path = _mab(tmp_path, {"name": "x"})
    result = invoke("score", path, "--data", write_tiny(tmp_path), "--results-dir",
                    tmp_path / "results")
    clean_error(result, f'{path}: agent_config.agent_name is {{"name": "x"}} (expected the '
                        "system's name as a string, or --name SYSTEM)")


def test_weak_the_same_data_file_twice_is_said_to_be_so(tmp_path):
    data = write_tiny(tmp_path)
    clean_error(invoke("run", "--data", data, "--data", data, "--results-dir", tmp_path / "r",
                       "--no-progress"),
                f"{data}: given twice: the same file (expected each data file once)")


@pytest.mark.parametrize("value, written", [(float("inf"), "Infinity"), ("85%", '"85%"')])
def test_weak_a_reported_score_that_is_no_number_is_recorded_not_compared(tmp_path, value,
                                                                          written):
    path = _mab(tmp_path, "m", value)
    result = invoke("score", path, "--data", write_tiny(tmp_path), "--results-dir",
                    tmp_path / "results", "--run-id", "x")
    assert result.exit_code == 0, result.output
    (entry,) = orjson.loads((tmp_path / "results" / "x" / "meta.json").read_bytes())["files"]
    assert entry["reported_unusable"] == written and entry["agrees"] is None
    assert (f"warning: {path}: reports averaged_metrics.substring_exact_match as {written}, "
            "which is no score: recorded in meta.json, not compared") in result.output


# ---- weak: options, folders, tables --------------------------------------------------------------
def test_weak_a_time_limit_of_nan_is_refused_at_the_option(tmp_path):
    result = invoke("oracle", "ceiling", "--data", write_tiny(tmp_path), "--time-limit", "nan",
                    "--out", tmp_path / "c")
    assert result.exit_code == 2
    assert "Invalid value for '--time-limit': 'nan' is not a finite number of seconds above 0" \
        in result.output
    assert not (tmp_path / "c").exists()


def test_weak_misses_of_a_copied_folder_are_named_after_the_folder(run, tmp_path):
    copy = run.parent / "my-copy"
    shutil.copytree(run, copy)
    result = invoke("oracle", "misses", copy, "--results-dir", run.parent)
    assert result.exit_code == 0, result.output
    payload = orjson.loads((run.parent / "oracle-misses-my-copy" / "misses.json").read_bytes())
    assert payload["run"] == "my-copy" and payload["run_id"] == "tiny"
    assert not (run.parent / "oracle-misses-tiny").exists()


def test_weak_a_foreign_folder_is_skipped_with_a_note(run, tmp_path):
    other = run.parent / "other-tool"
    other.mkdir()
    (other / "meta.json").write_text('{"tool": "not factres", "run_id": "x"}')
    (other / "metrics.json").write_text('{"rows": [{"source": "factconsolidation_sh_6k"}]}')
    result = CliRunner().invoke(main, ["tables", "--results-dir", str(run.parent), "--out",
                                       str(tmp_path / "t"), "--format", "md"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == ("note: skipped other-tool: not a factres run: "
                                             "meta.json's schema is missing")
    assert "other-tool" not in (tmp_path / "t" / "mab-fc.md").read_text()


def test_weak_a_dev_mode_run_over_test_sources_shows_their_split(tmp_path):
    from resolver.report.folders import gather
    from resolver.report.paper_tables import fc_row
    rows = orjson.loads(write_tiny(tmp_path).read_bytes())["data"]
    for row in rows:
        row["metadata"]["source"] = row["metadata"]["source"].replace("6k", "32k")
        row["metadata"]["qa_pair_ids"] = [q.replace("6k", "32k")
                                          for q in row["metadata"]["qa_pair_ids"]]
    data = tmp_path / "tiny32.json"
    data.write_bytes(orjson.dumps({"data": rows}))
    run = execute(RunConfig(data=(str(data),)), results=tmp_path / "r", run_id="dev-on-32k")
    (folder,) = gather((str(run.path),))
    assert fc_row(folder).meta["split"].text == "test"


def test_weak_paper_tables_are_written_with_the_mode_of_any_new_file(tmp_path):
    out = tmp_path / "t"
    fixtures = Path(__file__).resolve().parent / "data" / "tables"
    assert invoke("tables", fixtures / "dev-small", "--out", out).exit_code == 0
    mask = os.umask(0)
    os.umask(mask)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert set(modes.values()) == {0o666 & ~mask}, modes


# ---- weak: what the terminal shows ---------------------------------------------------------------
def test_weak_a_1_mb_unparsed_line_is_cut_to_200_characters(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("Here is a list of facts:\n1. " + "x" * 1_000_000 + "\n")
    result = invoke("parse", path)
    assert result.exit_code == 0
    line = next(line for line in result.output.splitlines() if line.startswith("  line 2:"))
    assert line == ("  line 2: 1. " + "x" * 197 + "... (999803 more characters)  (no final "
                    "full stop)")


def test_weak_control_characters_are_noted_and_shown_escaped(tmp_path):
    path = tmp_path / "ctl.txt"
    # (U+200B: a line break such as U+2028 makes its line no fact line since audit E, E07)
    path.write_text("Here is a list of facts:\n1. Germany\x07 is located in the continent of "
                    "Europe.\n2. Rome\x1b[31m is located in the country of Italy\u200b.\n",
                    "utf-8")
    parsed = invoke("parse", path)
    assert parsed.exit_code == 0
    assert ("note: 2 line(s) hold control characters (NUL, BEL, ANSI escapes, zero-width "
            "spaces, ...; the first: line 2, U+0007): read as written, shown escaped") \
        in parsed.output
    frontier = invoke("frontier", "--data", path)
    assert "Germany\\x07\tcontinent\tEurope\t" in frontier.output
    assert "Rome\\x1b[31m\tlocated_in_country\tItaly\\u200b\t" in frontier.output
    assert "\x07" not in frontier.output and "\x1b" not in frontier.output
    missing = invoke("history", "germany", "--data", path)
    clean_error(missing, "no entity 'germany' in the store (did you mean: Germany\\x07?)")


def test_weak_empty_and_blank_questions_are_noted(tmp_path):
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"context": "Here is a list of facts:\n1. Paris is located in "
                                            "the country of France.\n",
                                 "questions": ["Which country is Paris located in?", "", "  "],
                                 "answers": [["France"], ["x"], ["y"]]}]))
    result = CliRunner().invoke(main, ["run", "--data", str(rows), "--results-dir",
                                       str(tmp_path / "r"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (f"note: {rows}: row 0: 2 question(s) empty or blank, kept: they name nothing, so "
            "they count as unanswered (first: question 1)") in result.stderr


def test_weak_an_absurdly_long_question_is_refused_clearly(tmp_path):
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"context": "Here is a list of facts:\n1. Paris is located in "
                                            "the country of France.\n",
                                 "questions": ["Which country is Paris in? " * 4000],
                                 "answers": [["France"]]}]))
    clean_error(invoke("run", "--data", rows, "--results-dir", tmp_path / "r", "--no-progress"),
                f"{rows}: row 0: question 0 has 108000 characters (expected a question of at "
                "most 1000 characters)")


# ---- weak: explain shows what the run did, not what a file was edited to say ---------------------
def test_weak_explain_names_hops_that_are_no_facts_and_an_edited_em_is_refused(run):
    qid = missed(run)

    def edit_trace(rows):
        trace = next(t for t in rows if t["qid"] == qid)
        for candidate in trace["candidates"][:1]:
            for hop in candidate["hops"][:1]:
                hop["text"] = "999. Someone made this up."
    rewrite_lines(run / "traces.jsonl", edit_trace)
    from oracle.explain import explain, render
    (e,) = explain(run, [qid])
    assert e["em"] == 0 and e["em_in_file"] == 0
    text = render([e])
    (hop,) = e["not_in_store"]                  # the edited hop, and only it
    assert hop == "Alpha -citizenship#2-> Yland (line 4, version 0)"
    assert ("warning: 1 hop(s) of the run's trace are no fact of the store (an edited "
            "traces.jsonl?)") in " ".join(text.split())

    def edit_prediction(rows):
        row = next(r for r in rows if r["qid"] == qid)
        row["em"] = 1                                   # the file now claims a hit
    rewrite_lines(run / "predictions.jsonl", edit_prediction)
    # the third audit (C25): the reader recomputes every em, so an edited one is refused, not
    # shown beside the recomputed one
    with pytest.raises(InputError, match=f"question '{qid}': field 'em' is 1, but prediction"):
        explain(run, [qid])


def test_6_names_cannot_break_the_figures(tmp_path):
    pytest.importorskip("matplotlib")
    fixtures = Path(__file__).resolve().parent / "data" / "tables"
    folder = tmp_path / "oracle-nbest-x"
    folder.mkdir()
    nbest = orjson.loads((fixtures / "oracle-nbest-dev-small" / "nbest.json").read_bytes())
    nbest["run"] = "run $\\undefinedcommand$"
    for source in nbest["sources"].values():
        for step in source["by_n"]:
            step["set"] = "set $\\alsoundefined{$" + step["set"]
    nbest["plan_sets"] = ["set $\\alsoundefined{$" + s for s in nbest["plan_sets"]]
    (folder / "nbest.json").write_bytes(orjson.dumps(nbest))
    second = tmp_path / "oracle-nbest-y"
    shutil.copytree(folder, second)           # two runs: the legend names them
    nbest["run"] = "run two $\\alsoundefined{$"     # (a copy of one folder is refused)
    (second / "nbest.json").write_bytes(orjson.dumps(nbest))
    result = invoke("tables", folder, second, "--out", tmp_path / "t", "--plot", "--table",
                    "mab-nbest")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "t" / "mab-nbest.png").stat().st_size > 0
