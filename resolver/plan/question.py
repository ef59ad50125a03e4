"""Reading a question: its word tokens, the store entities it names, the relation cues it
contains and the answer type it asks for. Uses the lexicon and the store's entity index only."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from resolver.plan.asked import asked_type
from resolver.plan.lexicon import cues
from resolver.store.fact_store import FactStore, Mention, name_tokens
from resolver.text.relations import inventory


@dataclass(frozen=True, slots=True)
class CueSpan:
    relation: str
    start: int
    end: int           # token span [start, end)
    weight: float
    cue: str           # the cue as written in the lexicon, for traces

    def overlaps(self, other: "CueSpan") -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Reading:
    text: str
    tokens: tuple[str, ...]
    mentions: tuple[Mention, ...]          # store entities named, widest first
    bases: tuple[str, ...]                 # subject entities that can start a chain, best first
    spans: tuple[CueSpan, ...]             # relation cues outside the base entity
    answer_type: str
    type_word: str                         # the word that named the type ("" if none)


def _match(cue: tuple[str, ...], tokens: tuple[str, ...], at: int) -> bool:
    if at + len(cue) > len(tokens):
        return False
    for word, tok in zip(cue, tokens[at:at + len(cue)]):
        if word == "*":
            continue
        if word.endswith("*"):
            if not tok.startswith(word[:-1]):
                return False
        elif word != tok:
            return False
    return True


@lru_cache(maxsize=4096)
def _cue_spans(tokens: tuple[str, ...]) -> tuple[CueSpan, ...]:
    spans = []
    for relation, items in sorted(cues().items()):
        for cue, weight in items:
            for at in range(len(tokens)):
                if _match(cue, tokens, at):
                    spans.append(CueSpan(relation, at, at + len(cue), weight, " ".join(cue)))
    return tuple(spans)


def read(text: str, store: FactStore) -> Reading:
    tokens = name_tokens(text)
    mentions = tuple(store.mentions(text))
    bases = []
    for m in mentions:
        for name in m.names:
            if store.is_subject(name) and name not in bases:
                bases.append(name)
    base_span = next((m for m in mentions if m.as_subject), None)
    spans = _cue_spans(tokens)
    if base_span is not None:
        spans = tuple(s for s in spans
                      if s.end <= base_span.start or s.start >= base_span.end)
    answer_type, type_word = asked_type(text, tokens, _cue_spans(tokens), mentions)
    return Reading(text, tokens, mentions, tuple(bases), spans, answer_type, type_word)
