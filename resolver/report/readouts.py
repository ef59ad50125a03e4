"""A run's questions read out for an LLM reader (`factres readout RUN QID...`): each question's
store rebuilt from the data the run names (sha256-checked by the reader), its prediction rebuilt
from its trace (the winning path and the rival candidates the run recorded), rendered by the
memory's renderer (`memory.readout`), so a readout here is the one the run measured in its
readout.jsonl. The gold the data holds is never passed on."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from resolver.errors import InputError, first_few
from resolver.memory.readout import check, render
from resolver.results.reader import RunFolder, candidate_of
from resolver.results.result_schema import IMPORTED_KIND
from resolver.search.resolve import Prediction


@dataclass(frozen=True)
class RunReadout:
    qid: str
    question: str
    text: str                   # the readout (`Memory.readout`'s format)

    def to_json(self) -> dict:
        return {"qid": self.qid, "question": self.question, "readout": self.text,
                "chars": len(self.text)}


def run_readouts(run: RunFolder, qids: Sequence[str], *, disclose: Iterable[str] | str = (),
                 budget: int | None = None) -> list[RunReadout]:
    """The readout of each question `qids` names, in that order, as `Memory.readout` gives it
    (`disclose` and `budget` as there; budget default 600).

    Raises:
        InputError: an imported run (it recorded no paths), a question id the run does not
            have (the first few it has are named), and `Memory.readout`'s refusals.
    """
    disclose, budget = check(disclose, budget)
    if run.kind == IMPORTED_KIND:
        raise InputError(f"run {run.name} is imported (factres score): it recorded no paths "
                         "to read out", path=str(run.path), expected="a run made by factres run")
    if not qids:
        raise InputError("no question id given", expected="one or more question ids of the run")
    known = [row["qid"] for row in run.predictions]
    missing = [q for q in qids if q not in set(known)]
    if missing:
        raise InputError(f"run {run.name} has no question {missing[0]!r}",
                         expected=f"a question id of the run ({len(known)}: "
                                  f"{first_few(known)})")
    dataset, _gold = run.load_data()          # the gold is never read here
    questions = {q.qid: q for q in dataset.questions}
    out = []
    for qid in qids:
        question, trace = questions[qid], run.traces[qid]
        store = dataset.haystack_of(question).store
        out.append(RunReadout(qid, question.text, render(store, _prediction(trace),
                                                         disclose=disclose, budget=budget)))
    return out


def _prediction(trace: dict) -> Prediction:
    """The prediction a trace records: its answer, winner and candidates (the renderer reads
    no more)."""
    winner = candidate_of(trace["winner"]) if trace["winner"] else None
    return Prediction(trace["qid"], trace["question"], trace["source"], trace["answer"],
                      trace["reason"], winner, tuple(candidate_of(c) for c in trace["candidates"]))
