"""Reading a question: its word tokens, the store entities it names, the relation cues it
contains and the answer type it asks for. Uses the lexicon and the store's entity index only."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter

from resolver.errors import InputError
from resolver.haystack import MAX_QUESTION
from resolver.plan.asked import asked_type
from resolver.plan.lexicon import cues
from resolver.store.fact_store import FactStore, Mention, name_tokens


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
    """Does the cue match the tokens starting at `at`? The definition of a cue match: an exact
    word, a prefix ("originat*") or any one word ("*")."""
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


# Memos of what questions read, bounded (audit E, E22: a server asked 4,000 distinct questions of
# ~1,000 characters grew by 80 MB, a reading of such a question holding ~20 kB). A store keeps
# the READINGS_KEPT latest readings: a run reads each of a context's 200 questions when it
# compiles the plans and again when it searches them, a memory once per query. TOKENS_KEPT
# bounds the tokens whose cues are looked up.
READINGS_KEPT = 256
TOKENS_KEPT = 1 << 15

# One cue of the lexicon, numbered in the order the spans of a question are listed: relations
# by name, then each relation's cues in the lexicon's order (longest first).
_Cue = tuple[int, str, tuple[str, ...], float, str]    # (order, relation, words, weight, text)


class _CueIndex:
    """The lexicon's cues indexed by their first word, built from `cues()` when first used, so
    a question's tokens are tried only against the cues that can start with them (not every
    cue at every position). A first word is exact, a prefix ("found*") or any word ("*")."""

    def __init__(self, table: dict[str, tuple[tuple[tuple[str, ...], float], ...]]) -> None:
        self.exact: dict[str, list[_Cue]] = {}
        self.prefixed: dict[str, list[_Cue]] = {}
        self.anywhere: list[_Cue] = []
        order = 0
        for relation, items in sorted(table.items()):
            for words, weight in items:
                cue = (order, relation, words, weight, " ".join(words))
                order += 1
                first = words[0]
                if first == "*":
                    self.anywhere.append(cue)
                elif first.endswith("*"):
                    self.prefixed.setdefault(first[:-1], []).append(cue)
                else:
                    self.exact.setdefault(first, []).append(cue)
        # token -> the cues whose first word it fits, in cue order (a question's vocabulary is
        # small and recurs, so each token is looked up once). Bounded: a server asked questions
        # of made-up words met new tokens without end (audit E, E22); emptied when full, and
        # the many tokens that start only the "*" cues share one tuple.
        self._starting: dict[str, tuple[_Cue, ...]] = {}
        self._only_anywhere = tuple(sorted(self.anywhere))
        # (cue order, position) -> its span: questions put the same cue at the same place
        # again and again, and a span is immutable. Bounded and emptied as `_starting`.
        self.spans: dict[tuple[int, int], CueSpan] = {}

    def starting(self, token: str) -> tuple[_Cue, ...]:
        found = self._starting.get(token)
        if found is None:
            fits = list(self.exact.get(token, ()))
            # the token's own prefixes looked up, not every prefix of the lexicon tried
            prefixed = self.prefixed
            for end in range(1, len(token) + 1):
                cues_ = prefixed.get(token[:end])
                if cues_:
                    fits += cues_
            found = tuple(sorted(fits + self.anywhere)) if fits else self._only_anywhere
            if len(self._starting) >= TOKENS_KEPT:
                self._starting.clear()
            self._starting[token] = found
        return found


@lru_cache(maxsize=None)
def _cue_index() -> _CueIndex:
    return _CueIndex(cues())


@lru_cache(maxsize=READINGS_KEPT)
def _cue_spans(tokens: tuple[str, ...]) -> tuple[CueSpan, ...]:
    """Every cue of every relation matched at every position, in the order relation (by name),
    cue (the lexicon's order), position: a cue is tried only where its first word fits."""
    index = _cue_index()
    spans = index.spans
    found = []
    for at, token in enumerate(tokens):
        for cue in index.starting(token):
            order, relation, words, weight, text = cue
            # a one-word cue matches where its word fits: `starting` found it by that word
            if len(words) == 1 or _match(words, tokens, at):
                span = spans.get((order, at))
                if span is None:
                    if len(spans) >= TOKENS_KEPT:
                        spans.clear()
                    span = spans[order, at] = CueSpan(relation, at, at + len(words), weight,
                                                      text)
                found.append((order, at, span))
    found.sort(key=itemgetter(0, 1))
    return tuple(span for _, _, span in found)


def read(text: str, store: FactStore) -> Reading:
    """The question's reading over the store's names: compiling the plans and searching read
    the same question, so the reading is kept in the store's name cache."""
    if len(text) > MAX_QUESTION:
        # every loader refuses such a row (haystack.read_row); this guards library callers
        raise InputError(f"a question of {len(text)} characters",
                         expected=f"a question of at most {MAX_QUESTION} characters")
    memo = store.name_cache()
    key = ("reading", text)
    found = memo.get(key)
    if found is None:
        if len(memo) >= READINGS_KEPT:
            del memo[next(iter(memo))]          # the oldest reading
        found = memo[key] = _read(text, store)
    return found


def _read(text: str, store: FactStore) -> Reading:
    tokens = name_tokens(text)
    mentions = tuple(store.mentions(text))
    bases = []
    for m in mentions:
        for name in m.names:
            if store.is_subject(name) and name not in bases:
                bases.append(name)
    base_span = next((m for m in mentions if m.as_subject), None)
    every_span = _cue_spans(tokens)
    spans = every_span
    if base_span is not None:
        spans = tuple(s for s in spans
                      if s.end <= base_span.start or s.start >= base_span.end)
    # the asked type is read from every cue, the base entity's words included
    answer_type, type_word = asked_type(text, tokens, every_span, mentions)
    return Reading(text, tokens, mentions, tuple(bases), spans, answer_type, type_word)
