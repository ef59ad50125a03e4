"""The committed dev runs reproduce byte for byte: a change meant to keep behaviour (a move, a
speed-up) must leave every prediction and every trace as the committed folder has them. A change
meant to alter behaviour writes new runs beside these and points this list at them."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from resolver.run.config import RunConfig
from resolver.run.result_schema import PREDICTIONS_FILE, TRACES_FILE
from resolver.run.runs import execute

RESULTS = Path(__file__).resolve().parent.parent / "results"
# Committed run -> the configuration that made it (its meta.json says the same).
REPRODUCED = {
    "dev-6k-search-reading": RunConfig(),
    "dev-6k-plain-reading": RunConfig(mode="plain"),
    "dev-6k-search-nbest-reading": RunConfig(plans=("rules-6k", "lexicon-6k",
                                                    "lexicon-6k-orders")),
}


@pytest.mark.parametrize("run_id", sorted(REPRODUCED))
def test_committed_run_reproduces_byte_for_byte(run_id, tmp_path, monkeypatch):
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    committed = RESULTS / run_id
    meta = orjson.loads((committed / "meta.json").read_bytes())
    config = REPRODUCED[run_id]
    assert meta["config"]["plans"] == list(config.plan_specs())
    assert meta["config"]["mode"] == config.mode
    run = execute(config, results=tmp_path, run_id=run_id)
    for name in (PREDICTIONS_FILE, TRACES_FILE):
        assert (run.path / name).read_bytes() == (committed / name).read_bytes(), name
