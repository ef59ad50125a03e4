"""How sure an answer is: an ordered label, computed from what the search already knows about
the winning path and its rivals. It never changes which answer wins; a caller may abstain below
a level (`below`, `abstention`).

Levels, lowest first: "none" (no answer), "low", "medium", "high". Each signal the winning
path shows costs points and names itself as a reason:

  2  a negative score (the question's words account for the path worse than for nothing)
  2  a close rival: another candidate with another answer (of the asked type when the winner
     is) scoring within RIVAL_MARGIN of the winner
  1  an older version taken at some hop (FactConsolidation's latest wins)
  1  an answer not of the asked type
  1  a hop no word of the question cues (a bridge, or a relaxed plan step)
  1  a symmetric fact followed from its object back to its subject
  1  REWRITTEN_HOPS or more hops reading a key that has other versions (the chain may need an
     older one somewhere; one such hop is what every single-hop question on an updated key
     has, and the latest is the benchmark's answer)

high: 0 points; medium: 1; low: 2 or more. Two signals cap the label at "low" whatever the
points (`with_contests`, `capped`): a hop reading a contested cell (the ledger holds competing
values open), and a history cue the reader could not place (docs/history.md). A hop whose older
version the question asked for ("previous", "as of serial N") costs nothing for it.

The weights, RIVAL_MARGIN and REWRITTEN_HOPS were set on the dev rows and on synthetic rows
(benchmarks/synthetic.py, whose gold takes an older version at about a fifth of the hops on
purpose), never on the blind or held-out sets; `factres oracle calibration` reports how they
sort right answers from wrong ones. What no label can see: a single-hop question whose gold is
an older version of its key (the question does not say so).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from resolver.plan.question import read
from resolver.search.candidates import Candidate
# _Path: a plain winner is re-scored as the search scores a path (see `scored`).
from resolver.search.path_search import _Path, fits_type, score_path
from resolver.store.fact_store import norm

NONE, LOW, MEDIUM, HIGH = "none", "low", "medium", "high"
LEVELS = (NONE, LOW, MEDIUM, HIGH)        # lowest first
RIVAL_MARGIN = 0.5                        # score points between the winner and a close rival
REWRITTEN_HOPS = 2                        # hops over keys with other versions that cost a point
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


def assess(winner: Candidate | None, candidates: tuple[Candidate, ...] = (),
           asked: frozenset[int] = frozenset()) -> Confidence:
    """The label of an answer: `winner` is the winning candidate (None: no answer),
    `candidates` every candidate the search kept, best first, `asked` the hops (1-based)
    whose older version the question asked for (a history cue): they are no signal."""
    if winner is None:
        return Confidence(NONE, ("no answer",))
    signals: list[tuple[int, str]] = []
    if winner.score < 0:
        signals.append((2, f"negative score {winner.score:.2f}"))
    rival = _close_rival(winner, candidates)
    if rival is not None:
        signals.append((2, f"close rival {rival.answer!r} ({rival.score:.2f} against "
                           f"{winner.score:.2f})"))
    older = [i for i, h in enumerate(winner.hops, 1) if h.version and i not in asked]
    if older:
        signals.append((1, "older version taken at hop " + ", ".join(map(str, older))))
    keys = [k for k, _ in winner.terms]
    if any(k.startswith("type-mismatch:") for k in keys):
        signals.append((1, "answer not of the asked type"))
    uncued = [k.split(":", 1)[1] for k in keys if k.startswith("uncued:")]
    if uncued:
        signals.append((1, "uncued hop: " + ", ".join(uncued)))
    reverse = [h.relation for h in winner.hops if h.reverse]
    if reverse:
        signals.append((1, "followed back from object to subject: " + ", ".join(reverse)))
    rewritten = [i for i, h in enumerate(winner.hops, 1) if h.passes_over and i not in asked]
    if len(rewritten) >= REWRITTEN_HOPS:
        signals.append((1, "hops " + ", ".join(map(str, rewritten)) + " read keys with other "
                           "versions"))
    points = sum(p for p, _ in signals)
    reasons = tuple(r for _, r in signals)
    return Confidence(HIGH if points == 0 else MEDIUM if points == 1 else LOW, reasons)


def capped(confidence: Confidence, reasons: tuple[str, ...]) -> Confidence:
    """The label at most "low", with `reasons` added (none: unchanged). An answer's "none" stays."""
    if not reasons or confidence.label == NONE:
        return confidence
    label = confidence.label if rank(confidence.label) <= rank(LOW) else LOW
    return Confidence(label, confidence.reasons + tuple(reasons))


def with_contests(confidence: Confidence, contests) -> Confidence:
    """The label of an answer whose path reads contested cells (`contested.contests`): at
    most "low", each cell named in the reasons."""
    return capped(confidence, tuple(c.reason() for c in contests))


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
