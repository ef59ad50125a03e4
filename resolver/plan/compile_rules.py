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


def compile_question(text: str, store) -> Compiled:
    """Exact one-hop plans for a template question; the entity must be a subject in the store.

    When several templates fit (e.g. "Who is the author of X?" also fits "Who is the [X]?"),
    plans whose key exists in the store come first, then the more literal template."""
    found = []
    # An ASCII question the pattern matches starts and ends with the template's words (case
    # aside, spaces around): a template whose words are not there needs no pattern run.
    folded = text.strip().lower() if text.isascii() else None
    for order, (name, pattern, literal, ends) in enumerate(_patterns()):
        if folded is not None and ends is not None and not (
                folded.startswith(ends[0]) and folded.endswith(ends[1])):
            continue
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
