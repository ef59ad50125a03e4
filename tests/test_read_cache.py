"""The store's read cache (`FactStore.read_cache`) and what the search keeps in it (`hops_over`,
the ranked hops of plan execution): a cached read is always what a fresh read gives, because
every write to the store or its ledger empties the cache (the ledger's `revision` moves)."""
from __future__ import annotations

import random

import pytest

from resolver.errors import ProvenanceError
from resolver.search.hops import hop_table, hops_over, latest_hops, read_hops
from resolver.store.fact_store import FactStore
from resolver.store.provenance import Evidence, Ledger
from resolver.text.facts import parse_context

TEXT = """Here is a list of facts:
0. The capital of Norland is Brimvik.
1. The capital of Norland is Ostby.
2. Brimvik is twinned with Ostby.
3. The twinned administrative body of Vale is Ostby.
4. Ostby is located in the country of Norland.
5. Norland is married to Vale.
6. The capital of Norland is Vale.
7. Vale is married to Ostby.
"""
ENTITIES = ("Norland", "norland", "Brimvik", "Ostby", "Vale", "Nowhere")
RELATIONS = ("capital", "twinned_with", "married_to", "located_in_country", "author")


def _store() -> FactStore:
    return FactStore(parse_context(TEXT).facts)


def ev(serial: int) -> Evidence:
    return Evidence(serial, 0, f"observation {serial}")


def _assert_fresh(store: FactStore) -> None:
    """Every cached read equals a fresh one, whether it was cached before or not."""
    ranked = hop_table(store)
    for entity in ENTITIES:
        for relation in RELATIONS:
            fresh = read_hops(store, entity, relation)
            assert hops_over(store, entity, relation) == fresh, (entity, relation)
            hops = ranked(entity, relation)
            groups = []
            while (group := hops.group(len(groups))) is not None:
                groups.append(group)
            # The walk's groups: every hop of version 0, then each older version whose object
            # no later version has (the same object leads to the same places).
            latest = [h for h in fresh if h.version == 0]
            seen = {h.object for h in latest if not h.reverse}
            older = []
            for h in sorted((h for h in fresh if h.version), key=lambda h: h.version):
                if h.object not in seen:
                    seen.add(h.object)
                    older.append(h)
            assert groups == ([tuple(latest)] if latest else []) + [(h,) for h in older]
            assert list(latest_hops(store, entity, relation)) == latest


def test_every_operation_moves_the_revision_and_a_refused_one_does_not():
    ledger = Ledger()
    key = ("norland", "capital")
    seen = [ledger.revision]
    for op in (lambda: ledger.accept(key, "Brimvik", ev(0)),
               lambda: ledger.accept_many([(key, "Ostby", ev(1))]),
               lambda: ledger.contest(key, "Vale", ev(2)),
               lambda: ledger.noop(key, "Vale", ev(3)),
               lambda: ledger.resolve(key, "Vale"),
               lambda: ledger.reject(key, "Hald", ev(4)),
               lambda: ledger.revoke(key, ev(5))):
        op()
        assert ledger.revision > seen[-1]
        seen.append(ledger.revision)
    for refused in (lambda: ledger.resolve(key, "Vale"),          # not contested
                    lambda: ledger.noop(key, "Nowhere", ev(6)),   # no such value
                    lambda: ledger.contest(("vale", "capital"), "X", ev(7))):   # empty key
        with pytest.raises(ProvenanceError):
            refused()
        assert ledger.revision == seen[-1]


def test_reads_are_kept_until_the_store_changes():
    store = _store()
    first = store.read_cache("hops")
    first["marker"] = 1
    assert store.read_cache("hops") is first and store.read_cache("other") is not first
    store.ledger.noop(("norland", "capital"), "Vale", ev(9))
    assert "marker" not in store.read_cache("hops")


def test_a_cached_hop_list_is_a_copy():
    store = _store()
    hops = hops_over(store, "Norland", "capital")
    hops.clear()
    assert [h.object for h in hops_over(store, "Norland", "capital")] == \
        ["Vale", "Ostby", "Brimvik"]


def test_facts_added_after_a_read_are_read():
    store = _store()
    _assert_fresh(store)
    more = parse_context("Here is a list of facts:\n8. The capital of Norland is Hald.\n"
                         "9. Vale is married to Brimvik.\n")
    store.extend(more.facts)
    assert [h.object for h in hops_over(store, "Norland", "capital")][0] == "Hald"
    _assert_fresh(store)


def test_random_ledger_operations_never_leave_a_stale_read():
    rng = random.Random(13)
    store = _store()
    keys = [("norland", "capital"), ("vale", "married_to"), ("brimvik", "twinned_with"),
            ("vale", "twinned_with")]
    values = ("Brimvik", "Ostby", "Vale", "Norland", "Hald")
    for n in range(120):
        key = rng.choice(keys)
        op = rng.choice(["accept", "contest", "reject", "revoke", "resolve", "noop"])
        try:
            if op == "revoke":
                store.ledger.revoke(key, ev(100 + n))
            elif op == "resolve":
                store.ledger.resolve(key, rng.choice(values))
            else:
                getattr(store.ledger, op)(key, rng.choice(values), ev(100 + n))
        except ProvenanceError:
            pass
        _assert_fresh(store)
