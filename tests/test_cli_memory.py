"""`factres memory ...` (issue 31): ingest (files, stdin, harness chunks), ask, history, frontier,
log, info, backup and forget over a memory file, with exact output; the read-only commands
while a writer holds the file; and the errors, one line each."""
from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from resolver.cli import main
from resolver.memory.memory import Memory

TEXT = """Here is a list of facts:
0. Tim Cook is employed by Apple.
1. The capital of France is Paris.
2. Tim Cook is employed by Google.
3. The capital of France is Lyon.
"""


def invoke(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input,
                              catch_exceptions=False)


@pytest.fixture
def db(tmp_path):
    text = tmp_path / "ctx.txt"
    text.write_text(TEXT, encoding="utf-8")
    path = tmp_path / "m.db"
    result = invoke("memory", "ingest", path, text)
    assert result.exit_code == 0, result.output
    assert result.output == (f"{path}: 4 fact(s) committed from 1 chunk(s) of 1 input(s); the "
                             "memory holds 4 fact(s), 0 character(s) pending\n"
                             "passed over: header 1\nreported: 0\n")
    return path


def test_ask_prints_the_answer_its_confidence_and_path(db):
    result = invoke("memory", "ask", db, "Who is Tim Cook employed by?")
    assert result.exit_code == 0
    assert result.output == ("Google\nconfidence: high\n"
                             "  Tim Cook / employer -> Google  (serial 2, line 4, active)\n")
    result = invoke("memory", "ask", db, "Who is Tim Cook employed by?", "--json")
    answer = orjson.loads(result.output)
    assert answer["text"] == "Google" and answer["path"][0]["serial"] == 2
    empty = invoke("memory", "ask", db, "Who founded Rome?")
    assert empty.output.startswith("(no answer: ")


def test_history_frontier_log_and_info(db):
    assert invoke("memory", "history", db, "tim cook").output == """\
Tim Cook / employer: 2 version(s), head: Google (active)
  serial  line  status      value   evidence
  0       2     superseded  Apple   0. Tim Cook is employed by Apple.
  2       4     active      Google  2. Tim Cook is employed by Google.
"""
    assert invoke("memory", "frontier", db, "--relation", "capital").output == (
        "subject\trelation\tvalue\tstatus\tserial\tline\nFrance\tcapital\tLyon\tactive\t3\t5\n")
    assert invoke("memory", "log", db).output == (
        "seq\tcommit\top\tkey\tvalue\tserial\tline\ttext\n"
        "0\t0\taccept\ttim cook, employer\tApple\t0\t2\t0. Tim Cook is employed by Apple.\n"
        "1\t0\taccept\tfrance, capital\tParis\t1\t3\t1. The capital of France is Paris.\n"
        "2\t0\taccept\ttim cook, employer\tGoogle\t2\t4\t2. Tim Cook is employed by Google.\n"
        "3\t0\taccept\tfrance, capital\tLyon\t3\t5\t3. The capital of France is Lyon.\n")
    lines = [orjson.loads(line)
             for line in invoke("memory", "log", db, "--json").output.splitlines()]
    assert [(e["seq"], e["op"], e["fact"]) for e in lines] == [
        (0, "accept", True), (1, "accept", True), (2, "accept", True), (3, "accept", True)]
    info = orjson.loads(invoke("memory", "info", db, "--json").output)
    assert (info["facts"], info["keys"], info["schema_version"], info["commits"]) == (4, 2, 1, 1)
    assert info["text_bytes"] == len(TEXT.encode())
    text = invoke("memory", "info", db).output
    assert "facts: 4 (and 0 provisional)\nkeys: 2\nversions: 4\n" in text


def test_info_counts_what_a_query_reads_before_any_query(tmp_path):
    """Verification U17: the last fact, with no line break after it, is read by a query
    provisionally; info counts it before any query as after one, and saves nothing."""
    path = tmp_path / "m.db"
    result = invoke("memory", "ingest", path, "-", input=TEXT.rstrip("\n"))
    assert "the memory holds 3 fact(s), 33 character(s) pending" in result.output
    text = invoke("memory", "info", path).output
    assert "facts: 3 (and 1 provisional)\nkeys: 2\nversions: 4\n" in text
    assert "commits: 1 (text 1)" in text and "operations: 4 (accept 4)" in text
    with Memory.open(path) as memory:
        assert memory.info()["provisional"] == 1
    for readonly in (True, False):
        with Memory.open(path, readonly=readonly) as memory:
            before = memory.info()
            assert (before["facts"], before["provisional"], before["versions"]) == (3, 1, 4)
            assert before["commits"] == 1                     # info saved nothing
            assert memory.query("What is the capital of France?").text == "Lyon"
            assert memory.info() == before


def test_ingest_from_stdin_in_harness_chunks_and_flush(tmp_path):
    path = tmp_path / "m.db"
    result = invoke("memory", "ingest", path, "-", "--harness-chunks", "--tokens", "8",
                    input=TEXT)
    assert result.exit_code == 0, result.output
    assert "3 fact(s) committed from 8 chunk(s)" in result.output
    assert "the memory holds 3 fact(s), " in result.output   # the last may go on
    result = invoke("memory", "ingest", path, "-", "--flush", input="")
    assert result.output.startswith(f"{path}: 1 fact(s) committed")
    assert invoke("memory", "ask", path, "What is the capital of France?").output \
        .startswith("Lyon\n")


def test_backup_copies_a_live_memory_and_refuses_an_existing_file(db, tmp_path):
    with Memory.open(db) as writer:                           # a writer holds it meanwhile
        writer.ingest("4. Tim Cook is employed by IBM.\n")
        copy = tmp_path / "copy.db"
        assert invoke("memory", "backup", db, copy).output == f"{db} -> {copy}\n"
        assert invoke("memory", "ask", copy, "Who is Tim Cook employed by?").output \
            .startswith("IBM\n")
        again = invoke("memory", "backup", db, copy)
        assert again.exit_code == 1
        assert again.output == (f"Error: {copy}: exists already: a backup never overwrites a "
                                "file (expected a path where no file is yet)\n")
        # a second writer waits, then gets one line naming the holder
        locked = invoke("memory", "ingest", db, "-", "--timeout", "0.1", input="5. x")
        assert locked.exit_code == 1
        assert locked.output.startswith(f"Error: {db}: is open for writing by process ")


def test_forget_erases_and_the_log_keeps_a_tombstone(db):
    result = invoke("memory", "forget", db, "Tim Cook")
    assert result.output == (f"{db}: 2 fact(s) and 2 operation(s) erased, the name replaced "
                             "in 1 chunk(s) of text; the file rewritten without them\n")
    assert invoke("memory", "log", db).output.splitlines()[-1] == \
        "-\t1\terasure\t-\t-\t-\t-\t2 facts erased, 2 operations erased"
    unknown = invoke("memory", "forget", db, "Tim Cook")
    assert unknown.exit_code == 1
    assert unknown.output == "Error: no entity 'Tim Cook' in the memory: nothing to forget\n"


def test_errors_are_one_line(tmp_path):
    missing = invoke("memory", "ask", tmp_path / "none.db", "Who?")
    assert missing.exit_code == 1
    assert missing.output == (f"Error: {tmp_path / 'none.db'}: no memory file here (expected a "
                              "memory file (Memory.open(path) or factres memory ingest makes "
                              "one))\n")
    assert not (tmp_path / "none.db").exists()
    bad = tmp_path / "notes.db"
    bad.write_text("hello")
    refused = invoke("memory", "info", bad)
    assert refused.output == (f"Error: {bad}: is not an SQLite file, so not a factres memory "
                              "(expected a memory file made by Memory.open or factres memory)\n")
    no_file = invoke("memory", "ingest", tmp_path / "m.db", tmp_path / "absent.txt")
    assert no_file.output == f"Error: {tmp_path / 'absent.txt'}: no such file\n"
    assert not (tmp_path / "m.db").exists()


def test_readout_prints_the_cells_a_question_reads(db):
    """`factres memory readout` prints `Memory.readout` of the file's memory, read-only."""
    result = invoke("memory", "readout", db, "Who is Tim Cook employed by?",
                    "--disclose", "history")
    assert result.exit_code == 0, result.output
    with Memory.open(db, readonly=True) as memory:
        expected = memory.readout("Who is Tim Cook employed by?", disclose=("history",))
    assert result.output == expected + "\n"
    assert "Google" in result.output and "Apple" in result.output
    lines = invoke("memory", "readout", db).output.splitlines()
    assert len(lines) == 2 and any("Lyon" in line for line in lines)
    cut = invoke("memory", "readout", db, "Who is Tim Cook employed by?", "--budget", "10")
    assert cut.exit_code == 0 and len(cut.output) <= 11
    bad = invoke("memory", "readout", db, "Who is Tim Cook employed by?", "--budget", "0")
    assert bad.exit_code != 0 and "Traceback" not in bad.output
