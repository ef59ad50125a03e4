"""MemoryAgentBench's substring exact match, reproduced quirks included, and the stale rate."""
from __future__ import annotations

import pytest

from resolver.haystack import Question
from resolver.mab.exact_match import normalize_answer, score_answer, substring_exact_match
from resolver.metrics.scoring import bootstrap_means, interval, staleness
from resolver.plan.plans import Plan
from resolver.search.candidates import Candidate, Hop
from resolver.search.resolve import Prediction
from resolver.store.fact_store import FactStore
from resolver.text.facts import Fact


@pytest.mark.parametrize("text, expected", [
    ("Washington, D.C.", "washington dc"),          # punctuation deleted, not spaced
    ("The Beatles", "beatles"),
    ("  A   Tale of Two   Cities ", "tale of two cities"),
    ("Zürich", "zürich"),                           # accents kept as they are
    ("Shinzō Abe", "shinzō abe"),
    ("Anaheim", "anaheim"),                         # articles only as whole words
    ("the-end", "theend"),                          # punctuation goes before articles
    ("rock 'n' roll", "rock n roll"),
    ("The", ""),
])
def test_normalize_answer(text, expected):
    assert normalize_answer(text) == expected


@pytest.mark.parametrize("prediction, gold, expected", [
    ("Washington, D.C.", ["Washington DC"], 1),
    ("washington d c", ["Washington, D.C."], 0),    # "d c" is not "dc"
    ("It is Washington, D.C.", ["Washington, D.C."], 1),
    ("Zurich", ["Zürich"], 0),                      # no accent folding in MAB
    ("zürich", ["Zürich"], 1),
    ("Asian", ["Asia"], 1),                         # a substring test: "asia" is in "asian"
    ("Asia", ["Asian"], 0),
    ("Beatles", ["The Beatles"], 1),
    ("Paris", ["Lyon", "Paris"], 1),                # any accepted answer
    ("Paris", ["Lyon"], 0),
    ("Paris", [], 0),
])
def test_substring_exact_match(prediction, gold, expected):
    assert substring_exact_match(prediction, gold) == expected


def test_gold_normalising_to_empty_matches_everything_as_in_mab():
    # MAB's rule: "" is a substring of every normalised prediction, so such a gold scores 1
    # against anything, even an empty prediction. We reproduce the metric as it is.
    assert substring_exact_match("Lyon", ["The"]) == 1
    assert substring_exact_match("", ["..."]) == 1
    # A run row, though, scores an unanswered question 0 (the rule).
    assert score_answer("", ["The"]) == 0
    assert score_answer("Lyon", ["The"]) == 1


def test_unanswered_scores_zero():
    assert score_answer("", ["Paris"]) == 0


# ---- stale rate ---------------------------------------------------------------------------
def _store() -> FactStore:
    lines = [("Bleak House", "author", "Charles Dickens"),
             ("Bleak House", "author", "Jane Austen"),
             ("Jane Austen", "born_in", "Steventon"),
             ("Bleak House", "author", "Mary Shelley")]
    return FactStore(Fact(i, s, r, o, i + 2, f"{i}. {s} {r} {o}.")
                     for i, (s, r, o) in enumerate(lines))


def _question(text: str, kind: str = "sh") -> Question:
    return Question("q", f"factconsolidation_{kind}_6k", 0, text, kind, "6k", "x")


def _prediction(question: Question, store: FactStore, answer: str,
                key: tuple[str, str] | None = None) -> Prediction:
    winner = None
    if key is not None:
        facts = [f for f in store.versions(*key) if f.object == answer]
        fact = facts[-1]
        hop = Hop(key[0], key[1], fact.object, fact.serial, fact.line, fact.text)
        winner = Candidate(Plan(key[0], (key[1],)), "live:rules", (hop,), answer, 1.0)
    return Prediction(question.qid, question.text, question.source, answer, "", winner)


def test_stale_answer_is_an_earlier_value_of_the_key():
    store, q = _store(), _question("Who is the author of Bleak House?")
    pred = _prediction(q, store, "Jane Austen", ("Bleak House", "author"))
    s = staleness(pred, q, store, ["Mary Shelley"], score_answer(pred.answer, ["Mary Shelley"]))
    assert (s.key, s.eligible, s.stale) == (("Bleak House", "author"), True, True)


def test_right_answer_is_eligible_but_not_stale():
    store, q = _store(), _question("Who is the author of Bleak House?")
    pred = _prediction(q, store, "Mary Shelley", ("Bleak House", "author"))
    s = staleness(pred, q, store, ["Mary Shelley"], 1)
    assert (s.eligible, s.stale) == (True, False)


def test_wrong_answer_that_is_no_earlier_value_is_not_stale():
    store, q = _store(), _question("Who is the author of Bleak House?")
    pred = _prediction(q, store, "Steventon")
    s = staleness(pred, q, store, ["Mary Shelley"], 0)
    assert (s.key, s.eligible, s.stale) == (("Bleak House", "author"), True, False)


def test_unanswered_question_gets_its_key_from_the_rule_compiler():
    store, q = _store(), _question("Who is the author of Bleak House?")
    pred = _prediction(q, store, "")
    s = staleness(pred, q, store, ["Mary Shelley"], 0)
    assert (s.key, s.eligible, s.stale) == (("Bleak House", "author"), True, False)


def test_key_with_one_version_is_not_eligible():
    store, q = _store(), _question("Which city was Jane Austen born in?")
    pred = _prediction(q, store, "Steventon", ("Jane Austen", "born_in"))
    s = staleness(pred, q, store, ["Steventon"], 1)
    assert (s.key, s.eligible) == (("Jane Austen", "born_in"), False)


def test_gold_that_is_not_the_final_value_is_not_eligible():
    # The gold is an earlier value: the key is not the one the question's gold comes from.
    store, q = _store(), _question("Who is the author of Bleak House?")
    pred = _prediction(q, store, "Mary Shelley", ("Bleak House", "author"))
    s = staleness(pred, q, store, ["Jane Austen"], 0)
    assert (s.key, s.eligible, s.stale) == (None, False, False)


def test_winner_key_is_tried_before_the_rule_compiler():
    # The winner went to (Jane Austen, born_in); its final value is the gold, so that key
    # is the question's key even though the rule compiler plans (Bleak House, author).
    store, q = _store(), _question("Who is the author of Bleak House?")
    pred = _prediction(q, store, "Steventon", ("Jane Austen", "born_in"))
    s = staleness(pred, q, store, ["Steventon"], 1)
    assert s.key == ("Jane Austen", "born_in")


def test_multi_hop_questions_are_never_eligible():
    store, q = _store(), _question("Who is the author of Bleak House?", kind="mh")
    pred = _prediction(q, store, "Jane Austen", ("Bleak House", "author"))
    s = staleness(pred, q, store, ["Mary Shelley"], 0)
    assert (s.eligible, s.stale) == (False, False)


def test_a_scored_interval_is_np_percentiles():
    """As the interval was computed before: np.percentile at the tails of the level (2.5 only
    up to rounding: (1 - 0.95) / 2 * 100 is 2.5000000000000018)."""
    import numpy as np
    means = bootstrap_means([1.0, 0.0, 1.0, 1.0, 0.0] * 20, "factconsolidation_sh_6k")
    for level in (0.95, 0.9, 0.99):
        tail = (1.0 - level) / 2 * 100
        assert interval(means, level) == tuple(float(x) for x in
                                               np.percentile(means, [tail, 100 - tail]))
