"""The scores the README and the docs report for the bundled dev rows, guarded against regressions: the
main command's search and the plain latest-wins baseline (issue 3: multi-hop at least 75)."""
from __future__ import annotations

import pytest

from resolver.run.config import RunConfig
from resolver.run.runs import execute


def _em(run, kind):
    row = next(r for r in run.metrics["rows"] if r["pooled"] and r["kind"] == kind)
    return row["em"]


@pytest.mark.parametrize("mode, mh_floor", [("search", 0.90), ("plain", 0.75)])
def test_bundled_dev_rows_score_what_the_readme_says(tmp_path, mode, mh_floor):
    run = execute(RunConfig(mode=mode), results=tmp_path, run_id=mode)
    assert _em(run, "sh") == 1.0
    assert _em(run, "mh") >= mh_floor
