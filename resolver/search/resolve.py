"""Questions -> predictions: run every plan of every plan set through the path search and
keep the best complete path. No model and no gold here.

`Prediction` (below) and the `Candidate`/`Hop` records it holds (`search.candidates`) are what
traces.jsonl records."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from resolver.haystack import Dataset, Question
from resolver.plan.lexicon import TYPE_ACCEPTS
from resolver.plan.plans import Compiled, Plan, PlanSet, step_relations
from resolver.search.candidates import Candidate
from resolver.search.confidence import Confidence, assess, capped, scored, with_contests
from resolver.search.contested import Contest, contests
from resolver.search.history import HistoryRead, cues_of, read_history
from resolver.search.hops import latest_hops
from resolver.search.path_search import search
from resolver.text.relations import inventory


@dataclass(frozen=True)
class Prediction:
    """One resolved question: the `answer` ("" when unanswered, `reason` says why), the
    `winner` candidate (its `hops`, hop by hop with serial, line, version and ledger status, and
    its score `terms`), the best candidates (winner first), the plans tried, and the answer's
    `confidence` label with its reasons. `to_json()` is its traces.jsonl row."""
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
    confidence: Confidence | None = None    # how sure the answer is (search.confidence)
    # The contested cells the winning path reads (search.contested), and what a history cue of
    # the question did (search.history); in traces.jsonl only when there are some.
    contests: tuple[Contest, ...] = ()
    history: HistoryRead | None = None

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
                "suspicious": self.suspicious} | self.confidence_json() | self.ledger_json()

    def ledger_json(self) -> dict:
        """{"contests": [...], "history": {...}}, each only when there is one: a question of
        the present over a store only ever accepted (every committed run) adds nothing."""
        out: dict = {}
        if self.contests:
            out["contests"] = [c.to_json() for c in self.contests]
        if self.history is not None:
            out["history"] = self.history.to_json()
        return out

    def confidence_json(self) -> dict:
        """{"confidence": {label, reasons}}, or {} for a prediction made without one."""
        return {} if self.confidence is None else {"confidence": self.confidence.to_json()}


NOT_IN_SET = "not in plan set"      # the reason of a question a plan set has no plans for


def execute_latest(plan: Plan, store, plan_set: str = "") -> Candidate | None:
    """Plain execution (issue 3): follow the chain hop by hop, the head of each key (its latest
    version under FactConsolidation's write path) at each hop, read through the ledger. The
    first relation of a step that the entity has is taken."""
    entity = plan.entity
    hops = []
    for step in plan.chain:
        hop = next((h for rel in sorted(step_relations(step))
                    for h in latest_hops(store, entity, rel)[:1] if not h.reverse), None)
        if hop is None:
            return None
        hops.append(hop)
        entity = hop.object
    return Candidate(plan, plan_set, tuple(hops), hops[-1].object, 0.0, (), True)


def resolve_question(question: Question, store, compiled: list[tuple[str, Compiled]]
                     ) -> Prediction:
    """Search over every plan of every set plus the enumeration; the best-scored path wins."""
    plans = [(set_id, plan) for set_id, comp in compiled for plan in comp.plans]
    set_ids = tuple(s for s, _ in compiled)
    reading, candidates = search(question.text, store, plans)
    # `select(candidates)`: the search gives them sorted by the same key, best first
    winner = candidates[0] if candidates else None
    if winner is None:
        reasons = [f"{s}: {c.reason}" for s, c in compiled if c.reason]
        reason = "no path from any base entity" if reading.bases else \
            "names no entity that is the subject of a fact"
        if reasons:
            reason += "; " + "; ".join(reasons)
        return Prediction(question.qid, question.text, question.source, "", reason, None, (),
                          len(plans), set_ids, "no complete path", assess(None))
    suspicious = ""
    if any(k.startswith("type-mismatch") for k, _ in winner.terms):
        suspicious = "answer type mismatch"
    return _read_ledger(Prediction(question.qid, question.text, question.source, winner.answer,
                                   "", winner, tuple(candidates), len(plans), set_ids,
                                   suspicious, assess(winner, tuple(candidates))), store)


def resolve_question_plain(question: Question, store, compiled: list[tuple[str, Compiled]]
                           ) -> Prediction:
    """Plain resolver (the issue-3 baseline, no search): execute the plans in order, latest
    version at every hop. The first plan that completes and whose last relation gives the type
    the plan names wins; failing that, the first plan that completes."""
    tried, first, typed = 0, None, None
    for set_id, comp in compiled:
        for plan in comp.plans:
            tried += 1
            cand = execute_latest(plan, store, set_id)
            if cand is None:
                continue
            first = first or cand
            got = inventory()[cand.hops[-1].relation].object_type
            wanted = plan.answer_type
            if wanted == "any" or got == wanted or TYPE_ACCEPTS.get(wanted, {}).get(got, 0) >= 1:
                typed = cand
                break
        if typed:
            break
    set_ids = tuple(s for s, _ in compiled)
    best = typed or first
    if best is None:
        reasons = [f"{s}: {c.reason}" for s, c in compiled if c.reason]
        reason = "; ".join(reasons) if reasons and not tried else "no plan reached an answer"
        return Prediction(question.qid, question.text, question.source, "", reason, None, (),
                          tried, set_ids, "no complete path", assess(None))
    # Plain execution keeps no score: the label reads the terms the search gives its path.
    return _read_ledger(Prediction(question.qid, question.text, question.source, best.answer,
                                   "", best, (best,), tried, set_ids,
                                   "" if typed else "answer type mismatch",
                                   assess(scored(question.text, store, best))), store)


def _read_ledger(prediction: Prediction, store) -> Prediction:
    """The prediction with what the ledger adds to it: the history a cue of the question asks
    for (search.history), then the contested cells of the path it answers with
    (search.contested). A question with no history cue whose path reads no contested cell
    (every committed question) comes back as it was."""
    cues = cues_of(prediction.question, store)
    if cues:
        prediction = _with_history(prediction, cues, store)
    winner = prediction.winner
    found = contests(winner.hops, store) if winner is not None else ()
    if found:
        prediction = replace(prediction, contests=found,
                             confidence=with_contests(prediction.confidence, found))
    return prediction


def _with_history(prediction: Prediction, cues, store) -> Prediction:
    winner = prediction.winner
    # plain execution keeps no terms: the hop a cue names is read from the search's terms
    terms = winner.terms or scored(prediction.question, store, winner).terms
    found = read_history(winner, cues, store, terms)
    note = found.read
    if found.candidate is None:
        return replace(prediction, answer="", reason=f"history: {note.note}", winner=None,
                       history=note, confidence=assess(None))
    if not note.placed:
        return replace(prediction, history=note,
                       confidence=capped(prediction.confidence, (note.note,)))
    walked = found.candidate
    # the label of the path walked again: its rivals are the search's; the hops whose older
    # version the question asked for are no signal
    scored_walk = replace(winner, hops=walked.hops) if winner.terms else \
        replace(scored(prediction.question, store, winner), hops=walked.hops)
    confidence = assess(scored_walk, prediction.candidates, frozenset(note.hops))
    return replace(prediction, answer=walked.answer, winner=walked, history=note,
                   confidence=confidence)


def resolve_dataset(dataset: Dataset, plan_sets: list[PlanSet],
                    progress: Callable[[int], None] | None = None,
                    mode: str = "search") -> list[Prediction]:
    """Resolve every question of the dataset with every plan set, in question order.
    `mode` is "search" (the relaxed scored search) or "plain" (plain mode: the plans executed in order, the latest version at every hop)."""
    out = []
    for question in dataset.questions:
        compiled = [(ps.set_id, ps.plans.get(question.qid, Compiled((), NOT_IN_SET)))
                    for ps in plan_sets]
        out.append(resolve_compiled(question, dataset.haystack_of(question).store, compiled,
                                    mode))
        if progress:
            progress(1)
    return out


def resolve_compiled(question: Question, store, compiled: list[tuple[str, Compiled]],
                     mode: str = "search") -> Prediction:
    """One question resolved over `store` with its plans of each set, (set id, plans), in
    order: by the search, or in plain mode."""
    resolve_one = resolve_question if mode == "search" else resolve_question_plain
    return resolve_one(question, store, compiled)
