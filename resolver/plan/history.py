"""History cues: the words of a question that ask for a key's past instead of its head.

Read from a question's `Reading` (its tokens, the entities it names and its relation cues), never
from a store's values. Three kinds:

- "previous": "previous", "previously", "formerly", "used to" (not "was used to", "is used
  to": a passive names a relation), "before the change", "no longer". The cue names one hop:
  the relation cue that starts nearest after it, else the one that ends nearest before it (a
  single-hop path needs none);
- "as-of": "as of serial N": the memory as it stood at serial N, at every hop;
- "unplaced": a temporal word the reader cannot place ("before", "earlier", "once", "former",
  "prior", "initially", "ago", "at the time", "back then", "as of" without a serial, "in" and
  a year). Its answer is at most "low".

Wording that names a relation keeps its meaning: "originally from", "first aired on", "first
developed in" carry no cue here (they are relation cues of the lexicon). Words inside an entity
the question names are never cues. docs/history.md gives the rules with examples."""
from __future__ import annotations

import re
from dataclasses import dataclass

PREVIOUS, AS_OF, UNPLACED = "previous", "as-of", "unplaced"

# (words, kind), longest first where one starts another
_PREVIOUS_CUES = (("before", "the", "change"), ("no", "longer"), ("used", "to"),
                  ("previously",), ("previous",), ("formerly",))
_UNPLACED_CUES = (("at", "the", "time"), ("back", "then"), ("before",), ("earlier",),
                  ("once",), ("former",), ("prior",), ("initially",), ("ago",))
_PASSIVE = frozenset(("was", "were", "is", "are", "be", "been", "being"))
_YEAR = re.compile(r"^(1[0-9]|20)[0-9]{2}$")
# The words a cue can start with: most tokens start none, and are passed over at once.
_FIRST_WORDS = frozenset([words[0] for words in _PREVIOUS_CUES + _UNPLACED_CUES] + ["as", "in"])
_SERIAL = re.compile(r"^[0-9]{1,18}$")


@dataclass(frozen=True)
class HistoryCue:
    kind: str                    # PREVIOUS, AS_OF or UNPLACED
    words: str                   # the cue as the question's tokens give it
    start: int                   # token span [start, end)
    end: int
    serial: int | None = None    # AS_OF: the serial named
    # PREVIOUS: the relation cues it names, (relation, cue text), all at one place of the
    # question (the lexicon may read the same words as several relations); () when none is near
    names: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict:
        return {"kind": self.kind, "words": self.words, "start": self.start, "end": self.end,
                "serial": self.serial, "names": [list(n) for n in self.names]}


def history_cues(reading) -> tuple[HistoryCue, ...]:
    """The history cues of a question's reading (`plan.question.Reading`), in the order they
    are written; () for a question that asks for the present (every committed question)."""
    tokens = reading.tokens
    inside = set()
    for m in reading.mentions:
        inside.update(range(m.start, m.end))
    found: list[HistoryCue] = []
    taken: set[int] = set()
    at = 0
    while at < len(tokens):
        cue = None if at in inside else _cue_at(tokens, at)
        if cue is None or taken & set(range(cue.start, cue.end)) or inside & set(
                range(cue.start, cue.end)):
            at += 1
            continue
        if cue.kind == PREVIOUS:
            cue = HistoryCue(cue.kind, cue.words, cue.start, cue.end,
                             names=_named(reading.spans, cue))
        found.append(cue)
        taken.update(range(cue.start, cue.end))
        at = cue.end
    return tuple(found)


def _cue_at(tokens: tuple[str, ...], at: int) -> HistoryCue | None:
    if tokens[at] not in _FIRST_WORDS:
        return None
    for words in _PREVIOUS_CUES:
        if tokens[at:at + len(words)] == words:
            if words == ("used", "to") and at and tokens[at - 1] in _PASSIVE:
                return None
            return HistoryCue(PREVIOUS, " ".join(words), at, at + len(words))
    if tokens[at:at + 2] == ("as", "of"):
        following = tokens[at + 2:at + 4]
        if len(following) == 2 and following[0] == "serial" and _SERIAL.match(following[1]):
            return HistoryCue(AS_OF, " ".join(tokens[at:at + 4]), at, at + 4,
                              serial=int(following[1]))
        return HistoryCue(UNPLACED, "as of", at, at + 2)
    if tokens[at] == "in" and at + 1 < len(tokens) and _YEAR.match(tokens[at + 1]):
        return HistoryCue(UNPLACED, " ".join(tokens[at:at + 2]), at, at + 2)
    for words in _UNPLACED_CUES:
        if tokens[at:at + len(words)] == words:
            return HistoryCue(UNPLACED, " ".join(words), at, at + len(words))
    return None


def _named(spans, cue: HistoryCue) -> tuple[tuple[str, str], ...]:
    """The relation cues a "previous" cue names: those starting nearest after it, else those
    ending nearest before it (every cue at that one place, strongest first)."""
    after = [s for s in spans if s.start >= cue.end]
    if after:
        first = min(s.start for s in after)
        chosen = [s for s in after if s.start == first]
    else:
        before = [s for s in spans if s.end <= cue.start]
        if not before:
            return ()
        last = max(s.end for s in before)
        chosen = [s for s in before if s.end == last]
    chosen.sort(key=lambda s: (-s.weight, -(s.end - s.start), s.relation, s.cue))
    return tuple(dict.fromkeys((s.relation, s.cue) for s in chosen))
