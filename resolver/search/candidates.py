"""The records a search produces: a `Hop` (one fact followed, with the versions passed over)
and a `Candidate` (a path from a plan's base entity, its answer and its score terms). They are
what traces.jsonl records for every candidate; the search builds them, `resolve` ranks them."""
from __future__ import annotations

from dataclasses import dataclass

from resolver.plan.plans import Plan


@dataclass(frozen=True)
class Hop:
    subject: str                # entity the hop starts from, as written in the store
    relation: str
    object: str                 # where the hop lands (verbatim)
    serial: int                 # version taken
    line: int
    text: str                   # the fact line as written
    version: int = 0            # 0 = the latest version of the key, 1 = the one before, ...
    reverse: bool = False       # followed from object to subject (symmetric relation)
    passed_over: tuple[tuple[int, int], ...] = ()   # (serial, line) of versions not taken
    status: str = ""            # the version's ledger status (provenance.STATUSES): "active"
                                # for the head; FactConsolidation's older ones are "superseded"

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
