"""Every miss of a run (EM 0), in the bucket where it broke. Buckets are tried in this order;
the first that applies wins:

0. `abstained`: the run left the question unanswered under `--abstain-below` (its label was
   below the level). No error of the resolver: the detail gives the label, the resolver's own
   answer (`resolver_answer`) and whether it was right, and when it was not, the bucket that
   answer falls in.
1. `no_gold_path`: no gold path at all (oracle.paths: any version, up to 5 hops, from the plan
   entities and every entity the question names). No resolver over this store can answer.
2. `reader_error`: the resolver's own answer was right but the reader's replaced it.
3. `selection_error`: some candidate of the run (the best path of some plan, or the search's
   enumeration) reached the gold, but another was chosen.
4. `needs_older_version`: every gold path takes an older version somewhere.
5. `plan_error:<kind>`: the gold is reachable along latest versions, but the plan the run
   chose (the winner's; without a winner, the first candidate's) is wrong:
   `no_plan` (nothing to compare), `wrong_base_entity` (no gold path starts at its entity),
   `near_synonym` (same length, every step right or a relation of the same family, e.g.
   language for official language), `hop_short` (the gold chain with one hop deleted),
   `hop_padded` (the plan with one hop deleted is the gold chain), `swapped` (two hops
   exchanged), `other`. Kinds are tried in that order against every gold path from the entity.
6. `search_error`: the plan's chain is the relation chain of a gold path, yet no candidate
   reached the gold (the search took a wrong version or branch).

A run imported by `factres score` (another system's predictions: no plans, no candidates) has
buckets that need only the prediction, the gold paths and the store, tried in this order:
`no_gold_path` (as above), `unanswered` (no record in the import, or an empty prediction),
`needs_older_version` (as above), `stale` (a gold path takes the latest version at every hop,
and the answer is an earlier value of its last key: the superseded value of the right key),
`latest_path_missed` (a latest-version gold path existed, and the answer is something else).
Answers are matched as the harness scores them (`exact_match.harness_score`).
"""
from __future__ import annotations

from resolver.errors import InputError
from resolver.mab.exact_match import harness_score
from resolver.plan.plans import Plan, step_relations
from resolver.results.derived import abstained
from resolver.results.reader import RunFolder, candidate_of, locate, read_run, resolver_answer
from resolver.results.result_schema import IMPORTED_KIND
from resolver.text.relations import inventory

from .gold import is_hit
from .paths import GoldPath, QuestionPaths, find_paths

ABSTAINED = "abstained"
BUCKETS = (ABSTAINED, "no_gold_path", "reader_error", "selection_error", "needs_older_version",
           "plan_error:no_plan", "plan_error:wrong_base_entity", "plan_error:near_synonym",
           "plan_error:hop_short", "plan_error:hop_padded", "plan_error:swapped",
           "plan_error:other", "search_error")
IMPORTED_BUCKETS = ("no_gold_path", "unanswered", "needs_older_version", "stale",
                    "latest_path_missed")


def _fits(step: str, relation: str) -> bool:
    return relation in step_relations(step)


def _kin(step: str, relation: str) -> bool:
    """A near synonym: the step's relations and the gold relation share a family."""
    families = inventory()[relation].families
    return any(families & inventory()[r].families for r in step_relations(step))


def _fits_all(steps, relations) -> bool:
    return len(steps) == len(relations) and all(_fits(s, r) for s, r in zip(steps, relations))


def plan_error_kind(plan: Plan, paths: list[GoldPath]) -> str:
    """How a plan's chain differs from the relation chains of the gold paths from its entity
    ("exact" when it equals one)."""
    from resolver.store.fact_store import norm
    mine = [p.relations for p in paths if norm(p.start) == norm(plan.entity)]
    if not mine:
        return "wrong_base_entity"
    steps = plan.chain
    if any(_fits_all(steps, rels) for rels in mine):
        return "exact"
    if any(len(steps) == len(rels) and all(_fits(s, r) or _kin(s, r)
                                            for s, r in zip(steps, rels)) for rels in mine):
        return "near_synonym"
    if any(len(rels) == len(steps) + 1 and
           any(_fits_all(steps, rels[:i] + rels[i + 1:]) for i in range(len(rels)))
           for rels in mine):
        return "hop_short"
    if any(len(steps) == len(rels) + 1 and
           any(_fits_all(steps[:i] + steps[i + 1:], rels) for i in range(len(steps)))
           for rels in mine):
        return "hop_padded"
    for rels in mine:
        if len(steps) != len(rels):
            continue
        for i in range(len(steps)):
            for j in range(i + 1, len(steps)):
                swapped = list(steps)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                if _fits_all(swapped, rels):
                    return "swapped"
    return "other"


def classify(row: dict, trace: dict, qp: QuestionPaths) -> tuple[str, str]:
    """(bucket, detail) of one missed question."""
    golds = qp.golds
    if abstained(row):
        # the run's choice, not the resolver's error: say what the resolver had answered, and
        # where that answer would have broken
        answer = resolver_answer(row, trace)
        label = (row.get("confidence") or {}).get("label", "?")
        said = f"label {label}; the resolver said {answer!r}" if answer else \
            f"label {label}; the resolver had no answer"
        if is_hit(answer, golds):
            return ABSTAINED, f"{said}, which was right"
        bucket, detail = classify(dict(row, prediction=answer, resolver_answer=answer,
                                       reason=""), trace, qp)
        return ABSTAINED, f"{said}, which was wrong: {bucket}" + (f" ({detail})" if detail
                                                                  else "")
    if not qp.has_path:
        return "no_gold_path", ""
    said = row.get("resolver_answer", row.get("prediction", ""))
    if said != row.get("prediction", "") and is_hit(said, golds):
        return "reader_error", f"resolver said {said!r}"
    candidates = [candidate_of(c) for c in trace.get("candidates", [])]
    right = [c for c in candidates if is_hit(c.answer, golds)]
    if right:
        c = right[0]
        return "selection_error", (f"{c.plan_set}: {c.plan.describe() if c.plan else '-'} "
                                   f"reached {c.answer!r} (score {c.score:.3f})")
    if not any(p.all_latest for p in qp.paths):
        return "needs_older_version", qp.best().pattern()
    winner = trace.get("winner")
    plan_json = (winner or {}).get("plan") or row.get("plan") or \
        next((c.get("plan") for c in trace.get("candidates", []) if c.get("plan")), None)
    if not plan_json:
        return "plan_error:no_plan", row.get("reason", "")
    plan = Plan.from_json(plan_json)
    latest = [p for p in qp.paths if p.all_latest]
    kind = plan_error_kind(plan, latest)
    gold_chain = " -> ".join(qp.best().relations)
    detail = f"plan {plan.describe()}; gold chain {qp.best().start} -> {gold_chain}"
    if kind == "exact":
        return "search_error", detail
    return f"plan_error:{kind}", detail


def _path_text(path: GoldPath) -> str:
    return " ".join([path.start] + [f"-[{h.fact.relation}]-> {h.target}" for h in path.hops])


def classify_imported(row: dict, qp: QuestionPaths, store) -> tuple[str, str]:
    """(bucket, detail) of one missed question of an imported run (`IMPORTED_BUCKETS`)."""
    if not qp.has_path:
        return "no_gold_path", ""
    prediction = row.get("prediction") or ""
    if prediction == "":
        return "unanswered", ("no record in the import" if row.get("record") is None
                              else "empty prediction")
    latest = [p for p in qp.paths if p.all_latest]
    if not latest:
        return "needs_older_version", qp.best().pattern()
    for path in latest:
        last = path.hops[-1]
        if last.reverse:          # the answer is the subject: no key holds it as a value
            continue
        subject, relation = last.fact.subject, last.fact.relation
        earlier = store.versions(subject, relation)[:-1]
        for back, fact in enumerate(reversed(earlier), start=1):
            if harness_score(prediction, (fact.object,)):
                return "stale", (f"answered {fact.object!r}, {back} version(s) before the "
                                 f"latest {last.fact.object!r} of ({subject}, {relation})")
    return "latest_path_missed", f"latest gold path {_path_text(latest[0])}"


def misses_report(run: RunFolder, question_paths: list[QuestionPaths] | None = None,
                  dataset=None) -> tuple[dict, list[dict]]:
    """(counts per source and bucket, one row per miss). Reads the run's data for the store and
    gold; raises InputError when the run is unscored. An imported run is sorted into
    `IMPORTED_BUCKETS`, reading the stores of `dataset` (the run's data when not given)."""
    from resolver.errors import InputError
    imported = run.kind == IMPORTED_KIND
    if not run.scored:
        raise InputError(f"run {run.name} is unscored (test split): no misses to sort",
                         path=str(run.path))
    if question_paths is None:
        dataset, gold = run.load_data()
        question_paths = find_paths(dataset, gold)
    if imported and dataset is None:
        dataset, _ = run.load_data()
    buckets = IMPORTED_BUCKETS if imported else BUCKETS
    by_qid = {qp.question.qid: qp for qp in question_paths}
    rows, totals = [], {}
    traces = {} if imported else run.traces
    for row in run.predictions:
        qid = row["qid"]
        if qid not in by_qid:
            raise InputError(f"question {qid!r} of the run is not in its data",
                             path=str(run.path))
        source = row.get("source") or by_qid[qid].question.source
        totals.setdefault(source, {"questions": 0, "misses": 0})
        totals[source]["questions"] += 1
        if row["em"]:
            continue
        totals[source]["misses"] += 1
        if imported:
            qp = by_qid[qid]
            bucket, detail = classify_imported(row, qp, dataset.haystack_of(qp.question).store)
        else:
            bucket, detail = classify(row, traces[qid], by_qid[qid])
        rows.append({"qid": qid, "source": source, "question": row.get("question", ""),
                     "prediction": row.get("prediction", ""), "gold": list(by_qid[qid].golds),
                     "bucket": bucket, "detail": detail})
    summary = {}
    for source in sorted(totals):
        counts = {b: sum(1 for r in rows if r["source"] == source and r["bucket"] == b)
                  for b in buckets}
        summary[source] = dict(totals[source], buckets=counts)
    return summary, rows


def misses_markdown(run_id: str, summary: dict, rows: list[dict],
                    buckets: tuple[str, ...] = BUCKETS, level: str | None = None,
                    run_ref: str | None = None) -> str:
    """The Markdown report; `run_ref` is how the suggested `factres explain` names the run (a
    folder path when the run is not found by its name; default `run_id`)."""
    import resolver.escape as escape

    from .report import md_table
    out = [f"# Misses of run {escape.markdown(run_id)}, by the bucket where they broke\n"]
    sources = list(summary)
    used = [b for b in buckets if any(summary[s]["buckets"][b] for s in sources)]
    if ABSTAINED in used:
        out.append(f"{ABSTAINED}: left unanswered by the run (--abstain-below {level}: the "
                   "answer's label was below it), not an error of the resolver; the detail "
                   "says whether the resolver's own answer was right.\n")
    # sources name the columns: user text, escaped as the cells are
    out.append(md_table(["bucket"] + [escape.markdown(s) for s in sources] + ["all"],
                        [["questions"] + [summary[s]["questions"] for s in sources]
                         + [sum(summary[s]["questions"] for s in sources)],
                         ["misses"] + [summary[s]["misses"] for s in sources]
                         + [sum(summary[s]["misses"] for s in sources)]]
                        + [[b] + [summary[s]["buckets"][b] for s in sources]
                           + [sum(summary[s]["buckets"][b] for s in sources)] for b in used]))
    if rows:
        out.append("\n## Misses\n")
        out.append(md_table(["qid", "bucket", "prediction", "gold", "detail"],
                            [[r["qid"], r["bucket"], r["prediction"] or "(none)",
                              "; ".join(r["gold"]), r["detail"]] for r in rows]))
        # a command to paste into a shell: each argument quoted for it (escape.shell), in a
        # code span that a backtick of an id cannot end
        words = [run_ref or run_id] + [r["qid"] for r in rows]
        command = " ".join(["factres", "explain"] + [escape.shell(w) for w in words])
        span = f"`` {command} ``" if "`" in command else f"`{command}`"
        out.append(f"\nWhy each got its answer: {span}"
                   + (" (ids holding control or bidirectional characters are written in "
                      "$'...' quoting, as bash and zsh read them)"
                      if any(escape.visible(w) != w for w in words) else "") + "\n")
    return "\n".join(out)


def analyse(run_ref, root=None):
    """`factres oracle misses RUN`. The analysis is named after the folder given (a copied
    folder keeps meta.json's run id, which `run_id` records)."""
    from .report import Analysis
    run = read_run(run_ref, root, traces=True)
    summary, rows = misses_report(run)
    buckets = IMPORTED_BUCKETS if run.kind == IMPORTED_KIND else BUCKETS
    payload = {"command": "misses", "run": run.name, "run_id": run.run_id,
               "data": run.meta["data"], "buckets": list(buckets), "summary": summary,
               "misses": rows}
    level = (run.meta.get("config") or {}).get("abstain_below")
    return Analysis("misses", run.name, payload,
                    misses_markdown(run.name, summary, rows, buckets, level,
                                    pasteable_ref(run, root)))


def pasteable_ref(run, root=None) -> str:
    """How a command to paste names the run: its folder's name when that name finds this
    folder (under the results folder or the committed results/), else the folder's absolute
    path (verification V12: a folder elsewhere was named by its name, which found nothing)."""
    try:
        if locate(run.name, root).resolve() == run.path.resolve():
            return run.name
    except InputError:
        pass
    return str(run.path.resolve())
