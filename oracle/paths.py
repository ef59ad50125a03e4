"""Gold paths: every way through the parsed graph from a question's start entities to its gold.

A gold path is a sequence of facts f1..fk (1 <= k <= 5) with f1 leaving a start entity,
f(i+1) leaving the entity fi lands on (names compared with `resolver.store.fact_store.norm`)
and fk landing on a name that matches the gold (substring EM). Any version of a key may be taken
at any hop; each hop records its version rank (0 = latest of its key). Facts of a symmetric
relation (`resolver.text.relations.SYMMETRIC`) may also be followed object -> subject. Paths are
simple (no entity twice) and stop at the first gold match: going on past the gold only pads the
chain.

Start entities: the base entity of every plan the live plan sets make of the question, then every
store entity the question names (`FactStore.mentions`). The search is an exhaustive depth-first
enumeration bounded by depth; the 6K store has 455 facts, so no pruning beyond depth is needed."""
from __future__ import annotations

from dataclasses import dataclass, field

from resolver.haystack import Dataset, Gold, Question
from resolver.plan.plans import PlanSet
from resolver.store.fact_store import FactStore, norm
from resolver.text.facts import Fact
from resolver.text.relations import SYMMETRIC

from .gold import GoldMatcher

MAX_HOPS = 5


@dataclass(frozen=True)
class PathHop:
    fact: Fact
    version: int          # 0 = latest version of the key, 1 = the one before, ...
    versions: int         # how many versions the key has
    reverse: bool = False  # a symmetric fact followed object -> subject

    @property
    def key(self) -> tuple[str, str]:
        return (norm(self.fact.subject), self.fact.relation)

    @property
    def source(self) -> str:
        return self.fact.object if self.reverse else self.fact.subject

    @property
    def target(self) -> str:
        return self.fact.subject if self.reverse else self.fact.object

    @property
    def is_first(self) -> bool:
        return self.version == self.versions - 1

    def to_json(self) -> dict:
        return {"subject": self.fact.subject, "relation": self.fact.relation,
                "object": self.fact.object, "serial": self.fact.serial, "line": self.fact.line,
                "version": self.version, "versions": self.versions, "reverse": self.reverse}


@dataclass(frozen=True)
class GoldPath:
    start: str
    hops: tuple[PathHop, ...]

    @property
    def relations(self) -> tuple[str, ...]:
        return tuple(h.fact.relation for h in self.hops)

    @property
    def all_latest(self) -> bool:
        return all(h.version == 0 for h in self.hops)

    @property
    def all_first(self) -> bool:
        return all(h.is_first for h in self.hops)

    @property
    def older_hops(self) -> int:
        return sum(1 for h in self.hops if h.version > 0)

    def requirement(self) -> frozenset[tuple[tuple[str, str], int]]:
        """The (key, version) choices a one-version-per-key store must make to walk this path."""
        return frozenset((h.key, h.version) for h in self.hops)

    def pattern(self) -> str:
        """Per hop, L for the latest version or O<rank> for an older one: "L O1 L"."""
        return " ".join("L" if h.version == 0 else f"O{h.version}" for h in self.hops)

    def sort_key(self) -> tuple:
        return (len(self.hops), self.older_hops, tuple(h.fact.serial for h in self.hops),
                tuple(h.reverse for h in self.hops))

    def to_json(self) -> dict:
        return {"start": self.start, "hops": [h.to_json() for h in self.hops],
                "pattern": self.pattern()}


class Graph:
    """Outgoing hops of each entity, every version, in a fixed order (relation name, then
    oldest version first, then reverse hops in serial order)."""

    def __init__(self, store: FactStore) -> None:
        self.store = store
        self._edges: dict[str, tuple[PathHop, ...]] = {}

    def edges(self, entity: str) -> tuple[PathHop, ...]:
        key = norm(entity)
        found = self._edges.get(key)
        if found is None:
            out = []
            for versions in self.store.relations_of(entity).values():
                n = len(versions)
                out.extend(PathHop(f, n - 1 - i, n) for i, f in enumerate(versions))
            for fact in self.store.by_object(entity):
                if fact.relation in SYMMETRIC and norm(fact.subject) != key:
                    versions = self.store.versions(fact.subject, fact.relation)
                    i = versions.index(fact)
                    out.append(PathHop(fact, len(versions) - 1 - i, len(versions), True))
            found = self._edges[key] = tuple(out)
        return found

    def gold_paths(self, start: str, matches, max_hops: int = MAX_HOPS) -> list[GoldPath]:
        """Every simple path of 1..max_hops hops from `start` whose last hop lands on gold."""
        out: list[GoldPath] = []
        trail: list[PathHop] = []
        seen = {norm(start)}

        def walk(entity: str) -> None:
            for hop in self.edges(entity):
                target = norm(hop.target)
                if target in seen:
                    continue
                trail.append(hop)
                if matches(hop.target):
                    out.append(GoldPath(start, tuple(trail)))
                elif len(trail) < max_hops:
                    seen.add(target)
                    walk(hop.target)
                    seen.discard(target)
                trail.pop()

        walk(start)
        return out


@dataclass
class QuestionPaths:
    question: Question
    golds: tuple[str, ...]
    plan_entities: tuple[str, ...]       # base entities of the live plans, first seen first
    starts: tuple[str, ...]              # plan entities, then entities the question names
    paths: list[GoldPath] = field(default_factory=list)   # sorted by GoldPath.sort_key

    @property
    def has_path(self) -> bool:
        return bool(self.paths)

    @property
    def shortest(self) -> list[GoldPath]:
        if not self.paths:
            return []
        k = min(len(p.hops) for p in self.paths)
        return [p for p in self.paths if len(p.hops) == k]

    def from_plan(self) -> list[GoldPath]:
        keys = {norm(e) for e in self.plan_entities}
        return [p for p in self.paths if norm(p.start) in keys]

    def best(self) -> GoldPath | None:
        """The path an oracle would walk: from a plan entity if any reaches the gold, shortest,
        then fewest older versions, then earliest serials."""
        pool = self.from_plan() or self.paths
        return min(pool, key=GoldPath.sort_key) if pool else None


def question_starts(question: Question, store: FactStore, plan_sets: list[PlanSet]
                    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(plan entities, all starts). Names are deduplicated by `norm`, first seen kept."""
    seen: set[str] = set()
    plan_entities: list[str] = []
    for ps in plan_sets:
        compiled = ps.plans.get(question.qid)
        for plan in (compiled.plans if compiled else ()):
            name = store.spelling(plan.entity) or plan.entity
            if norm(name) not in seen:
                seen.add(norm(name))
                plan_entities.append(name)
    starts = list(plan_entities)
    for mention in store.mentions(question.text):
        for name in mention.names:
            if norm(name) not in seen:
                seen.add(norm(name))
                starts.append(name)
    return tuple(plan_entities), tuple(starts)


def find_paths(dataset: Dataset, gold: Gold, plan_sets: list[PlanSet] | None = None,
               max_hops: int = MAX_HOPS) -> list[QuestionPaths]:
    """Gold paths of every question of the dataset, in question order."""
    if plan_sets is None:
        from resolver.plan.planning import live_plan_sets
        plan_sets = live_plan_sets(dataset)
    graphs: dict[str, Graph] = {}
    out = []
    for q in dataset.questions:
        store = dataset.haystack_of(q).store
        graph = graphs.setdefault(q.context_sha256, Graph(store))
        golds = gold.answers.get(q.qid, ())
        plan_entities, starts = question_starts(q, store, plan_sets)
        matches = GoldMatcher(golds)
        paths = [p for s in starts for p in graph.gold_paths(s, matches, max_hops)]
        paths.sort(key=lambda p: (p.sort_key(), starts.index(p.start)))
        out.append(QuestionPaths(q, golds, plan_entities, starts, paths))
    return out


# ---- `factres oracle paths` ---------------------------------------------------------------
SHOWN_PATHS = 10      # shortest paths listed per question in the JSON (the count is complete)


def _question_row(qp: QuestionPaths) -> dict:
    best = qp.best()
    shortest = qp.shortest
    return {"qid": qp.question.qid, "source": qp.question.source, "question": qp.question.text,
            "gold": list(qp.golds), "plan_entities": list(qp.plan_entities),
            "starts": list(qp.starts), "has_path": qp.has_path,
            "from_plan_entity": bool(qp.from_plan()), "paths": len(qp.paths),
            "shortest_hops": len(shortest[0].hops) if shortest else None,
            "shortest_paths": len(shortest),
            "shortest": [p.to_json() for p in shortest[:SHOWN_PATHS]],
            "best": best.to_json() if best else None,
            "best_pattern": best.pattern() if best else None}


def paths_report(question_paths: list[QuestionPaths], kinds: tuple[str, ...] = ("mh",)
                 ) -> tuple[dict, list[dict]]:
    """(summary per source, one row per question) for the questions of the given kinds."""
    rows = [_question_row(qp) for qp in question_paths if qp.question.kind in kinds]
    summary: dict[str, dict] = {}
    for source in sorted({r["source"] for r in rows}):
        mine = [r for r in rows if r["source"] == source]
        lengths: dict[str, int] = {}
        patterns: dict[str, int] = {}
        for r in mine:
            k = str(r["shortest_hops"]) if r["has_path"] else "none"
            lengths[k] = lengths.get(k, 0) + 1
            if r["best_pattern"]:
                patterns[r["best_pattern"]] = patterns.get(r["best_pattern"], 0) + 1
        best_hops = [h for r in mine if r["best"] for h in r["best"]["hops"]]
        summary[source] = {
            "questions": len(mine),
            "with_gold_path": sum(r["has_path"] for r in mine),
            "from_plan_entity": sum(r["from_plan_entity"] for r in mine),
            "shortest_hops": dict(sorted(lengths.items())),
            "best_all_latest": sum(1 for r in mine if r["best"] and
                                   set(r["best_pattern"].split()) == {"L"}),
            "best_hops": len(best_hops),
            "best_hops_older": sum(1 for h in best_hops if h["version"] > 0),
            "best_patterns": dict(sorted(patterns.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
    return summary, rows


def paths_markdown(summary: dict, rows: list[dict], max_hops: int) -> str:
    from .report import md_table
    out = [f"# Gold paths (multi-hop questions, up to {max_hops} hops, any version)\n",
           "Pattern: per hop of the best path (from a plan entity if one reaches the gold, "
           "shortest, fewest older versions), L = latest version of the key, O<k> = k "
           "versions before the latest.\n"]
    out.append(md_table(
        ["source", "questions", "gold path", "from plan entity", "shortest hops",
         "best path all latest", "older hops / hops"],
        [[s, v["questions"], v["with_gold_path"], v["from_plan_entity"],
          ", ".join(f"{k}: {n}" for k, n in v["shortest_hops"].items()),
          v["best_all_latest"], f'{v["best_hops_older"]} / {v["best_hops"]}']
         for s, v in summary.items()]))
    out.append("\n## Questions\n")
    out.append(md_table(
        ["qid", "gold path", "shortest hops", "paths", "best pattern", "best path"],
        [[r["qid"], "yes" if r["has_path"] else "no", r["shortest_hops"], r["paths"],
          r["best_pattern"],
          " -> ".join([r["best"]["start"]] + [
              f'{h["relation"]}{"~" if h["reverse"] else ""}#{h["serial"]} {h["object" if not h["reverse"] else "subject"]}'
              for h in r["best"]["hops"]]) if r["best"] else "-"]
         for r in rows]))
    return "\n".join(out)


def plan_paths(graph: Graph, plan, matches) -> list[GoldPath]:
    """Gold paths that follow the plan exactly: its base entity, then at hop i a relation its
    i-th step allows (any version; symmetric facts either way). The oracle form of "this plan
    can reach the gold"."""
    from resolver.plan.plans import step_relations
    start = graph.store.spelling(plan.entity) or plan.entity
    frontier: list[tuple[str, tuple[PathHop, ...]]] = [(start, ())]
    for i, step in enumerate(plan.chain):
        allowed = step_relations(step)
        nxt = []
        for entity, trail in frontier:
            for hop in graph.edges(entity):
                if hop.fact.relation in allowed:
                    nxt.append((hop.target, trail + (hop,)))
        frontier = nxt
    return sorted((GoldPath(start, trail) for entity, trail in frontier if matches(entity)),
                  key=GoldPath.sort_key)


@dataclass
class OracleInput:
    """A dataset with its gold, live plan sets and gold paths: what every --data command reads."""
    dataset: Dataset
    gold: Gold
    plan_sets: list[PlanSet]
    question_paths: list[QuestionPaths]


def read_input(data=(), max_hops: int = MAX_HOPS) -> OracleInput:
    """Load `data` (default: the bundled 6K dev rows), compile the live plan sets, find paths."""
    from resolver.errors import InputError
    from resolver.haystack import bundled_path, load
    from resolver.plan.planning import live_plan_sets
    paths = list(data) or [bundled_path()]
    dataset, gold = load(paths)
    if not dataset.questions:
        # A bare context has no gold to analyse: a report of 0 questions would read as a result.
        raise InputError("the data has no questions: nothing to analyse (a bare context?)",
                         path=str(paths[0]), expected="rows with questions and answers")
    plan_sets = live_plan_sets(dataset)
    return OracleInput(dataset, gold, plan_sets,
                       find_paths(dataset, gold, plan_sets, max_hops))


def analyse(data=(), max_hops: int = MAX_HOPS):
    """`factres oracle paths`."""
    from .report import Analysis, data_block, dataset_tag
    from resolver.errors import InputError
    inp = read_input(data, max_hops)
    if not any(q.kind == "mh" for q in inp.dataset.questions):
        # an empty table would read as a result, as a bare context's would
        sources = sorted({q.source for q in inp.dataset.questions})
        raise InputError(f"no multi-hop source (the kind comes from the source name): nothing "
                         f"analysed; the data's sources are {', '.join(sources)}",
                         path=inp.dataset.paths[0], expected="rows of a source named "
                         "<name>_mh_<size>, e.g. factconsolidation_mh_6k")
    summary, rows = paths_report(inp.question_paths)
    payload = {"command": "paths", "data": data_block(inp.dataset), "max_hops": max_hops,
               "plan_sets": [ps.set_id for ps in inp.plan_sets], "summary": summary,
               "questions": rows}
    return Analysis("paths", dataset_tag(inp.dataset), payload,
                    paths_markdown(summary, rows, max_hops))
