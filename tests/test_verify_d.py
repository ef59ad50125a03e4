"""The verification of the audit fixes on a snapshot of main (verify-d, docs/audits/verify-d.md):
one test per weak case the project fixes (D01, D02, D03, D05, D06, D07, D09, D10), each failing
on the code before the fix. M13 stays a documented limit (docs/memory.md, docs/server.md).

As in test_verify_c, most cases edit a copy of a real run over the bundled 6K rows, or of an
oracle folder, the way the verification did, then ask the commands it asked."""
from __future__ import annotations

import orjson
from test_audit3 import (
    _run_of,
    hostile_rows,
    invoke,
)


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
