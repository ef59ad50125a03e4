"""What an imported run feeds: the miss buckets that need no plans (`factres oracle misses`), the
mab-fc row of its system (`factres tables`), and several sizes at once: synthetic 32K rows from
benchmarks/synthetic.py scored beside the real 6K samples, with no frozen configuration."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import orjson
import pytest
from test_imported import MH_FILE, SH_FILE, harness_file
from test_oracle_paths import write_tiny

from oracle.misses import IMPORTED_BUCKETS, analyse
from resolver.exchange.imported import findings, score_files
from resolver.haystack import bundled_path
from resolver.report.folders import gather
from resolver.report.paper_tables import build
from resolver.run.tables import markdown_table

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "data" / "tables"
SH, MH = "factconsolidation_sh_6k_no", "factconsolidation_mh_6k_no"


def _synthetic():
    name = "factres_bench_synthetic"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "synthetic.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module           # dataclasses look the module up
        spec.loader.exec_module(module)
    return sys.modules[name]


# ---- misses --------------------------------------------------------------------------------
def test_every_imported_bucket_on_the_tiny_haystack(tmp_path):
    data = write_tiny(tmp_path)
    predictions = {SH + "0": "Oldcap",      # the earlier capital of Xland: stale
                   SH + "1": "Yland",       # gold is the first citizenship: needs older
                   SH + "2": "",            # empty prediction: unanswered
                   MH + "0": "Xland",       # a latest path existed: missed
                   MH + "1": "nowhere",     # gold takes older versions at both hops
                   MH + "2": "Zed",         # right
                   MH + "3": "Ycity",       # gold takes an older citizenship
                   MH + "4": "Ycity"}       # the gold is nowhere in the store
    path = tmp_path / "p.jsonl"             # SH + "3" has no record
    path.write_text("".join(json.dumps({"qid": q, "prediction": p}) + "\n"
                            for q, p in predictions.items()))
    run = score_files([path], data=[data], name="toy", results=tmp_path / "results")
    analysis = analyse(run.path)
    buckets = {m["qid"]: (m["bucket"], m["detail"]) for m in analysis.payload["misses"]}
    assert buckets == {
        SH + "0": ("stale", "answered 'Oldcap', 1 version(s) before the latest 'Newcap' of "
                            "(Xland, capital)"),
        SH + "1": ("needs_older_version", "O1"),
        SH + "2": ("unanswered", "empty prediction"),
        SH + "3": ("unanswered", "no record in the import"),
        MH + "0": ("latest_path_missed", "latest gold path Alpha -[citizenship]-> Yland "
                                         "-[capital]-> Ycity"),
        MH + "1": ("needs_older_version", "O1 O1"),
        MH + "3": ("needs_older_version", "O1 L"),
        MH + "4": ("no_gold_path", "")}
    assert analysis.payload["buckets"] == list(IMPORTED_BUCKETS)
    summary = analysis.payload["summary"]
    assert summary["factconsolidation_sh_6k"]["buckets"] == {
        "no_gold_path": 0, "unanswered": 2, "needs_older_version": 1, "stale": 1,
        "latest_path_missed": 0}
    assert summary["factconsolidation_mh_6k"]["misses"] == 4
    assert "| stale | 0 | 1 | 1 |" in analysis.markdown


def test_misses_of_the_sample_run_agree_with_its_stale_rate(tmp_path):
    run = score_files([SH_FILE, MH_FILE], results=tmp_path)
    analysis = analyse(run.path)
    summary = analysis.payload["summary"]
    sh_row = next(r for r in run.metrics["rows"] if r["label"] == "factconsolidation_sh_6k")
    assert summary["factconsolidation_sh_6k"]["buckets"]["stale"] == sh_row["stale"] == 35
    for source, counts in summary.items():
        assert counts["misses"] == sum(counts["buckets"].values())
        assert counts["misses"] == sum(1 for r in run.predictions
                                       if r["source"] == source and not r["em"])


# ---- tables ---------------------------------------------------------------------------------
def test_mab_fc_gives_each_imported_system_a_row_below_the_resolver_runs(tmp_path):
    full = score_files([SH_FILE, MH_FILE], results=tmp_path)
    partial = harness_file(tmp_path, "partial.json",
                           [{"output": "x", "answer": ["y"], "qa_pair_id": SH + "0"}])
    part = score_files([partial], name="half-done", results=tmp_path)
    (table,), _ = build(gather((str(FIXTURES / "dev-small"), str(full.path), str(part.path))),
                        ("mab-fc",))
    assert [len(g) for g in table.groups] == [1, 2]        # resolver runs, then the systems
    md = markdown_table(table)
    commit = full.meta["git"]["commit"][:7]
    dirty = "†" if full.meta["git"]["dirty"] else ""
    # each system by its name (a mark of the commit on it), its EM cells at 6K and 32K
    assert (f"| Long_context_agent_gemini-2.5-flash-lite{dirty} | 65.0 [55.0, 74.0] | "
            f"4.0 [1.0, 8.0] | — | — | 65.0 [55.0, 74.0] | 4.0 [1.0, 8.0] |") in md
    assert f"| half-done§{dirty} | 0.0 [0.0, 0.0] | — |" in md
    assert (f"Long_context_agent_gemini-2.5-flash-lite: run {full.run_id}, mode imported, "
            f"split dev, commit {commit}{dirty};") in md
    assert "§ some questions have no prediction in the imported files" in md
    assert "imported: another system's predictions, scored by factres score" in md


# ---- several sizes ------------------------------------------------------------------------------
def _synthetic_32k(tmp_path) -> tuple[Path, list[dict]]:
    """Synthetic 32K rows under the official source names (what a 32K row file looks like)."""
    syn = _synthetic()
    rows = syn.generate(syn.load_context("32k"), "32k", seed=0, n_sh=20, n_mh=20)
    for row in rows:
        source = row["metadata"]["source"].replace("synthetic_", "factconsolidation_")
        row["metadata"] = {"source": source, "qa_pair_ids": [f"{source}_no{i}" for i in
                                                             range(len(row["questions"]))]}
    path = tmp_path / "rows_32k.json"
    path.write_bytes(orjson.dumps({"data": rows}))
    return path, rows


def test_a_run_over_6k_and_32k_fills_both_columns_without_a_frozen_configuration(tmp_path):
    rows_path, rows = _synthetic_32k(tmp_path)
    predictions = tmp_path / "p32.jsonl"
    with predictions.open("w") as out:
        for row in rows:
            for i, (qid, answers) in enumerate(zip(row["metadata"]["qa_pair_ids"],
                                                   row["answers"])):
                # right on even questions, nothing on every third odd one
                text = answers[0] if i % 2 == 0 else ("" if i % 3 == 0 else "no idea")
                out.write(json.dumps({"qa_pair_id": qid, "answer": text}) + "\n")
    run = score_files([SH_FILE, MH_FILE, predictions], data=[bundled_path(), rows_path],
                      fields={"prediction": "answer"}, results=tmp_path / "results")
    meta = run.meta
    assert meta["splits"] == {"factconsolidation_sh_6k": "dev", "factconsolidation_mh_6k": "dev",
                              "factconsolidation_sh_32k": "test",
                              "factconsolidation_mh_32k": "test"}
    assert meta["split"] == "dev+test" and meta["counts"]["questions"] == 240
    assert run.run_id.startswith("imported-long_context_agent_gemini-2.5-flash-lite-6k-32k-")
    cells = {r["label"]: r for r in run.metrics["rows"]}
    assert cells["factconsolidation_sh_32k"]["em"] == 0.5 == cells["factconsolidation_mh_32k"]["em"]
    assert cells["pooled sh"]["sizes"] == ["6k", "32k"]
    assert cells["pooled sh"]["em"] == pytest.approx((0.65 + 0.5) / 2)
    assert any(line.startswith("note: scored the gold of test-split source(s) "
                               "factconsolidation_mh_32k, factconsolidation_sh_32k")
               for line in findings(meta))
    (table,), _ = build(gather((str(run.path),)), ("mab-fc",), columns=("run", "split"))
    (row,) = table.rows
    texts = [c.text for c in row]
    assert texts[0] == "Long_context_agent_gemini-2.5-flash-lite" and texts[1] == run.path.name
    # its sizes only: 6K and 32K, then the means
    assert table.headers == ("system", "run", "split", "sh", "mh", "sh", "mh", "sh", "mh")
    assert texts[2:] == ["dev+test", "65.0", "4.0", "50.0", "50.0", "57.5", "27.0"]
