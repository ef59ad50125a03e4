"""The ceiling of any one-version-per-key store: how many questions can a store answer if it
keeps exactly one version of every (subject, relation) key?

Formulation. A policy P maps each key to one of its versions. Question q comes with a set of
alternatives A_q, each a requirement set {(key, version), ...}: for a single-hop question, each
one-hop gold fact (oracle.versions picks these: from a plan entity when one reaches the gold);
for a multi-hop question, each gold path (oracle.paths; same preference). q is satisfied by P when
some alternative R in A_q has P[key] = version for every (key, version) in R. A question without
alternatives (no gold path) is never satisfied. We want max_P |{q satisfied by P}|.

Exact solution. A key requested in only one version across all alternatives is set to that
version (no question loses by it). Dropping those keys from every alternative, a question left
with an empty alternative is satisfied for free. The remaining keys are linked when one question's
alternatives mention both; each connected component of that graph is independent and is solved
exactly by depth-first branch and bound over its keys (versions tried latest first; bound =
questions satisfied so far + questions still satisfiable). The first optimum found in that order
is kept, so the policy reported is deterministic. "Latest wins" is the policy P[key] = 0.

A contested key is one that two different questions need in different versions."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .paths import QuestionPaths

Key = tuple[str, str]
Requirement = frozenset[tuple[Key, int]]


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
    domains: dict[Key, list[int]]              # requested versions, latest first
    questions: list[int]                       # indices into the problem's questions
    best: int = 0
    policy: dict[Key, int] = field(default_factory=dict)
    nodes: int = 0                             # search nodes visited

    @property
    def space(self) -> int:
        n = 1
        for k in self.keys:
            n *= len(self.domains[k])
        return n


def _satisfied(alts: list[Requirement], policy: dict[Key, int]) -> bool:
    return any(all(policy.get(k) == v for k, v in r) for r in alts)


def _possible(alts: list[Requirement], policy: dict[Key, int]) -> bool:
    return any(all(policy.get(k, v) == v for k, v in r) for r in alts)


def _solve(comp: Component, alts: list[list[Requirement]]) -> None:
    keys = comp.keys
    qs = comp.questions
    policy: dict[Key, int] = {}
    comp.best = -1

    def walk(i: int) -> None:
        comp.nodes += 1
        bound = sum(1 for q in qs if _possible(alts[q], policy))
        if bound <= comp.best:
            return
        if i == len(keys):
            comp.best = bound
            comp.policy = dict(policy)
            return
        for v in comp.domains[keys[i]]:
            policy[keys[i]] = v
            walk(i + 1)
        del policy[keys[i]]

    walk(0)


def solve(question_paths: list[QuestionPaths], sources_alone: bool = True) -> dict:
    """The ceiling report: contested keys, components, the optimum and latest-wins, per source.
    With `sources_alone`, each source is also solved on its own (its own best policy)."""
    alts = [alternatives(qp) for qp in question_paths]
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
    components = []
    for members in sorted(groups.values()):
        member_set = set(members)
        qs = [i for i in open_qs if {k for r in reduced[i] for k, _ in r} <= member_set]
        comp = Component(members, {k: sorted(requested[k]) for k in members}, qs)
        _solve(comp, reduced)
        components.append(comp)

    policy: dict[Key, int] = dict(free)
    for comp in components:
        policy.update(comp.policy)
    latest = {k: 0 for k in requested}
    rows = []
    for i, qp in enumerate(question_paths):
        q = qp.question
        rows.append({"qid": q.qid, "source": q.source, "kind": q.kind,
                     "alternatives": len(alts[i]),
                     "optimal": bool(alts[i]) and _satisfied(alts[i], policy),
                     "latest_wins": bool(alts[i]) and _satisfied(alts[i], latest)})

    spelling = {h.key: h.fact.subject for qp in question_paths for p in qp.paths for h in p.hops}
    contested = []
    for k in sorted(requested):
        by_version = {v: sorted(question_paths[i].question.qid for i in needers[(k, v)])
                      for v in sorted(requested[k])}
        askers = {qid for qids in by_version.values() for qid in qids}
        if len(by_version) > 1 and len(askers) > 1:
            contested.append({"subject": spelling.get(k, k[0]), "relation": k[1],
                              "needed": [{"version": v, "questions": qids}
                                         for v, qids in by_version.items()],
                              "optimal_version": policy.get(k)})

    source_of = {r["qid"]: r["source"] for r in rows}
    per_source: dict[str, dict] = {}
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        alone = None
        if sources_alone and len(set(r["source"] for r in rows)) > 1:
            alone = solve([qp for qp in question_paths if qp.question.source == source],
                          sources_alone=False)["optimal"]
        per_source[source] = {
            "questions": len(mine),
            "with_gold_path": sum(1 for r in mine if r["alternatives"]),
            "optimal": sum(r["optimal"] for r in mine),
            "latest_wins": sum(r["latest_wins"] for r in mine),
            "optimal_alone": alone if alone is not None else sum(r["optimal"] for r in mine),
            # contested keys some question of this source needs (in either version)
            "contested_keys": sum(1 for c in contested
                                  if any(source_of[q] == source for n in c["needed"]
                                         for q in n["questions"])),
        }
    return {
        "questions": len(rows),
        "with_gold_path": sum(1 for a in alts if a),
        "optimal": sum(r["optimal"] for r in rows),
        "latest_wins": sum(r["latest_wins"] for r in rows),
        "keys_requested": len(requested),
        "keys_free": len(free),
        "questions_free": sum(always),
        "contested_keys": contested,
        "components": [{"keys": len(c.keys), "questions": len(c.questions),
                        "search_space": c.space, "nodes": c.nodes, "best": c.best,
                        "members": [[spelling.get(k, k[0]), k[1]] for k in c.keys]} for c in components],
        "per_source": per_source,
        "rows": rows,
    }


def ceiling_markdown(report: dict) -> str:
    from .report import md_table
    out = ["# Ceiling of one-version-per-key stores\n",
           f'{report["questions"]} questions, {report["with_gold_path"]} with a gold path. '
           f'Keys requested: {report["keys_requested"]} ({report["keys_free"]} in a single '
           f'version); questions satisfied by those alone: {report["questions_free"]}. '
           f'Contested keys: {len(report["contested_keys"])}. Components solved exactly: '
           f'{len(report["components"])}.\n']
    out.append(md_table(["source", "questions", "gold path", "best policy (global optimum)",
                         "best policy for this source alone", "latest wins"],
                        [[s, v["questions"], v["with_gold_path"], v["optimal"],
                          v["optimal_alone"], v["latest_wins"]]
                         for s, v in report["per_source"].items()]
                        + [["all", report["questions"], report["with_gold_path"],
                            report["optimal"], report["optimal"], report["latest_wins"]]]))
    if report["components"]:
        out.append("\n## Components\n")
        out.append(md_table(["keys", "questions", "search space", "nodes visited", "best"],
                            [[c["keys"], c["questions"], c["search_space"], c["nodes"],
                              c["best"]] for c in report["components"]]))
    if report["contested_keys"]:
        out.append("\n## Contested keys\n")
        out.append(md_table(["subject", "relation", "needed (version: questions)",
                             "best policy keeps"],
                            [[c["subject"], c["relation"],
                              "; ".join(f'{n["version"]}: {", ".join(n["questions"])}'
                                        for n in c["needed"]),
                              c["optimal_version"]] for c in report["contested_keys"]]))
    return "\n".join(out)


def analyse(data=()):
    """`factres oracle ceiling`."""
    from .paths import read_input
    from .report import Analysis, data_block, dataset_tag
    inp = read_input(data)
    report = solve(inp.question_paths)
    payload = dict(report, command="ceiling", data=data_block(inp.dataset),
                   plan_sets=[ps.set_id for ps in inp.plan_sets])
    return Analysis("ceiling", dataset_tag(inp.dataset), payload, ceiling_markdown(report))
