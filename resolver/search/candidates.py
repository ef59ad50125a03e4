"""The records a search produces: a `Hop` (one fact followed, with the versions passed over)
and a `Candidate` (a path from a plan's base entity, its answer and its score terms). They are
what traces.jsonl records for every candidate; the search builds them, `resolve` ranks them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from resolver.plan.plans import Plan
from resolver.text.frozen import Frozen


_set = object.__setattr__
_HOP_FIELDS = ("subject", "relation", "object", "serial", "line", "text", "version", "reverse",
               "passed_over", "status")


class Hop(Frozen):
    """One fact followed. Immutable; equal when every field is equal (as a frozen dataclass).

    Fields:
        subject      entity the hop starts from, as written in the store
        relation
        object       where the hop lands (verbatim)
        serial       version taken
        line
        text         the fact line as written
        version      0 = the latest version of the key, 1 = the one before, ...
        reverse      followed from object to subject (symmetric relation)
        passed_over  (serial, line) of the key's other versions, oldest first
        status       the version's ledger status (provenance.STATUSES): "active" for the
                     head; FactConsolidation's older ones are "superseded"

    `passed_over` may be given as a function that returns it: the search makes hops of keys
    with thousands of versions, and the list of all the others is made only when it is read
    (a trace written out), once. Without that, every version carrying all the others is
    memory that grows with the square of a key's version count."""
    __slots__ = ("subject", "relation", "object", "serial", "line", "text", "version",
                 "reverse", "_passed", "status")
    _FIELDS = _HOP_FIELDS

    def __init__(self, subject: str, relation: str, object: str, serial: int, line: int,
                 text: str, version: int = 0, reverse: bool = False,
                 passed_over: tuple[tuple[int, int], ...] | Callable[[], tuple] = (),
                 status: str = "") -> None:
        # `object` is a field name here (the parameter shadows the builtin): slots are set
        # through `_set`, the builtin's __setattr__ taken at import.
        _set(self, "subject", subject)
        _set(self, "relation", relation)
        _set(self, "object", object)
        _set(self, "serial", serial)
        _set(self, "line", line)
        _set(self, "text", text)
        _set(self, "version", version)
        _set(self, "reverse", reverse)
        _set(self, "_passed", passed_over)
        _set(self, "status", status)

    @property
    def passed_over(self) -> tuple[tuple[int, int], ...]:
        passed = self._passed
        if callable(passed):
            passed = passed()
            _set(self, "_passed", passed)
        return passed

    @property
    def passes_over(self) -> bool:
        """Whether the key has versions other than this hop's: `bool(passed_over)`, without
        making the list when it is not made yet (a key may have thousands)."""
        passed = self._passed
        if callable(passed):
            cheap = getattr(passed, "any", None)
            return cheap() if cheap is not None else bool(self.passed_over)
        return bool(passed)

    def to_json(self) -> dict:
        return {"subject": self.subject, "relation": self.relation, "object": self.object,
                "serial": self.serial, "line": self.line, "text": self.text,
                "version": self.version, "reverse": self.reverse,
                "passed_over": [list(p) for p in self.passed_over], "status": self.status}


@dataclass(frozen=True)
class Candidate:
    plan: Plan | None
    plan_set: str
    hops: tuple[Hop, ...]
    answer: str
    score: float
    terms: tuple[tuple[str, float], ...] = ()      # the score's parts, readable
    complete: bool = True

    def to_json(self) -> dict:
        return {"plan": self.plan.to_json() if self.plan else None, "plan_set": self.plan_set,
                "hops": [h.to_json() for h in self.hops], "answer": self.answer,
                "score": round(self.score, 6), "terms": [[k, round(v, 6)] for k, v in self.terms],
                "complete": self.complete}
