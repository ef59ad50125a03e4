"""How sure an answer is: an ordered label, computed from what the search already knows about
the winning path and its rivals. It never changes which answer wins; a caller may abstain below
a level (`abstain`).

Levels, lowest first: "none" (no answer), "low", "medium", "high". The signals, each a reason:

- an older version taken at some hop (FactConsolidation's latest wins, so the path reads a
  value the context has since replaced),
- a negative score (the question's words account for the path worse than for nothing),
- an answer not of the asked type,
- a hop no word of the question cues (a bridge, or a relaxed plan step),
- a cue word of the question that the path leaves unexplained,
- a close rival: another candidate with another answer, of the type asked when the winner is,
  scoring within RIVAL_MARGIN of the winner,
- a symmetric fact followed from its object back to its subject.

high: none of them. low: an older version, a negative score, an answer of another type, or two
or more of the other signals together. medium: exactly one of the other signals. The rules
and the margin were set on the dev rows and on synthetic rows (benchmarks/synthetic.py, whose
gold takes older versions on purpose), never on the blind or held-out sets; `factres oracle
calibration` reports how they sort right answers from wrong ones."""
from __future__ import annotations

from dataclasses import dataclass

from dataclasses import replace

from resolver.plan.question import read
from resolver.search.candidates import Candidate
from resolver.search.path_search import _Path, fits_type, score_path
from resolver.store.fact_store import norm

NONE, LOW, MEDIUM, HIGH = "none", "low", "medium", "high"
LEVELS = (NONE, LOW, MEDIUM, HIGH)        # lowest first
RIVAL_MARGIN = 0.5                        # score points between the winner and a close rival
ABSTAINED = "abstained"                   # how an abstention's reason begins


@dataclass(frozen=True)
class Confidence:
    label: str                       # one of LEVELS
    reasons: tuple[str, ...] = ()    # the signals that lowered it, in a fixed order

    def to_json(self) -> dict:
        return {"label": self.label, "reasons": list(self.reasons)}

    @classmethod
    def from_json(cls, obj: dict) -> "Confidence":
        return cls(obj["label"], tuple(obj.get("reasons", ())))


def rank(label: str) -> int:
    """The level's place, lowest first; ValueError naming the levels for an unknown one."""
    try:
        return LEVELS.index(label)
    except ValueError:
        raise ValueError(f"unknown confidence level {label!r}; known, lowest first: "
                         f"{', '.join(LEVELS)}") from None


def scored(text: str, store, candidate: Candidate) -> Candidate:
    """The candidate with the score and terms the search gives its path (plain execution
    keeps no score; its label is read from the same terms a search would have)."""
    reading = read(text, store)
    base = candidate.hops[0].subject
    ranks = {norm(b): i for i, b in enumerate(reading.bases)}
    total, terms = score_path(_Path(base, candidate.hops), reading, candidate.plan,
                              ranks.get(norm(base), len(reading.bases)))
    return replace(candidate, score=total, terms=terms)


def assess(winner: Candidate | None, candidates: tuple[Candidate, ...] = ()) -> Confidence:
    """The label of an answer: `winner` is the winning candidate (None: no answer),
    `candidates` every candidate the search kept, best first."""
    if winner is None:
        return Confidence(NONE, ("no answer",))
    strong: list[str] = []
    weak: list[str] = []
    older = [i for i, h in enumerate(winner.hops, 1) if h.version]
    if older:
        strong.append("older version taken at hop " + ", ".join(map(str, older)))
    if winner.score < 0:
        strong.append(f"negative score {winner.score:.2f}")
    keys = [k for k, _ in winner.terms]
    if any(k.startswith("type-mismatch:") for k in keys):
        strong.append("answer not of the asked type")
    uncued = [k.split(":", 1)[1] for k in keys if k.startswith("uncued:")]
    if uncued:
        weak.append("uncued hop: " + ", ".join(uncued))
    unexplained = [k.split(":", 1)[1] for k in keys if k.startswith("unexplained:")]
    if unexplained:
        weak.append("cue left unexplained: " + ", ".join(unexplained))
    rival = _close_rival(winner, candidates)
    if rival is not None:
        weak.append(f"close rival {rival.answer!r} ({rival.score:.2f} against "
                    f"{winner.score:.2f})")
    reverse = [h.relation for h in winner.hops if h.reverse]
    if reverse:
        weak.append("followed back from object to subject: " + ", ".join(reverse))
    reasons = tuple(strong + weak)
    if strong or len(weak) >= 2:
        return Confidence(LOW, reasons)
    if weak:
        return Confidence(MEDIUM, reasons)
    return Confidence(HIGH, ())


def _close_rival(winner: Candidate, candidates: tuple[Candidate, ...]) -> Candidate | None:
    """The best candidate with another answer that scores within RIVAL_MARGIN of the winner
    (of the asked type when the winner is)."""
    answer = norm(winner.answer)
    typed = fits_type(winner)
    for c in candidates:
        if norm(c.answer) == answer or (typed and not fits_type(c)):
            continue
        return c if winner.score - c.score <= RIVAL_MARGIN else None
    return None


def below(confidence: Confidence, level: str | None) -> bool:
    """Whether an answer with this confidence is abstained from at `level` (None: never)."""
    return level is not None and confidence.label != NONE and rank(confidence.label) < rank(level)


def abstention(confidence: Confidence, level: str) -> str:
    """The reason an abstained answer records."""
    why = "; ".join(confidence.reasons)
    return f"{ABSTAINED}: confidence {confidence.label}, below {level}" + (f" ({why})" if why
                                                                           else "")
