"""Relaxed, deterministic, scored path search: the resolver.

For one question it (1) executes every plan of every plan set, relaxed: family mates of a
planned relation, a skipped planned relation, one bridge hop, older versions only where the
latest leads nowhere; and (2) enumerates every path of 1 to 4 hops from the base entities
through relations the question's words cue (plus at most one uncued bridge hop). Every path
gets the same score (`score_path`): how well the question's cue words account for its
relations, the answer type, versions stepped back, hops, and the prior of plans that agree
with it. The best complete path of the asked type wins (a path of an incompatible type only
when none fits); ties go to the more literal plan, then to the later versions, then to the
answer's spelling. No model and no gold here."""
from __future__ import annotations

from functools import lru_cache

from resolver.plan.lexicon import MEDIUM, TYPE_ACCEPTS, restated
from resolver.plan.plans import Plan, step_relations
from resolver.plan.question import CueSpan, Reading, read
from resolver.plan.signatures import acceptance
from resolver.search.candidates import Candidate, Hop
from resolver.search.hops import (  # hops_over: read from here by callers before hops.py
    WORK,
    HopTable,
    hop_table,
    hops_over,  # noqa: F401
    latest_hops,
    reverse_relations,
)
from resolver.store.fact_store import FactStore, norm
from resolver.text.relations import inventory

MAX_HOPS = 4

# Score weights. They are fixed constants, the same for every question and haystack.
HOP_COST = 0.35            # every hop must be paid for by the words that cue it
UNCUED_HOP = 1.0           # a hop no word of the question asks for (a bridge)
UNUSED_CUE = 0.6           # x weight: a cue the path leaves unexplained
UNEXPLAINED_FLOOR = MEDIUM # weaker cues are too vague to demand a hop
TYPE_MATCH = 1.0           # x acceptance: the final relation gives the type asked for
TYPE_MISMATCH = 1.2        # x (1 - acceptance)
OLDER_VERSION = 0.8        # per step back from the latest version of a key
FAMILY_MATE = 0.3          # a planned relation replaced by one of its family
SKIPPED_STEP = 0.8         # a planned relation nothing satisfies, left out
BASE_RANK = 0.4            # per rank of the base entity among the question's mentions
PLAN_PRIOR = {"rule": 0.8, "lexicon": 0.4}
OTHER_PLAN_PRIOR = 0.3     # model-compiled and derived plans
# A base entity that names an office ("the Mayor of X"): its holder is what is asked.
OFFICE_CUE = 0.6

# Literalness for tie-breaks: lower is more literal.
LITERAL_ORDER = {"rule": 0, "lexicon": 1, "search": 9}


def weights() -> dict[str, object]:
    """Every fixed constant that decides the search, by name: what `factres freeze` records
    and a test run checks, so a changed weight is named, not just a changed file hash."""
    return {"MAX_HOPS": MAX_HOPS, "HOP_COST": HOP_COST, "UNCUED_HOP": UNCUED_HOP,
            "UNUSED_CUE": UNUSED_CUE, "UNEXPLAINED_FLOOR": UNEXPLAINED_FLOOR,
            "TYPE_MATCH": TYPE_MATCH, "TYPE_MISMATCH": TYPE_MISMATCH,
            "OLDER_VERSION": OLDER_VERSION, "FAMILY_MATE": FAMILY_MATE,
            "SKIPPED_STEP": SKIPPED_STEP, "BASE_RANK": BASE_RANK, "PLAN_PRIOR": dict(PLAN_PRIOR),
            "OTHER_PLAN_PRIOR": OTHER_PLAN_PRIOR, "OFFICE_CUE": OFFICE_CUE,
            "LITERAL_ORDER": dict(LITERAL_ORDER)}


class _Path:
    """A path: its base entity and hops, and the hops' relations, made once (every path is
    scored by them). Equal, hashed and shown by base and hops, as a frozen dataclass of those
    two fields would be; a plain class with slots because the search makes one for every path
    it walks, and a frozen dataclass's constructor costs several times as much."""
    __slots__ = ("base", "hops", "relations")

    def __init__(self, base: str, hops: tuple[Hop, ...]) -> None:
        self.base = base
        self.hops = hops
        self.relations = tuple(h.relation for h in hops)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.base, self.hops) == (other.base, other.hops)

    def __hash__(self) -> int:
        return hash((self.base, self.hops))

    def __repr__(self) -> str:
        return f"_Path(base={self.base!r}, hops={self.hops!r})"


# ---- plan steps ---------------------------------------------------------------------------
# A step of more relations than this is walked over the relations the entity has.
_WIDE_STEP = 8


@lru_cache(maxsize=4096)
def _in_order(step: frozenset[str]) -> tuple[str, ...]:
    """A step's relations by name (steps recur: the bridge step is every relation)."""
    return tuple(sorted(step))


@lru_cache(maxsize=4096)
def _shape(steps: tuple[frozenset[str], ...]
           ) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[frozenset[str], ...], ...]]:
    """Each step's relations by name, and the steps left from each step on: what a walk
    through `steps` reads at every hop."""
    return (tuple(_in_order(step) for step in steps),
            tuple(steps[i:] for i in range(len(steps))))


def _follow(ranked: HopTable, base: str, steps: list[frozenset[str]],
            shared: dict | None = None) -> list[_Path]:
    """Every path that takes one relation from each step in order (`ranked` reads the hops of
    one store). At each hop the latest version is tried first; an older version only when no
    path through a later one completes.

    What completes from an entity depends only on the entity and the steps left, never on
    the hops before it: each (entity, step) is walked once and its completions reused, so
    the work grows with the entities reached, not with the combinations of versions along a
    path. The paths and their order are those of the plain depth-first walk. `shared` keeps
    the completions by (entity, steps left) across the walks of one question: the relaxed
    executions of a plan, and the plans of a question, end in the same steps."""
    memo: dict = {} if shared is None else shared
    if not steps:
        return [_Path(base, ())]
    # Relaxed executions of a question's plans walk the same steps from the same base again
    # (most of them to nothing): their completions are read without making the walk's parts.
    key = tuple(steps)
    start = memo.get((base, key))
    if start is not None:
        return [_Path(base, hops) for hops in start]
    ordered, left = _shape(key)
    last = len(ordered) - 1
    work = WORK
    table = ranked.memo

    def completions(entity: str, i: int) -> tuple[tuple[Hop, ...], ...]:
        out: list[tuple[Hop, ...]] = []
        after = i + 1
        relations = ordered[i]
        if len(relations) > _WIDE_STEP:
            # A bridge step (any relation): only the relations the entity has hops over.
            step = steps[i]
            relations = [r for r in ranked.nonempty(entity) if r in step]
        for relation in relations:
            hops = table.get((entity, relation))
            if hops is None:
                hops = ranked(entity, relation)
            group = hops.latest()
            j = 0
            while group:
                work["expansions"] += len(group)
                if i == last:
                    got = [(hop,) for hop in group]
                else:
                    got = []
                    rest_steps = left[after]
                    for hop in group:
                        rests = memo.get((hop.object, rest_steps))
                        if rests is None:
                            rests = completions(hop.object, after)
                        for rest in rests:
                            got.append((hop,) + rest)
                if got:
                    out.extend(got)
                    break          # older versions only when the later ones lead nowhere
                j += 1
                group = hops.group(j)
        found = memo[(entity, left[i])] = tuple(out)
        return found

    results = [_Path(base, hops) for hops in completions(base, 0)]
    # A nested function that calls itself is a reference cycle: unlinked here, it is freed at
    # once instead of waiting (with what it holds) for the cyclic collector.
    del completions
    return results


# ---- scoring -----------------------------------------------------------------------------
class _Spans:
    """What scoring reads of a question's cue spans whatever the path, made once per question
    (`score_path`'s memo keeps it): each span whose words say another relation than its own
    again, with those relations (`restated`: a path's relations decide which of them count);
    per relation its spans best first (weight, then position: the order `_assign` tries them;
    a stable sort, so a subset keeps the order it would be sorted into); every span in the
    order `_relation_terms` counts the unexplained ones."""
    __slots__ = ("again", "by_relation", "ranked")

    def __init__(self, reading: Reading) -> None:
        tokens = reading.tokens
        again = []
        for span in reading.spans:
            others = restated(tokens[span.start:span.end]) - {span.relation}
            if others:
                again.append((span, others))
        self.again = again
        by_relation: dict[str, list[CueSpan]] = {}
        for span in reading.spans:
            by_relation.setdefault(span.relation, []).append(span)
        for spans in by_relation.values():
            spans.sort(key=lambda s: (-s.weight, s.start))
        self.by_relation = by_relation
        self.ranked = sorted(reading.spans, key=lambda s: (-s.weight, s.start, s.relation))


def _restating(spans: _Spans, relations: tuple[str, ...]) -> set[CueSpan]:
    """Cue spans whose words only say a relation of the path again, in that relation's own
    template words ("the headquarters ... are located": "located" is the headquarters
    template's word): they neither explain another hop nor count as unexplained."""
    return {span for span, others in spans.again if not others.isdisjoint(relations)}


def _assign(relations: tuple[str, ...], spans: _Spans,
            restating: set[CueSpan] = frozenset()) -> tuple[float, list[CueSpan | None]]:
    """Best disjoint assignment of cue spans to hops (each span explains at most one hop; a
    span that restates another relation of the path explains none)."""
    options = []
    for rel in relations:
        mine = spans.by_relation.get(rel, ())
        if restating:
            mine = [s for s in mine if s not in restating]
        options.append(list(mine[:4]) + [None])
    # The combinations in the order `itertools.product` gives them, the first best kept;
    # a span that overlaps one chosen before it ends every combination of that prefix, so
    # the walk leaves them out without building them. Weights are added in the same order
    # as a sum over the combination, so totals are the same floats.
    best: list = [float("-inf"), []]
    last = len(options) - 1
    combo: list[CueSpan | None] = [None] * len(options)

    def walk(i: int, chosen: list[CueSpan], total) -> None:
        for span in options[i]:
            if span is None:
                combo[i] = None
                step, more = chosen, total
            else:
                clash = False
                for c in chosen:            # `span.overlaps(c)`, inline: the hottest test
                    if span.start < c.end and c.start < span.end:
                        clash = True
                        break
                if clash:
                    continue
                combo[i] = span
                step, more = chosen + [span], total + span.weight
            if i == last:
                if more > best[0]:
                    best[0], best[1] = more, list(combo)
            else:
                walk(i + 1, step, more)

    if options:
        walk(0, [], 0)
    else:
        best = [0, []]
    del walk           # the cycle a recursive nested function makes (see `_follow`)
    return best[0], best[1]


def score_path(path: _Path, reading: Reading, plan: Plan | None, base_rank: int,
               memo: dict | None = None) -> tuple[float, tuple[tuple[str, float], ...]]:
    """The path's score and its terms. The terms of the cue words and of the answer type
    depend on the path's relations only: `memo` (one per question) keeps them by relations,
    since a question's plans and enumeration reach the same relations by many paths."""
    relations = path.relations
    hops = path.hops
    # The office named by the base counts for the first hop (and for a later hop that is the
    # very same hop, which a path through a symmetric relation and back can take): such a
    # rare path is scored on its own.
    first = (0,) if relations[0] != "officeholder" or all(
        h is not hops[0] for h in hops[1:]) else \
        tuple(at for at, h in enumerate(hops) if h is hops[0])
    found = memo.get(relations) if memo is not None and first == (0,) else None
    if found is None:
        if memo is None:
            spans = _Spans(reading)
        else:
            # (kept under a string: every other key of the memo is a tuple of relations)
            spans = memo.get("spans")
            if spans is None:
                spans = memo["spans"] = _Spans(reading)
        found = _relation_terms(relations, reading, first, spans)
        if memo is not None and first == (0,):
            memo[relations] = found
    terms = list(found)
    back = sum([h.version for h in hops])
    if back:
        terms.append(("older-versions", -OLDER_VERSION * back))
    if base_rank:
        terms.append(("base-rank", -BASE_RANK * base_rank))
    if plan is not None:
        terms.extend(_plan_terms(plan, path))
    return sum([v for _, v in terms]), tuple(terms)


def _relation_terms(relations: tuple[str, ...], reading: Reading, first: tuple[int, ...],
                    spans: _Spans) -> tuple[tuple[str, float], ...]:
    terms: list[tuple[str, float]] = []
    restating = _restating(spans, relations)
    total, assigned = _assign(relations, spans, restating)
    for at, (relation, span) in enumerate(zip(relations, assigned)):
        if span is not None:
            terms.append((f"cue:{relation}<-'{span.cue}'", span.weight))
        elif at in first and relation == "officeholder":
            terms.append(("cue:officeholder<-office named", OFFICE_CUE))
        else:
            terms.append((f"uncued:{relation}", -UNCUED_HOP))
    terms.append(("hops", -HOP_COST * len(relations)))
    # the spans used, then those found unexplained: a span overlapping any of them is neither
    taken = [s for s in assigned if s is not None]
    unexplained: list[CueSpan] = []
    for span in spans.ranked:
        if span.weight < UNEXPLAINED_FLOOR:
            continue
        for u in taken:
            if span.start < u.end and u.start < span.end:        # `span.overlaps(u)`
                break
        else:
            if restating and span in restating:
                continue
            unexplained.append(span)
            taken.append(span)
    for span in unexplained:
        terms.append((f"unexplained:'{span.cue}'", -UNUSED_CUE * span.weight))
    wanted = reading.answer_type
    if wanted != "any":
        got = inventory()[relations[-1]].object_type
        accept = 1.0 if got == wanted else TYPE_ACCEPTS.get(wanted, {}).get(got, 0.0)
        if accept > 0:
            terms.append((f"type:{wanted}~{got}", TYPE_MATCH * accept))
        if accept < 1:
            terms.append((f"type-mismatch:{wanted}!{got}", -TYPE_MISMATCH * (1 - accept)))
    return tuple(terms)


def _plan_terms(plan: Plan, path: _Path) -> list[tuple[str, float]]:
    if norm(plan.entity) != norm(path.base):
        return []
    return _agreement(plan, path.relations)


def _agreement(plan: Plan, relations: tuple[str, ...]) -> list[tuple[str, float]]:
    """`_plan_terms` of a path from the plan's own entity: its prior if the path takes the
    plan's chain (family mates allowed, each costing), else nothing."""
    prior = PLAN_PRIOR.get(plan.compiler, OTHER_PLAN_PRIOR)
    if relations == plan.chain:
        return [(f"plan:{plan.compiler}", prior)]
    if len(relations) == len(plan.chain) and all(
            r in step_relations(s) for r, s in zip(relations, plan.chain)):
        mates = sum(1 for r, s in zip(relations, plan.chain) if r != s)
        return [(f"plan:{plan.compiler}", prior), ("family-mates", -FAMILY_MATE * mates)]
    return []


# ---- plan execution and enumeration ------------------------------------------------------
def _plan_paths(store: FactStore, plan: Plan, shared: dict | None = None,
                ranked: HopTable | None = None) -> list[_Path]:
    """A plan executed with relaxations: as planned (family steps allowed), else with family
    mates, else with one planned step skipped, else with one bridge hop inserted. `ranked`:
    the store's hop table, when the caller has it at hand."""
    base = store.spelling(plan.entity)
    if base is None or not store.is_subject(base):
        return []
    steps = [step_relations(s) for s in plan.chain]
    if ranked is None:
        ranked = hop_table(store)
    found = _follow(ranked, base, steps, shared)
    if found:
        return found
    mates = [_mates(s) for s in steps]
    found = _follow(ranked, base, mates, shared)
    if found:
        return found
    for skip in range(len(steps)):
        if len(steps) > 1:
            found += _follow(ranked, base, steps[:skip] + steps[skip + 1:], shared)
    if found:
        return found
    every = _every_relation()
    for at in range(len(steps) + 1):
        if len(steps) < MAX_HOPS:
            found += _follow(ranked, base, steps[:at] + [every] + steps[at:], shared)
    return found


@lru_cache(maxsize=None)
def _mates(step: frozenset[str]) -> frozenset[str]:
    """A step's relations and their family mates."""
    return frozenset().union(*(_family_of(r) for r in step))


@lru_cache(maxsize=None)
def _every_relation() -> frozenset[str]:
    """The bridge step: any relation."""
    return frozenset(inventory())


@lru_cache(maxsize=None)
def _family_of(relation: str) -> frozenset[str]:
    rel = inventory()[relation]
    out = {relation}
    for other in inventory().values():
        if rel.families & other.families:
            out.add(other.name)
    return frozenset(out)


def _enumerate(store: FactStore, base: str, reading: Reading) -> list[_Path]:
    """Every path of 1..4 hops from `base` whose relations the question cues, with at most one
    uncued hop (a bridge). Latest versions only; older ones come from plan execution."""
    cued = {s.relation for s in reading.spans}
    if reading.bases and norm(base) == norm(reading.bases[0]):
        cued.add("officeholder")
    out: list[_Path] = []

    # `subjects`: the hops' subjects, normalised, made once per path as it grows
    def walk(entity: str, hops: tuple[Hop, ...], subjects: tuple[str, ...], bridges: int
             ) -> None:
        if hops:
            out.append(_Path(base, hops))
        if len(hops) == MAX_HOPS:
            return
        own = store.relation_names(entity)
        for relation in own:
            bridge = relation not in cued
            if bridge and bridges:
                continue
            for hop in latest_hops(store, entity, relation):
                if norm(hop.object) in subjects:
                    continue       # no cycles back to an entity already on the path
                walk(hop.object, hops + (hop,), subjects + (norm(hop.subject),),
                     bridges + bridge)
        # Symmetric relations also go from object to subject: once per relation, since
        # `_edges` already yields every reverse hop of it.
        reverse = sorted(reverse_relations(store, entity).difference(own))
        for relation in reverse:
            bridge = relation not in cued
            if bridge and bridges:
                continue
            for hop in latest_hops(store, entity, relation):
                if hop.reverse and norm(hop.object) not in subjects:
                    walk(hop.object, hops + (hop,), subjects + (norm(hop.subject),),
                         bridges + bridge)

    walk(base, (), (), 0)
    del walk           # the cycle a recursive nested function makes (see `_follow`)
    return out


def _literal(plan: Plan | None) -> int:
    if plan is None:
        return LITERAL_ORDER["search"]
    return LITERAL_ORDER.get(plan.compiler, 5 if not plan.compiler.startswith("derived") else 7)


def fits_type(c: Candidate) -> bool:
    """Whether the candidate's answer is of the asked type or of a type it accepts (a question
    that names no type accepts any). Read from the score terms, so the rule holds for
    candidates read back from traces too."""
    return _fits(c.terms)


def _fits(terms: tuple[tuple[str, float], ...]) -> bool:
    # a type term, else no type-mismatch term (one pass: the search asks it of every path)
    mismatch = False
    for key, _ in terms:
        if key.startswith("type"):
            if key.startswith("type:"):
                return True
            mismatch = mismatch or key.startswith("type-mismatch:")
    return not mismatch


def _order_key(c: Candidate):
    """Best first: a path of the asked type before any path of an incompatible type, however
    they score (a plan's prior or extra cue words never buy a wrong type); then score, then
    the more literal plan, then later versions, then spelling."""
    return (not fits_type(c), -round(c.score, 9), _literal(c.plan), -sum(h.serial for h in c.hops),
            c.answer, c.plan_set)


def select(candidates: list[Candidate]) -> Candidate | None:
    """The selection rule, exposed so analyses can re-select among subsets of candidates."""
    return min(candidates, key=_order_key) if candidates else None


def search(text: str, store: FactStore, plans: list[tuple[str, Plan]]
           ) -> tuple[Reading, list[Candidate]]:
    """All candidates for one question, best first: the best path of every plan, and the best
    enumerated path of every base entity."""
    reading = read(text, store)
    rank_of = {norm(b): i for i, b in enumerate(reading.bases)}
    ranks: dict[str, int] = {}          # the rank of each base as spelled in a path
    fits_of: dict[str, bool] = {}       # `_fits` of a path's terms, by its last relation
    candidates: list[Candidate] = []
    # What depends on a path's relations (and base) only, kept for this question, and what
    # completes from an entity through given steps.
    memo: dict = {}
    walked: dict = {}
    agreeing: dict[tuple[str, tuple[str, ...]], list[tuple[str, float]]] = {}
    # The plans whose entity is a base, in the plans' order: only they can agree with a path
    # from it (`_plan_terms` is empty for the others).
    by_base: dict[str, list[Plan]] = {}

    def _plans_of(base: str) -> list[Plan]:
        found = by_base.get(base)
        if found is None:
            key = norm(base)
            found = by_base[base] = [p for _, p in plans if norm(p.entity) == key]
        return found

    def best_for(paths: list[_Path], own: tuple[str, Plan] | None) -> Candidate | None:
        best = best_key = None
        set_id = own[0] if own else "search"
        own_literal = _literal(own[1] if own else None)
        for path in paths:
            rank = ranks.get(path.base)
            if rank is None:            # (a plan's paths all start from one base)
                rank = ranks[path.base] = rank_of.get(norm(path.base), len(reading.bases))
            total, terms = score_path(path, reading, own[1] if own else None, rank, memo)
            # The best of the other plans that agree with this path adds its prior too.
            if own is None:
                key = (path.base, path.relations)
                priors = agreeing.get(key)
                if priors is None:
                    # (`_plans_of` holds the plans of this base only: no name to compare;
                    # a chain of another length never agrees)
                    relations = path.relations
                    priors = agreeing[key] = [t for p in _plans_of(path.base)
                                              if len(p.chain) == len(relations)
                                              for t in _agreement(p, relations)]
                if priors:
                    top = max(priors, key=lambda t: t[1])
                    total += top[1]
                    terms = terms + (top,)
            # Whether the path is of the asked type depends on its last relation only: the
            # type terms are made from it, and no other term's name begins with "type".
            last = path.relations[-1]
            fits = fits_of.get(last)
            if fits is None:
                fits = fits_of[last] = _fits(terms)
            # The candidate's `_order_key`, made without the candidate: only the best is made.
            hops = path.hops
            key = (not fits, -round(total, 9), own_literal,
                   -sum([h.serial for h in hops]), hops[-1].object, set_id)
            if best is None or key < best_key:
                best, best_key = (path, total, terms), key
        if best is None:
            return None
        path, total, terms = best
        plan = own[1] if own else Plan(path.base, path.relations, reading.answer_type, "search",
                                       "enumeration")
        return Candidate(plan, set_id, path.hops, path.hops[-1].object, total, terms, True)

    owners: list[tuple[str, Plan] | None] = []
    ranked = hop_table(store)       # one for the question: a search never writes to the store
    for set_id, plan in plans:
        cand = best_for(_plan_paths(store, plan, walked, ranked), (set_id, plan))
        if cand is not None:
            candidates.append(cand)
            owners.append((set_id, plan))
    for base in reading.bases[:3]:
        cand = best_for(_enumerate(store, base, reading), None)
        if cand is not None:
            candidates.append(cand)
            owners.append(None)
    if reading.answer_type != "any" and not any(fits_type(c) for c in candidates):
        # Nothing reached the asked type (an office named in words no cue knows): each
        # candidate may go one uncued hop further to it.
        for cand, own in list(zip(candidates, owners)):
            more = best_for(_to_asked_type(store, reading.answer_type, cand), own)
            if more is not None and fits_type(more):
                candidates.append(more)
    candidates.sort(key=_order_key)
    return reading, candidates


def _to_asked_type(store: FactStore, wanted: str, cand: Candidate) -> list[_Path]:
    """The candidate's path with one more hop, at latest versions, over each relation of its
    answer whose object is of the asked type (or one it accepts)."""
    if len(cand.hops) == MAX_HOPS:
        return []
    base = cand.hops[0].subject
    seen = {norm(h.subject) for h in cand.hops} | {norm(cand.answer)}
    out = []
    for relation in store.relation_names(cand.answer):
        if acceptance(wanted, relation) <= 0:
            continue
        for hop in latest_hops(store, cand.answer, relation):
            if not hop.reverse and norm(hop.object) not in seen:
                out.append(_Path(base, cand.hops + (hop,)))
    return out
