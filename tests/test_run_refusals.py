"""What a run checks before any work, and how its id and folder are claimed: run ids, parallel
runs, stale temporary folders, unwritable folders, lines that fit no template, plan sets that
cover none of the questions, fallback counts."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from ollama_server import MODEL, OllamaServer, question_of

from resolver.cli import main
from resolver.errors import InputError
from resolver.haystack import load
from resolver.plan.compile_lexicon import compile_question
from resolver.run import run_folder, runs, tables
from resolver.run.config import RunConfig
from resolver.run.runs import execute

SMALL = Path(__file__).parent / "data" / "runs_small.json"
NOTE_32K = ("note: factconsolidation_sh_32k is a source of the test split (dev is 6K; test is "
            "32K, 64K and 262K); recorded in meta.json\n")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def no_resolving(monkeypatch):
    """Make compiling and resolving an error: a refusal must come before them."""
    def refuse(*args, **kwargs):
        raise AssertionError("resolved before refusing")
    monkeypatch.setattr(runs, "_plan_and_resolve", refuse)


# ---- run ids and folders ---------------------------------------------------------------------
@pytest.mark.parametrize("run_id", ["nl\n", "a/b", ".hidden", "tab\tid", ""])
def test_a_bad_run_id_is_refused_and_makes_no_folder(tmp_path, run_id):
    with pytest.raises(InputError, match="bad run id"):
        execute(RunConfig(data=(str(SMALL),)), results=tmp_path, run_id=run_id)
    assert list(tmp_path.iterdir()) == []


def test_parallel_runs_claim_different_default_ids(tmp_path, monkeypatch):
    # A second run starts while the first writes its folder (after all its work): the first
    # claimed its id at its start, so the second takes the next suffix; neither fails.
    render, nested = tables.markdown, []

    def markdown_with_a_second_run(*args):
        if not nested:
            nested.append(None)
            nested[0] = execute(RunConfig(data=(str(SMALL),)), results=tmp_path)
        return render(*args)
    monkeypatch.setattr(tables, "markdown", markdown_with_a_second_run)
    first = execute(RunConfig(data=(str(SMALL),)), results=tmp_path)
    assert nested[0].run_id == first.run_id + "-2"
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.run_id, first.run_id + "-2"]


def test_an_explicit_id_being_written_by_another_run_is_refused(tmp_path):
    claim = run_folder.claim(tmp_path, "mine")
    with pytest.raises(Exception) as err:
        execute(RunConfig(data=(str(SMALL),)), results=tmp_path, run_id="mine")
    assert str(err.value) == (f"run 'mine' is claimed by {tmp_path / '.tmp-mine'}/ (process "
                              f"{os.getpid()} is writing it); choose another --run-id or omit it")
    claim.release()


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_stale_temporary_folders_are_cleaned_by_the_next_run(tmp_path):
    day_old = time.time() - 2 * 24 * 3600
    folders = {}
    for name, pid, old in (("dead-old", _dead_pid(), True), ("dead-young", _dead_pid(), False),
                           ("alive-old", os.getpid(), True)):
        folder = tmp_path / f".tmp-{name}"
        folder.mkdir()
        (folder / ".incomplete").write_bytes(orjson.dumps({"pid": pid}))
        if old:
            os.utime(folder, (day_old, day_old))
        folders[name] = folder
    legacy = tmp_path / f".tmp-legacy-{_dead_pid()}"       # an older factres's name, no marker
    legacy.mkdir()
    os.utime(legacy, (day_old, day_old))
    execute(RunConfig(data=(str(SMALL),)), results=tmp_path, run_id="next")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".tmp-alive-old", ".tmp-dead-young", "next"]


def test_an_unwritable_results_folder_is_refused_before_any_work(tmp_path, monkeypatch):
    no_resolving(monkeypatch)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    # the option is refused as it is read, as --out is (verification U); the place
    # $FACTRES_RESULTS names, before any work
    result = invoke("run", "--data", SMALL, "--results-dir", blocker / "results")
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: --results-dir {blocker / 'results'}: {blocker} is a "
                                  "file, not a folder\n")
    monkeypatch.setenv("FACTRES_RESULTS", str(blocker / "results"))
    result = invoke("run", "--data", SMALL)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {blocker / 'results'}: cannot write here: ")
    assert result.output.endswith("(expected a writable results folder (--results-dir or "
                                  "$FACTRES_RESULTS))\n")


def test_an_unwritable_cache_is_skipped_with_a_note(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("FACTRES_CACHE", str(blocker / "cache"))
    result = invoke("run", "--data", SMALL, "--results-dir", tmp_path / "r", "--run-id", "c")
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if "parse cache not written" in line]
    assert len(notes) == 1 and notes[0].startswith(f"note: {SMALL}: parse cache not written (")
    meta = orjson.loads((tmp_path / "r" / "c" / "meta.json").read_bytes())
    assert meta["notes"] == [n[len("note: "):] for n in notes]
    assert "--no-cache" in invoke("run", "-h").output


# ---- lines that fit no template --------------------------------------------------------------
BAD_LINE = "99. Jane Austen juggles " + "x" * 500 + "."      # 525 characters


def _with_bad_line(tmp_path) -> tuple[Path, int]:
    """The small rows with a line that fits no template in row 0; its context line number."""
    rows = orjson.loads(SMALL.read_bytes())
    rows[0]["context"] = rows[0]["context"].rstrip("\n") + "\n" + BAD_LINE + "\n"
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps(rows))
    return path, rows[0]["context"].count("\n")


def test_unparsed_lines_are_reported_and_recorded(tmp_path):
    path, number = _with_bad_line(tmp_path)
    result = invoke("run", "--data", path, "--results-dir", tmp_path / "r", "--run-id", "u")
    assert result.exit_code == 0
    shown = BAD_LINE[:200] + "... (325 more characters)"
    assert result.stderr == (
        "warning: 1 fact line(s) fit no template and were not read (recorded in meta.json; "
        "--strict makes this an error); the first:\n"
        f"  {path}: row 0, context line {number}: {shown}  (fits no fact template)\n"
        + NOTE_32K)
    meta = orjson.loads((tmp_path / "r" / "u" / "meta.json").read_bytes())
    assert meta["unparsed"] == {"count": 1, "first": [
        {"path": str(path), "row": 0, "line": number, "text": shown,
         "reason": "fits no fact template"}]}


def test_strict_refuses_unparsed_lines_before_resolving(tmp_path, monkeypatch):
    no_resolving(monkeypatch)
    path, number = _with_bad_line(tmp_path)
    result = invoke("run", "--data", path, "--strict", "--results-dir", tmp_path / "r")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {path}: row 0, context line {number}: 1 line fits "
                                    "no fact template (expected")
    assert not (tmp_path / "r").exists()


# ---- plan sets -------------------------------------------------------------------------------
@pytest.fixture
def plans(tmp_path, monkeypatch):
    root = tmp_path / "plans"
    monkeypatch.setenv("FACTRES_PLANS", str(root))
    monkeypatch.setattr("resolver.models.ollama_client.RETRY_BACKOFF", 0.0)
    return root


def _other_rows(tmp_path) -> Path:
    rows = orjson.loads(SMALL.read_bytes())
    for row in rows:
        row["metadata"]["qa_pair_ids"] = [f"other{q}" for q in row["metadata"]["qa_pair_ids"]]
    path = tmp_path / "other.json"
    path.write_bytes(orjson.dumps(rows))
    return path


def test_a_plan_set_covering_no_question_is_refused(tmp_path, plans, monkeypatch):
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "lex", "--data", SMALL)
    no_resolving(monkeypatch)
    result = invoke("run", "--data", _other_rows(tmp_path), "--plans", "lex",
                    "--results-dir", tmp_path / "r")
    assert result.exit_code == 1
    assert result.output == ("Error: plan set 'lex' has plans for none of the 7 questions of "
                             "this data (compiled for other data?); pass --allow-partial-plans "
                             "to run without it anyway\n")


def test_partial_coverage_is_a_warning_with_the_count(tmp_path, plans):
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "lex", "--data", SMALL)
    rows = orjson.loads(_other_rows(tmp_path).read_bytes()) + orjson.loads(SMALL.read_bytes())
    both = tmp_path / "both.json"
    both.write_bytes(orjson.dumps(rows[:2] + rows[3:5]))
    result = invoke("run", "--data", both, "--plans", "lex", "--plans", "live:lexicon",
                    "--results-dir", tmp_path / "r", "--run-id", "p")
    assert result.exit_code == 0
    assert ("warning: plan set lex covers 5 of 10 questions; the others get no plan from it\n"
            in result.stderr)
    none = invoke("run", "--data", _other_rows(tmp_path), "--plans", "lex", "--plans",
                  "live:lexicon", "--allow-partial-plans", "--results-dir", tmp_path / "r",
                  "--run-id", "none")
    assert none.exit_code == 0
    assert "warning: plan set lex covers 0 of 7 questions" in none.stderr
    meta = orjson.loads((tmp_path / "r" / "none" / "meta.json").read_bytes())
    assert [(s["set_id"], s["questions_covered"]) for s in meta["plan_sets"]] == [
        ("lex", 0), ("live:lexicon", 7)]


def test_fallback_counts_reach_meta_and_the_tables(tmp_path, plans):
    dataset, _ = load([SMALL])
    lexicon = {q.text: compile_question(q.text, dataset.haystack_of(q).store).plans[0]
               for q in dataset.questions}
    failing = dataset.questions[0].text

    def respond(request):       # one question's reply is not JSON: the lexicon stands in
        if question_of(request) == failing:
            return "not json"
        plan = lexicon[question_of(request)]
        return {"entity": plan.entity, "chain": list(plan.chain)}
    with OllamaServer(respond) as server:
        invoke("plans", "compile", "--planner", f"ollama:{MODEL}", "--set-id", "m",
               "--data", SMALL, "--host", server.url)
    result = invoke("run", "--data", SMALL, "--plans", "m", "--results-dir", tmp_path / "r",
                    "--run-id", "fb")
    assert result.exit_code == 0
    assert ("warning: plan set m: 1 of 7 questions have the lexicon's fallback plans, not the "
            "model's\n") in result.stderr
    meta = orjson.loads((tmp_path / "r" / "fb" / "meta.json").read_bytes())
    assert [(s["set_id"], s["fallback_count"]) for s in meta["plan_sets"]] == [("m", 1)]
    invoke("tables", "fb", "--results-dir", tmp_path / "r", "--out", tmp_path / "t",
           "--table", "mab-fc", "--format", "md", "--columns", "plan-sets,mode")
    table = (tmp_path / "t" / "mab-fc.md").read_text()
    assert "| m (fallbacks: 1) | search |" in table
    assert ("(fallbacks: N): questions whose plans from that set are the lexicon's, because "
            "the model planner's call failed.") in table


def test_the_tables_folder_is_never_a_run_id(tmp_path):
    with pytest.raises(InputError, match="run id 'tables' is the paper tables' folder"):
        run_folder.check_run_id(tmp_path, "tables")


def test_reader_failures_are_marked_in_the_tables(tmp_path):
    """A reader whose calls fail for some questions scores those as unanswered: the mab-fc row
    names how many, as it names a plan set's fallbacks."""
    calls = []

    def respond(request):       # every other reader call fails
        calls.append(1)
        return "not json" if len(calls) % 2 else {"answer": "France"}
    with OllamaServer(respond) as server:
        result = invoke("run", "--data", SMALL, "--reader", f"ollama:{MODEL}", "--host",
                        server.url, "--results-dir", tmp_path / "r", "--run-id", "rd")
    assert result.exit_code == 0, result.output
    failed = orjson.loads((tmp_path / "r" / "rd" / "meta.json").read_bytes())["counts"][
        "reader_failures"]
    assert failed >= 1
    invoke("tables", "rd", "--results-dir", tmp_path / "r", "--out", tmp_path / "t",
           "--table", "mab-fc", "--format", "md", "--columns", "mode,reader")
    table = (tmp_path / "t" / "mab-fc.md").read_text()
    assert f"| search | ollama:{MODEL} (no answer: {failed}) |" in table
    assert "(no answer: N): questions whose reader call failed; they count as unanswered." \
        in table
