"""The search's cost does not grow with how often a key changed (issue 23), and a key with tens of
thousands of versions costs memory in proportion to them (issue 22, item 9). Work is counted
(`search_hops.WORK`) and memory traced (tracemalloc), never timed."""
from __future__ import annotations

import tracemalloc

import pytest

from resolver.haystack import Question
from resolver.plan.compile_lexicon import compile_question as lexicon_plans
from resolver.plan.compile_rules import compile_question as rule_plans
from resolver.search import hops as search_hops
from resolver.search.resolve import resolve_question
from resolver.store.fact_store import FactStore
from resolver.text.facts import Fact, parse_context

# One revision of a small world. Each revision writes every key again, so after d revisions
# every key has d versions (more for the capital, which changes within a revision). The latest
# capital of Norland (Ostby) lies in no country and is twinned with nothing, so the questions
# about its country must step back to an older version (Brimvik); Vale's latest spouse is
# Norland's capital's mayor-less twin, and so on: every walk has a hop whose latest version
# leads nowhere.
REVISION = """The capital of Norland is Brimvik.
The capital of Norland is Kvarn.
The capital of Norland is Ostby.
Brimvik is located in the country of Sweden.
Kvarn is located in the continent of Europe.
The capital of Sweden is Stockholm.
The official language of Sweden is Swedish.
Vale is married to Ida Berg.
Ida Berg is a citizen of Norland.
Sven Ek is married to Ida Berg.
The twinned administrative body of Brimvik is Kvarn."""
QUESTIONS = (
    "What is the capital of Norland?",
    "Which country is the capital of Norland located in?",
    "What is the capital of the country where the capital of Norland is located?",
    "What is the official language of the country in which the capital of Norland is located?",
    "Who is Vale married to?",
    "What is the capital of the country of citizenship of the spouse of Vale?",
    "Which continent is the twinned administrative body of the capital of Norland located in?",
)


def _context(revisions: int) -> str:
    lines = ["Here is a list of facts:"]
    for _ in range(revisions):
        for sentence in REVISION.splitlines():
            lines.append(f"{len(lines) - 1}. {sentence}")
    return "\n".join(lines) + "\n"


def _answer_all(store: FactStore) -> list[dict]:
    out = []
    for n, text in enumerate(QUESTIONS):
        question = Question(f"q{n}", "depth", n, text, "mh", "unknown", "")
        compiled = [("live:rules", rule_plans(text, store)),
                    ("live:lexicon", lexicon_plans(text, store))]
        out.append(resolve_question(question, store, compiled).to_json())
    return out


def _work(revisions: int) -> tuple[dict, list[dict]]:
    store = FactStore(parse_context(_context(revisions)).facts)
    store.ledger                       # built outside the count, as a run builds it
    before = dict(search_hops.WORK)
    traces = _answer_all(store)
    return {k: search_hops.WORK[k] - before[k] for k in before}, traces


def _without_history(trace):
    """A trace without what legitimately grows with depth: the serials and lines taken and
    passed over (more versions, other serials), and the score's later-serials tie-break."""
    if isinstance(trace, dict):
        return {k: _without_history(v) for k, v in trace.items()
                if k not in ("serial", "line", "text", "passed_over")}
    if isinstance(trace, list):
        return [_without_history(v) for v in trace]
    return trace


def test_the_search_does_the_same_work_at_any_version_depth():
    shallow, shallow_traces = _work(3)
    assert shallow["expansions"] > 0 and shallow["keys"] > 0
    # The questions step back: some winning path takes an older version.
    assert any(h["version"] > 0 for t in shallow_traces if t["winner"]
               for h in t["winner"]["hops"])
    for revisions in (48, 192):
        work, traces = _work(revisions)
        assert work == shallow, revisions
        assert _without_history(traces) == _without_history(shallow_traces), revisions


def _one_fact_store(copies: int) -> FactStore:
    facts = [Fact(n, "Norland", "capital", "Brimvik", n + 2, f"{n}. The capital of Norland "
                  "is Brimvik.") for n in range(copies)]
    store = FactStore(facts)
    store.ledger
    return store


ONE_KEY_QUESTIONS = ("What is the capital of Norland?",
                     "Which country is the capital of Norland located in?")


def _resolve_one_key(copies: int) -> tuple[int, dict]:
    """Peak traced memory while answering two questions on a key with `copies` versions of
    one fact, traces written out included."""
    store = _one_fact_store(copies)
    tracemalloc.start()
    try:
        traces = _answer_all_of(store, ONE_KEY_QUESTIONS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, traces[0]


def _answer_all_of(store: FactStore, texts) -> list[dict]:
    out = []
    for n, text in enumerate(texts):
        question = Question(f"q{n}", "one-key", n, text, "sh", "unknown", "")
        compiled = [("live:rules", rule_plans(text, store)),
                    ("live:lexicon", lexicon_plans(text, store))]
        out.append(resolve_question(question, store, compiled).to_json())
    return out


def test_many_versions_of_one_fact_cost_memory_in_proportion():
    # 10,000 copies of one fact took 7.1 GB (every version carried a list of all the others)
    # and 50,000 died with MemoryError.
    small_peak, small_trace = _resolve_one_key(10_000)
    big_peak, big_trace = _resolve_one_key(50_000)
    assert small_trace["answer"] == big_trace["answer"] == "Brimvik"
    winner = big_trace["winner"]["hops"][0]
    assert (winner["version"], winner["serial"], len(winner["passed_over"])) == \
        (0, 49_999, 49_999)
    assert winner["passed_over"][:2] == [[0, 2], [1, 3]]
    # Five times the versions: at most about five times the memory (the traces list every
    # version passed over), far from 25 times.
    assert big_peak < 6 * small_peak, (small_peak, big_peak)
    assert big_peak < 64 * 2 ** 20, big_peak


def test_many_versions_of_one_fact_take_the_same_walk():
    counts = []
    for copies in (10_000, 50_000):
        store = _one_fact_store(copies)
        before = dict(search_hops.WORK)
        _answer_all_of(store, ONE_KEY_QUESTIONS)
        counts.append({k: search_hops.WORK[k] - before[k] for k in before})
    assert counts[0] == counts[1]


def test_a_hop_says_it_passes_over_versions_without_listing_them():
    # Confidence asks only whether a winner's hop read a key with other versions: answered
    # from the key's length, the list of thousands of (serial, line) pairs is never made.
    store = FactStore(parse_context(_context(3)).facts)
    for relation, entity, n in (("capital", "Norland", 9), ("married_to", "Vale", 3)):
        hops = search_hops.hops_over(store, entity, relation)
        assert len(hops) == n
        for hop in hops:
            lazy = callable(object.__getattribute__(hop, "_passed"))
            said = hop.passes_over
            assert lazy == callable(object.__getattribute__(hop, "_passed"))  # still unmade
            assert said == bool(hop.passed_over)
    single = FactStore(parse_context(_context(1)).facts)
    assert [h.passes_over for h in search_hops.hops_over(single, "Vale", "married_to")] == \
        [False]
