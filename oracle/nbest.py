"""Plan recall@N against execution success@N over a run's plan sets.

The run's plan sets are taken in the order the resolver tried them (meta.json), with the
search's own enumeration (candidates without a plan set) as a last pseudo-set "search". For
N = 1, 2, ... and the candidates of the first N sets (traces.jsonl keeps the best candidate of
every plan tried):

- plan recall@N: some plan among them reaches the gold: its candidate's answer is right, or
  the plan itself, walked strictly (oracle.paths.plan_paths: the plan's entity and relations,
  any version at every hop), can reach it;
- strict plan recall@N: the second half only (the search may relax a plan, so a plan can
  reach the gold through its candidate without its own chain doing so);
- candidate recall@N: some candidate's answer is right (the search did reach the gold);
- success@N: the candidate the resolver's own rule (`resolver.search.path_search.select`)
  picks among them
  is right.

Plans that produced no candidate do not appear in traces.jsonl and so count as not reaching the
gold. The last N is the run itself: `rerun_agrees` counts questions whose re-selected answer
equals the resolver's own answer (it should be all of them). For a run made with
`--abstain-below` that is the answer before the abstention, which its prediction left empty:
success@N judges it too, so the summary, nbest.md and nbest.json (`abstain_below`, `abstained`,
per source `abstained`) say so and mark success@N with ¶, as the paper tables do
(verification W11)."""
from __future__ import annotations

from resolver.results.derived import abstained as abstained_row
from resolver.results.reader import RunFolder, candidate_of, read_run, resolver_answer
from resolver.results.result_schema import RESOLVER_KIND
from resolver.run.tables import ABSTAINS, abstention
from resolver.search.path_search import select

from .gold import GoldMatcher, is_hit
from .paths import Graph, plan_paths


def nbest_report(run: RunFolder) -> tuple[dict, list[dict]]:
    """(per source: one row per N, one row per question)."""
    from resolver.errors import InputError
    dataset, gold = run.load_data()
    questions = {q.qid: q for q in dataset.questions}
    sets = run.plan_sets
    graphs: dict[str, Graph] = {}
    rows = []
    for row in run.predictions:
        qid = row["qid"]
        if qid not in questions:
            raise InputError(f"question {qid!r} of the run is not in its data",
                             path=str(run.path))
        q = questions[qid]
        golds = gold.answers.get(qid, ())
        graph = graphs.setdefault(q.context_sha256, Graph(dataset.haystack_of(q).store))
        matches = GoldMatcher(golds)
        cands = [candidate_of(c) for c in run.traces[qid]["candidates"]]
        reach = [bool(c.plan and plan_paths(graph, c.plan, matches)) for c in cands]
        hit = [is_hit(c.answer, golds) for c in cands]
        per_n = []
        for n in range(1, len(sets) + 1):
            allowed = set(sets[:n])
            idx = [i for i, c in enumerate(cands) if c.plan_set in allowed]
            chosen = select([cands[i] for i in idx])
            per_n.append({"n": n, "plan_recall": any(reach[i] or hit[i] for i in idx),
                          "strict_plan_recall": any(reach[i] for i in idx),
                          "candidate_recall": any(hit[i] for i in idx),
                          "success": bool(chosen) and is_hit(chosen.answer, golds),
                          "answer": chosen.answer if chosen else ""})
        # the resolver's own answer, also where the run abstained from it (left it unanswered)
        rows.append({"qid": qid, "source": q.source, "per_n": per_n,
                     "rerun_agrees": (per_n[-1]["answer"] if per_n else "")
                     == resolver_answer(row, run.traces[qid]),
                     "abstained": abstained_row(row)})
    summary = {}
    abstains = abstention(run.meta) is not None
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        summary[source] = {
            **({"abstained": sum(r["abstained"] for r in mine)} if abstains else {}),
            "questions": len(mine),
            "rerun_agrees": sum(r["rerun_agrees"] for r in mine),
            "by_n": [{"n": n, "set": sets[n - 1],
                      "plan_recall": sum(r["per_n"][n - 1]["plan_recall"] for r in mine),
                      "strict_plan_recall": sum(r["per_n"][n - 1]["strict_plan_recall"]
                                                for r in mine),
                      "candidate_recall": sum(r["per_n"][n - 1]["candidate_recall"]
                                              for r in mine),
                      "success": sum(r["per_n"][n - 1]["success"] for r in mine)}
                     for n in range(1, len(sets) + 1)]}
    return {"plan_sets": sets, "sources": summary}, rows


def nbest_markdown(run_id: str, report: dict,
                   abstained: tuple[str, int, int] | None = None) -> str:
    """nbest.md (what the command prints, too). `abstained`: the run's `abstention`, when it
    was made with --abstain-below: success@N is marked ¶ and the agreement line says which
    answer it compares."""
    import resolver.escape as escape

    from .report import md_table
    mark = ABSTAINS if abstained else ""
    out = [f"# Plan recall@N and success@N, run {escape.markdown(run_id)}\n",
           "Sets in the order tried: " + ", ".join(escape.markdown(s) for s in report["plan_sets"])
           + ". Plan recall: some "
           "plan of the first N sets reaches the gold (its candidate is right, or its own chain "
           "can reach the gold with any versions); strict: its own chain can; candidate recall: "
           "some candidate's answer is right; success: the one selected is right.\n"]
    table = []
    for source, v in report["sources"].items():
        for r in v["by_n"]:
            table.append([source, r["n"], r["set"], v["questions"], r["plan_recall"],
                          r["strict_plan_recall"], r["candidate_recall"], r["success"]])
    out.append(md_table(["source", "N", "added set", "questions", "plan recall@N",
                         "strict plan recall@N", "candidate recall@N", f"success@N{mark}"],
                        table))
    if abstained:
        level, n, total = abstained
        out.append(f"\n{ABSTAINS} made with --abstain-below {level}: {n} of its {total} "
                   "questions were left unanswered, and its EM counts them as wrong; success@N "
                   "judges the answer the resolver selected, also where the run abstained from "
                   "it.\n")
        out.append("Re-selection over all sets agrees with the resolver's own answer (before "
                   "the abstention: the run's prediction is empty on the questions abstained "
                   "from) on: " + ", ".join(
                       f'{escape.markdown(s)} {v["rerun_agrees"]}/{v["questions"]} '
                       f'({v.get("abstained", 0)} abstained from)'
                       for s, v in report["sources"].items()) + ".\n")
        return "\n".join(out)
    out.append("\nRe-selection over all sets agrees with the run's answer on: " + ", ".join(
        f'{escape.markdown(s)} {v["rerun_agrees"]}/{v["questions"]}'
        for s, v in report["sources"].items())
        + ".\n")
    return "\n".join(out)


def analyse(run_ref, root=None):
    """`factres oracle nbest RUN`, named after the folder given (see misses.analyse)."""
    from .report import Analysis
    run = read_run(run_ref, root)
    if run.kind != RESOLVER_KIND:
        from resolver.errors import InputError
        raise InputError(f"run {run.name!r} is {run.kind}: it has no plan sets, "
                         "so plan recall@N means nothing for it", path=str(run.path),
                         expected="a run of factres's resolver (factres oracle misses works on "
                                  "imported runs)")
    run.traces              # a missing or short traces.jsonl is refused before any work
    report, rows = nbest_report(run)
    abstained = abstention(run.meta)
    if not abstained:
        for r in rows:
            del r["abstained"]     # the rows of a run that abstains from nothing, as before
    payload = dict(report, command="nbest", run=run.name, run_id=run.run_id,
                   data=run.meta["data"], questions=rows)
    if abstained:
        # success@N judges the answer the resolver selected, before it abstained: the tables
        # mark such a run, whose own EM counts those questions as unanswered (verification V10)
        level, n, total = abstained
        payload.update(abstain_below=level, abstained=n)
    return Analysis("nbest", run.name, payload, nbest_markdown(run.name, report, abstained))
