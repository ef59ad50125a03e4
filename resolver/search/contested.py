"""Contested cells on a path: the hops whose key the ledger holds open between competing values
(a `contest` not yet settled by a `resolve`, or by an accept that outranks it), each with the
values that compete with the one the path took. An answer whose path reads one is flagged and
its confidence is at most "low" (`confidence.with_contests`); docs/history.md says what a user
sees."""
from __future__ import annotations

from dataclasses import dataclass

from resolver.search.candidates import Hop
from resolver.store.fact_store import norm
from resolver.store.provenance import CONTESTED


@dataclass(frozen=True)
class Contest:
    """One contested cell a path reads."""
    hop: int                          # the hop (1-based) that reads it
    subject: str                      # the key's subject, as the hop writes it
    relation: str
    taken: str                        # the value the path took
    head: str                         # the head's value (the value held before the contest)
    alternatives: tuple[str, ...]     # the other parties' values: head first, then the open
    #                                   alternatives oldest first, the value taken left out

    def reason(self) -> str:
        """The confidence reason it gives."""
        others = ", ".join(repr(v) for v in self.alternatives)
        return (f"contested at hop {self.hop}: {self.subject} / {self.relation} is "
                f"{self.taken!r}, against {others}")

    def to_json(self) -> dict:
        return {"hop": self.hop, "subject": self.subject, "relation": self.relation,
                "taken": self.taken, "head": self.head, "alternatives": list(self.alternatives)}

    @classmethod
    def from_json(cls, obj: dict) -> "Contest":
        return cls(obj["hop"], obj["subject"], obj["relation"], obj["taken"], obj["head"],
                   tuple(obj["alternatives"]))


def contests(hops: tuple[Hop, ...], store) -> tuple[Contest, ...]:
    """The contested cells `hops` read, in path order (none for a key only ever accepted: the
    hop's ledger status says so, so an uncontested path costs one comparison per hop)."""
    out = []
    ledger = None
    for at, hop in enumerate(hops, 1):
        if hop.status != CONTESTED:
            continue
        ledger = ledger or store.ledger
        # a reverse hop (a symmetric relation followed back) reads the key of its object
        subject = hop.object if hop.reverse else hop.subject
        taken = hop.subject if hop.reverse else hop.object
        key = (norm(subject), hop.relation)
        head = ledger.head(key)
        if head is None:
            continue
        parties = [head.value] + [v.value for v in ledger.alternatives(key)]
        others = tuple(dict.fromkeys(v for v in parties if norm(v) != norm(taken)))
        out.append(Contest(at, subject, hop.relation, taken, head.value, others))
    return tuple(out)


def alternatives(found: tuple[Contest, ...]) -> tuple[str, ...]:
    """The competing values of every contested cell, in path order, each once."""
    return tuple(dict.fromkeys(v for c in found for v in c.alternatives))
