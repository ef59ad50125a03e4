"""verify-e's cases of the memory, the files and the Python API that did not hold: one test (or
a few) per case, each failing on the code before its fix. The server's are in
test_serve_verify_e.py.

- F02: lines ending "\\r\\r\\n" (a CRLF file converted a second time) end there for `factres
  parse`, the memory and the server alike, and the CRLF note is printed once.
"""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from test_audit_e_library import FACTS, HEADER, _parsed, _remembered

from oracle.cli import main
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
