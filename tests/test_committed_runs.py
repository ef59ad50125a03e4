"""The committed dev runs reproduce byte for byte: a change meant to keep behaviour (a move, a
speed-up) must leave every prediction and every trace as the committed folder has them. A change
meant to alter behaviour writes new runs beside these and points this list at them.

The confidence labels (issue 20) added a `confidence` object to every predictions.jsonl and
traces.jsonl row, so the current runs are the `-confidence` ones; the `-reading` runs they
replace must still be exactly today's output with that field removed (nothing else moved)."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from resolver.results.result_schema import PREDICTIONS_FILE, TRACES_FILE, dumps_lines, loads_lines
from resolver.run.config import RunConfig
from resolver.run.runs import execute

RESULTS = Path(__file__).resolve().parent.parent / "results"
# Committed run -> the configuration that made it (its meta.json says the same).
REPRODUCED = {
    "dev-6k-search-confidence": RunConfig(),
    "dev-6k-plain-confidence": RunConfig(mode="plain"),
    "dev-6k-search-nbest-confidence": RunConfig(plans=("rules-6k", "lexicon-6k",
                                                       "lexicon-6k-orders")),
}
# The runs before the labels -> the current run of the same configuration.
BEFORE_LABELS = {
    "dev-6k-search-reading": "dev-6k-search-confidence",
    "dev-6k-plain-reading": "dev-6k-plain-confidence",
    "dev-6k-search-nbest-reading": "dev-6k-search-nbest-confidence",
}


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory):
    """Each committed configuration run once by the current code: run id -> its folder."""
    out = tmp_path_factory.mktemp("reproduced")
    mp = pytest.MonkeyPatch()
    mp.delenv("FACTRES_PLANS", raising=False)
    # the committed ids again, in another folder: as from an install outside the checkout,
    # which has no committed results/ for a new folder to hide
    mp.setattr("resolver.run.run_folder.committed_results", lambda: None)
    try:
        return {run_id: execute(config, results=out, run_id=run_id).path
                for run_id, config in REPRODUCED.items()}
    finally:
        mp.undo()


@pytest.mark.parametrize("run_id", sorted(REPRODUCED))
def test_committed_run_reproduces_byte_for_byte(run_id, reproduced):
    committed = RESULTS / run_id
    meta = orjson.loads((committed / "meta.json").read_bytes())
    config = REPRODUCED[run_id]
    assert meta["config"]["plans"] == list(config.plan_specs())
    assert meta["config"]["mode"] == config.mode
    assert meta["git"]["dirty"] is False
    for name in (PREDICTIONS_FILE, TRACES_FILE):
        assert (reproduced[run_id] / name).read_bytes() == (committed / name).read_bytes(), name


@pytest.mark.parametrize("before", sorted(BEFORE_LABELS))
def test_runs_before_the_labels_are_todays_output_without_them(before, reproduced):
    now = reproduced[BEFORE_LABELS[before]]
    old_meta = orjson.loads((RESULTS / before / "meta.json").read_bytes())
    config = REPRODUCED[BEFORE_LABELS[before]]
    assert (old_meta["config"]["plans"], old_meta["config"]["mode"]) == (
        list(config.plan_specs()), config.mode)
    for name in (PREDICTIONS_FILE, TRACES_FILE):
        rows = loads_lines((now / name).read_bytes())
        assert all("confidence" in row for row in rows), name
        for row in rows:
            del row["confidence"]
        assert dumps_lines(rows) == (RESULTS / before / name).read_bytes(), name
