"""FactStore: every version of each key, append-only, latest current, lookups by name."""
from __future__ import annotations

import pytest

from resolver.store.fact_store import FactStore, norm
from resolver.text.facts import parse_context

TEXT = """Here is a list of facts:
0. Paris is located in the country of France.
1. The capital of France is Paris.
2. Anne  Hidalgo is a citizen of France.
3. paris is located in the country of Italy.
4. The capital of France is Lyon.
5. PARIS is located in the country of Spain.
6. The Eiffel Tower is located in the continent of Europe.
7. Eiffel is married to Anne Hidalgo.
"""


@pytest.fixture
def store():
    return FactStore(parse_context(TEXT).facts)


def test_versions_oldest_first_and_latest_is_current(store):
    assert [v.object for v in store.versions("Paris", "located_in_country")] == \
        ["France", "Italy", "Spain"]
    assert store.current("Paris", "located_in_country").serial == 5
    assert [v.object for v in store.displaced("Paris", "located_in_country")] == \
        ["France", "Italy"]
    assert store.displaced("Eiffel", "married_to") == ()


def test_as_of_rolls_back_to_the_version_then(store):
    assert store.current("Paris", "located_in_country", as_of=4).object == "Italy"
    assert store.current("Paris", "located_in_country", as_of=0).object == "France"
    assert store.current("France", "capital", as_of=0) is None


def test_lookup_ignores_case_and_whitespace_but_keeps_spelling(store):
    assert store.current("  anne hidalgo ", "citizenship").subject == "Anne  Hidalgo"
    assert store.spelling("PARIS") == "Paris"
    assert store.spelling("nowhere") is None
    assert norm("  Anne \t Hidalgo ") == "anne hidalgo"


def test_missing_key(store):
    assert store.versions("Paris", "capital") == ()
    assert store.current("Nowhere", "capital") is None


def test_relations_of_and_reverse_lookup(store):
    assert list(store.relations_of("france")) == ["capital"]
    assert [f.serial for f in store.by_object("paris")] == [1]
    assert [f.subject for f in store.by_object("France")] == ["Paris", "Anne  Hidalgo"]


def test_reverse_lookups_see_facts_added_before_and_after_the_first(store):
    # by_object's table is made on its first call, the symmetric one with the others: both
    # must hold every fact, whenever it came.
    more = parse_context("Here is a list of facts:\n8. Lyon is married to Anne Hidalgo.\n"
                         "9. The capital of Italy is Paris.\n").facts
    fresh = FactStore(parse_context(TEXT).facts)
    fresh.extend(more[:1])
    assert [f.serial for f in fresh.by_object("anne hidalgo")] == [7, 8]
    fresh.extend(more[1:])
    assert [f.serial for f in fresh.by_object("Paris")] == [1, 9]
    assert [f.serial for f in fresh.symmetric_by_object("Anne Hidalgo", "married_to")] == \
        [7, 8]
    assert fresh.symmetric_by_object("Paris", "married_to") == ()
    assert fresh.symmetric_by_object("Paris", "capital") == ()
    assert [f.serial for f in store.by_object("paris")] == [1]
    store.extend(more)
    assert [f.serial for f in store.by_object("paris")] == [1, 9]


def test_subjects_and_entities(store):
    assert store.is_subject("the eiffel tower") and not store.is_subject("Europe")
    assert store.keys()[0] == ("Anne  Hidalgo", "citizenship")
    assert "Europe" in store.entities()


def test_longest_entity_named_in_a_question(store):
    assert store.longest_entity("On which continent is The Eiffel Tower?") == "The Eiffel Tower"
    assert store.longest_entity("Who is Eiffel married to?") == "Eiffel"
    assert store.longest_entity("Where is Europe?") is None
    assert store.longest_entity("Where is Europe?", subjects_only=False) == "Europe"
    widths = [m.width for m in store.mentions("Is the Eiffel Tower in Paris?")]
    assert widths == sorted(widths, reverse=True) and widths[0] == 3


def test_append_only_in_serial_order(store):
    facts = parse_context("9. Paris is located in the country of Chile.\n").facts
    store.add(facts[0])
    assert store.current("Paris", "located_in_country").object == "Chile"
    with pytest.raises(ValueError, match="serial 9 after 9: the store is append-only"):
        store.add(facts[0])
    assert len(store) == 9


def test_index_built_before_add_stays_up_to_date():
    facts = parse_context(TEXT).facts
    store = FactStore(facts[:3])
    assert store.current("Paris", "located_in_country").object == "France"
    store.extend(facts[3:])
    assert store.current("Paris", "located_in_country").object == "Spain"
    assert store.longest_entity("Is Eiffel there?") == "Eiffel"


def test_bad_serial_keeps_the_facts_before_it():
    facts = parse_context(TEXT).facts
    store = FactStore()
    with pytest.raises(ValueError):
        store.extend([facts[0], facts[1], facts[0]])
    assert [f.serial for f in store] == [0, 1]


def test_stats(store):
    stats = store.stats()
    assert (stats["facts"], stats["keys"], stats["keys_with_several_versions"],
            stats["deepest_version_chain"]) == (8, 5, 2, 3)
    assert list(stats["relations"].items())[:2] == [("located_in_country", 3), ("capital", 2)]


@pytest.mark.parametrize("size", ["6k", "262k"])
def test_stats_count_what_the_lookup_tables_hold(context, size):
    store = FactStore(parse_context(context(size)).facts)
    stats = store.stats()
    ix = store._ix
    versions = [store.versions(ix.spelling[s], r) for s, relations in ix.by_subject.items()
                for r in relations]
    assert stats["keys"] == len(versions)
    assert stats["keys_with_several_versions"] == sum(1 for v in versions if len(v) > 1)
    assert stats["deepest_version_chain"] == max(len(v) for v in versions)
    assert stats["entities"] == len(ix.spelling) == len(store.entities())
    assert sum(stats["relations"].values()) == stats["facts"] == len(store)


def test_stats_of_an_empty_store():
    stats = FactStore().stats()
    assert (stats["facts"], stats["keys"], stats["deepest_version_chain"],
            stats["entities"], stats["relations"]) == (0, 0, 0, 0, {})


def test_bundled_262k_store(context):
    store = FactStore(parse_context(context("262k")).facts)
    stats = store.stats()
    assert (stats["facts"], stats["keys"], stats["deepest_version_chain"]) == (18332, 11095, 3)
