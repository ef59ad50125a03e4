"""The ledger's operation log (issue 31): every operation that went through, in arrival order,
with its key, value and evidence, from which `Ledger.replay` rebuilds the state exactly: `dump()`
byte for byte, on the 6K and 32K contexts and after each kind of operation."""
from __future__ import annotations

import pytest
from conftest import bundled_context

from resolver.errors import ProvenanceError
from resolver.store.fact_store import FactStore
from resolver.store.provenance import OPERATIONS, Evidence, Ledger, Operation
from resolver.text.facts import parse_context

K = ("paris", "located_in_country")
OTHER = ("rome", "capital")


def ev(serial: int) -> Evidence:
    return Evidence(serial, serial + 2, f"{serial}. fact {serial}.")


def assert_replays(ledger: Ledger) -> None:
    operations = ledger.operations()
    again = Ledger.replay(operations)
    assert again.dump() == ledger.dump()
    assert again.operations() == operations
    assert again.logged == ledger.logged == len(operations)


@pytest.mark.parametrize("size", ["6k", "32k"])
def test_a_contexts_ledger_is_its_log_replayed(size):
    store = FactStore(parse_context(bundled_context(size)).facts)
    operations = store.ledger.operations()
    assert [o.op for o in operations] == ["accept"] * len(store)
    assert [o.evidence for o in operations] == list(store)
    assert_replays(store.ledger)


def test_after_each_kind_of_operation_the_replay_is_the_ledger():
    ledger = Ledger()
    steps = [lambda: ledger.accept(K, "France", ev(0)),
             lambda: ledger.contest(K, "Italy", ev(1)),
             lambda: ledger.noop(K, "Italy", ev(2)),
             lambda: ledger.resolve(K, "Italy", ev(3)),
             lambda: ledger.revoke(K, ev(4)),
             lambda: ledger.accept(OTHER, "Italy", ev(5)),
             lambda: ledger.reject(OTHER, "Spain", ev(6)),
             lambda: ledger.contest(OTHER, "Greece", ev(7)),
             lambda: ledger.resolve(OTHER, 5),                    # by id, with no evidence
             lambda: ledger.accept_many([(K, "Spain", ev(9)), (OTHER, "Malta", ev(10))]),
             lambda: ledger.noop(OTHER, "Malta", ev(11))]
    for step in steps:
        step()
        assert_replays(ledger)
    assert {o.op for o in ledger.operations()} == set(OPERATIONS)
    assert ledger.operations()[:5] == [
        Operation("accept", K, "France", ev(0)), Operation("contest", K, "Italy", ev(1)),
        Operation("noop", K, "Italy", ev(2)), Operation("resolve", K, "Italy", ev(3)),
        Operation("revoke", K, None, ev(4))]
    assert ledger.operations()[8] == Operation("resolve", OTHER, "Greece", None)
    assert ledger.operations(9) == ledger.operations()[9:]


def test_a_refused_operation_is_not_logged_and_a_bad_accept_many_logs_what_went_through():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    with pytest.raises(ProvenanceError):
        ledger.resolve(K, "France")                         # not contested
    assert ledger.logged == 1
    with pytest.raises(ProvenanceError):
        ledger.accept_many([(K, "Italy", ev(1)), (OTHER, "", ev(2))])
    assert [o.value for o in ledger.operations()] == ["France", "Italy"]
    assert_replays(ledger)


def test_replay_refuses_an_operation_that_does_not_apply_or_sets_it_aside():
    operations = [Operation("accept", K, "France", ev(0)), Operation("revoke", OTHER, None, ev(1)),
                  Operation("accept", K, "Italy", ev(2))]
    with pytest.raises(ProvenanceError, match="cannot revoke"):
        Ledger.replay(operations)
    refused = []
    ledger = Ledger.replay(operations, refused=refused)
    assert [o for o, _ in refused] == [operations[1]]
    assert [o.value for o in ledger.operations()] == ["France", "Italy"]
    with pytest.raises(ProvenanceError, match="unknown operation 'merge'"):
        Ledger().apply(Operation("merge", K, "x", ev(0)))
