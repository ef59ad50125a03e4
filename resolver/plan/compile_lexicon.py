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

from resolver.plan.lexicon import MEDIUM, WEAK, restated
from resolver.plan.plans import Compiled, Plan
from resolver.plan.question import CueSpan, read
from resolver.plan.signatures import acceptance, follows

COMPILER = "lexicon"
RELATIVE_WORDS = frozenset({"where", "that", "which", "who", "whose", "whom", "when"})


def _pick(spans: list[CueSpan]) -> list[CueSpan]:
    """One relation per stretch of words: strongest, then longest cue; no overlaps."""
    chosen: list[CueSpan] = []
    strong = [s for s in spans if s.weight >= MEDIUM]      # the weak are never chosen
    for span in sorted(strong, key=lambda s: (-s.weight, -(s.end - s.start), s.start, s.relation)):
        if any(span.overlaps(c) for c in chosen):
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
    # a phrase that only restates another relation of the chain adds no hop
    chain = [s.relation for s in ordered
             if not (restated(reading.tokens[s.start:s.end]) & relations) - {s.relation}]
    deduped = tuple(r for i, r in enumerate(chain) if i == 0 or chain[i - 1] != r)
    why = "cues: " + ", ".join(f"{s.relation}<-'{s.cue}'" for s in ordered)
    typed = _typed(base, ordered, list(reading.spans), reading.answer_type, store,
                   reading.tokens)
    plans, seen = [], set()
    for plan in typed:
        if plan.chain not in seen:
            seen.add(plan.chain)
            plans.append(plan)
    # a plan is made only for a chain not seen before (most orders repeat a typed reading)
    for steps, rule in _n_best(deduped, why):
        if steps not in seen:
            seen.add(steps)
            plans.append(Plan(base, steps, reading.answer_type, COMPILER, rule))
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
    cued = [s for s in spans if s.weight >= WEAK]
    for span in ordered:
        alts = {}
        for other in cued:
            if other.overlaps(span):
                alts[other.relation] = max(alts.get(other.relation, 0.0), other.weight)
        options.append(sorted(alts.items(), key=lambda rw: (-rw[1], rw[0])))
    # The first hop is checked against what the base entity has in the store, not its type.
    named = store.relation_names(base)      # sorted; only the names are needed, not versions
    has = frozenset(named)
    total = sum(s.weight for s in ordered)
    found: dict[tuple[str, ...], tuple[float, str]] = {}
    budget = [_EXPLORE_MAX]
    hops: dict[str, list[tuple[tuple[str, ...], float, str]]] = {}

    def first_hops(relation: str) -> list[tuple[tuple[str, ...], float, str]]:
        """How the chain may start with `relation`: directly, or through one bridge."""
        out = hops.get(relation)            # the same for every order the phrases come in
        if out is None:
            if relation in has:
                out = [((relation,), 0.0, "")]
            else:
                out = [((bridge, relation), BRIDGE, f"; bridge {bridge}") for bridge in named
                       if bridge != relation and follows(bridge, relation)]
            hops[relation] = out
        return out

    # The relations each phrase only restates (`restated`), worked out once per phrase. A
    # phrase taken as `relation` is a restatement when the chain holds another of them: each
    # alternative carries that set, if any (`pick`), and a chain the sets of the phrases it
    # took (`picks`).
    says = [restated(tokens[s.start:s.end]) for s in ordered]
    restaters = [i for i, again in enumerate(says) if again]
    choices = []
    for span, again, alts in zip(ordered, says, options):
        row = []
        for relation, weight in alts:
            others = again - {relation}
            row.append((relation, weight, f"{relation}<-'{span.cue}'", (others,) if others else ()))
        choices.append(row)
    accepts: dict[str, float] = {}

    def extend(chain, used, kept, penalty, note, picks=()):
        # `used`: the phrases taken, one bit each (phrase i is bit i)
        budget[0] -= 1
        if budget[0] < 0:
            return
        if chain and (not picks or all(others.isdisjoint(chain) for others in picks)):
            last = chain[-1]
            acc = accepts.get(last)
            if acc is None:
                acc = accepts[last] = acceptance(answer_type, last)
            if acc > 0 and len(chain) <= 4:
                said = kept
                if restaters:       # summed in phrase order; the others would add nothing
                    said = kept + sum(ordered[i].weight for i in restaters
                                      if not (used >> i) & 1 and not says[i].isdisjoint(chain))
                score = said - DROPPED * (total - said) - penalty - (1 - acc)
                if chain not in found or found[chain][0] < score:
                    found[chain] = (score, note)
        if len(chain) >= 4:
            return
        last = chain[-1] if chain else None
        for i, alts in enumerate(choices):
            if (used >> i) & 1:
                continue
            taken = used | (1 << i)
            for relation, weight, why, pick in alts:
                if last is None:
                    for start, cost, bridged in first_hops(relation):
                        extend(start, taken, kept + weight, penalty + cost, why + bridged, pick)
                elif relation != last and follows(last, relation):
                    inversions = (used >> (i + 1)).bit_count()     # taken phrases after i
                    extend(chain + (relation,), taken, kept + weight,
                           penalty + INVERSION * inversions, note + ", " + why, picks + pick)

    if has:
        extend((), 0, 0.0, 0.0, "")
    best = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))[:TYPED_MAX]
    return [Plan(base, chain, answer_type, COMPILER, f"typed ({score:.2f}): {note}")
            for chain, (score, note) in best]


def _n_best(chain: tuple[str, ...], why: str) -> list[tuple[tuple[str, ...], str]]:
    """(chain, rule) of the untyped readings: the nested reading first; then the same with one
    hop left out (a cue word that named a type, not a relation); then every other order of the
    relations. At most 4 hops each; empty chains left out, repeats kept (the caller drops them)."""
    variants: list[tuple[tuple[str, ...], str]] = [(chain[:4], why)]
    if len(chain) > 1:
        for drop in range(len(chain) - 1, -1, -1):
            variants.append(((chain[:drop] + chain[drop + 1:])[:4], f"{why}; without hop {drop}"))
    reordered = f"{why}; reordered"
    for order in permutations(chain[:4]):
        variants.append((order, reordered))
    return [(steps, rule) for steps, rule in variants if steps]
