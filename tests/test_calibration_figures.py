"""The calibration figures docs/oracle.md quotes are the committed calibration folders' own."""
from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "oracle.md").read_text(encoding="utf-8")
# docs row label -> (calibration folder, run name in it; None: its pooled rows)
ROWS = {
    "`dev-6k-search-confidence` (200)": ("oracle-calibration-dev-6k", "dev-6k-search-confidence"),
    "blind set `tests/data/blind_mh/` (185), `blind-mh-search-confidence`":
        ("oracle-calibration-blind-mh", "blind-mh-search-confidence"),
    "blind confidence set, answerable (165), `blind-conf-search`":
        ("oracle-calibration-blind-conf", "blind-conf-search"),
    "blind confidence set, unanswerable (60), `blind-conf-unanswerable`":
        ("oracle-calibration-blind-conf", "blind-conf-unanswerable"),
    "both together (225)": ("oracle-calibration-blind-conf", None),
}


def _labels(folder: str, run: str | None) -> dict[str, dict]:
    doc = orjson.loads((ROOT / "results" / folder / "calibration.json").read_bytes())
    part = doc["pooled"] if run is None else next(r for r in doc["runs"] if r["run"] == run)
    return {row["label"]: row for row in part["labels"]}


@pytest.mark.parametrize("label", sorted(ROWS))
def test_a_calibration_row_of_the_docs_is_its_committed_folders(label):
    line = next(x for x in DOC.splitlines() if x.startswith(f"| {label} |"))
    cells = [c.strip() for c in line.strip("|").split("|")][1:]
    found = _labels(*ROWS[label])
    for level, cell in zip(("high", "medium", "low"), cells):
        right, questions, coverage = re.fullmatch(
            r"(\d+)/(\d+) = [\d.]+ \[([\d.]+)\]", cell).groups()
        row = found[level]
        assert (int(right), int(questions)) == (row["right"], row["questions"]), (label, level)
        assert float(coverage) == round(row["coverage"], 2), (label, level)
