"""Questions -> predictions: run every plan of every plan set through the path search and
keep the best complete path. No model and no gold here.

The shapes below (`Hop`, `Candidate`, `Prediction`) are what traces.jsonl records."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from .haystack import Dataset, Question
from .plans import Compiled, Plan, PlanSet


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

    def to_json(self) -> dict:
        return {"subject": self.subject, "relation": self.relation, "object": self.object,
                "serial": self.serial, "line": self.line, "text": self.text,
                "version": self.version, "reverse": self.reverse,
                "passed_over": [list(p) for p in self.passed_over]}


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


@dataclass(frozen=True)
class Prediction:
    qid: str
    question: str
    source: str
    answer: str                  # "" when unanswered
    reason: str = ""             # why unanswered (no plan, no path), else ""
    winner: Candidate | None = None
    candidates: tuple[Candidate, ...] = ()      # the best few, winner first
    plans_tried: int = 0
    plan_sets: tuple[str, ...] = field(default=())
    suspicious: str = ""         # why the selector distrusts its answer ("" if it does not):
                                 # "no complete path" or "answer type mismatch"

    @property
    def plan(self) -> Plan | None:
        return self.winner.plan if self.winner else None

    def to_json(self) -> dict:
        """One line of traces.jsonl: the winner, and the best candidate of every plan tried."""
        return {"qid": self.qid, "question": self.question, "source": self.source,
                "answer": self.answer, "reason": self.reason,
                "winner": self.winner.to_json() if self.winner else None,
                "candidates": [c.to_json() for c in self.candidates],
                "plans_tried": self.plans_tried, "plan_sets": list(self.plan_sets),
                "suspicious": self.suspicious}


def execute_latest(plan: Plan, store, plan_set: str = "") -> Candidate | None:
    """Plain execution (issue 3): follow the chain hop by hop, latest version at each hop."""
    from .plans import step_relations
    entity = store.spelling(plan.entity) or plan.entity
    hops = []
    for step in plan.chain:
        options = sorted(step_relations(step))
        found = None
        for rel in options:
            versions = store.versions(entity, rel)
            if versions:
                found = (rel, versions)
                break
        if found is None:
            return None
        rel, versions = found
        fact = versions[-1]
        hops.append(Hop(store.spelling(entity) or entity, rel, fact.object, fact.serial,
                        fact.line, fact.text, 0, False,
                        tuple((v.serial, v.line) for v in versions[:-1])))
        entity = fact.object
    return Candidate(plan, plan_set, tuple(hops), hops[-1].object, 0.0, (), True)


def resolve_question(question: Question, store, compiled: list[tuple[str, Compiled]]
                     ) -> Prediction:
    """Plain resolver: the first plan (in plan-set order) whose chain completes wins."""
    tried = 0
    reasons = []
    for set_id, comp in compiled:
        if not comp.plans:
            reasons.append(f"{set_id}: {comp.reason}")
        for plan in comp.plans:
            tried += 1
            cand = execute_latest(plan, store, set_id)
            if cand is not None:
                return Prediction(question.qid, question.text, question.source, cand.answer,
                                  "", cand, (cand,), tried, tuple(s for s, _ in compiled))
    reason = "; ".join(reasons) if reasons and not tried else "no plan reached an answer"
    return Prediction(question.qid, question.text, question.source, "", reason, None, (),
                      tried, tuple(s for s, _ in compiled))


def resolve_dataset(dataset: Dataset, plan_sets: list[PlanSet],
                    progress: Callable[[int], None] | None = None) -> list[Prediction]:
    """Resolve every question of the dataset with every plan set, in question order."""
    out = []
    for question in dataset.questions:
        store = dataset.haystack_of(question).store
        compiled = [(ps.set_id, ps.plans.get(question.qid, Compiled((), "not in plan set")))
                    for ps in plan_sets]
        out.append(resolve_question(question, store, compiled))
        if progress:
            progress(1)
    return out
