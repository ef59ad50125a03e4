"""`factres parse`: exact output, --json, --strict, --no-cache and input errors."""
from __future__ import annotations

import orjson
from click.testing import CliRunner

from resolver.cli import main
from resolver.haystack import BUNDLED, bundled_path

GOOD = ("Here is a list of facts:\n0. Paris is located in the country of France.\n"
        "1. The capital of France is Paris.\n2. Paris is located in the country of Italy.\n")
BAD = GOOD + "".join(f"{n}. line {n} fits nothing.\n" for n in range(3, 10))


def _run(*args):
    return CliRunner().invoke(main, ["parse", *args], catch_exceptions=False)


def _file(tmp_path, text, name="ctx.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_report(tmp_path):
    path = _file(tmp_path, GOOD)
    result = _run(path)
    assert result.exit_code == 0
    assert result.output == f"""path: {path}
context sha256: {_sha(GOOD)}
lines: 4 (header: yes, blank: 0)
facts: 3
unparsed lines: 0
keys: 2
keys with more than one version: 1
deepest version chain: 2
entities: 3
relations: 2
  located_in_country       2
  capital                  1
"""


def _sha(text):
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()


def test_unparsed_lines_are_shown_first_five_and_counted(tmp_path):
    result = _run(_file(tmp_path, BAD))
    assert result.exit_code == 0
    assert "unparsed lines: 7\n" \
           "  line 5: 3. line 3 fits nothing.  (fits no fact template)\n" in result.output
    assert "  line 9: 7. line 7 fits nothing.  (fits no fact template)\n" \
           "  ... and 2 more (--json lists them all)\nkeys: 2\n" in result.output


def test_strict_fails_on_unparsed_lines(tmp_path):
    path = _file(tmp_path, BAD)
    result = CliRunner().invoke(main, ["parse", "--strict", path])
    assert result.exit_code == 1
    assert result.output.endswith(
        f"Error: {path}:5: 7 lines fit no fact template; the first is shown (expected \"<serial>. "
        f"<fact sentence>.\" in one of the MQuAKE templates)\n    3. line 3 fits nothing.\n")


def test_strict_passes_on_a_clean_context(tmp_path):
    assert _run("--strict", _file(tmp_path, GOOD)).exit_code == 0


def test_json(tmp_path):
    result = _run("--json", _file(tmp_path, BAD))
    report = orjson.loads(result.output)
    assert (report["facts"], report["unparsed"], report["keys"],
            report["keys_with_several_versions"], report["deepest_version_chain"]) == \
        (3, 7, 2, 1, 2)
    assert report["unparsed_lines"][-1] == {"line": 11, "text": "9. line 9 fits nothing.",
                                            "reason": "fits no fact template"}
    assert report["relations"] == {"capital": 1, "located_in_country": 2}
    assert list(report) == sorted(report)


def test_bundled_262k(tmp_path):
    result = _run("--strict", str(bundled_path(BUNDLED["262k"])))
    assert "facts: 18332\nunparsed lines: 0\nkeys: 11095\n" in result.output
    assert "deepest version chain: 3\n" in result.output


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path / "cache"))
    path = _file(tmp_path, GOOD)
    _run("--no-cache", path)
    assert not (tmp_path / "cache").exists()
    _run(path)
    assert len(list((tmp_path / "cache").iterdir())) == 1


def test_crlf_and_bom_are_noted(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode())
    result = _run(str(path))
    assert result.output.endswith("note: byte-order mark removed\n"
                                  "note: CRLF line endings read as LF\n")


def test_errors_are_clean_messages(tmp_path):
    empty = _file(tmp_path, "")
    result = CliRunner().invoke(main, ["parse", empty])
    assert result.exit_code == 1
    assert result.output == (f"Error: {empty}: empty input: no header and no fact lines "
                             "(expected \"Here is a list of facts:\" and numbered fact lines)\n")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"0. M\xfcnchen is owned by B.\n")
    result = CliRunner().invoke(main, ["parse", str(latin)])
    assert result.output == (f"Error: {latin}:1: not UTF-8: byte 0xfc at offset 4 "
                             "(expected UTF-8 text)\n")


def test_help():
    for flag in ("-h", "--help"):
        result = _run(flag)
        assert result.exit_code == 0
        assert "Example: factres parse" in result.output and "--strict" in result.output


def test_parse_notes_an_answer_list_given_as_a_plain_string(tmp_path):
    """As `factres run` does: "answers": ["Paris"] is one answer, and parse says so."""
    rows = {"data": [{"context": "Here is a list of facts:\n0. The capital of France is Paris.\n",
                      "questions": ["What is the capital of France?"], "answers": ["Paris"],
                      "metadata": {"source": "factconsolidation_sh_6k", "qa_pair_ids": ["q0"]}}]}
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps(rows))
    result = CliRunner().invoke(main, ["parse", str(path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.output.endswith("note: row 0: 1 answer list(s) given as a plain string, each "
                                  "read as one answer, never as letters (first: question 0)\n")
    as_json = CliRunner().invoke(main, ["parse", str(path), "--json"], catch_exceptions=False)
    assert orjson.loads(as_json.output)["notes"] == [
        "row 0: 1 answer list(s) given as a plain string, each read as one answer, never as "
        "letters (first: question 0)"]
