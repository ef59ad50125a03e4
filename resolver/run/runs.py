"""A `Run`: data + plan sets -> predictions -> metrics, recorded in `<results>/<run-id>/`.

The run is the one place that holds gold next to predictions: it takes the gold book from the
loader and hands it to `scoring` only, after resolution is over (on the test split it drops it
unread). The folder shapes are in `result_schema`.

Results are never overwritten: the run id is claimed before anything is written (an explicit id
that exists raises `RunExistsError`, checked before any work too; a default id takes the next
free suffix), and the folder is written and renamed into place by `run_folder`. The questions
are compiled and resolved in one pass, by forked workers when the run is large enough
(`resolver.run.workers`, `execute(jobs=...)`). Everything that can refuse a run is checked
before any question is resolved: the protocol, a writable results folder, the data (questions,
gold, lines that fit no template under `strict`), the plan sets (their checksums, their
coverage of the questions) and the model hosts of the lanes.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

import resolver.hub as hub
from resolver._version import __version__
from resolver.errors import ArchiveError, InputError, LaneFailedError, UnparsedLinesError, clip
from resolver.haystack import Dataset, Gold, load, sha256_bytes
from resolver.memory.readout import render as render_readout
from resolver.metrics import scoring
from resolver.plan.plans import Compiled, PlanSet
from resolver.results.result_schema import (
    META_SCHEMA,
    METRICS_SCHEMA,
    dumps,
    dumps_lines,
    results_root,
)
from resolver.run import run_folder, tables
from resolver.run.config import SPLITS, RunConfig
from resolver.run.identity import (
    LEXICON_FILES,
    LIVE_COMPILER_FILES,
    RESOLVER_FILES,
    package_versions,
    source_hashes,
)
from resolver.run.protocol import LIVE_PREFIX, admit, live_set_name, off_split_sources
from resolver.run.run_folder import RUN_ID, check_run_id, write_run
from resolver.run.workers import check_jobs, jobs_for, spread
from resolver.search.confidence import ABSTAINED, abstention, below, rank
from resolver.search.resolve import (
    NOT_IN_SET,
    Prediction,
    resolve_compiled,
    resolve_question,
)
from resolver.text.grammar import grammar_sha256

FALLBACK_NOTE = "fallback:"    # the note of a plan a model planner did not make (compile_ollama)
UNPARSED_SHOWN = 5             # unparsed lines named in meta.json and on stderr
# The readouts whose sizes readout.jsonl records per question: (budget, disclosure modes).
RUN_READS = ((600, ()), (2400, ("history", "alternatives")))
__all__ = ["RUN_ID", "Run", "check_run_id", "execute", "write_run"]

# progress(label, total) is called at the start of each stage and returns advance(n).
Progress = Callable[[str, int], Callable[[int], None]]


@dataclass
class Run:
    """A finished run, as `execute` returns it: its id, its folder (complete on return), the
    meta.json and metrics.json contents, the predictions.jsonl rows, and `table`, the Markdown
    score table `factres run` prints."""
    run_id: str
    path: Path
    meta: dict
    metrics: dict
    predictions: list[dict] = field(repr=False)

    @property
    def table(self) -> str:
        return tables.score_table(self.meta, self.metrics["rows"])


# ---- hashing and provenance -----------------------------------------------------------------
def plans_sha256(plan_set: PlanSet, dataset: Dataset) -> str:
    """meta.json `plan_sets[].plans_sha256`: the sha256 of the set's plans for the dataset's
    questions, one sorted-key JSONL line per question it covers (qid, plans, reason), in question
    order. Not the sha256 of an archive's plans.jsonl (see results/README.md)."""
    rows = []
    for q in dataset.questions:
        comp = plan_set.plans.get(q.qid)
        if comp is not None:
            rows.append({"qid": q.qid, "plans": [p.to_json() for p in comp.plans],
                         "reason": comp.reason})
    return sha256_bytes(dumps_lines(rows))


# ---- plan sets ------------------------------------------------------------------------------
def _manifest_file(spec: str) -> Path:
    from resolver.plan.archive import set_dir
    return set_dir(spec) / "manifest.json"


def _check_questions(plan_set: PlanSet, dataset: Dataset) -> None:
    """An archived set must have been compiled from these very questions."""
    for q in dataset.questions:
        recorded = plan_set.question_sha256.get(q.qid)
        if recorded and recorded != sha256_bytes(q.text.encode("utf-8")):
            raise ArchiveError(f"plan set {plan_set.set_id!r} was compiled for another "
                               f"question under id {q.qid!r}; recompile it for this data")


def load_plan_sets(dataset: Dataset, specs: tuple[str, ...],
                   live: dict[str, PlanSet] | None = None,
                   archived: dict[str, tuple[PlanSet, dict]] | None = None
                   ) -> tuple[list[PlanSet], list[dict]]:
    """Plan sets named by `specs` ("live:rules", "live:lexicon", an archive id or folder) and
    their meta.json records, in the given order. `live` holds live sets by name and `archived`
    archived sets and records by spec (`archived_set`) already at hand (a run's); the others
    are compiled or read here."""
    sets, records = [], []
    for spec in specs:
        if spec.startswith(LIVE_PREFIX):
            name = live_set_name(spec)
            if live is not None and name in live:
                plan_set = live[name]
            else:
                from resolver.plan.planning import live_plan_sets
                (plan_set,) = live_plan_sets(dataset, (name,))
            record = {"source": "live", "manifest_sha256": None,
                      "compiler_sha256": source_hashes(LIVE_COMPILER_FILES)}
            record.update(_set_record(plan_set, dataset))
        else:
            plan_set, record = (archived or {}).get(spec) or archived_set(spec, dataset)
            record = dict(record)
        sets.append(plan_set)
        records.append(record)
    _named_once([s.set_id for s in sets])
    return sets, records


def archived_set(spec: str, dataset: Dataset) -> tuple[PlanSet, dict]:
    """The archived plan set `spec` (an archive id or folder), checked against the questions,
    and its meta.json record."""
    from resolver.plan.archive import load_plan_set  # lazily: only archived runs need it
    plan_set = load_plan_set(spec)
    _check_questions(plan_set, dataset)
    manifest = _manifest_file(spec)
    record = {"source": "archive", "compiler_sha256": None,
              "manifest_sha256": sha256_bytes(manifest.read_bytes())
              if manifest.is_file() else None}
    record.update(_set_record(plan_set, dataset))
    return plan_set, record


def _named_once(ids: list[str]) -> None:
    if len(set(ids)) != len(ids):
        raise InputError(f"a plan set is named twice: {', '.join(ids)}")


def _plan_and_resolve(config: RunConfig, dataset: Dataset, jobs: int, progress: Progress,
                      archived: dict[str, tuple[PlanSet, dict]], with_readouts: bool,
                      meanwhile: Callable[[], object] | None
                      ) -> tuple[dict[str, PlanSet], list[Prediction], list[dict | None]]:
    """Every question compiled by the live compilers the specs name, then resolved with those
    plans and the archived sets' (and its readout sizes measured, when `with_readouts`), by
    `jobs` workers: one pass over the questions, so each question is read once for both.
    Returns the live sets by name, the predictions and the readout rows, in question order."""
    from resolver.plan.planning import compiler, live_set
    specs = config.plan_specs()
    names = list(dict.fromkeys(live_set_name(s) for s in specs if s.startswith(LIVE_PREFIX)))
    compilers = [compiler(name) for name in names]       # an unknown name: refused here
    # (set id, live compiler's place, or the archived set), in the specs' order
    order = [(f"live:{live_set_name(s)}", names.index(live_set_name(s)), None)
             if s.startswith(LIVE_PREFIX) else (archived[s][0].set_id, None, archived[s][0])
             for s in specs]
    _named_once([set_id for set_id, _, _ in order])
    questions, mode = dataset.questions, config.mode

    def one(i: int) -> tuple[tuple[Compiled, ...], Prediction, dict | None]:
        question = questions[i]
        store = dataset.haystack_of(question).store
        fresh = tuple(compile_question(question.text, store) for compile_question in compilers)
        compiled = [(set_id, fresh[at] if plan_set is None else
                     plan_set.plans.get(question.qid, Compiled((), NOT_IN_SET)))
                    for set_id, at, plan_set in order]
        pred = resolve_compiled(question, store, compiled, mode)
        return fresh, pred, readout_row(store, pred) if with_readouts else None

    if jobs > 1:
        for haystack in dataset.haystacks.values():
            haystack.store.prepare()
    done = spread(one, len(questions), jobs, progress("resolving", len(questions)), meanwhile)
    live = {name: live_set(dataset, name, [fresh[k] for fresh, _, _ in done])
            for k, name in enumerate(names)}
    return live, [pred for _, pred, _ in done], [row for _, _, row in done]


def _fell_back(compiled: Compiled) -> bool:
    """The model planner gave no plan for this question: the lexicon's stand in."""
    return compiled.reason.startswith(FALLBACK_NOTE) or any(
        p.note.startswith(FALLBACK_NOTE) for p in compiled.plans)


def _set_record(plan_set: PlanSet, dataset: Dataset) -> dict:
    manifest = plan_set.manifest or {}
    compiled = [plan_set.plans.get(q.qid) for q in dataset.questions]
    return {"set_id": plan_set.set_id, "planner": manifest.get("planner"),
            "model": manifest.get("model"), "level": manifest.get("level"),
            "plans_sha256": plans_sha256(plan_set, dataset),
            "questions_covered": sum(1 for c in compiled if c is not None),
            "questions_with_plans": sum(1 for c in compiled if c is not None and c.plans),
            "fallback_count": sum(1 for c in compiled if c is not None and _fell_back(c))}


def check_coverage(records: list[dict], total: int, allow_partial: bool) -> list[str]:
    """An archived set that covers none of the questions is an error (unless `allow_partial`);
    one that covers some of them is a warning, returned."""
    warnings = []
    for record in records:
        covered = record["questions_covered"]
        if record["source"] != "archive" or covered == total:
            continue
        if covered == 0 and not allow_partial:
            raise ArchiveError(f"plan set {record['set_id']!r} has plans for none of the "
                               f"{total} questions of this data (compiled for other data?); "
                               "pass --allow-partial-plans to run without it anyway")
        warnings.append(f"plan set {record['set_id']} covers {covered} of {total} questions; "
                        "the others get no plan from it")
    return warnings


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
        repair_set.question_sha256[pred.qid] = sha256_bytes(question.text.encode("utf-8"))
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


def check_lane(lane) -> None:
    """Check a lane's host once before the first question (ModelHostError if it is dead)."""
    check = getattr(lane, "check_host", None)
    if check is not None:
        check()


def check_lane_answered(role: str, failures: int, calls: int, first_error: str) -> None:
    """A lane none of whose calls gave an answer would make the run score its silence."""
    if calls and failures == calls:
        raise LaneFailedError(f"every {role} call failed ({calls} of {calls}; first: "
                              f"{first_error or '?'}); the run was not recorded")


def apply_reader(predictions: list[Prediction], reader,
                 advance: Callable[[int], None] | None = None
                 ) -> tuple[list[str], dict[str, dict]]:
    """The reader's answer for every answered question, given only the question and the
    winning path's original fact lines. Unanswered questions stay unanswered (no facts)."""
    answers, traces = [], {}
    for pred in predictions:
        if advance:
            advance(1)
        if pred.winner is None or not pred.answer:      # unanswered, or abstained
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
    if config.abstain_below is not None:
        try:
            rank(config.abstain_below)
        except ValueError as exc:
            raise InputError(str(exc)) from None
    if config.split not in SPLITS:
        raise InputError(f"unknown split {config.split!r}", expected=" or ".join(SPLITS))
    if not dataset.questions:
        raise InputError("the data has no questions: nothing to resolve (a bare context?)",
                         path=dataset.paths[0], expected=f"rows with questions; {hub.HINT}")
    if config.split == "test":
        return None          # the test split's gold is never read
    missing = [q.qid for q in dataset.questions if not gold[q.qid]]
    if missing:
        raise InputError(f"{len(missing)} question(s) have no gold answers (first: "
                         f"{missing[0]}); use --split test to run without scoring",
                         path=dataset.paths[0])
    return gold


def _prediction_rows(predictions: list[Prediction], answered: list[Prediction],
                     answers: list[str], ems: list[int | None], gold: Gold | None,
                     reader_name: str) -> list[dict]:
    """predictions.jsonl rows (result_schema.PredictionRow), in dataset order: `predictions`
    as the resolver made them (its answer, winner and label), `answered` as the run answers
    them (an abstention's reason), `answers` what was scored."""
    rows = []
    for pred, shown, final, em in zip(predictions, answered, answers, ems):
        winner = pred.winner
        rows.append({"qid": pred.qid, "source": pred.source, "question": pred.question,
                     "prediction": final, "resolver_answer": pred.answer,
                     "gold": list(gold[pred.qid]) if gold is not None else None, "em": em,
                     "plan": winner.plan.to_json() if winner and winner.plan else None,
                     "plan_set": winner.plan_set if winner else None,
                     "reader": reader_name, "reason": shown.reason} | pred.confidence_json())
    return rows


def apply_abstention(predictions: list[Prediction], level: str | None) -> list[Prediction]:
    """What the run answers: every answer whose confidence is below `level` emptied, with the
    reason (None: the predictions as they are). The resolver's own answer is the caller's to
    keep: it stays the row's `resolver_answer` and the trace's answer, with its winner,
    candidates and label, so that an analysis can judge the label on the answer it labels."""
    if level is None:
        return predictions
    return [replace(p, answer="", reason=abstention(p.confidence, level))
            if p.answer and p.confidence is not None and below(p.confidence, level) else p
            for p in predictions]


def _describe(lane) -> dict | None:
    """What a reader or repairer says about itself (prompt sha256, host, ...), if anything."""
    if lane is None:
        return None
    describe = getattr(lane, "describe", None)
    return describe() if describe else {"name": lane.name}


def _default_id(config_sha: str, dataset: Dataset, split: str, mode: str) -> str:
    """`<split>-<sizes>-<mode>-<hash>`: a plain run and a search run are told apart by name."""
    sizes = sorted({q.size for q in dataset.questions}, key=scoring.size_order)
    tag = "-".join(s for s in sizes if s != "unknown") or "data"
    return f"{split}-{tag}-{mode}-{config_sha[:8]}"


def check_label(label: str | None, option: str = "--name") -> str | None:
    """A run's label as given (`factres run --name`): None, or text with something to show."""
    if label is not None and not label.strip():
        raise InputError(f"{option} {label!r} is empty", expected="a label for the run's "
                         "rows in the tables, or no " + option)
    return label


def execute(config: RunConfig, *, results: str | Path | None = None,
            run_id: str | None = None, progress: Progress | None = None,
            use_cache: bool = True, label: str | None = None, jobs: int | str | None = 1
            ) -> Run:
    """Resolve, score and record one run; return it. The run folder is complete on return.
    Everything that can refuse the run is checked before the first question is resolved.
    `label` names the run's rows in the tables (meta.json `label`; `factres run --name`).
    `jobs`: worker processes for compiling and searching (`resolver.run.workers`): 1 (this
    process), a number, or "auto"/None (one per core, as the run's size repays); the run's
    files are the same whatever it is."""
    root = results_root(results)
    check_label(label)
    jobs = check_jobs(jobs)
    config, protocol = admit(config)       # refuses test runs outside the protocol
    if run_id is not None:
        check_run_id(root, run_id)
    run_folder.ensure_writable(root)
    dataset, gold_book = load(config.data_paths(), use_cache=use_cache)
    unparsed = unparsed_record(dataset, strict=config.strict)
    gold = _check_split(config, dataset, gold_book)
    protocol["off_split_sources"] = off_split_sources(
        config.split, (q.source for q in dataset.questions))
    del gold_book                 # from here only `gold` (None on the test split) exists
    total = len(dataset.questions)
    specs = config.plan_specs()
    archived = {spec: archived_set(spec, dataset) for spec in specs
                if not spec.startswith(LIVE_PREFIX)}
    # an archived set that fits none of the questions refuses the run before any work
    warnings = check_coverage([record for _, record in archived.values()], total,
                              config.allow_partial_plans)
    reader, repairer = _lanes(config)
    stage = progress or (lambda label, n: None)
    ahead: dict = {}

    def load_ahead() -> None:
        # while the workers search, this process loads what comes after: numpy for the
        # intervals of a scored run, the package versions meta.json records
        if gold is not None:
            scoring.prepare()
        ahead["versions"] = package_versions()

    live, predictions, readouts = _plan_and_resolve(
        config, dataset,
        jobs_for(jobs, total, sum(len(h.store) for h in dataset.haystacks.values())),
        stage, archived, with_readouts=repairer is None, meanwhile=load_ahead)
    plan_sets, set_records = load_plan_sets(dataset, specs, live, archived)
    warnings += [f"plan set {r['set_id']}: {r['fallback_count']} of {total} "
                 "questions have the lexicon's fallback plans, not the model's"
                 for r in set_records if r["fallback_count"]]

    # The id's hash covers what decides the results (file contents, not paths).
    identity = {"data_sha256": sorted(dataset.files_sha256.values()),
                "plan_sets": [[r["set_id"], r["plans_sha256"]] for r in set_records],
                "split": config.split, "reader": config.reader, "repair": config.repair,
                "mode": config.mode, "grammar_sha256": grammar_sha256(), "factres": __version__,
                "code_sha256": source_hashes(RESOLVER_FILES)}
    if config.abstain_below is not None:        # absent otherwise: earlier ids stay as they were
        identity["abstain_below"] = config.abstain_below
    config_sha = sha256_bytes(dumps(identity))
    claimed = run_folder.claim(root, run_id, _default_id(config_sha, dataset, config.split,
                                                         config.mode))
    try:
        return _run(config, claimed, dataset, gold, plan_sets, set_records, reader, repairer,
                    stage, predictions, readouts,
                    {"protocol": protocol, "identity": identity,
                     "config_sha256": config_sha, "unparsed": unparsed,
                     "warnings": warnings, "label": label, "versions": ahead["versions"]})
    except BaseException:
        claimed.release()
        raise


def _lanes(config: RunConfig):
    """The reader and repairer the config names, their hosts checked before any question."""
    reader = repairer = None
    if config.reader:
        from resolver.models.reader import make_reader
        reader = make_reader(config.reader, host=config.host, timeout=config.timeout)
        check_lane(reader)
    if config.repair:
        from resolver.models.repair import make_repairer
        repairer = make_repairer(config.repair, host=config.host, timeout=config.timeout)
        check_lane(repairer)
    return reader, repairer


def unparsed_record(dataset: Dataset, strict: bool = False) -> dict:
    """Fact lines that fit no template, counted, the first ones named (meta.json `unparsed`);
    under `strict` they are an error naming the first."""
    stacks = [h for h in dataset.haystacks.values() if h.parse.unparsed]
    if strict and stacks:
        first = stacks[0]
        raise UnparsedLinesError(first.path, [u for h in stacks for u in h.parse.unparsed],
                                 row=first.row)
    shown = [{"path": h.path, "row": h.row, "line": u.line, "text": clip(u.text),
              "reason": u.reason} for h in stacks for u in h.parse.unparsed[:UNPARSED_SHOWN]]
    return {"count": sum(len(h.parse.unparsed) for h in stacks),
            "first": shown[:UNPARSED_SHOWN]}


def _run(config: RunConfig, claimed: run_folder.Claim, dataset: Dataset, gold: Gold | None,
         plan_sets: list[PlanSet], set_records: list[dict], reader, repairer,
         stage: Progress, predictions: list[Prediction], readouts: list[dict | None],
         record: dict) -> Run:
    """Run the lanes on the resolved predictions, score and write the claimed folder."""
    total = len(dataset.questions)
    repair_traces: dict[str, dict] = {}
    if repairer is not None:
        predictions, repair_traces, repair_set = apply_repair(
            dataset, plan_sets, predictions, repairer, stage("repairing", total))
        check_lane_answered("repair", getattr(repairer, "failures", 0),
                            getattr(repairer, "calls", 0), getattr(repairer, "first_error", ""))
        repair_record = {"source": "repair", "manifest_sha256": None, "compiler_sha256": None}
        repair_record.update(_set_record(repair_set, dataset))
        set_records.append(repair_record)
    # what the run answers; `predictions` keep the resolver's own answers (resolver_answer,
    # the traces), so an abstained answer is still there to judge its label by
    answered = apply_abstention(predictions, config.abstain_below)
    reader_traces: dict[str, dict] = {}
    answers = [p.answer for p in answered]
    if reader is not None:
        answers, reader_traces = apply_reader(answered, reader, stage("reading", total))
        errors = [t["error"] for t in reader_traces.values() if t["error"]]
        check_lane_answered("reader", len(errors), len(reader_traces), next(iter(errors), ""))
    reader_name = reader.name if reader is not None else "none"
    scored_predictions = [replace(p, answer=a) for p, a in zip(predictions, answers)]

    # the live rule set's plans are what staleness would compile again
    rules = next((ps.plans for ps in plan_sets if ps.set_id == "live:rules"), None)
    cells, ems, _ = scoring.build_cells(dataset, scored_predictions, gold, rules=rules)
    rows = _prediction_rows(predictions, answered, answers, ems, gold, reader_name)
    traces = []
    for pred, shown in zip(predictions, answered):
        trace = pred.to_json()
        trace["reason"] = shown.reason          # an abstention's, beside the resolver's answer
        trace["reader"] = reader_traces.get(pred.qid)
        trace["repair"] = repair_traces.get(pred.qid)
        traces.append(trace)

    config_json = {"data": list(config.data_paths()), "plans": list(config.plan_specs()),
                   "split": config.split, "reader": config.reader, "repair": config.repair,
                   "host": config.host, "timeout": config.timeout, "mode": config.mode,
                   "frozen": config.frozen, "allow_dirty": config.allow_dirty,
                   "strict": config.strict, "allow_partial_plans": config.allow_partial_plans,
                   "abstain_below": config.abstain_below,
                   "bootstrap": {"resamples": scoring.BOOTSTRAP_RESAMPLES,
                                 "seed": scoring.BOOTSTRAP_SEED,
                                 "level": scoring.BOOTSTRAP_LEVEL}}
    run_id, scored, protocol = claimed.run_id, gold is not None, record["protocol"]
    metrics = {"schema": METRICS_SCHEMA, "run_id": run_id, "split": config.split,
               "scored": scored, "reader": reader_name,
               "bootstrap": config_json["bootstrap"],
               "rows": scoring.metrics_rows(cells, reader_name, scored)}
    meta = {"schema": META_SCHEMA, "run_id": run_id,
            "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "config_sha256": record["config_sha256"], "config_identity": record["identity"],
            "config": config_json,
            "data": list(dataset.paths), "data_sha256": dict(sorted(dataset.files_sha256.items())),
            # a relative data path is relative to this folder: readers resolve it from here
            "cwd": str(Path.cwd()),
            "split": config.split, "grammar_sha256": grammar_sha256(),
            "lexicon_sha256": source_hashes(LEXICON_FILES), "plan_sets": set_records,
            "reader": reader_name, "repair": repairer.name if repairer is not None else "none",
            "lanes": {"reader": _describe(reader), "repair": _describe(repairer)},
            "counts": {"questions": total, "answered": sum(1 for a in answers if a),
                       "abstained": sum(1 for p in answered
                                        if p.reason.startswith(ABSTAINED)),
                       "repaired": len(repair_traces),
                       "repair_changed": sum(1 for t in repair_traces.values()
                                             if t["before"] != t["after"]),
                       "reader_failures": sum(1 for t in reader_traces.values() if t["error"])},
            "unparsed": record["unparsed"], "notes": list(dataset.notes),
            "warnings": record["warnings"],
            "versions": record["versions"], "git": {"commit": protocol["commit"],
                                             "dirty": protocol["dirty"]},
            "protocol": protocol}
    if record["label"] is not None:      # absent otherwise: the tables derive one
        meta["label"] = record["label"]
    if repairer is not None:
        readouts = readout_rows(dataset, predictions)
    path = write_run(claimed, meta, rows, traces, metrics, readouts)
    return Run(run_id, path, meta, metrics, rows)


def readout_rows(dataset: Dataset, predictions: list[Prediction]) -> list[dict]:
    """readout.jsonl rows (result_schema.ReadoutRow): each question's readouts (RUN_READS)
    rendered from the run's own store and prediction, measured in characters."""
    return [readout_row(dataset.haystack_of(question).store, pred)
            for question, pred in zip(dataset.questions, predictions)]


def readout_row(store, pred: Prediction) -> dict:
    """One question's readout.jsonl row (`readout_rows`)."""
    return {"qid": pred.qid, "reads": [
        {"budget": budget, "disclose": list(modes),
         "chars": len(render_readout(store, pred, disclose=modes, budget=budget))}
        for budget, modes in RUN_READS]}
