"""The verification of the audit fixes on a snapshot of main (verify-d, docs/audits/verify-d.md):
one test per weak case the project fixes (D01, D02, D03, D05, D06, D07, D09, D10), each failing
on the code before the fix. M13 stays a documented limit (docs/memory.md, docs/server.md).

As in test_verify_c, most cases edit a copy of a real run over the bundled 6K rows, or of an
oracle folder, the way the verification did, then ask the commands it asked."""
from __future__ import annotations

import orjson
import pytest
from test_audit3 import (
    SH,
    _run_of,
    edit_json,
    hostile_rows,
    invoke,
    runs,  # noqa: F401  (fixtures)
)

from resolver.errors import InputError
from resolver.run.reader import read_oracle
from resolver.run.result_schema import NBEST_FILE


@pytest.fixture(scope="module")
def nbest_abst(runs, tmp_path_factory):
    """oracle nbest of the run made with --abstain-below high (73 of 200 abstained)."""
    out = tmp_path_factory.mktemp("verify-d") / "oracle-nbest-abst"
    result = invoke("oracle", "nbest", runs["abst"], "--out", out)
    assert result.exit_code == 0, result.output
    return out


def _nbest_edited(src, dst, change):
    import shutil
    shutil.copytree(src, dst)
    edit_json(dst / NBEST_FILE, change)
    return dst


# ---- D06: the same question lower-cased or without its "?" is not pooled ---------------------------
def test_d06_calibration_does_not_pool_the_same_questions_cased_or_without_their_mark(tmp_path):
    first = _run_of(tmp_path, hostile_rows(tmp_path), "first")
    for name, change in (("lower", str.lower), ("nomark", lambda q: q.rstrip("?")),
                         ("upper", lambda q: q.upper().rstrip("?") + " ?")):
        folder = tmp_path / name
        folder.mkdir()
        path = hostile_rows(folder, "renamed", ids=[f"{name}{i}" for i in range(5)])
        data = orjson.loads(path.read_bytes())
        before = orjson.dumps(data)
        for row in data["data"]:
            row["questions"] = [change(q) for q in row["questions"]]
        assert orjson.dumps(data) != before
        path.write_bytes(orjson.dumps(data))
        second = _run_of(tmp_path, path, name)
        result = invoke("oracle", "calibration", first, second, "--out", tmp_path / f"c-{name}")
        assert result.exit_code == 0, result.output
        report = orjson.loads((tmp_path / f"c-{name}" / "calibration.json").read_bytes())
        assert report["pooled"] is None, name
        assert report["not_pooled"] == [{"runs": ["first", name], "shared_questions": 5}]


# ---- D10: an abstaining run's nbest.json without its top-level mark ---------------------------------
def test_d10_an_nbest_json_whose_top_level_and_sources_disagree_on_abstention_is_refused(
        nbest_abst, tmp_path):
    payload = read_oracle(nbest_abst, NBEST_FILE)
    assert payload["abstained"] == 73 and payload["abstain_below"] == "high"
    edits = {
        "notop": (lambda d: [d.pop("abstain_below"), d.pop("abstained")],
                  "but the top level has no abstain_below"),
        "nolevel": (lambda d: d.pop("abstain_below"), "the top level has abstained without"),
        "zero": (lambda d: d.update(abstained=0), "its sources count 73"),
        "nosource": (lambda d: d["sources"][SH].pop("abstained"),
                     f"sources.{SH} has no abstained count"),
        "lowered": (lambda d: [d.update(abstained=72), d["sources"][SH].update(abstained=0)],
                    f"sources.{SH}.abstained is 0, but 1 of its question rows"),
    }
    for name, (change, words) in edits.items():
        folder = _nbest_edited(nbest_abst, tmp_path / name, change)
        with pytest.raises(InputError) as err:
            read_oracle(folder, NBEST_FILE)
        assert words in str(err.value), (name, str(err.value))
        result = invoke("tables", folder, "--table", "mab-nbest", "--out", tmp_path / f"t-{name}")
        assert result.exit_code != 0 and words in result.output, name
    # the file as written reads, marked
    result = invoke("tables", nbest_abst, "--table", "mab-nbest", "--out", tmp_path / "t")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "t" / "mab-nbest.md").read_text()
    assert "abst¶" in text and "below high, 73 questions abstained from" in text
