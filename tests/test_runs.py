"""Run folders: what they hold, never overwritten, written atomically; reader and repair lanes."""
from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest

from resolver.errors import InputError, RunExistsError
from resolver.plan.plans import Plan
from resolver.results.result_schema import MetaJson, MetricsRow, PredictionRow, loads_lines
from resolver.run import runs
from resolver.run.config import RunConfig
from resolver.run.runs import execute

SMALL = Path(__file__).parent / "data" / "runs_small.json"
FILES = {"meta.json", "predictions.jsonl", "traces.jsonl", "readout.jsonl", "metrics.json",
         "table.md", "table.tex"}


def _config(*paths, **kw) -> RunConfig:
    return RunConfig(data=tuple(str(p) for p in (paths or (SMALL,))), **kw)


def _rows_with(tmp_path: Path, extra_question: str | None = None, answers: bool = True) -> Path:
    rows = orjson.loads(SMALL.read_bytes())
    if extra_question:
        rows[0]["questions"].append(extra_question)
        rows[0]["answers"].append(["Jane Austen"])
        rows[0]["metadata"]["qa_pair_ids"].append("sh6_extra")
    if not answers:
        for row in rows:
            del row["answers"]
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps(rows))
    return path


def test_run_folder_holds_every_file(tmp_path):
    run = execute(_config(), results=tmp_path, run_id="r1")
    assert run.path == tmp_path / "r1"
    assert {p.name for p in run.path.iterdir()} == FILES
    assert [p.name for p in tmp_path.iterdir()] == ["r1"]        # no temp folder left


def test_meta_records_configuration_inputs_and_versions(tmp_path):
    run = execute(_config(), results=tmp_path, run_id="r1")
    meta = orjson.loads((run.path / "meta.json").read_bytes())
    # every field but the label, which only `--name` gives
    assert set(meta) == set(MetaJson.__annotations__) - {"label"}
    named = execute(_config(), results=tmp_path, run_id="r2", label="my system")
    assert named.meta["label"] == "my system"
    assert orjson.loads((named.path / "meta.json").read_bytes())["label"] == "my system"
    assert meta["data"] == [str(SMALL)]
    assert meta["data_sha256"] == {str(SMALL): hashlib.sha256(SMALL.read_bytes()).hexdigest()}
    assert meta["split"] == "dev" and meta["reader"] == "none" and meta["repair"] == "none"
    assert [s["set_id"] for s in meta["plan_sets"]] == ["live:rules", "live:lexicon"]
    rules = meta["plan_sets"][0]
    assert rules["source"] == "live" and rules["planner"] == "rules"
    assert "resolver/plan/compile_rules.py" in rules["compiler_sha256"]
    assert len(meta["grammar_sha256"]) == 64
    assert meta["versions"]["factres"] and meta["versions"]["numpy"]
    assert set(meta["git"]) == {"commit", "dirty"}
    assert meta["counts"]["questions"] == 7
    assert meta["config"]["bootstrap"] == {"resamples": 1000, "seed": 20240601, "level": 0.95}


def test_predictions_and_metrics_follow_the_schema(tmp_path):
    run = execute(_config(), results=tmp_path, run_id="r1")
    rows = loads_lines((run.path / "predictions.jsonl").read_bytes())
    assert [r["qid"] for r in rows] == ["sh6_0", "sh6_1", "sh6_2", "mh6_0", "mh6_1", "sh32_0",
                                        "sh32_1"]
    # every field the schema requires, and the confidence label (optional: older runs lack it)
    assert all(set(r) == set(PredictionRow.__required_keys__) | {"confidence"} for r in rows)
    assert rows[0]["gold"] == ["Jane Austen"] and rows[0]["em"] in (0, 1)
    assert all(r["prediction"] == r["resolver_answer"] and r["reader"] == "none" for r in rows)
    traces = loads_lines((run.path / "traces.jsonl").read_bytes())
    assert [t["qid"] for t in traces] == [r["qid"] for r in rows]
    assert all(t["reader"] is None and t["repair"] is None and "candidates" in t for t in traces)
    metrics = orjson.loads((run.path / "metrics.json").read_bytes())
    assert metrics["scored"] is True and metrics["run_id"] == "r1"
    assert all(set(r) == set(MetricsRow.__annotations__) for r in metrics["rows"])
    assert [r["label"] for r in metrics["rows"]] == [
        "factconsolidation_sh_6k", "factconsolidation_sh_32k", "factconsolidation_mh_6k",
        "pooled sh", "pooled mh", "pooled all"]
    assert (run.path / "table.md").read_text() == run.table


def test_an_existing_run_id_is_an_error_and_nothing_is_touched(tmp_path):
    execute(_config(), results=tmp_path, run_id="r1")
    before = (tmp_path / "r1" / "meta.json").read_bytes()
    with pytest.raises(RunExistsError, match="run 'r1' exists"):
        execute(_config(), results=tmp_path, run_id="r1")
    assert (tmp_path / "r1" / "meta.json").read_bytes() == before


def test_default_ids_never_reuse_a_folder(tmp_path):
    first = execute(_config(), results=tmp_path)
    second = execute(_config(), results=tmp_path)
    # the id says the split, the sizes and the mode: a plain run is told from a search run
    assert first.run_id.startswith("dev-6k-32k-search-")
    assert len(first.run_id) == len("dev-6k-32k-search-") + 8
    assert second.run_id == first.run_id + "-2"


def test_bad_run_id_is_refused(tmp_path):
    with pytest.raises(InputError, match="bad run id '../x'"):
        execute(_config(), results=tmp_path, run_id="../x")


@pytest.mark.parametrize("failure", [RuntimeError("disk full"), KeyboardInterrupt()])
def test_an_interrupted_write_leaves_no_folder(tmp_path, monkeypatch, failure):
    def broken(*args, **kwargs):
        raise failure
    monkeypatch.setattr(runs.tables, "latex", broken)
    with pytest.raises(type(failure)):
        execute(_config(), results=tmp_path, run_id="r1")
    assert list(tmp_path.iterdir()) == []


def test_test_split_writes_predictions_without_scores(tmp_path):
    run = execute(_config(_rows_with(tmp_path, answers=False), split="test", allow_dirty=True),
                  results=tmp_path / "results", run_id="t1")
    rows = loads_lines((run.path / "predictions.jsonl").read_bytes())
    assert all(r["gold"] is None and r["em"] is None for r in rows)
    assert run.metrics["scored"] is False
    assert all(r["em"] is None and r["ci"] is None for r in run.metrics["rows"])
    assert "unscored" in run.table


def test_dev_split_needs_gold(tmp_path):
    path = _rows_with(tmp_path, answers=False)
    with pytest.raises(InputError) as info:
        execute(_config(path), results=tmp_path / "results")
    assert str(info.value) == (f"{path}: 7 question(s) have no gold answers (first: sh6_0); "
                               "use --split test to run without scoring")
    assert not (tmp_path / "results").exists()


def test_unknown_live_set_is_an_error(tmp_path):
    with pytest.raises(InputError, match="unknown live plan set 'live:nope'"):
        execute(_config(plans=("live:nope",)), results=tmp_path)


def test_plan_sets_run_in_the_order_given(tmp_path):
    run = execute(_config(plans=("live:lexicon",)), results=tmp_path, run_id="r1")
    assert [s["set_id"] for s in run.meta["plan_sets"]] == ["live:lexicon"]


# ---- lanes ------------------------------------------------------------------------------------
class FakeReader:
    name = "fake:reader"
    last_error = ""

    def __init__(self):
        self.seen = []

    def answer(self, question_text, fact_lines):
        self.seen.append((question_text, list(fact_lines)))
        if "Ruritania" in question_text:
            self.last_error = "timeout"
            return ""
        return "France"

    def describe(self):
        return {"reader": self.name, "prompt_sha256": "0" * 64}


class FakeRepairer:
    name = "ollama:fake"
    last_error = ""

    def __init__(self):
        self.asked = []

    def repair(self, question_text, plan, store):
        self.asked.append((question_text, plan))
        return [Plan("Bleak House", ("author",), "person", "ollama:fake", "repair")]


def test_reader_answers_from_the_winning_path(tmp_path, monkeypatch):
    reader = FakeReader()
    monkeypatch.setattr("resolver.models.reader.make_reader",
                        lambda spec, host=None, timeout=30.0: reader)
    run = execute(_config(reader="fake:reader"), results=tmp_path, run_id="r1")
    rows = loads_lines((run.path / "predictions.jsonl").read_bytes())
    traces = {t["qid"]: t for t in loads_lines((run.path / "traces.jsonl").read_bytes())}
    by_qid = {r["qid"]: r for r in rows}
    assert by_qid["sh6_2"]["prediction"] == "France" and by_qid["sh6_2"]["em"] == 1
    assert by_qid["sh6_0"]["prediction"] == "France" and by_qid["sh6_0"]["em"] == 0
    assert by_qid["sh6_0"]["resolver_answer"] == "Jane Austen"
    assert by_qid["sh32_0"]["prediction"] == "" and by_qid["sh32_0"]["em"] == 0
    winner_lines = [h["text"] for h in traces["sh6_0"]["winner"]["hops"]]
    assert traces["sh6_0"]["reader"]["facts"] == winner_lines
    assert ("Who is the author of Bleak House?", winner_lines) in reader.seen
    assert traces["sh32_0"]["reader"]["error"] == "timeout"
    assert all(r["reader"] == "fake:reader" for r in rows + run.metrics["rows"])
    assert run.meta["reader"] == "fake:reader"
    assert run.meta["lanes"]["reader"] == {"reader": "fake:reader", "prompt_sha256": "0" * 64}
    assert run.meta["counts"]["reader_failures"] == 1


def test_repair_reresolves_suspicious_questions(tmp_path, monkeypatch):
    repairer = FakeRepairer()
    monkeypatch.setattr("resolver.models.repair.make_repairer",
                        lambda spec, host=None, timeout=30.0: repairer)
    data = _rows_with(tmp_path, extra_question="Who is the head coach of Zanzibar Dynamo?")
    plain = execute(_config(data), results=tmp_path / "results", run_id="plain")
    run = execute(_config(data, repair="ollama:fake"), results=tmp_path / "results",
                  run_id="repaired")
    before = {r["qid"]: r for r in plain.predictions}["sh6_extra"]
    after = {r["qid"]: r for r in run.predictions}["sh6_extra"]
    assert (before["prediction"], before["em"]) == ("", 0)
    assert (after["prediction"], after["em"], after["plan_set"]) == \
        ("Jane Austen", 1, "repair:fake")
    trace = {t["qid"]: t for t in loads_lines((run.path / "traces.jsonl").read_bytes())}
    repair = trace["sh6_extra"]["repair"]
    assert (repair["before"], repair["after"], repair["suspicious"]) == \
        ("", "Jane Austen", "no complete path")
    assert ("Who is the head coach of Zanzibar Dynamo?", None) in repairer.asked
    assert run.meta["repair"] == "ollama:fake"
    assert run.meta["plan_sets"][-1]["set_id"] == "repair:fake"
    assert run.meta["counts"]["repaired"] == len(repairer.asked)
    assert run.meta["counts"]["repair_changed"] >= 1


# ---- archived plan sets -------------------------------------------------------------------------
def _archive_rules(tmp_path: Path, monkeypatch, data: Path = SMALL, set_id="rules-small") -> Path:
    from resolver.haystack import load
    from resolver.plan.archive import write_plan_set
    from resolver.plan.planning import live_plan_sets
    from resolver.plan.plans import PlanSet
    monkeypatch.setenv("FACTRES_PLANS", str(tmp_path / "plans"))
    dataset, _ = load([data])
    (live,) = live_plan_sets(dataset, ("rules",))
    return write_plan_set(PlanSet(set_id, dict(live.manifest, live=False), live.plans,
                                  live.question_sha256))


def test_archived_set_gives_the_live_sets_predictions(tmp_path, monkeypatch):
    folder = _archive_rules(tmp_path, monkeypatch)
    live = execute(_config(plans=("live:rules",)), results=tmp_path / "r", run_id="live")
    archived = execute(_config(plans=("rules-small",)), results=tmp_path / "r", run_id="arch")
    strip = [{k: v for k, v in r.items() if k != "plan_set"} for r in live.predictions]
    assert [{k: v for k, v in r.items() if k != "plan_set"} for r in archived.predictions] \
        == strip
    (record,) = archived.meta["plan_sets"]
    assert record["set_id"] == "rules-small" and record["source"] == "archive"
    assert record["planner"] == "rules" and record["compiler_sha256"] is None
    assert record["manifest_sha256"] == \
        hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()
    assert record["plans_sha256"] == live.meta["plan_sets"][0]["plans_sha256"]


def test_tampered_archive_is_refused(tmp_path, monkeypatch):
    from resolver.errors import ArchiveError
    folder = _archive_rules(tmp_path, monkeypatch)
    plans = folder / "plans.jsonl"
    plans.write_bytes(plans.read_bytes().replace(b"Bleak House", b"Bleak Housf", 1))
    with pytest.raises(ArchiveError, match="failed verification"):
        execute(_config(plans=("rules-small",)), results=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_archive_compiled_for_other_questions_is_refused(tmp_path, monkeypatch):
    from resolver.errors import ArchiveError
    _archive_rules(tmp_path, monkeypatch)
    rows = orjson.loads(SMALL.read_bytes())
    rows[0]["questions"][0] = "Who wrote Bleak House?"
    other = tmp_path / "other.json"
    other.write_bytes(orjson.dumps(rows))
    with pytest.raises(ArchiveError) as info:
        execute(_config(other, plans=("rules-small",)), results=tmp_path / "r")
    assert str(info.value) == ("plan set 'rules-small' was compiled for another question "
                               "under id 'sh6_0'; recompile it for this data")
