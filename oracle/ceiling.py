"""The ceiling of any one-version-per-key store: how many questions can a store answer if it
keeps exactly one version of every (subject, relation) key?

Per haystack. A version policy belongs to one store, and one store is one haystack: the rows
that carry a byte-identical context (the SH and MH rows of one size). `(France, capital)` of the
32K store and of the 262K store are different keys, so every haystack is its own problem, solved
alone, and its questions (SH and MH together) share its policy. Nothing is optimised across
haystacks: the result for a file is the same whatever other files come with it.

Formulation. A policy P maps each key to one of its versions. Question q comes with a set of
alternatives A_q, each a requirement set {(key, version), ...}: for a single-hop question, each
one-hop gold fact (oracle.versions picks these: from a plan entity when one reaches the gold);
for a multi-hop question, each gold path (oracle.paths; same preference). q is satisfied by P when
some alternative R in A_q has P[key] = version for every (key, version) in R. A question without
alternatives (no gold path) is never satisfied. We want max_P |{q satisfied by P}|.

Solution. A key requested in only one version across the haystack's alternatives is set to that
version (no question loses by it). Dropping those keys from every alternative, a question left
with an empty alternative is satisfied for free. The remaining keys are linked when one question's
alternatives mention both; each connected component of that graph is independent and goes to
OR-Tools CP-SAT: one boolean per (key, requested version), exactly one per key, one boolean per
question that may be true only when every (key, version) of one of its alternatives is chosen;
maximise the satisfied questions, ties broken toward keeping each key's most recent requested
version (so the policy reported is the optimum closest to latest wins). One search worker and a
fixed seed make the policy reproducible. The solver's status is kept per component: OPTIMAL when
proven; FEASIBLE (with the solver's upper bound) when the time limit stopped it first; UNKNOWN
when it stopped before any solution, in which case the component keeps latest wins. "Latest
wins" is the policy P[key] = 0.

A contested key is one that two different questions of its haystack need in different versions."""
from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field

from resolver.errors import FactresError

from .paths import QuestionPaths

Key = tuple[str, str]
Requirement = frozenset[tuple[Key, int]]

DEFAULT_TIME_LIMIT = 60.0     # seconds for the whole call, shared by every component
OPTIMAL, FEASIBLE, UNKNOWN = "OPTIMAL", "FEASIBLE", "UNKNOWN"


class CeilingError(FactresError):
    """The solver refused a component (an invalid model or a proof of infeasibility, which a
    well-formed ceiling problem never has)."""


def alternatives(qp: QuestionPaths) -> list[Requirement]:
    """The question's requirement sets, deduplicated, in path order."""
    if qp.question.kind == "sh":
        pool = [p for p in (qp.from_plan() or qp.paths) if len(p.hops) == 1] or \
               [p for p in qp.paths if len(p.hops) == 1]
    else:
        pool = qp.from_plan() or qp.paths
    out: list[Requirement] = []
    for path in pool:
        req = path.requirement()
        if len({k for k, _ in req}) < len(req):
            continue      # one path taking two versions of a key cannot be walked by any policy
        if req not in out:
            out.append(req)
    return out


@dataclass
class Component:
    keys: list[Key]
    domains: dict[Key, list[int]]              # requested versions, most recent first
    questions: list[int]                       # indices into the problem's questions
    best: int = 0                              # questions the policy found satisfies
    bound: int = 0                             # no policy satisfies more (= best when OPTIMAL)
    status: str = UNKNOWN
    policy: dict[Key, int] = field(default_factory=dict)

    @property
    def space(self) -> int:
        n = 1
        for k in self.keys:
            n *= len(self.domains[k])
        return n


@dataclass
class Optimum:
    """One haystack's problem, solved: the free keys, the components and the policy."""
    requested: dict[Key, set[int]]
    needers: dict[tuple[Key, int], set[int]]
    free: dict[Key, int]
    always: list[bool]                         # satisfied by the free keys alone
    components: list[Component]
    policy: dict[Key, int]
    best: int                                  # questions the policy satisfies
    bound: int

    @property
    def status(self) -> str:
        return OPTIMAL if all(c.status == OPTIMAL for c in self.components) else FEASIBLE


def _satisfied(alts: list[Requirement], policy: dict[Key, int]) -> bool:
    return any(all(policy.get(k) == v for k, v in r) for r in alts)


def _solve(comp: Component, alts: list[list[Requirement]], deadline: float | None,
           where: str) -> None:
    """Solve one component with CP-SAT; fills best, bound, status and policy."""
    remaining = None if deadline is None else deadline - time.monotonic()
    fallback = {k: comp.domains[k][0] for k in comp.keys}
    if remaining is not None and remaining <= 0:
        comp.policy, comp.status, comp.bound = fallback, UNKNOWN, len(comp.questions)
        comp.best = sum(_satisfied(alts[q], comp.policy) for q in comp.questions)
        return
    # OR-Tools costs about 0.3 s to import and only this analysis needs it.
    from ortools.sat.python import cp_model
    model = cp_model.CpModel()
    chosen = {}
    for k in comp.keys:
        literals = [model.new_bool_var("") for _ in comp.domains[k]]
        chosen.update({(k, v): lit for v, lit in zip(comp.domains[k], literals)})
        model.add_exactly_one(literals)
    satisfied = []
    for q in comp.questions:
        s = model.new_bool_var("")
        options = []
        for r in alts[q]:
            needed = [chosen[kv] for kv in sorted(r)]
            if len(needed) == 1:
                options.append(needed[0])
                continue
            walked = model.new_bool_var("")
            for lit in needed:
                model.add_implication(walked, lit)
            options.append(walked)
        model.add_bool_or(options + [s.Not()])
        satisfied.append(s)
    recent = [chosen[(k, comp.domains[k][0])] for k in comp.keys]
    # Lexicographic in one objective: a question outweighs every tie-breaking key together.
    weight = len(recent) + 1
    model.maximize(weight * sum(satisfied) + sum(recent))
    for lit in recent:
        model.add_hint(lit, True)       # latest wins is feasible: a solution from the start
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    # The LP relaxation bounds this objective well: a 209-key component of 800 synthetic 262K
    # questions is proven in 0.03 s with it, 6 s without.
    solver.parameters.linearization_level = 2
    if remaining is not None:
        solver.parameters.max_time_in_seconds = remaining
    status = solver.status_name(solver.solve(model))
    if status not in (OPTIMAL, FEASIBLE, UNKNOWN):
        raise CeilingError(f"ceiling: CP-SAT returned {status} on a component of {where} "
                           f"({len(comp.keys)} keys, {len(comp.questions)} questions)")
    if status == UNKNOWN:
        comp.policy = fallback
    else:
        comp.policy = {k: next(v for v in comp.domains[k] if solver.boolean_value(chosen[(k, v)]))
                       for k in comp.keys}
    comp.best = sum(_satisfied(alts[q], comp.policy) for q in comp.questions)
    comp.status = status
    if status == OPTIMAL:
        comp.bound = comp.best
    else:
        bound = solver.best_objective_bound
        comp.bound = len(comp.questions) if not math.isfinite(bound) else \
            max(comp.best, min(len(comp.questions), math.floor(bound / weight + 1e-9)))


def optimum(alts: list[list[Requirement]], deadline: float | None = None,
            where: str = "the haystack") -> Optimum:
    """The best one-version-per-key policy for the questions of ONE haystack, given each
    question's alternatives. `deadline` is a time.monotonic() value; `where` names the
    haystack in errors."""
    requested: dict[Key, set[int]] = defaultdict(set)
    needers: dict[tuple[Key, int], set[int]] = defaultdict(set)
    for i, options in enumerate(alts):
        for req in options:
            for k, v in req:
                requested[k].add(v)
                needers[(k, v)].add(i)
    free = {k: next(iter(vs)) for k, vs in requested.items() if len(vs) == 1}
    reduced = [[frozenset((k, v) for k, v in r if k not in free) for r in options]
               for options in alts]
    always = [bool(options) and any(not r for r in options) for options in reduced]

    # Link the keys one (not always satisfied) question's alternatives mention.
    parent: dict[Key, Key] = {}

    def find(k: Key) -> Key:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    open_qs = [i for i, options in enumerate(reduced) if options and not always[i]]
    for i in open_qs:
        keys = sorted({k for r in reduced[i] for k, _ in r})
        for k in keys[1:]:
            parent[find(k)] = find(keys[0])
        find(keys[0])
    groups: dict[Key, list[Key]] = defaultdict(list)
    for k in sorted(parent):
        groups[find(k)].append(k)
    component_of = {k: root for root, members in groups.items() for k in members}
    asked: dict[Key, list[int]] = defaultdict(list)
    for i in open_qs:
        asked[component_of[min(k for r in reduced[i] for k, _ in r)]].append(i)
    components = []
    for members in sorted(groups.values()):
        comp = Component(members, {k: sorted(requested[k]) for k in members},
                         asked[component_of[members[0]]])
        _solve(comp, reduced, deadline, where)
        components.append(comp)

    policy: dict[Key, int] = dict(free)
    for comp in components:
        policy.update(comp.policy)
    best = sum(bool(options) and _satisfied(options, policy) for options in alts)
    bound = sum(always) + sum(c.bound for c in components)
    return Optimum(requested, needers, free, always, components, policy, best, bound)


def haystack_size(question_paths: list[QuestionPaths]) -> str:
    """The size its questions' sources name ("32k"), "+"-joined if several, else "unknown"."""
    sizes = sorted({qp.question.size for qp in question_paths} - {"unknown"})
    return "+".join(sizes) or "unknown"


def _haystack_report(sha: str, question_paths: list[QuestionPaths],
                     deadline: float | None) -> dict:
    """Everything about one haystack: its optimum, rows, contested keys and components."""
    size = haystack_size(question_paths)
    sources = sorted({qp.question.source for qp in question_paths})
    where = f"the {size} haystack {sha[:12]} (sources {', '.join(sources)})"
    alts = [alternatives(qp) for qp in question_paths]
    solved = optimum(alts, deadline, where)
    latest = {k: 0 for k in solved.requested}
    rows = []
    for i, qp in enumerate(question_paths):
        q = qp.question
        rows.append({"qid": q.qid, "source": q.source, "kind": q.kind, "haystack": sha,
                     "alternatives": len(alts[i]),
                     "optimal": bool(alts[i]) and _satisfied(alts[i], solved.policy),
                     "latest_wins": bool(alts[i]) and _satisfied(alts[i], latest)})
    spelling = {h.key: h.fact.subject for qp in question_paths for p in qp.paths for h in p.hops}
    contested = []
    for k in sorted(solved.requested):
        by_version = {v: sorted(question_paths[i].question.qid
                                for i in solved.needers[(k, v)])
                      for v in sorted(solved.requested[k])}
        askers = {qid for qids in by_version.values() for qid in qids}
        if len(by_version) > 1 and len(askers) > 1:
            contested.append({"haystack": sha, "subject": spelling.get(k, k[0]),
                              "relation": k[1],
                              "needed": [{"version": v, "questions": qids}
                                         for v, qids in by_version.items()],
                              "optimal_version": solved.policy.get(k)})
    components = [{"haystack": sha, "keys": len(c.keys), "questions": len(c.questions),
                   **_space_fields(c.space), "status": c.status, "best": c.best,
                   "bound": c.bound, "members": [[spelling.get(k, k[0]), k[1]] for k in c.keys]}
                  for c in solved.components]
    summary = {"size": size, "sources": sources, "questions": len(rows),
               "with_gold_path": sum(1 for a in alts if a), "optimal": solved.best,
               "latest_wins": sum(r["latest_wins"] for r in rows), "bound": solved.bound,
               "status": solved.status, "keys_requested": len(solved.requested),
               "keys_free": len(solved.free), "questions_free": sum(solved.always),
               "contested_keys": len(contested), "components": len(components)}
    return {"summary": summary, "rows": rows, "contested": contested,
            "components": components}


# JSON readers keep integers exact only up to 2^53 (and orjson refuses past 2^64): a larger
# search space is recorded by its log10 alone.
_EXACT_LIMIT = 2 ** 53


def _space_fields(space: int) -> dict:
    """`search_space` (exact, or None past 2^53) and `search_space_log10`."""
    return {"search_space": space if space <= _EXACT_LIMIT else None,
            "search_space_log10": round(math.log10(space), 3) if space > 0 else None}


def _space_text(component: dict) -> str:
    if component.get("search_space") is not None:
        return str(component["search_space"])
    return f'10^{component["search_space_log10"]:.1f}'


def solve(question_paths: list[QuestionPaths],
          time_limit: float | None = DEFAULT_TIME_LIMIT, started: float | None = None) -> dict:
    """The ceiling report: per haystack (one store, its own best policy, SH and MH jointly) and
    per source (its questions under its store's policy), contested keys and components.
    `time_limit` (seconds, None for none) bounds the whole call, counted from `started` (a
    time.monotonic() value; default now); a component it cuts short is reported FEASIBLE or
    UNKNOWN with the solver's bound, and so is every total it enters."""
    if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
        from resolver.errors import InputError
        raise InputError(f"time limit {time_limit!r}", expected="a finite number of seconds "
                         "above 0, or None for none")
    started = time.monotonic() if started is None else started
    deadline = None if time_limit is None else started + time_limit
    by_haystack: dict[str, list[QuestionPaths]] = {}
    for qp in question_paths:
        by_haystack.setdefault(qp.question.context_sha256, []).append(qp)
    parts = {sha: _haystack_report(sha, qps, deadline) for sha, qps in by_haystack.items()}
    rows = [r for part in parts.values() for r in part["rows"]]
    contested = [c for part in parts.values() for c in part["contested"]]
    per_haystack = {sha: part["summary"] for sha, part in parts.items()}

    per_source: dict[str, dict] = {}
    # Haystack by haystack in input order, so the Markdown lists sources size by size.
    for source in dict.fromkeys(s for summary in per_haystack.values()
                                for s in summary["sources"]):
        mine = [r for r in rows if r["source"] == source]
        haystacks = sorted({r["haystack"] for r in mine})
        mine_qids = {r["qid"] for r in mine}
        per_source[source] = {
            "questions": len(mine),
            "with_gold_path": sum(1 for r in mine if r["alternatives"]),
            "optimal": sum(r["optimal"] for r in mine),
            "latest_wins": sum(r["latest_wins"] for r in mine),
            # contested keys some question of this source needs (in either version)
            "contested_keys": sum(1 for c in contested
                                  if any(q in mine_qids for n in c["needed"]
                                         for q in n["questions"])),
            "haystacks": haystacks,
            "size": "+".join(sorted({per_haystack[h]["size"] for h in haystacks})),
            "status": OPTIMAL if all(per_haystack[h]["status"] == OPTIMAL for h in haystacks)
            else FEASIBLE,
        }
    totals = {name: sum(s[name] for s in per_haystack.values())
              for name in ("questions", "with_gold_path", "optimal", "latest_wins", "bound",
                           "keys_requested", "keys_free", "questions_free")}
    status = OPTIMAL if all(s["status"] == OPTIMAL for s in per_haystack.values()) else FEASIBLE
    return dict(totals, status=status, time_limit=time_limit, contested_keys=contested,
                components=[c for part in parts.values() for c in part["components"]],
                per_haystack=per_haystack, per_source=per_source, rows=rows)


def status_sentence(report: dict) -> str:
    """Whether the figures are proven optimal, and if not, what the solver reached."""
    if report["status"] == OPTIMAL:
        return ("Status: proven optimal (CP-SAT proved every component of every haystack "
                "optimal).")
    short = [f'{s["size"]} haystack {sha[:12]}: best found {s["optimal"]}, bound {s["bound"]}'
             for sha, s in report["per_haystack"].items() if s["status"] != OPTIMAL]
    return (f'Status: NOT proven optimal: the time limit of {report["time_limit"]} s stopped '
            f'the solver first ({"; ".join(short)}). The "best policy" figures there are '
            "policies found, not proven optima; no policy beats the bound.")


def ceiling_markdown(report: dict) -> str:
    from .report import md_table
    proven = report["status"] == OPTIMAL
    out = ["# Ceiling of one-version-per-key stores\n",
           status_sentence(report) + "\n",
           "One store per haystack (rows with the same context): each haystack gets its own "
           "best policy, shared by its single-hop and multi-hop questions; nothing is "
           f'optimised across haystacks. {report["questions"]} questions, '
           f'{report["with_gold_path"]} with a gold path. Keys requested: '
           f'{report["keys_requested"]} ({report["keys_free"]} in a single version); '
           f'questions satisfied by those alone: {report["questions_free"]}. Contested keys: '
           f'{len(report["contested_keys"])}. Components solved with CP-SAT: '
           f'{len(report["components"])}.\n']
    best = "best policy" + (" (proven optimal)" if proven else " (found)")
    out.append("## Per haystack (single-hop and multi-hop jointly)\n")
    out.append(md_table(["haystack", "size", "sources", "questions", "gold path", best,
                         "bound", "latest wins", "contested keys", "status"],
                        [[sha[:12], s["size"], ", ".join(s["sources"]), s["questions"],
                          s["with_gold_path"], s["optimal"], s["bound"], s["latest_wins"],
                          s["contested_keys"], s["status"]]
                         for sha, s in report["per_haystack"].items()]))
    out.append("\n## Per source (under its haystack's best policy)\n")
    out.append(md_table(["source", "size", "questions", "gold path", best, "latest wins",
                         "contested keys"],
                        [[s, v["size"], v["questions"], v["with_gold_path"], v["optimal"],
                          v["latest_wins"], v["contested_keys"]]
                         for s, v in report["per_source"].items()]))
    if report["components"]:
        out.append("\n## Components\n")
        out.append(md_table(["haystack", "keys", "questions", "search space", "status", "best",
                             "bound"],
                            [[c["haystack"][:12], c["keys"], c["questions"], _space_text(c),
                              c["status"], c["best"], c["bound"]]
                             for c in report["components"]]))
    if report["contested_keys"]:
        out.append("\n## Contested keys\n")
        out.append(md_table(["haystack", "subject", "relation", "needed (version: questions)",
                             "best policy keeps"],
                            [[c["haystack"][:12], c["subject"], c["relation"],
                              "; ".join(f'{n["version"]}: {", ".join(n["questions"])}'
                                        for n in c["needed"]),
                              c["optimal_version"]] for c in report["contested_keys"]]))
    return "\n".join(out)


def analyse(data=(), time_limit: float | None = DEFAULT_TIME_LIMIT):
    """`factres oracle ceiling`. The time limit counts from here: reading the data and finding
    the gold paths spend it too, as the command's "for the whole call" says."""
    started = time.monotonic()
    from ortools import __version__ as ortools_version  # the solver's version, on record

    from .paths import read_input
    from .report import Analysis, data_block, dataset_tag
    inp = read_input(data)
    report = solve(inp.question_paths, time_limit, started)
    payload = dict(report, command="ceiling", data=data_block(inp.dataset),
                   plan_sets=[ps.set_id for ps in inp.plan_sets],
                   solver=f"OR-Tools CP-SAT {ortools_version}")
    return Analysis("ceiling", dataset_tag(inp.dataset), payload, ceiling_markdown(report))
