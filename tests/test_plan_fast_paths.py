"""The short cuts of the plan stage give what the plain algorithms give (kept below as
references, as they were before the short cuts): the relations a phrase restates (an index of
the templates' words), the names a question mentions (only spans whose first word starts a
name), the rule compiler's template test (a pattern run only where the template's words are),
the history cues (a word that starts no cue passed over) and the plan checks (frozensets)."""
from __future__ import annotations

import random
import re
import sys

import pytest

from resolver.plan import compile_rules
from resolver.plan.history import _cue_at, history_cues
from resolver.plan.lexicon import (STOPWORDS, TYPE_WORDS, _base, cues, restated, restates,
                                   template_words)
from resolver.plan.plans import Plan, is_step
from resolver.plan.question import read
from resolver.store.fact_store import FactStore, Mention, name_tokens
from resolver.text.facts import Fact
from resolver.text.relations import FAMILIES, inventory


def reference_restates(words: tuple[str, ...], relation: str) -> bool:
    content = [w for w in words if w not in STOPWORDS and w not in TYPE_WORDS]
    own = {_base(t) for t in template_words(relation)}
    return bool(content) and all(_base(w) in own for w in content)


def test_restated_is_every_relation_the_words_restate():
    phrases = {cue for items in cues().values() for cue, _ in items}
    words = sorted({w for r in inventory() for w in template_words(r)})
    rng = random.Random(35)
    phrases |= {tuple(rng.choice(words + ["the", "of", "city", "born", "ed"])
                      for _ in range(rng.randint(1, 4))) for _ in range(300)}
    phrases |= {(), ("the",), ("the", "city"), ("headquartered",), ("located", "in")}
    restating = 0
    for phrase in sorted(phrases):
        expected = {r for r in inventory() if reference_restates(phrase, r)}
        assert restated(phrase) == expected, phrase
        for relation in inventory():
            assert restates(phrase, relation) == (relation in expected)
        restating += bool(expected)
    assert restating > 50                    # the check met phrases that restate something


def reference_mentions(store: FactStore, text: str) -> list[Mention]:
    """Every span of every width looked up, widest first (the index built from spellings)."""
    index: dict[tuple[str, ...], set[str]] = {}
    for name in store.entities():
        tokens = name_tokens(name)
        if tokens:
            index.setdefault(tokens, set()).add(name)
    tokens = name_tokens(text)
    found = []
    for width in range(len(tokens), 0, -1):
        for start in range(len(tokens) - width + 1):
            names = index.get(tokens[start:start + width])
            if names:
                found.append(Mention(start, start + width, tuple(sorted(names)),
                                     any(store.is_subject(n) for n in names)))
    return found


NAMES = ["Paris", "Paris Saint-Germain", "Paris Saint Germain F.C.", "Saint", "Mike D'Antoni",
         "mike d antoni", "New York", "New York City", "New  York", "York", "Ünïcode Café",
         "Café", "A", "A B C D E F G", "B C", "O'Neil", "o neil", "St. Louis", "Louis",
         "Jean-Luc Picard", "picard", "C++", "_under_score", "x_y z"]


@pytest.fixture(scope="module")
def name_store():
    facts = []
    for serial, name in enumerate(NAMES):
        other = NAMES[(serial * 7 + 3) % len(NAMES)]
        # every other name is only an object: mentions say whether one is a subject
        subject, obj = (name, other) if serial % 2 == 0 else (other, name)
        facts.append(Fact(serial, subject, "citizenship", obj, serial + 2,
                          f"{serial}. {subject} is a citizen of {obj}."))
    return FactStore(tuple(facts))


def test_mentions_are_every_name_in_the_text_widest_first(name_store):
    vocabulary = sorted({t for name in NAMES for t in name_tokens(name)}) + \
        ["the", "of", "who", "is", "f", "c"]
    rng = random.Random(35)
    texts = [f"Who is {name}'s coach?" for name in NAMES] + [" ".join(NAMES)]
    texts += [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 20)))
              for _ in range(500)]
    found = 0
    for text in texts:
        expected = reference_mentions(name_store, text)
        assert name_store.mentions(text) == expected, text
        found += len(expected)
    assert found > 1000
    # a name added later is found (the index is made again)
    name_store.add(Fact(99, "Saint Germain Paris Louis", "citizenship", "York", 101,
                        "99. Saint Germain Paris Louis is a citizen of York."))
    text = "who is saint germain paris louis of new york"
    assert name_store.mentions(text) == reference_mentions(name_store, text)
    assert name_store.mentions(text)[0].end - name_store.mentions(text)[0].start == 4


def test_the_template_test_never_skips_a_template_whose_pattern_matches():
    patterns = compile_rules._patterns()
    templates = [rel.question for rel in inventory().values()]
    entities = ["France", "the Eiffel Tower", "\u017fomething", "\u00dcn\u00efcode", "KELVIN", "x"]
    texts = []
    for template in templates:
        for entity in entities:
            text = template.replace("[X]", entity)
            texts += [text, text.upper(), text.lower(), f"  {text}\n", f"\x1c{text}\x1f",
                      text.replace("?", " ?"), text.replace("Who", "WHO\u212a"),
                      text.replace("s", "\u017f"), text[:-1], text[1:], "\u00a0" + text]
    matched = tried = 0
    for text in texts:
        expected = {order for order, (_, pattern, _, _) in enumerate(patterns)
                    if pattern.match(text)}
        candidates = list(compile_rules._candidates(text))
        assert expected <= set(candidates), text
        assert candidates == sorted(set(candidates))
        matched += bool(expected)
        tried += len(candidates) if text.isascii() else 0
    assert matched > len(templates) * 20
    ascii_texts = sum(1 for t in texts if t.isascii())
    assert tried < ascii_texts * len(patterns) / 10      # the test rules out most templates


def test_rule_plans_of_variants_of_a_template_question():
    store = FactStore((Fact(0, "France", "capital", "Paris", 2,
                            "0. The capital of France is Paris."),))
    for text in ("What is the capital of France?", "  what IS the CAPITAL of France?  ",
                 "What is the capital of France?\n", "\x1cWhat is the capital of France?"):
        plans = compile_rules.compile_question(text, store).plans
        assert [(p.entity, p.chain) for p in plans] == [("France", ("capital",))], text
    assert not compile_rules.compile_question("What is the capital of Spain?", store).plans


_PREVIOUS = (("before", "the", "change"), ("no", "longer"), ("used", "to"), ("previously",),
             ("previous",), ("formerly",))
_UNPLACED = (("at", "the", "time"), ("back", "then"), ("before",), ("earlier",), ("once",),
             ("former",), ("prior",), ("initially",), ("ago",))


def reference_cue_at(tokens, at):
    for words in _PREVIOUS:
        if tokens[at:at + len(words)] == words:
            if words == ("used", "to") and at and tokens[at - 1] in ("was", "were", "is", "are",
                                                                      "be", "been", "being"):
                return None
            return ("previous", at, at + len(words))
    if tokens[at:at + 2] == ("as", "of"):
        following = tokens[at + 2:at + 4]
        if len(following) == 2 and following[0] == "serial" and \
                re.match(r"^[0-9]{1,18}$", following[1]):
            return ("as-of", at, at + 4)
        return ("unplaced", at, at + 2)
    if tokens[at] == "in" and at + 1 < len(tokens) and \
            re.match(r"^(1[0-9]|20)[0-9]{2}$", tokens[at + 1]):
        return ("unplaced", at, at + 2)
    for words in _UNPLACED:
        if tokens[at:at + len(words)] == words:
            return ("unplaced", at, at + len(words))
    return None


def test_history_cues_are_found_where_the_plain_scan_finds_them():
    vocabulary = sorted({w for cue in _PREVIOUS + _UNPLACED for w in cue}) + \
        ["as", "of", "serial", "12", "in", "1999", "2031", "was", "is", "capital", "who"]
    rng = random.Random(35)
    seen = 0
    for _ in range(2000):
        tokens = tuple(rng.choice(vocabulary) for _ in range(rng.randint(1, 12)))
        for at in range(len(tokens)):
            cue = _cue_at(tokens, at)
            got = None if cue is None else (cue.kind, cue.start, cue.end)
            assert got == reference_cue_at(tokens, at), (tokens, at)
            seen += got is not None
    assert seen > 2000


def test_history_cues_of_a_question(name_store):
    reading = read("Who was previously the coach of Paris as of serial 3?", name_store)
    assert [(c.kind, c.words) for c in history_cues(reading)] == \
        [("previous", "previously"), ("as-of", "as of serial 3")]


def test_plans_check_every_step_and_the_answer_type():
    for relation in inventory():
        assert is_step(relation) and Plan("X", (relation,)).chain == (relation,)
    for family in FAMILIES:
        assert is_step(f"family:{family}")
    for bad in ("family:", "family:nope", "capital ", "Capital", "", "family:capital"):
        assert not is_step(bad)
        with pytest.raises(ValueError, match="unknown relation or family"):
            Plan("X", ("capital", bad))
    with pytest.raises(ValueError, match="unknown answer type"):
        Plan("X", ("capital",), "town")


def test_a_word_character_is_a_letter_a_digit_or_an_underscore():
    """What the token index's split of a name relies on (fact_store.FactStore._index)."""
    word = re.compile(r"\w")
    assert all(bool(word.match(c)) == (c.isalnum() or c == "_")
               for c in map(chr, range(sys.maxunicode + 1)))


def test_cue_spans_kept_from_question_to_question_are_the_same_and_bounded(monkeypatch):
    from resolver.plan import question
    from test_cue_index import reference_spans
    monkeypatch.setattr(question, "TOKENS_KEPT", 7)
    question._cue_spans.cache_clear()
    index = question._cue_index()
    index.spans.clear()                              # as a fresh process: the bound from here on
    texts = ["Where was the founder of Acme born?", "Acme was founded where the founder was born",
             "born born born died died born the capital of the capital",
             "Which city did the author of X die in?", "Where was the founder of Acme born?"]
    try:
        for text in texts * 2:
            tokens = name_tokens(text)
            question._cue_spans.cache_clear()        # read again, through the kept spans
            assert question._cue_spans(tokens) == reference_spans(tokens), text
            assert len(index.spans) <= 7
    finally:
        question._cue_spans.cache_clear()
        index.spans.clear()
