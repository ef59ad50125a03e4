"""A history question read along the path the search found: the winning path walked again,
reading at the hop a history cue names (`plan.history`) the key's history instead of its head,
and the hops after it from where that version leads.

"previous" takes the key's newest earlier value (along the supersedes chain: a value retracted
or judged wrong is not one; an open alternative of a contested head is not an earlier value;
the head's own value restated is skipped); "as of serial N" takes, at every hop, the version
that was current at serial N (the newest along that chain written at or before N). The answer
says which versions it used (`HistoryRead`). A cue the reader cannot place leaves the current
answer, at most "low" (docs/history.md)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from resolver.plan.history import AS_OF, PREVIOUS, UNPLACED, HistoryCue, history_cues
from resolver.plan.question import read
from resolver.search.candidates import Candidate, Hop
from resolver.search.hops import hops_over, latest_hops
from resolver.store.fact_store import norm
from resolver.store.provenance import CONTESTED


@dataclass(frozen=True)
class HistoryRead:
    """What a history cue did to an answer."""
    cue: str                           # the cue's words ("previous", "as of serial 12")
    kind: str                          # plan.history's PREVIOUS, AS_OF or UNPLACED
    hops: tuple[int, ...] = ()         # the hops (1-based) it read the history of
    note: str = ""                     # which versions it used, or why it used none
    placed: bool = True                # False: the reader could not place it

    def to_json(self) -> dict:
        return {"cue": self.cue, "kind": self.kind, "hops": list(self.hops),
                "note": self.note, "placed": self.placed}

    @classmethod
    def from_json(cls, obj: dict) -> "HistoryRead":
        return cls(obj["cue"], obj["kind"], tuple(obj["hops"]), obj["note"], obj["placed"])


@dataclass(frozen=True)
class HistoryAnswer:
    """The result of `read_history`: the path walked again (None: the history holds no such
    value, `read.note` says why), or the winner unchanged for an unplaced cue."""
    candidate: Candidate | None
    read: HistoryRead


def cues_of(text: str, store) -> tuple[HistoryCue, ...]:
    """The history cues of a question over a store (its reading's)."""
    return history_cues(read(text, store))


def read_history(winner: Candidate, cues: tuple[HistoryCue, ...], store, terms=None
                 ) -> HistoryAnswer:
    """The winner's path with the history its first placeable cue asks for. `terms`: the
    winner's score terms when its own are empty (plain execution), one per hop first."""
    placeable = [c for c in cues if c.kind != UNPLACED]
    if not placeable:
        first = cues[0]
        return HistoryAnswer(winner, HistoryRead(
            first.words, UNPLACED, (), f"temporal cue {first.words!r}: the reader cannot place "
            "it in the key's history; the current value is given", False))
    cue = placeable[0]
    hops = winner.hops
    if cue.kind == AS_OF:
        wanted = tuple(range(1, len(hops) + 1))
    else:
        at = _hop_named(cue, hops, winner.terms or terms or ())
        if at is None:
            return HistoryAnswer(winner, HistoryRead(
                cue.words, cue.kind, (), f"history cue {cue.words!r} names no hop of the path "
                "(" + " > ".join(h.relation for h in hops) + "); the current value is given",
                False))
        wanted = (at,)
    walked: list[Hop] = []
    notes: list[str] = []
    entity = hops[0].subject
    for i, hop in enumerate(hops, 1):
        if hop.reverse:
            if norm(entity) != norm(hop.subject) or i in wanted:
                return _none(cue, wanted, f"hop {i} follows {hop.relation} back from object "
                             "to subject, whose history is not read")
            walked.append(hop)
            entity = hop.object
            continue
        every = [h for h in hops_over(store, entity, hop.relation) if not h.reverse]
        if not every:
            return _none(cue, wanted, f"{entity} has no {hop.relation} (hop {i})")
        if i in wanted:
            chosen = _previous(every) if cue.kind == PREVIOUS else _as_of(every, cue.serial)
            if chosen is None:
                why = "no earlier value" if cue.kind == PREVIOUS else \
                    f"no value at or before serial {cue.serial}"
                return _none(cue, wanted, f"{every[0].subject} / {hop.relation} (hop {i}) has "
                             f"{why}")
            notes.append(f"hop {i} ({chosen.subject} / {chosen.relation}) read version "
                         f"{chosen.version} (serial {chosen.serial}, line {chosen.line}), not "
                         f"the head (serial {every[0].serial})" if chosen.version else
                         f"hop {i} ({chosen.subject} / {chosen.relation}) read the head "
                         f"(serial {chosen.serial}, line {chosen.line})")
        elif norm(entity) == norm(hop.subject):
            chosen = hop
        else:
            chosen = next(iter(h for h in latest_hops(store, entity, hop.relation)
                               if not h.reverse), None)
            if chosen is None:
                return _none(cue, wanted, f"{entity} has no {hop.relation} (hop {i})")
        walked.append(chosen)
        entity = chosen.object
    path = tuple(walked)
    candidate = replace(winner, hops=path, answer=path[-1].object)
    return HistoryAnswer(candidate, HistoryRead(cue.words, cue.kind, wanted, "; ".join(notes)))


def _none(cue: HistoryCue, wanted: tuple[int, ...], why: str) -> HistoryAnswer:
    return HistoryAnswer(None, HistoryRead(cue.words, cue.kind, wanted, why))


def _hop_named(cue: HistoryCue, hops: tuple[Hop, ...], terms) -> int | None:
    """The hop (1-based) the cue names: a single-hop path's one hop; else the first hop whose
    cue term is one of the relation cues the cue names (a path's first terms are its hops', in
    order), else the first hop over a relation it names."""
    if len(hops) == 1:
        return 1
    named = set(cue.names)
    for at, (hop, (term, _)) in enumerate(zip(hops, terms), 1):
        if term.startswith("cue:"):
            relation, _, text = term[4:].partition("<-")
            if (relation, text.strip("'")) in named and relation == hop.relation:
                return at
    relations = {r for r, _ in cue.names}
    for at, hop in enumerate(hops, 1):
        if hop.relation in relations:
            return at
    return None


def _previous(every: list[Hop]) -> Hop | None:
    """The newest earlier value: the first hop after the head that is no open alternative and
    holds another value than the head."""
    head = every[0]
    for hop in every[1:]:
        if hop.status != CONTESTED and norm(hop.object) != norm(head.object):
            return hop
    return None


def _as_of(every: list[Hop], serial: int) -> Hop | None:
    """The version current at `serial`: the head or, back along the chain, the first written
    at or before it (an open alternative never was the current value)."""
    for rank, hop in enumerate(every):
        if rank and hop.status == CONTESTED:
            continue
        if hop.serial <= serial:
            return hop
    return None
