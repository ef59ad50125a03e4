"""Two plan hashes that are not the same thing (issue 24): meta.json's `plans_sha256` hashes the
plans a run used for its own questions; an archived set's SHA256SUMS hashes its plans.jsonl
file. The archive's manifest is pinned by `manifest_sha256`, which is the SHA256SUMS line."""
from __future__ import annotations

from pathlib import Path

import orjson

from resolver.haystack import bundled_path, load, sha256_bytes
from resolver.plan.archive import load_plan_set
from resolver.run.runs import plans_sha256

ROOT = Path(__file__).resolve().parent.parent


def _sums(set_id: str) -> dict[str, str]:
    lines = (ROOT / "plans" / set_id / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split("  ") for line in lines)}


def _sets(run: str) -> dict[str, dict]:
    meta = orjson.loads((ROOT / "results" / run / "meta.json").read_bytes())
    return {s["set_id"]: s for s in meta["plan_sets"]}


def test_plans_sha256_hashes_the_runs_plans_not_the_archived_file(monkeypatch):
    monkeypatch.delenv("FACTRES_PLANS", raising=False)
    dataset, _gold = load([bundled_path()])
    nbest = _sets("dev-6k-search-nbest-confidence")
    for set_id in ("rules-6k", "lexicon-6k", "lexicon-6k-orders"):
        recorded = nbest[set_id]
        assert recorded["plans_sha256"] == plans_sha256(load_plan_set(set_id), dataset)
        assert recorded["plans_sha256"] != _sums(set_id)["plans.jsonl"]
        assert _sums(set_id)["plans.jsonl"] == sha256_bytes(
            (ROOT / "plans" / set_id / "plans.jsonl").read_bytes())
        assert recorded["manifest_sha256"] == _sums(set_id)["manifest.json"]


def test_dev_6k_plain_records_the_archived_sets_plans_under_live_names():
    """dev-6k-plain ran the live sets of its day; their plans are those of rules-6k and
    lexicon-6k, so its plans_sha256 are theirs, while it has no manifest."""
    plain, nbest = _sets("dev-6k-plain"), _sets("dev-6k-search-nbest-confidence")
    assert plain["live:rules"]["plans_sha256"] == nbest["rules-6k"]["plans_sha256"]
    assert plain["live:lexicon"]["plans_sha256"] == nbest["lexicon-6k"]["plans_sha256"]
    assert plain["live:rules"]["manifest_sha256"] is None
