"""Rule compiler: a question that matches a MQuAKE question template ("Which city did [X] die
in?") compiles to an exact one-hop plan. The templates come from the relation inventory."""
from __future__ import annotations

import re
from functools import lru_cache

from resolver.plan.plans import Compiled, Plan
from resolver.text.relations import inventory

COMPILER = "rule"


@lru_cache(maxsize=None)
def _patterns() -> list[tuple[str, re.Pattern, int, tuple[str, str] | None]]:
    """(relation, pattern, literal length, ends), the most literal templates first. `ends`:
    the template's words before and after [X], lower-cased, when they are ASCII and have no
    space at the outer ends (all MQuAKE templates), else None."""
    out = []
    for rel in inventory().values():
        head, _, tail = rel.question.partition("[X]")
        pattern = re.compile(r"\s*" + re.escape(head) + r"(?P<x>.+?)" + re.escape(tail) + r"\s*$",
                             re.IGNORECASE)
        plain = (head + tail).isascii() and head == head.lstrip() and tail == tail.rstrip()
        out.append((rel.name, pattern, len(head) + len(tail),
                    (head.lower(), tail.lower()) if plain else None))
    out.sort(key=lambda t: (-t[2], t[0]))
    return out


@lru_cache(maxsize=None)
def _heads() -> tuple[dict[str, tuple[int, ...]], tuple[int, ...], tuple[int, ...]]:
    """The templates with `ends` (their places in `_patterns()`) by the lower-cased words
    before [X], the lengths of those words, and the places of the templates without `ends`."""
    table: dict[str, list[int]] = {}
    others = []
    for order, (_, _, _, ends) in enumerate(_patterns()):
        if ends is None:
            others.append(order)
        else:
            table.setdefault(ends[0], []).append(order)
    return ({head: tuple(places) for head, places in table.items()},
            tuple(sorted({len(head) for head in table})), tuple(others))


def _candidates(text: str) -> list[int] | range:
    """The places of the templates whose pattern may match `text`, in order. An ASCII question
    the pattern matches starts and ends with the template's words (case aside, spaces
    around): only those templates are tried, found by the words it starts with."""
    patterns = _patterns()
    if not text.isascii():
        return range(len(patterns))
    folded = text.strip().lower()
    table, lengths, others = _heads()
    places = list(others)
    for length in lengths:
        for order in table.get(folded[:length], ()):
            if folded.endswith(patterns[order][3][1]):
                places.append(order)
    return sorted(places)


def compile_question(text: str, store) -> Compiled:
    """Exact one-hop plans for a template question; the entity must be a subject in the store.

    When several templates fit (e.g. "Who is the author of X?" also fits "Who is the [X]?"),
    plans whose key exists in the store come first, then the more literal template."""
    found = []
    patterns = _patterns()
    for order in _candidates(text):
        name, pattern, literal, _ = patterns[order]
        match = pattern.match(text)
        if not match:
            continue
        entity = match["x"].strip().strip("\"'“”‘’")
        spelled = store.spelling(entity)
        if spelled is None or not store.is_subject(spelled):
            continue
        has_key = bool(store.versions(spelled, name))
        found.append((not has_key, -literal, order,
                      Plan(spelled, (name,), inventory()[name].object_type, COMPILER,
                           f"question template of {name}")))
    if not found:
        return Compiled((), "matches no MQuAKE question template with a store entity")
    found.sort(key=lambda t: t[:3])
    return Compiled(tuple(t[3] for t in found))
