"""Read sizes in runs (issue 33): every run writes readout.jsonl (one row per question: the
characters of its 600-character readout with no disclosure and of its 2,400-character one with
history and alternatives), read back through the one reader and checked there; `factres table
--read-size` shows the mean read size; `factres readout RUN QID...` reads a run's questions out
from its data and traces, the very readouts the run measured. (predictions.jsonl and
traces.jsonl stay byte for byte as before: tests/test_committed_runs.py.)"""
from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from oracle.cli import main
from resolver.errors import InputError
from resolver.haystack import bundled_path, load
from resolver.memory.memory import Memory
from resolver.results.reader import read_run
from resolver.results.result_schema import READOUT_FILE, dumps_lines, loads_lines
from resolver.run.config import RunConfig
from resolver.run.runs import RUN_READS, execute

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = "dev-6k-search-confidence"
QID = "factconsolidation_mh_6k_no0"


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return execute(RunConfig(), results=root, run_id="dev")


def test_a_run_writes_one_readout_row_per_question(run):
    rows = loads_lines((run.path / READOUT_FILE).read_bytes())
    assert [r["qid"] for r in rows] == [p["qid"] for p in run.predictions]
    assert RUN_READS == ((600, ()), (2400, ("history", "alternatives")))
    for row in rows:
        assert [(r["budget"], r["disclose"]) for r in row["reads"]] == \
            [(600, []), (2400, ["history", "alternatives"])]
        short, disclosed = (r["chars"] for r in row["reads"])
        assert 0 < short <= 600 and short <= disclosed <= 2400
    # the reader reads it, keyed by question
    assert read_run(run.path).readout[QID] == rows[0]


def test_the_sizes_are_the_memorys_own_readouts(run):
    # a memory fed the same context gives the same readouts (it answers as the run does)
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    memory = Memory()
    memory.ingest(haystack.text)
    memory.flush()
    recorded = read_run(run.path).readout
    for question in dataset.questions[::10]:
        sizes = [len(memory.readout(question.text, disclose=modes, budget=budget))
                 for budget, modes in RUN_READS]
        assert sizes == [r["chars"] for r in recorded[question.qid]["reads"]], question.qid


def test_readout_prints_the_runs_own_readouts(run):
    recorded = read_run(run.path).readout[QID]["reads"]
    short = invoke("readout", str(run.path), QID)
    assert short.exit_code == 0 and len(short.stdout) - 1 == recorded[0]["chars"]
    disclosed = invoke("readout", str(run.path), QID, "--disclose", "history",
                       "--disclose", "alternatives", "--budget", "2400")
    assert len(disclosed.stdout) - 1 == recorded[1]["chars"]
    assert disclosed.stdout.startswith(short.stdout[:-1])
    assert "history] " in disclosed.stdout


def test_readout_of_a_committed_run_several_questions_and_json():
    one = invoke("readout", COMMITTED, QID)
    assert one.stdout == ("[#146] Our Mutual Friend | author = Charles Darwin\n"
                          "[#335] Charles Darwin | married_to = Amala Paul\n"
                          "[#322] Amala Paul | citizenship = Belgium\n")
    two = invoke("readout", COMMITTED, QID, "factconsolidation_sh_6k_no3")
    assert two.stdout == (
        "# factconsolidation_mh_6k_no0: What is the country of citizenship of the spouse of "
        "the author of Our Mutual Friend?\n" + one.stdout + "\n"
        "# factconsolidation_sh_6k_no3: What is Ferdowsi famous for?\n"
        "[#86] Ferdowsi | famous_for = Shahnameh\n")
    listed = orjson.loads(invoke("readout", COMMITTED, QID, "--json").stdout)
    assert listed == [{"qid": QID, "question": "What is the country of citizenship of the "
                       "spouse of the author of Our Mutual Friend?",
                       "readout": one.stdout[:-1], "chars": len(one.stdout) - 1}]


@pytest.mark.parametrize("args,message", [
    ([COMMITTED, "nope"], "Error: run dev-6k-search-confidence has no question 'nope' (expected "
     "a question id of the run (200: factconsolidation_mh_6k_no0, factconsolidation_mh_6k_no1, "
     "factconsolidation_mh_6k_no2, factconsolidation_mh_6k_no3, factconsolidation_mh_6k_no4 "
     "and 195 more))\n"),
    ([COMMITTED, QID, "--budget", "0"], "Error: a budget of 0 characters (expected at least "
     "1)\n"),
    (["imported-nous-6k", QID], "Error: {path}: run imported-nous-6k is imported (factres "
     "score): it recorded no paths to read out (expected a run made by factres run)\n")])
def test_readout_refusals(args, message):
    result = invoke("readout", *args)
    assert result.exit_code == 1
    assert result.stderr == message.format(path=ROOT / "results" / "imported-nous-6k")


def test_an_unknown_disclosure_mode_is_refused_by_the_option():
    result = invoke("readout", COMMITTED, QID, "--disclose", "gold")
    assert result.exit_code == 2
    assert "'gold' is not one of 'history', 'alternatives', 'support'" in result.stderr


# ---- the score table ------------------------------------------------------------------------
def test_the_table_shows_the_mean_read_size(run):
    rows = loads_lines((run.path / READOUT_FILE).read_bytes())

    def mean(prefix: str, i: int) -> str:
        sizes = [r["reads"][i]["chars"] for r in rows if r["qid"].startswith(prefix)]
        return f"{sum(sizes) / len(sizes):.0f}"
    result = invoke("table", str(run.path), "--read-size")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].endswith("| stale rate | read (chars) |")
    sh = f"{mean('factconsolidation_sh', 0)} / {mean('factconsolidation_sh', 1)}"
    mh = f"{mean('factconsolidation_mh', 0)} / {mean('factconsolidation_mh', 1)}"
    every = f"{mean('factconsolidation', 0)} / {mean('factconsolidation', 1)}"
    assert lines[2].startswith("| factconsolidation_sh_6k |") and lines[2].endswith(f"| {sh} |")
    assert lines[3].startswith("| factconsolidation_mh_6k |") and lines[3].endswith(f"| {mh} |")
    assert lines[6].startswith("| pooled all (6k) |") and lines[6].endswith(f"| {every} |")
    assert lines[-1] == ("read (chars): the mean length in characters of a question's readout "
                         "for an LLM reader (readout.jsonl), over the row's questions: within "
                         "600 with no disclosure / within 2,400 with history and alternatives.")
    # without the flag, the table as it always was
    assert invoke("table", str(run.path)).stdout == run.table
    latex = invoke("table", str(run.path), "--read-size", "--format", "latex").stdout
    assert f"& {every} \\\\" in latex and "read (chars)" in latex


def test_the_table_of_a_run_without_readouts_says_so():
    result = invoke("table", COMMITTED, "--read-size")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {ROOT / 'results' / COMMITTED}: run {COMMITTED} has no "
                             "readout.jsonl (made before runs recorded their read sizes, or "
                             "imported) (expected a run made by factres run since readouts "
                             "were recorded)\n")


# ---- the reader's checks --------------------------------------------------------------------
def _edited(run, tmp_path, edit) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(run.path, copy)
    rows = loads_lines((copy / READOUT_FILE).read_bytes())
    (copy / READOUT_FILE).write_bytes(dumps_lines(edit(rows)))
    return copy


def _over_budget(rows):
    rows[2]["reads"][0]["chars"] = 601
    return rows


def _other_configuration(rows):
    rows[1]["reads"][1]["budget"] = 1200
    return rows


def _unknown_mode(rows):
    rows[0]["reads"][1]["disclose"] = ["history", "gold"]
    return rows


@pytest.mark.parametrize("edit,words", [
    (lambda rows: rows[:-1], "readout.jsonl has 199 rows for the run's 200 questions"),
    (lambda rows: [rows[1], rows[0]] + rows[2:], "the run's files disagree: row 1 is the "
     "readout of 'factconsolidation_mh_6k_no1'"),
    (_over_budget, "readout.jsonl:3: 'factconsolidation_mh_6k_no2': reads[0].chars is 601, "
     "over its budget of 600 (expected 0 to 600 characters; edited?)"),
    (_other_configuration, "readout.jsonl:2: 'factconsolidation_mh_6k_no1' is read as"),
    (_unknown_mode, "reads[1].disclose is ['history', 'gold'] (expected some of history, "
     "alternatives, support, each once; edited?)"),
    (lambda rows: [{"qid": rows[0]["qid"], "reads": "600"}] + rows[1:],
     "readout.jsonl:1: field 'reads' is a string")])
def test_an_edited_readout_file_is_refused(run, tmp_path, edit, words):
    folder = read_run(_edited(run, tmp_path, edit))
    with pytest.raises(InputError) as err:
        folder.readout
    assert words in str(err.value)
