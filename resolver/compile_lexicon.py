"""Lexicon compiler: any question -> a plan from its cue words and English nesting.

The base entity is the longest store entity the question names. Relations come from the cue
phrases outside it (one relation per stretch of words, the strongest cue there), ordered by how
English nests them: "the A of the B of E" is B then A (nearest the entity first), and a relative
clause "the country where ... E ... originated" puts the clause's own relations (inside it, then
its verb after E) before the noun that opens it."""
from __future__ import annotations

from itertools import permutations

from .lexicon import MEDIUM
from .plans import Compiled, Plan
from .question import CueSpan, read

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
    chain = [s.relation for s in ordered]
    deduped = tuple(r for i, r in enumerate(chain) if i == 0 or chain[i - 1] != r)
    why = "cues: " + ", ".join(f"{s.relation}<-'{s.cue}'" for s in ordered)
    return Compiled(tuple(_n_best(base, deduped, reading.answer_type, why)))


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
