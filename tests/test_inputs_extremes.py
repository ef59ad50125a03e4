"""Inputs at their extremes (audit B): serials of thousands of digits, invisible format
characters, Unicode normal forms, a missing key, a huge argument, `freeze`'s CONFIG and lanes,
and the plan archive's reader (verify validates the lines `show` and `run` read; list says what
is wrong; sets are written with the user's umask)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from oracle.cli import main
from resolver import escape
from resolver.errors import InputError
from resolver.haystack import load
from resolver.plan.archive import list_plan_sets, load_plan_set, verify_plan_set
from resolver.store.fact_store import FactStore, norm
from resolver.text.facts import parse_context

ROOT = Path(__file__).resolve().parents[1]
HEAD = "Here is a list of facts:\n0. The capital of France is Paris.\n"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def clean_error(result, start: str) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.output.startswith("Error: " + start), result.output
    return result.output


# ---- A5, A6: serials of thousands of digits --------------------------------------------------
@pytest.mark.parametrize("digits", [4300, 5000, 100_000])
def test_a_serial_of_thousands_of_digits_is_refused_naming_the_line_cut_short(tmp_path, digits):
    path = tmp_path / "huge.txt"
    path.write_text(HEAD + "9" * digits + ". Tim Cook is employed by Google.\n")
    with pytest.raises(InputError) as caught:
        parse_context(path.read_text(), str(path))
    message = str(caught.value)
    assert f"huge.txt:3: a serial of {digits:,} digits is too large" in message
    assert "9" * 300 not in message                        # neither the serial nor the line whole
    out = clean_error(invoke("parse", str(path)), f"{path}:3: a serial of {digits:,} digits")
    assert max(len(line) for line in out.splitlines()) < 400


def test_a_serial_with_thousands_of_leading_zeros_is_a_small_serial():
    facts = parse_context(HEAD + "0" * 5000 + "1. Tim Cook is employed by Google.\n").facts
    assert [f.serial for f in facts] == [0, 1]


def test_a_serial_just_above_the_limit_is_still_written_out():
    with pytest.raises(InputError, match=r"serial 9223372036854775808 is too large"):
        parse_context(HEAD + "9223372036854775808. Tim Cook is employed by Google.\n")


# ---- A9: invisible format characters ---------------------------------------------------------
@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_invisible_format_characters_are_noted_and_escaped(tmp_path, char):
    path = tmp_path / "zw.txt"
    path.write_text(HEAD + f"1. The capital of Fr{char}ance is Lyon.\n")
    result = invoke("parse", str(path))
    assert result.exit_code == 0
    assert "note: 1 line(s) hold control characters" in result.output
    assert f"line 3, U+{ord(char):04X}" in result.output
    frontier = invoke("frontier", "--data", str(path))
    assert char not in frontier.output
    assert escape.visible(f"Fr{char}ance") in frontier.output
    assert escape.markdown(char) != char and escape.latex(char) != char


# ---- A10: NFC and NFD are one name -----------------------------------------------------------
def test_a_name_in_nfd_finds_the_same_name_in_nfc(tmp_path):
    path = tmp_path / "nfc.txt"
    path.write_text("Here is a list of facts:\n0. The capital of Caf\u00e9 Land is Paris.\n")
    result = invoke("history", "Cafe\u0301 Land", "--data", str(path))
    assert result.exit_code == 0, result.output
    assert "Paris" in result.output
    assert norm("Cafe\u0301 Land") == norm("Caf\u00e9 Land")
    # and both spellings of one name are one key
    store = FactStore(parse_context("0. The capital of Caf\u00e9 Land is Paris.\n"
                                    "1. The capital of Cafe\u0301 Land is Lyon.\n").facts)
    assert len(store.keys()) == 1 and store.current("Café Land", "capital").object == "Lyon"


# ---- A13: a missing key ----------------------------------------------------------------------
def test_a_row_without_context_says_the_key_is_missing(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps({"data": [{"questions": ["q?"], "answers": [["a"]]}]}))
    with pytest.raises(InputError, match=r"'context' is missing"):
        load([path])
    path.write_text(json.dumps({"data": [{"context": None, "questions": [], "answers": []}]}))
    with pytest.raises(InputError, match=r"'context' is null"):
        load([path])


# ---- A19: a huge argument --------------------------------------------------------------------
def test_an_unknown_entity_of_100000_characters_is_shown_cut(tmp_path):
    path = tmp_path / "base.txt"
    path.write_text(HEAD)
    out = clean_error(invoke("history", "x" * 100_000, "--data", str(path)), "no entity 'xxx")
    assert len(out) < 400 and "more characters" in out


# ---- F2, F3, F4: freeze -----------------------------------------------------------------------
def test_freeze_refuses_an_empty_config_and_lanes_run_would_refuse(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    clean_error(invoke("freeze", ""), "CONFIG is empty")
    for option in ("--reader", "--repair"):
        for spec in ("nonsense", "ollama:"):
            clean_error(invoke("freeze", "d.json", option, spec), f"unknown model spec {spec!r}")
    assert not (tmp_path / "d.json").exists()


def test_freeze_prints_a_config_path_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "fz/n\x1b[31mame\nx.json"
    result = invoke("freeze", name)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("froze fz/n\\x1b[31mame\\nx.json: plan sets ")
    assert "\x1b" not in result.output and result.output.count("\n") == 1
    assert (tmp_path / name).is_file()


# ---- P2-P6: the plan archive -----------------------------------------------------------------
@pytest.fixture
def archive(tmp_path, monkeypatch):
    root = tmp_path / "plans"
    root.mkdir()
    shutil.copytree(ROOT / "plans" / "rules-6k", root / "rules-6k")
    monkeypatch.setenv("FACTRES_PLANS", str(root))
    return root


def tampered(root: Path, name: str, body: bytes) -> Path:
    """A set whose SHA256SUMS and manifest match `body`: only the lines are wrong."""
    folder = root / name
    shutil.copytree(root / "rules-6k", folder)
    (folder / "plans.jsonl").write_bytes(body)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(set_id=name, plans_sha256=hashlib.sha256(body).hexdigest())
    data = json.dumps(manifest, indent=2).encode() + b"\n"
    (folder / "manifest.json").write_bytes(data)
    (folder / "SHA256SUMS").write_text(f"{hashlib.sha256(body).hexdigest()}  plans.jsonl\n"
                                       f"{hashlib.sha256(data).hexdigest()}  manifest.json\n")
    return folder


def _lines(root: Path) -> list[bytes]:
    return (root / "rules-6k" / "plans.jsonl").read_bytes().splitlines()


def _with_plan(lines: list[bytes], change) -> tuple[bytes, int]:
    at = next(i for i, raw in enumerate(lines) if orjson.loads(raw)["plans"])
    row = orjson.loads(lines[at])
    change(row["plans"][0])
    return b"\n".join(lines[:at] + [orjson.dumps(row)] + lines[at + 1:]) + b"\n", at + 1


def test_verify_checks_the_lines_show_and_run_read_with_clear_words(archive):
    lines = _lines(archive)
    cases = {
        "t-list": (b"\n".join(lines[:5] + [b"[1,2]"] + lines[6:]) + b"\n", 6,
                   "line 6 is a JSON array, expected an object"),
    }
    for name, change, words in (
            ("t-badrel", lambda p: p.update(chain=["no_such_relation"]),
             "unknown relation or family 'no_such_relation'"),
            ("t-emptychain", lambda p: p.update(chain=[]), "a plan has 1 to 4 hops, not 0"),
            ("t-longchain", lambda p: p.update(chain=["employer"] * 5000),
             "a plan has 1 to 4 hops, not 5,000"),
            ("t-chainstr", lambda p: p.update(chain="capital"),
             "'chain' is a string (expected a list of relation names)")):
        body, line = _with_plan(lines, change)
        cases[name] = (body, line, words)
    cases["t-latin1"] = (b"\n".join(lines) + b'\n{"x":"\xe9"}\n', len(lines) + 1,
                         "not UTF-8: byte 0xe9 at offset 6")
    cases["t-bom"] = ("\ufeff".encode() + b"\n".join(lines) + b"\n", 1, "byte-order mark")
    cases["t-dupqid"] = (b"\n".join(lines + [lines[0]]) + b"\n", len(lines) + 1,
                         "question id")
    for name, (body, line, words) in cases.items():
        folder = tampered(archive, name, body)
        problems = verify_plan_set(name)
        assert len(problems) == 1 and problems[0].startswith(
            f"{folder / 'plans.jsonl'}:{line}: "), (name, problems)
        assert words in problems[0] and len(problems[0]) < 400, (name, problems)
        verify = invoke("plans", "verify", name)
        assert verify.exit_code == 1 and f"FAILED {name}: " in verify.output
        with pytest.raises(Exception, match="failed verification"):
            load_plan_set(name)
    listed = {s["set_id"]: s for s in list_plan_sets()}
    assert listed["rules-6k"]["ok"] and not listed["t-list"]["ok"]
    table = invoke("plans", "list").output
    assert "CHECKSUM MISMATCH" not in table and "INVALID (plans verify)" in table


def test_a_folder_that_holds_no_set_is_said_so_in_the_list(archive):
    (archive / "junkdir").mkdir()
    table = invoke("plans", "list").output
    (row,) = [line for line in table.splitlines() if line.startswith("junkdir")]
    assert "not a plan set (no manifest.json)" in row and "None" not in row
    assert "CHECKSUM MISMATCH" not in row


def test_plans_and_sums_without_a_manifest_are_no_set_in_the_list(archive):
    # N5: plans.jsonl and SHA256SUMS but no manifest.json: no set, and no count of 0
    folder = archive / "nomanifest"
    shutil.copytree(archive / "rules-6k", folder)
    (folder / "manifest.json").unlink()
    (row,) = [line for line in invoke("plans", "list").output.splitlines()
              if line.startswith("nomanifest")]
    assert row.split() == ["nomanifest", "-", "-", "-", "-", "-", "not", "a", "plan", "set",
                           "(no", "manifest.json)"]
    listed = {s["set_id"]: s for s in list_plan_sets()}
    assert listed["nomanifest"]["set"] is False and listed["nomanifest"]["count"] is None


def test_plans_show_cuts_a_long_entity_to_200_characters(archive):
    # N6: a verified set whose plan names a 100,000-character entity
    body, _ = _with_plan(_lines(archive), lambda p: p.update(entity="E" * 100_000))
    tampered(archive, "t-long", body)
    assert verify_plan_set("t-long") == []
    qid = next(q for q, c in load_plan_set("t-long").plans.items()
               if c.plans and c.plans[0].entity.startswith("EEE"))
    out = invoke("plans", "show", "t-long", "--qid", qid).output
    first = out.splitlines()[0]
    assert first.startswith(f"{qid}: {'E' * 200}... (99800 more characters) -> ")
    assert max(map(len, out.splitlines())) < 400


def test_a_changed_file_is_still_a_checksum_mismatch(archive):
    folder = archive / "rules-6k"
    (folder / "plans.jsonl").write_bytes((folder / "plans.jsonl").read_bytes() + b"\n\n")
    assert "CHECKSUM MISMATCH" in invoke("plans", "list").output


def test_a_compiled_set_gets_the_umask_mode_like_run_folders(archive, tmp_path):
    old = os.umask(0o022)
    try:
        result = invoke("plans", "compile", "--planner", "rules", "--set-id", "mode-1")
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert oct((archive / "mode-1").stat().st_mode & 0o777) == oct(0o755)
