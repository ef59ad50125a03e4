"""The asked type: which question word asks, and the type of the noun it governs.

A question may hold several wh-words, and only one of them asks: in "The person who founded X
is a citizen of which country?" the relative "who" belongs to a noun ("the person who ...") and
"which country" asks. The asking word is, in this order: the one that opens a coordinated clause
("..., and who is ...?"), the one that opens the sentence (after prepositions: "Of which
nation ...", "To whom ..."), the one that opens a clause after a comma ("Of the country where
X was born, who ...?"), one left in place ("... is a citizen of which country?", "... was
founded by whom?"). A wh-word that follows a noun ("the city where", "the country of which")
is relative and never asks; with no asking word, the noun a relative follows names the type
("Name the city where ...").

The type is read from the noun the asking word governs: "who"/"whom"/"whose" ask for a person,
"where" for a place; "which"/"what" govern the next noun, past fillers ("What is the name of
the ..."), past a possessor ("What is X's nationality?": the nationality is asked, not X) and
past the subject of an auxiliary ("What does X speak?"); a type word names the type, else the
relation the noun cues does. Plain English only: no entity, no question set."""
from __future__ import annotations

import re

from resolver.plan.lexicon import STOPWORDS, TYPE_WORDS
from resolver.text.relations import inventory

QUESTION_WORDS = frozenset({"which", "what", "who", "whom", "whose", "where"})
# Words skipped between the question word and the noun that names the type.
FILLER = STOPWORDS | {"name", "kind", "type", "sort", "current", "exact", "specific",
                      "particular", "main", "primary", "one", "title"}
# Prepositions that may come before an asking word ("In which ...", "To whom ...") or before
# a relative one ("the country of which ...").
PREPOSITIONS = frozenset("""in of to for at from by with on into onto under within through
about during after before behind across""".split())
# A conjunction that opens a second question: its wh-word is the one asked.
CONJUNCTIONS = frozenset({"and", "but", "so", "then"})
# Auxiliaries after which a named subject stands between the question word and its verb.
AUXILIARIES = frozenset({"does", "did", "do", "is", "was", "are", "were", "has", "have", "had"})
COPULAS = frozenset({"is", "was", "are", "were"})
DETERMINERS = frozenset({"the", "a", "an"})
# What "who" can ask for: people, and the organisations that act like them (an employer).
WHO_TYPES = frozenset({"person", "organisation"})
# Imperatives that ask without a question word ("Name the city ...").
IMPERATIVES = frozenset({"name", "identify", "give", "tell", "list", "find"})
_OBJECT_PRONOUNS = frozenset({"me", "us"})
_CLAUSE_MARK = re.compile(r"[,;:()]|\s[-–—]\s")
_WORD = re.compile(r"\w+")


def clause_starts(text: str) -> frozenset[int]:
    """Indices of the tokens (`fact_store.name_tokens`) that follow a comma, semicolon, colon,
    bracket or dash: where a new clause may open."""
    folded = text.casefold()
    marks = [m.end() for m in _CLAUSE_MARK.finditer(folded)]
    if not marks:                   # most questions are one clause
        return frozenset()
    out, k = set(), 0
    previous_end = 0
    for i, m in enumerate(_WORD.finditer(folded)):
        while k < len(marks) and marks[k] <= m.start():
            if marks[k] > previous_end:
                out.add(i)
            k += 1
        previous_end = m.end()
    return frozenset(out)


def _opened(tokens: tuple[str, ...], at: int) -> int:
    """The index where the prepositions before `at` begin ("in which": the index of "in")."""
    j = at
    while j > 0 and tokens[j - 1] in PREPOSITIONS:
        j -= 1
    return j


def _names_type_next(tokens: tuple[str, ...], at: int) -> bool:
    """"which country", "what religious leader": a determiner, not a relative pronoun."""
    nxt = tokens[at + 1:at + 3]
    return bool(nxt) and (nxt[0] in TYPE_WORDS or (len(nxt) > 1 and nxt[1] in TYPE_WORDS
                                                  and nxt[0] not in STOPWORDS))


def asking_word(text: str, tokens: tuple[str, ...]) -> int | None:
    """Index of the wh-word that asks, or None when none does (see the module docstring)."""
    words = [i for i, t in enumerate(tokens) if t in QUESTION_WORDS]
    if not words:
        return None
    breaks = None               # read only for a wh-word after other words (most open)
    coordinated, opening, after_comma, in_place = [], [], [], []
    for i in words:
        j = _opened(tokens, i)
        if j > 0 and tokens[j - 1] in CONJUNCTIONS:
            coordinated.append(i)
        elif j == 0:
            opening.append(i)
        else:
            if breaks is None:
                breaks = clause_starts(text)
            if j in breaks:
                after_comma.append(i)
            elif tokens[i] in ("which", "what") and _names_type_next(tokens, i):
                in_place.append(i)
            elif tokens[i] in ("who", "whom", "what") and i == len(tokens) - 1:
                in_place.append(i)
    for found, pick in ((coordinated, -1), (opening, 0), (after_comma, -1), (in_place, -1)):
        if found:
            return found[pick]
    return None


def asked_type(text: str, tokens: tuple[str, ...], spans, mentions) -> tuple[str, str]:
    """(answer type, the word that named it) of a question; ("any", "") when it names none.
    `spans` are its cue spans (`question.CueSpan`), `mentions` the store names in it."""
    at = asking_word(text, tokens)
    if at is None:
        return _unasked_type(tokens, spans, mentions)
    word = tokens[at]
    if word in ("who", "whom") and tokens[at + 1:at + 2] and tokens[at + 1] in COPULAS:
        # "Who is the employer of X?" asks for an organisation, as its noun says; "Who is
        # married to X?" (no noun phrase) and "Who is the official ...?" (no noun a "who"
        # can ask for) for a person.
        after = tokens[at + 2:at + 3]
        if after and (after[0] in DETERMINERS or any(m.start == at + 2 for m in mentions)):
            found = governed_type(tokens, at + 2, spans, mentions)
            if found[0] in WHO_TYPES:
                return found
    if word in ("who", "whom", "whose"):
        return "person", word
    if word == "where":
        return "place", word
    return governed_type(tokens, at + 1, spans, mentions)


def _unasked_type(tokens, spans, mentions) -> tuple[str, str]:
    """No wh-word asks: an imperative names the noun ("Name the city where ..."), or a
    relative wh-word follows the noun that is asked for ("the person who ...")."""
    if tokens and tokens[0] in IMPERATIVES:
        start = 1 + sum(1 for t in tokens[1:2] if t in _OBJECT_PRONOUNS)
        return governed_type(tokens, start, spans, mentions)
    for i, tok in enumerate(tokens):
        if tok in QUESTION_WORDS:
            j = _opened(tokens, i)
            if j > 0 and tokens[j - 1] in TYPE_WORDS:
                return TYPE_WORDS[tokens[j - 1]], tokens[j - 1]
            break
    return "any", ""


def governed_type(tokens: tuple[str, ...], start: int, spans, mentions) -> tuple[str, str]:
    """The type of the noun phrase that begins at `start`: its first type word (or the type
    word after an adjective), else the object type of the relation its head word cues."""
    possessed: dict[int, int] = {}
    named: dict[int, int] = {}
    for m in mentions:                          # widest first: keep the widest at each start
        named.setdefault(m.start, m.end)
        if m.end < len(tokens) and tokens[m.end] == "s":
            possessed.setdefault(m.start, m.end)
    i, end = start, min(len(tokens), start + 9)
    while i < end:
        tok = tokens[i]
        if i in possessed:                      # "X's nationality": the nationality is asked
            i = possessed[i] + 1
            end = min(len(tokens), i + 9)
            continue
        if i in named and i > 0 and tokens[i - 1] in AUXILIARIES:
            i = named[i]                        # "What does X speak?": the verb says it
            continue
        if tok in FILLER:
            i += 1
            continue
        heads = [s for s in spans if s.start == i]
        # "the country's capital", "the head of state's spouse": the possessed noun is asked
        # (but "Which country's citizen ...?" asks for the country its determiner names).
        if i > start:
            owner = max([i + 1] + [s.end for s in heads])
            if tokens[owner:owner + 1] == ("s",):
                i = owner + 1
                end = min(len(tokens), i + 9)
                continue
        if tok in TYPE_WORDS:
            return TYPE_WORDS[tok], tok
        # An adjective before a type noun: "religious leader", "educational institution".
        if i + 1 < len(tokens) and tokens[i + 1] in TYPE_WORDS:
            return TYPE_WORDS[tokens[i + 1]], tokens[i + 1]
        if heads:
            best = max(heads, key=lambda s: (s.weight, s.end - s.start, s.relation))
            return inventory()[best.relation].object_type, tok
        return "any", ""
    return "any", ""
