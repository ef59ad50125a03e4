"""The lexicon compiler: nesting order, and well-typed readings first (signatures.py).

The stores are invented; the questions are written for these tests, not taken from dev."""
from __future__ import annotations

import pytest

from resolver.plan.compile_lexicon import compile_question
from resolver.plan.signatures import acceptance, fits
from resolver.store.fact_store import FactStore
from resolver.text.facts import parse_context
from resolver.text.relations import inventory

TEXT = """Here is a list of facts:
0. Zorblax United is associated with the sport of curling.
1. Curling was created in the country of Norland.
2. The capital of Norland is Brimvik.
3. Tova Lind is a citizen of Norland.
4. Tova Lind plays the position of skip.
5. Skip is associated with the sport of curling.
6. The name of the current head of the Norland government is Tova Lind.
7. The author of The Grey Atlas is Tova Lind.
8. Tova Lind speaks the language of Norlandic.
9. The Grey Atlas was written in the language of Latin.
"""


@pytest.fixture(scope="module")
def store():
    parsed = parse_context(TEXT)
    assert parsed.unparsed == ()
    return FactStore(parsed.facts)


def chains(text, store):
    return [p.chain for p in compile_question(text, store).plans]


def test_the_text_parses_into_the_relations_the_tests_assume(store):
    assert [f.relation for f in store] == [
        "sport", "country_of_origin", "capital", "citizenship", "position", "sport",
        "head_of_government", "author", "languages_spoken", "language_of_work"]


def test_signatures_type_a_chain():
    assert fits(frozenset({"sport"}), "country_of_origin")
    assert not fits(frozenset({"sport"}), "born_in")
    assert fits(frozenset({"place"}), "capital")          # located_in lands on city or country
    assert acceptance("city", "capital") == 1.0
    assert acceptance("city", "citizenship") == 0.0
    assert acceptance("any", "citizenship") == 1.0
    assert all(r.subject_types for r in inventory().values())


def test_nested_reading_comes_first(store):
    assert chains("Which city is the capital of the country Tova Lind is a citizen of?",
                  store)[0] == ("citizenship", "capital")


def test_a_phrase_takes_the_relation_the_type_allows(store):
    # "developed": a sport has no developer; its country of origin is where it was developed.
    plans = compile_question("Who is the head of government of the country where the sport "
                             "of Tova Lind was developed?", store).plans
    assert plans[0].chain[-2:] == ("country_of_origin", "head_of_government")
    assert plans[0].rule.startswith("typed")


def test_the_base_entity_is_bridged_through_a_relation_it_has(store):
    # Tova Lind has no sport of her own; her position has one.
    assert chains("Which country did the sport that Tova Lind plays come from?", store)[0] \
        == ("position", "sport", "country_of_origin")
    # A club has no country of origin; its sport has.
    assert chains("Which city is the capital of the country of origin of Zorblax United?",
                  store)[0] == ("sport", "country_of_origin", "capital")


def test_a_cue_that_only_names_the_type_is_left_out(store):
    # "written" cues author and language_of_work; a person's languages are spoken ones.
    first = chains("Which languages are spoken, written or signed by the author of The Grey "
                   "Atlas?", store)[0]
    assert first == ("author", "languages_spoken")


def test_untyped_readings_follow_as_fallbacks(store):
    plans = compile_question("Which city is the capital of the country of origin of Zorblax "
                             "United?", store).plans
    rules = [p.rule for p in plans]
    assert any(r.startswith("typed") for r in rules)
    assert any(r.startswith("cues") for r in rules)
    typed = [r.startswith("typed") for r in rules]
    assert typed == sorted(typed, reverse=True)            # every typed reading first
    assert len({p.chain for p in plans}) == len(plans)     # no chain twice


def test_no_entity_and_no_cue_give_reasons_not_plans(store):
    none = compile_question("Which city is the capital of Atlantis?", store)
    assert none.plans == () and "names no entity" in none.reason
    bare = compile_question("Tova Lind?", store)
    assert bare.plans == () and "no relation cue" in bare.reason


def test_compilation_is_deterministic(store):
    q = "In which country was the sport associated with Zorblax United first developed?"
    assert compile_question(q, store) == compile_question(q, store)
