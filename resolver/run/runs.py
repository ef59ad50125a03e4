"""A `Run`: data + plan sets -> predictions -> metrics, recorded in `results/<run-id>/`.

The run is the one place that holds gold next to predictions: it takes the gold book from the
loader and hands it to `scoring` only, after resolution is over (on the test split it drops it
unread). The folder shapes are in `result_schema`.

Results are never overwritten: an explicit run id that exists raises `RunExistsError`; a
default id takes the next free suffix. A run is written into `results/.tmp-<id>-<pid>/` and
renamed into place once metrics.json (the last file) is written, so an interrupted run leaves
no folder that looks complete.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from resolver import __version__
from resolver.errors import ArchiveError, InputError, RunExistsError
from resolver.haystack import Dataset, Gold, load
from resolver.plan.plans import Compiled, PlanSet
from resolver.run import scoring, tables
from resolver.run.config import RunConfig
from resolver.run.identity import (
    LEXICON_FILES,
    LIVE_COMPILER_FILES,
    RESOLVER_FILES,
    package_versions,
    sha256,
    source_hashes,
)
from resolver.run.protocol import admit, off_split_sources
from resolver.run.result_schema import (
    META_FILE,
    META_SCHEMA,
    METRICS_FILE,
    METRICS_SCHEMA,
    PREDICTIONS_FILE,
    TABLE_MD_FILE,
    TABLE_TEX_FILE,
    TRACES_FILE,
    dumps,
    dumps_lines,
    results_root,
)
from resolver.search.resolve import Prediction, resolve_dataset, resolve_question
from resolver.text.grammar import grammar_sha256

SPLITS = ("dev", "test")
LIVE_PREFIX = "live:"
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*$")

# progress(label, total) is called at the start of each stage and returns advance(n).
Progress = Callable[[str, int], Callable[[int], None]]


@dataclass
class Run:
    run_id: str
    path: Path
    meta: dict
    metrics: dict
    predictions: list[dict] = field(repr=False)

    @property
    def table(self) -> str:
        return tables.markdown(self.metrics["rows"])


# ---- hashing and provenance -----------------------------------------------------------------
def _plans_sha256(plan_set: PlanSet, dataset: Dataset) -> str:
    rows = []
    for q in dataset.questions:
        comp = plan_set.plans.get(q.qid)
        if comp is not None:
            rows.append({"qid": q.qid, "plans": [p.to_json() for p in comp.plans],
                         "reason": comp.reason})
    return sha256(dumps_lines(rows))


# ---- plan sets ------------------------------------------------------------------------------
def _manifest_file(spec: str) -> Path:
    from resolver.plan.archive import set_dir
    return set_dir(spec) / "manifest.json"


def _check_questions(plan_set: PlanSet, dataset: Dataset) -> None:
    """An archived set must have been compiled from these very questions."""
    for q in dataset.questions:
        recorded = plan_set.question_sha256.get(q.qid)
        if recorded and recorded != sha256(q.text.encode("utf-8")):
            raise ArchiveError(f"plan set {plan_set.set_id!r} was compiled for another "
                               f"question under id {q.qid!r}; recompile it for this data")


def load_plan_sets(dataset: Dataset, specs: tuple[str, ...]) -> tuple[list[PlanSet], list[dict]]:
    """Plan sets named by `specs` ("live:rules", "live:lexicon", an archive id or folder) and
    their meta.json records, in the given order."""
    sets, records = [], []
    for spec in specs:
        if spec.startswith(LIVE_PREFIX):
            from resolver.plan.planning import LIVE_SETS, live_plan_sets
            name = spec[len(LIVE_PREFIX):]
            if name not in LIVE_SETS:
                raise InputError(f"unknown live plan set {spec!r}",
                                 expected=", ".join(LIVE_PREFIX + n for n in LIVE_SETS))
            (plan_set,) = live_plan_sets(dataset, (name,))
            record = {"source": "live", "manifest_sha256": None,
                      "compiler_sha256": source_hashes(LIVE_COMPILER_FILES)}
        else:
            from resolver.plan.archive import (
                load_plan_set,  # lazily: only archived runs need it
            )
            plan_set = load_plan_set(spec)
            _check_questions(plan_set, dataset)
            manifest = _manifest_file(spec)
            record = {"source": "archive", "compiler_sha256": None,
                      "manifest_sha256": sha256(manifest.read_bytes())
                      if manifest.is_file() else None}
        record.update(_set_record(plan_set, dataset))
        sets.append(plan_set)
        records.append(record)
    ids = [s.set_id for s in sets]
    if len(set(ids)) != len(ids):
        raise InputError(f"a plan set is named twice: {', '.join(ids)}")
    return sets, records


def _set_record(plan_set: PlanSet, dataset: Dataset) -> dict:
    manifest = plan_set.manifest or {}
    return {"set_id": plan_set.set_id, "planner": manifest.get("planner"),
            "model": manifest.get("model"), "level": manifest.get("level"),
            "plans_sha256": _plans_sha256(plan_set, dataset),
            "questions_with_plans": sum(1 for q in dataset.questions
                                        if plan_set.plans.get(q.qid, Compiled(())).plans)}


# ---- lanes: repair and reader ---------------------------------------------------------------
def _model_of(name: str) -> str:
    return name.split(":", 1)[1] if name.startswith("ollama:") else name


def apply_repair(dataset: Dataset, plan_sets: list[PlanSet], predictions: list[Prediction],
                 repairer, advance: Callable[[int], None] | None = None
                 ) -> tuple[list[Prediction], dict[str, dict], PlanSet]:
    """Ask the repairer for new plans where the selector distrusts its answer, and resolve
    those questions again with the original plans plus the repair set. Returns the new
    predictions, the repair trace of each repaired qid, and the repair plan set."""
    by_qid = {q.qid: q for q in dataset.questions}
    repair_set = PlanSet(f"repair:{_model_of(repairer.name)}",
                         {"planner": "repair", "model": _model_of(repairer.name),
                          "level": "relation"})
    out, traces = [], {}
    for pred in predictions:
        if advance:
            advance(1)
        question = by_qid[pred.qid]
        compiled = [(ps.set_id, ps.plans.get(pred.qid, Compiled((), "not in plan set")))
                    for ps in plan_sets]
        if not pred.suspicious:
            out.append(pred)
            continue
        # The plan to repair: the winner's, else the first plan compiled (None if there is
        # none: the repairer then plans from the question alone).
        plan = pred.plan or next((p for _, c in compiled for p in c.plans), None)
        store = dataset.haystack_of(question).store
        new_plans = tuple(repairer.repair(question.text, plan, store))
        repair_set.plans[pred.qid] = Compiled(new_plans, "" if new_plans else "no repair")
        repair_set.question_sha256[pred.qid] = sha256(question.text.encode("utf-8"))
        after = pred
        if new_plans:
            after = resolve_question(question, store,
                                     compiled + [(repair_set.set_id, Compiled(new_plans))])
        traces[pred.qid] = {"name": repairer.name, "suspicious": pred.suspicious,
                            "plans": [p.to_json() for p in new_plans], "before": pred.answer,
                            "after": after.answer,
                            "error": getattr(repairer, "last_error", "") or ""}
        out.append(after)
    return out, traces, repair_set


def apply_reader(predictions: list[Prediction], reader,
                 advance: Callable[[int], None] | None = None
                 ) -> tuple[list[str], dict[str, dict]]:
    """The reader's answer for every answered question, given only the question and the
    winning path's original fact lines. Unanswered questions stay unanswered (no facts)."""
    answers, traces = [], {}
    for pred in predictions:
        if advance:
            advance(1)
        if pred.winner is None:
            answers.append("")
            continue
        facts = [hop.text for hop in pred.winner.hops]
        answer = reader.answer(pred.question, facts)
        error = (getattr(reader, "last_error", "") or "") if answer == "" else ""
        traces[pred.qid] = {"name": reader.name, "facts": facts, "answer": answer,
                            "error": error}
        answers.append(answer)
    return answers, traces


# ---- the run --------------------------------------------------------------------------------
def _check_split(config: RunConfig, dataset: Dataset, gold: Gold) -> Gold | None:
    if config.split not in SPLITS:
        raise InputError(f"unknown split {config.split!r}", expected=" or ".join(SPLITS))
    if config.split == "test":
        return None          # the test split's gold is never read
    if not dataset.questions:
        raise InputError("the data has no questions to score (a bare context?)",
                         path=dataset.paths[0], expected="rows with questions and answers")
    missing = [q.qid for q in dataset.questions if not gold[q.qid]]
    if missing:
        raise InputError(f"{len(missing)} question(s) have no gold answers (first: "
                         f"{missing[0]}); use --split test to run without scoring",
                         path=dataset.paths[0])
    return gold


def _prediction_rows(predictions: list[Prediction], answers: list[str], ems: list[int | None],
                     gold: Gold | None, reader_name: str) -> list[dict]:
    """predictions.jsonl rows (result_schema.PredictionRow), in dataset order."""
    rows = []
    for pred, final, em in zip(predictions, answers, ems):
        winner = pred.winner
        rows.append({"qid": pred.qid, "source": pred.source, "question": pred.question,
                     "prediction": final, "resolver_answer": pred.answer,
                     "gold": list(gold[pred.qid]) if gold is not None else None, "em": em,
                     "plan": winner.plan.to_json() if winner and winner.plan else None,
                     "plan_set": winner.plan_set if winner else None,
                     "reader": reader_name, "reason": pred.reason})
    return rows


def _describe(lane) -> dict | None:
    """What a reader or repairer says about itself (prompt sha256, host, ...), if anything."""
    if lane is None:
        return None
    describe = getattr(lane, "describe", None)
    return describe() if describe else {"name": lane.name}


def _default_id(config_sha: str, dataset: Dataset, split: str) -> str:
    sizes = sorted({q.size for q in dataset.questions}, key=scoring.size_order)
    tag = "-".join(s for s in sizes if s != "unknown") or "data"
    return f"{split}-{tag}-{config_sha[:8]}"


def _free_id(root: Path, base: str) -> str:
    candidate, n = base, 1
    while (root / candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def check_run_id(root: Path, run_id: str) -> None:
    if not RUN_ID.match(run_id):
        raise InputError(f"bad run id {run_id!r}",
                         expected="letters, digits, '.', '_' or '-', not starting with "
                                  "'.', '_' or '-'")
    if (root / run_id).exists():
        raise RunExistsError(f"run {run_id!r} exists in {root}/: results are never "
                             "overwritten; choose another --run-id or omit it")


def execute(config: RunConfig, *, results: str | Path | None = None,
            run_id: str | None = None, progress: Progress | None = None) -> Run:
    """Resolve, score and record one run; return it. The run folder is complete on return."""
    root = results_root(results)
    config, protocol = admit(config)       # refuses test runs outside the protocol
    if run_id is not None:
        check_run_id(root, run_id)
    dataset, gold_book = load(config.data_paths())
    gold = _check_split(config, dataset, gold_book)
    protocol["off_split_sources"] = off_split_sources(
        config.split, (q.source for q in dataset.questions))
    del gold_book                 # from here only `gold` (None on the test split) exists
    plan_sets, set_records = load_plan_sets(dataset, config.plan_specs())
    reader = repairer = None
    if config.reader:
        from resolver.models.reader import make_reader
        reader = make_reader(config.reader, host=config.host, timeout=config.timeout)
    if config.repair:
        from resolver.models.repair import make_repairer
        repairer = make_repairer(config.repair, host=config.host, timeout=config.timeout)

    total = len(dataset.questions)
    stage = progress or (lambda label, n: None)
    predictions = resolve_dataset(dataset, plan_sets, progress=stage("resolving", total),
                                  mode=config.mode)
    repair_traces: dict[str, dict] = {}
    if repairer is not None:
        predictions, repair_traces, repair_set = apply_repair(
            dataset, plan_sets, predictions, repairer, stage("repairing", total))
        repair_record = {"source": "repair", "manifest_sha256": None, "compiler_sha256": None}
        repair_record.update(_set_record(repair_set, dataset))
        set_records.append(repair_record)
    resolver_answers = [p.answer for p in predictions]
    reader_traces: dict[str, dict] = {}
    answers = resolver_answers
    if reader is not None:
        answers, reader_traces = apply_reader(predictions, reader, stage("reading", total))
    reader_name = reader.name if reader is not None else "none"
    scored_predictions = [replace(p, answer=a) for p, a in zip(predictions, answers)]

    cells, ems, _ = scoring.build_cells(dataset, scored_predictions, gold)
    rows = _prediction_rows(predictions, answers, ems, gold, reader_name)
    traces = []
    for pred in predictions:
        trace = pred.to_json()
        trace["reader"] = reader_traces.get(pred.qid)
        trace["repair"] = repair_traces.get(pred.qid)
        traces.append(trace)

    config_json = {"data": list(config.data_paths()), "plans": list(config.plan_specs()),
                   "split": config.split, "reader": config.reader, "repair": config.repair,
                   "host": config.host, "timeout": config.timeout, "mode": config.mode,
                   "frozen": config.frozen, "allow_dirty": config.allow_dirty,
                   "bootstrap": {"resamples": scoring.BOOTSTRAP_RESAMPLES,
                                 "seed": scoring.BOOTSTRAP_SEED,
                                 "level": scoring.BOOTSTRAP_LEVEL}}
    # The id's hash covers what decides the results (file contents, not paths).
    identity = {"data_sha256": sorted(dataset.files_sha256.values()),
                "plan_sets": [[r["set_id"], r["plans_sha256"]] for r in set_records],
                "split": config.split, "reader": config.reader, "repair": config.repair,
                "mode": config.mode, "grammar_sha256": grammar_sha256(), "factres": __version__,
                "code_sha256": source_hashes(RESOLVER_FILES)}
    config_sha = sha256(dumps(identity))
    if run_id is None:
        run_id = _free_id(root, _default_id(config_sha, dataset, config.split))

    scored = gold is not None
    metrics = {"schema": METRICS_SCHEMA, "run_id": run_id, "split": config.split,
               "scored": scored, "reader": reader_name,
               "bootstrap": config_json["bootstrap"],
               "rows": scoring.metrics_rows(cells, reader_name, scored)}
    meta = {"schema": META_SCHEMA, "run_id": run_id,
            "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "config_sha256": config_sha, "config_identity": identity, "config": config_json,
            "data": list(dataset.paths), "data_sha256": dict(sorted(dataset.files_sha256.items())),
            "split": config.split, "grammar_sha256": grammar_sha256(),
            "lexicon_sha256": source_hashes(LEXICON_FILES), "plan_sets": set_records,
            "reader": reader_name, "repair": repairer.name if repairer is not None else "none",
            "lanes": {"reader": _describe(reader), "repair": _describe(repairer)},
            "counts": {"questions": total, "answered": sum(1 for a in answers if a),
                       "repaired": len(repair_traces),
                       "repair_changed": sum(1 for t in repair_traces.values()
                                             if t["before"] != t["after"]),
                       "reader_failures": sum(1 for t in reader_traces.values() if t["error"])},
            "versions": package_versions(), "git": {"commit": protocol["commit"],
                                             "dirty": protocol["dirty"]},
            "protocol": protocol}
    path = write_run(root, run_id, meta, rows, traces, metrics)
    return Run(run_id, path, meta, metrics, rows)


def write_run(root: Path, run_id: str, meta: dict, rows: list[dict], traces: list[dict],
              metrics: dict) -> Path:
    """Write the run folder atomically: a temp folder, metrics.json last, then a rename."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / run_id
    tmp = root / f".tmp-{run_id}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        (tmp / META_FILE).write_bytes(dumps(meta))
        (tmp / PREDICTIONS_FILE).write_bytes(dumps_lines(rows))
        (tmp / TRACES_FILE).write_bytes(dumps_lines(traces))
        (tmp / TABLE_MD_FILE).write_text(tables.markdown(metrics["rows"]), encoding="utf-8")
        (tmp / TABLE_TEX_FILE).write_text(tables.latex(metrics["rows"]), encoding="utf-8")
        (tmp / METRICS_FILE).write_bytes(dumps(metrics))
        # os.rename would silently replace an empty folder of that name: check first.
        if final.exists():
            raise RunExistsError(f"run {run_id!r} appeared in {root}/ while this run was "
                                 "working; nothing was overwritten")
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def load_run(run: str | Path, results: str | Path | None = None) -> tuple[dict, dict]:
    """(meta, metrics) of a finished run, by id (under the results root) or folder path."""
    import orjson
    path = Path(run)
    if not (path / METRICS_FILE).is_file():
        path = results_root(results) / str(run)
    if not path.is_dir():
        raise InputError(f"no run {str(run)!r}", path=str(path),
                         expected="a run id under the results folder or a run folder")
    if not (path / METRICS_FILE).is_file():
        raise InputError(f"run folder has no {METRICS_FILE}", path=str(path))
    meta = orjson.loads((path / META_FILE).read_bytes()) if (path / META_FILE).is_file() else {}
    return meta, orjson.loads((path / METRICS_FILE).read_bytes())
