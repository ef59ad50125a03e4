"""Lexicon compiler: any question -> a plan from its cue words and English nesting.

The base entity is the longest store entity the question names. Relations come from the cue
phrases outside it (one relation per stretch of words, the strongest cue there), ordered by how
English nests them: "the A of the B of E" is B then A (nearest the entity first), and a relative
clause "the country where ... E ... originated" puts the clause's own relations (inside it, then
its verb after E) before the noun that opens it.

Well-typed readings come first (`_typed`): every phrase may mean any relation it cues, and the
relation signatures (signatures.py) choose among them, drop cue words that only name a type,
and bridge from the base entity through a relation it has when it lacks the one asked for (a
club's country of origin is its sport's). The untyped readings follow as fallbacks."""
from __future__ import annotations

from itertools import permutations

from resolver.plan.lexicon import MEDIUM, WEAK, restates
from resolver.plan.plans import Compiled, Plan
from resolver.plan.question import CueSpan, read
from resolver.plan.signatures import acceptance, fits, object_types

COMPILER = "lexicon"
RELATIVE_WORDS = frozenset({"where", "that", "which", "who", "whose", "whom", "when"})


def _pick(spans: list[CueSpan]) -> list[CueSpan]:
    """One relation per stretch of words: strongest, then longest cue; no overlaps."""
    chosen: list[CueSpan] = []
    for span in sorted(spans, key=lambda s: (-s.weight, -(s.end - s.start), s.start, s.relation)):
        if span.weight < MEDIUM or any(span.overlaps(c) for c in chosen):
            continue
        chosen.append(span)
    return chosen


def compile_question(text: str, store) -> Compiled:
    reading = read(text, store)
    if not reading.bases:
        return Compiled((), "names no entity that is the subject of a fact in the store")
    base = reading.bases[0]
    mention = next(m for m in reading.mentions if base in m.names)
    spans = _pick(list(reading.spans))
    if not spans:
        return Compiled((), f"no relation cue words around {base!r}")
    pre = sorted((s for s in spans if s.end <= mention.start), key=lambda s: -s.start)
    post = sorted((s for s in spans if s.start >= mention.end), key=lambda s: s.start)
    boundary = max((i for i in range(mention.start) if reading.tokens[i] in RELATIVE_WORDS),
                   default=-1)
    inner = [s for s in pre if s.start > boundary]
    outer = [s for s in pre if s.start <= boundary]
    ordered = inner + post + outer
    relations = {s.relation for s in ordered}
    restated = [frozenset(r for r in relations if r != s.relation and
                          restates(reading.tokens[s.start:s.end], r)) for s in ordered]
    chain = [s.relation for s, again in zip(ordered, restated) if not again]
    deduped = tuple(r for i, r in enumerate(chain) if i == 0 or chain[i - 1] != r)
    why = "cues: " + ", ".join(f"{s.relation}<-'{s.cue}'" for s in ordered)
    typed = _typed(base, ordered, list(reading.spans), reading.answer_type, store,
                   reading.tokens)
    plans, seen = [], set()
    for plan in typed + _n_best(base, deduped, reading.answer_type, why):
        if plan.chain not in seen:
            seen.add(plan.chain)
            plans.append(plan)
    return Compiled(tuple(plans))


# Scores of a typed reading: cue weight kept, minus what it leaves out or changes.
DROPPED = 1.0          # x weight of a cue the reading does not use
INVERSION = 0.3        # per pair of hops taken against the nested order
BRIDGE = 0.5           # a hop no cue names, from the base entity to what the first cue needs
TYPED_MAX = 12         # typed readings kept per question
_EXPLORE_MAX = 5000    # partial chains explored per question (the search is tiny in practice)


def _typed(base: str, ordered: list[CueSpan], spans: list[CueSpan], answer_type: str,
           store, tokens: tuple[str, ...]) -> list[Plan]:
    """Every well-typed chain over the cue phrases, best first: phrases taken in any order
    (the nested order costs nothing), each as any relation it cues, some left out; the last
    relation must give the asked-for type. A phrase that only restates a relation of the
    chain in that relation's template words ("located" beside "headquarters") adds no hop
    and is not counted as left out."""
    # Each chosen phrase may mean any relation cued on its words (its alternatives).
    options = []
    for span in ordered:
        alts = {}
        for other in spans:
            if other.weight >= WEAK and other.overlaps(span):
                alts[other.relation] = max(alts.get(other.relation, 0.0), other.weight)
        options.append(sorted(alts.items(), key=lambda rw: (-rw[1], rw[0])))
    # The first hop is checked against what the base entity has in the store, not its type.
    has = store.relations_of(base)
    total = sum(s.weight for s in ordered)
    found: dict[tuple[str, ...], tuple[float, str]] = {}
    budget = [_EXPLORE_MAX]

    def first_hops(relation: str) -> list[tuple[tuple[str, ...], float, str]]:
        """How the chain may start with `relation`: directly, or through one bridge."""
        if relation in has:
            return [((relation,), 0.0, "")]
        out = []
        for bridge in sorted(has):
            if bridge != relation and fits(object_types(bridge), relation):
                out.append(((bridge, relation), BRIDGE, f"; bridge {bridge}"))
        return out

    words = [tokens[s.start:s.end] for s in ordered]

    def restating(i: int, chain: tuple[str, ...], own: str | None) -> bool:
        return any(r != own and restates(words[i], r) for r in chain)

    def extend(chain, used, kept, penalty, note, picks=()):
        budget[0] -= 1
        if budget[0] < 0:
            return
        if chain and not any(restating(i, chain, rel) for i, rel in picks):
            acc = acceptance(answer_type, chain[-1])
            if acc > 0 and len(chain) <= 4:
                said = kept + sum(ordered[i].weight for i in range(len(ordered))
                                  if i not in used and restating(i, chain, None))
                score = said - DROPPED * (total - said) - penalty - (1 - acc)
                if chain not in found or found[chain][0] < score:
                    found[chain] = (score, note)
        if len(chain) >= 4:
            return
        for i, alts in enumerate(options):
            if i in used:
                continue
            inversions = sum(1 for j in used if j > i)
            for relation, weight in alts:
                if chain and relation == chain[-1]:
                    continue
                why = f"{relation}<-'{ordered[i].cue}'"
                if not chain:
                    for start, cost, bridged in first_hops(relation):
                        extend(start, used | {i}, kept + weight, penalty + cost, why + bridged,
                               ((i, relation),))
                elif fits(object_types(chain[-1]), relation):
                    extend(chain + (relation,), used | {i}, kept + weight,
                           penalty + INVERSION * inversions, note + ", " + why,
                           picks + ((i, relation),))

    if has:
        extend((), frozenset(), 0.0, 0.0, "")
    best = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TYPED_MAX]
    return [Plan(base, chain, answer_type, COMPILER, f"typed ({score:.2f}): {note}")
            for chain, (score, note) in best]


def _n_best(base: str, chain: tuple[str, ...], answer_type: str, why: str) -> list[Plan]:
    """The nested reading first; then the same with one hop left out (a cue word that named a
    type, not a relation); then every other order of the relations. At most 4 hops each."""
    variants: list[tuple[tuple[str, ...], str]] = [(chain[:4], why)]
    if len(chain) > 1:
        for drop in range(len(chain) - 1, -1, -1):
            variants.append(((chain[:drop] + chain[drop + 1:])[:4], f"{why}; without hop {drop}"))
    for order in permutations(chain[:4]):
        variants.append((order, f"{why}; reordered"))
    seen, plans = set(), []
    for steps, rule in variants:
        if steps and steps not in seen:
            seen.add(steps)
            plans.append(Plan(base, steps, answer_type, COMPILER, rule))
    return plans
