"""Provenance ledger: every operation, refused operations, rollback, contests, acyclicity, and
FactConsolidation's write path (accept in serial order) against latest-wins."""
from __future__ import annotations

import os
import random

import pytest

from resolver.errors import ProvenanceError
from resolver.haystack import BUNDLED, bundled_path, load
from resolver.store.fact_store import FactStore, _writes, norm
from resolver.store.provenance import (
    ACTIVE,
    CONTESTED,
    CONTRADICTED,
    REVOKED,
    STATUSES,
    SUPERSEDED,
    Edge,
    Evidence,
    Ledger,
)
from resolver.text.facts import parse_context

K = ("paris", "located_in_country")
OTHER = ("rome", "capital")


def ev(serial: int) -> Evidence:
    return Evidence(serial, serial + 2, f"{serial}. fact {serial}.")


def statuses(ledger: Ledger, key=K) -> list[tuple[str | None, str]]:
    return [(v.value, v.status) for v in ledger.history(key)]


def edges(ledger: Ledger) -> list[tuple[str, int, int]]:
    return [(e.kind, e.src, e.dst) for e in ledger.edges()]


# ---- each operation ----------------------------------------------------------------------
def test_accept_makes_the_new_value_head_and_supersedes_the_old():
    ledger = Ledger()
    first = ledger.accept(K, "France", ev(0))
    assert ledger.head(K).value == "France" and ledger.head(K).status == ACTIVE
    second = ledger.accept(K, "Italy", ev(3))
    assert (first, second) == (0, 1)
    assert statuses(ledger) == [("France", SUPERSEDED), ("Italy", ACTIVE)]
    assert edges(ledger) == [("supersedes", 1, 0)]
    assert ledger.predecessor(1) == 0 and ledger.predecessor(0) is None
    head = ledger.head(K)
    assert (head.serial, head.line, head.text, head.support) == (3, 5, "3. fact 3.", 1)
    assert head.evidence == ev(3)


def test_contest_keeps_an_alternative_and_contests_the_head():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    alt = ledger.contest(K, "Italy", ev(1))
    assert ledger.head(K).value == "France"
    assert statuses(ledger) == [("France", CONTESTED), ("Italy", CONTESTED)]
    assert [v.id for v in ledger.alternatives(K)] == [alt]
    assert edges(ledger) == [("alternative-of", 1, 0)]
    assert ledger.frontier()[K].status == CONTESTED
    ledger.contest(K, "Spain", ev(2))
    assert [v.value for v in ledger.alternatives(K)] == ["Italy", "Spain"]


def test_reject_makes_the_new_value_head_and_contradicts_the_old():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.reject(K, "Italy", ev(1))
    assert statuses(ledger) == [("France", CONTRADICTED), ("Italy", ACTIVE)]
    assert edges(ledger) == [("supersedes", 1, 0)]


def test_revoke_writes_a_tombstone_and_restores_the_predecessor():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.accept(K, "Italy", ev(1))
    tomb = ledger.revoke(K, ev(9))
    assert ledger.head(K).value == "France" and ledger.head(K).status == ACTIVE
    assert statuses(ledger) == [("France", ACTIVE), ("Italy", REVOKED), (None, REVOKED)]
    assert ledger.version(tomb).tombstone and ledger.version(tomb).serial == 9
    assert edges(ledger) == [("supersedes", 1, 0), ("revokes", 2, 1)]


def test_revoking_the_only_version_empties_the_key_but_keeps_its_history():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.accept(OTHER, "Rome", ev(1))
    ledger.revoke(K, ev(2))
    assert ledger.head(K) is None
    assert list(ledger.frontier()) == [OTHER]
    assert statuses(ledger) == [("France", REVOKED), (None, REVOKED)]
    assert ledger.keys() == [K, OTHER]
    ledger.accept(K, "Spain", ev(3))           # a later accept starts afresh
    assert ledger.head(K).value == "Spain" and ledger.predecessor(3) is None


def test_revoke_of_a_rejecting_head_brings_the_contradicted_value_back():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.reject(K, "Italy", ev(1))
    ledger.revoke(K, ev(2))
    assert statuses(ledger) == [("France", ACTIVE), ("Italy", REVOKED), (None, REVOKED)]


def test_resolve_to_an_alternative_supersedes_the_head_and_contradicts_the_rest():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.contest(K, "Italy", ev(1))
    ledger.contest(K, "Spain", ev(2))
    assert ledger.resolve(K, "Spain") == 2
    assert statuses(ledger) == [("France", CONTRADICTED), ("Italy", CONTRADICTED),
                                ("Spain", ACTIVE)]
    assert ledger.alternatives(K) == ()
    assert edges(ledger)[-1] == ("supersedes", 2, 0)
    ledger.revoke(K, ev(3))                    # walks back to the head the contest was about
    assert ledger.head(K).value == "France" and ledger.head(K).status == ACTIVE


def test_resolve_to_the_head_by_id_contradicts_the_alternatives():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.contest(K, "Italy", ev(1))
    assert ledger.resolve(K, 0) == 0
    assert statuses(ledger) == [("France", ACTIVE), ("Italy", CONTRADICTED)]
    assert edges(ledger) == [("alternative-of", 1, 0)]


def test_noop_adds_support_and_a_supported_by_edge():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    assert ledger.noop(K, "France", ev(5)) == 0
    ledger.noop(K, "France", ev(7))
    assert ledger.head(K).support == 3
    assert edges(ledger) == [("supported-by", 0, 0), ("supported-by", 0, 1)]
    assert ledger.observations(0) == (ev(5), ev(7))
    assert statuses(ledger) == [("France", ACTIVE)]       # no new version


def test_noop_can_support_an_open_alternative():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.contest(K, "Italy", ev(1))
    assert ledger.noop(K, "Italy", ev(2)) == 1
    assert [v.support for v in ledger.history(K)] == [1, 2]


@pytest.mark.parametrize("op, closed", [("accept", SUPERSEDED), ("reject", CONTRADICTED)])
def test_accept_or_reject_on_a_contested_key_closes_the_contest(op, closed):
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.contest(K, "Italy", ev(1))
    getattr(ledger, op)(K, "Spain", ev(2))
    assert statuses(ledger) == [("France", closed), ("Italy", closed), ("Spain", ACTIVE)]
    assert ledger.alternatives(K) == ()
    assert edges(ledger) == [("alternative-of", 1, 0), ("supersedes", 2, 0)]
    ledger.revoke(K, ev(3))                    # a retraction restores a value, not a contest
    assert ledger.head(K).value == "France" and ledger.head(K).status == ACTIVE
    assert ledger.alternatives(K) == ()


def test_accepting_the_heads_own_value_is_a_new_version():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.accept(K, "France", ev(1))
    assert statuses(ledger) == [("France", SUPERSEDED), ("France", ACTIVE)]


def test_a_fact_serves_as_evidence():
    fact = parse_context("Here is a list of facts:\n0. The capital of Rome is Lazio.\n").facts[0]
    ledger = Ledger()
    ledger.accept(OTHER, fact.object, fact)
    head = ledger.head(OTHER)
    assert (head.serial, head.line, head.text) == (0, 2, "0. The capital of Rome is Lazio.")
    assert ledger.status_of(OTHER, fact) == ACTIVE
    assert ledger.status_of(OTHER, ev(0)) is None and ledger.status_of(K, fact) is None


# ---- the scenarios ---------------------------------------------------------------
def test_a_wrong_update_retracted_after_many_unrelated_writes_restores_v1():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.accept(K, "Atlantis", ev(1))
    for n in range(2, 2002):
        ledger.accept((f"city {n % 300}", "capital"), f"value {n}", ev(n))
    ledger.revoke(K, ev(2002))
    head = ledger.head(K)
    assert (head.value, head.status, head.serial) == ("France", ACTIVE, 0)
    assert statuses(ledger) == [("France", ACTIVE), ("Atlantis", REVOKED), (None, REVOKED)]


def test_conflicting_reports_without_precedence_are_held_until_resolved():
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.contest(K, "Italy", ev(1))
    ledger.accept(OTHER, "Lazio", ev(2))           # other keys go on meanwhile
    assert ledger.head(K).value == "France" and ledger.head(K).status == CONTESTED
    assert [v.value for v in ledger.alternatives(K)] == ["Italy"]
    ledger.resolve(K, "Italy")
    assert ledger.head(K).value == "Italy" and ledger.head(K).status == ACTIVE
    assert statuses(ledger) == [("France", CONTRADICTED), ("Italy", ACTIVE)]


def test_five_revisions_then_two_retractions_restore_the_third_value():
    ledger = Ledger()
    for n, value in enumerate(["v1", "v2", "v3", "v4", "v5"]):
        ledger.accept(K, value, ev(n))
    ledger.revoke(K, ev(10))
    assert ledger.head(K).value == "v4"
    ledger.revoke(K, ev(11))
    assert ledger.head(K).value == "v3" and ledger.head(K).status == ACTIVE
    assert [s for v, s in statuses(ledger) if v] == [SUPERSEDED, SUPERSEDED, ACTIVE, REVOKED,
                                                     REVOKED]
    for _ in range(3):                             # walk back to nothing, one step at a time
        ledger.revoke(K, ev(12))
    assert ledger.head(K) is None


# ---- refused operations: a clear error, the ledger unchanged -------------------------------
def _contested() -> Ledger:
    ledger = Ledger()
    ledger.accept(K, "France", ev(0))
    ledger.contest(K, "Italy", ev(1))
    ledger.accept(OTHER, "Lazio", ev(2))
    ledger.noop(OTHER, "Lazio", ev(3))
    return ledger


def _emptied() -> Ledger:
    ledger = _contested()
    ledger.resolve(K, "France")
    ledger.revoke(K, ev(4))
    return ledger


BAD = [
    (_contested, lambda l: l.resolve(OTHER, "Lazio"),
     "cannot resolve (rome, capital): the key is active, not contested"),
    (_contested, lambda l: l.resolve(("nowhere", "capital"), "x"),
     "cannot resolve (nowhere, capital): the key is empty"),
    (_contested, lambda l: l.resolve(K, "Spain"),
     "cannot resolve (paris, located_in_country) to 'Spain': not a party to the contest "
     "(parties: #0 'France', #1 'Italy')"),
    (_contested, lambda l: l.resolve(K, 3),
     "cannot resolve (paris, located_in_country) to 3: not a party to the contest "
     "(parties: #0 'France', #1 'Italy')"),
    (_contested, lambda l: l.revoke(("nowhere", "capital"), ev(9)),
     "cannot revoke (nowhere, capital): the key is empty"),
    (_emptied, lambda l: l.revoke(K, ev(9)),
     "cannot revoke (paris, located_in_country): the key is empty (every version revoked)"),
    (_contested, lambda l: l.revoke(K, ev(9)),
     "cannot revoke (paris, located_in_country): it is contested (head #0 and 1 open "
     "alternative(s)); settle it with resolve first"),
    (_contested, lambda l: l.contest(("nowhere", "capital"), "x", ev(9)),
     "cannot contest (nowhere, capital): the key is empty; accept writes a first value"),
    (_contested, lambda l: l.contest(K, "France", ev(9)),
     "cannot contest (paris, located_in_country) with 'France': version #0 already holds it "
     "(noop supports it)"),
    (_contested, lambda l: l.contest(K, "Italy", ev(9)),
     "cannot contest (paris, located_in_country) with 'Italy': version #1 already holds it "
     "(noop supports it)"),
    (_emptied, lambda l: l.reject(K, "x", ev(9)),
     "cannot reject (paris, located_in_country): the key is empty (every version revoked); "
     "accept writes a first value"),
    (_contested, lambda l: l.reject(OTHER, "Lazio", ev(9)),
     "cannot reject (rome, capital) with 'Lazio': version #2 already holds it (noop supports "
     "the head; resolve picks an alternative)"),
    (_contested, lambda l: l.noop(("nowhere", "capital"), "x", ev(9)),
     "cannot noop (nowhere, capital): the key is empty; accept writes a first value"),
    (_contested, lambda l: l.noop(OTHER, "Rome", ev(9)),
     "noop on (rome, capital): no open version holds 'Rome' (head #2 is 'Lazio'); a new "
     "value needs accept, contest or reject"),
    (_contested, lambda l: l.accept(K, "", ev(9)),
     "a value is a non-empty string; got '' for (paris, located_in_country)"),
    (_contested, lambda l: l.accept(K, None, ev(9)),
     "a value is a non-empty string; got None for (paris, located_in_country)"),
    (_contested, lambda l: l.accept(["paris", "capital"], "x", ev(9)),
     "a key is a tuple of strings; got ['paris', 'capital']"),
    (_contested, lambda l: l.accept(OTHER, "x", (9, 11)),
     "evidence must have serial (int), line (int) and text (str); got (9, 11)"),
    (_contested, lambda l: l.revoke(OTHER, "9. retracted"),
     "evidence must have serial (int), line (int) and text (str); got '9. retracted'"),
    (_contested, lambda l: l.version(99), "no version #99 (the ledger has 3 versions)"),
]


@pytest.mark.parametrize("build, op, message", BAD, ids=[m[:40] for _, _, m in BAD])
def test_a_refused_operation_says_why_and_changes_nothing(build, op, message):
    ledger = build()
    before = ledger.dump()
    with pytest.raises(ProvenanceError) as caught:
        op(ledger)
    assert str(caught.value) == message
    assert ledger.dump() == before


def test_accept_many_stops_at_a_bad_write_as_accept_in_order_would():
    writes = [(K, "France", ev(0)), (K, "Italy", ev(1)), (K, "", ev(2)), (K, "Spain", ev(3))]
    one_by_one = Ledger()
    with pytest.raises(ProvenanceError):
        for write in writes:
            one_by_one.accept(*write)
    many = Ledger()
    with pytest.raises(ProvenanceError):
        many.accept_many(writes)
    assert many.dump() == one_by_one.dump() and many.head(K).value == "Italy"


def test_accept_many_on_a_contested_key_closes_the_contest_as_accept_does():
    def build():
        ledger = Ledger()
        ledger.accept(K, "France", ev(0))
        ledger.contest(K, "Italy", ev(1))
        return ledger
    writes = [(OTHER, "Lazio", ev(2)), (K, "Spain", ev(3)), (K, "Portugal", ev(4))]
    many, one_by_one = build(), build()
    assert many.accept_many(writes) == 3
    for write in writes:
        one_by_one.accept(*write)
    assert many.dump() == one_by_one.dump()


# ---- invariants under random operations ------------------------------------------------------
def _check_invariants(ledger: Ledger) -> None:
    supersedes = [(e.src, e.dst) for e in ledger.edges() if e.kind == "supersedes"]
    assert all(src > dst for src, dst in supersedes)        # newer -> older: no cycle
    sources = [src for src, _ in supersedes]
    assert len(sources) == len(set(sources))                 # one predecessor at most
    graph = dict(supersedes)
    for start in graph:                                      # and walk to be sure
        seen, node = set(), start
        while node in graph:
            assert node not in seen
            seen.add(node)
            node = graph[node]
    frontier = ledger.frontier()
    for key in ledger.keys():
        history = ledger.history(key)
        assert all(v.status in STATUSES for v in history)
        head = ledger.head(key)
        open_ = ledger.alternatives(key)
        live = [v for v in history if v.status in (ACTIVE, CONTESTED)]
        if head is None:
            assert not live and key not in frontier
            continue
        assert frontier[key] == head and not head.tombstone
        assert head.status == (CONTESTED if open_ else ACTIVE)
        assert sorted(v.id for v in live) == sorted([head.id] + [a.id for a in open_])


# Operations of the random test: the invariants are checked over the whole ledger after each
# one, so the cost grows with the square of the count. FACTRES_FULL_TESTS=1 runs the full count.
FULL = bool(os.environ.get("FACTRES_FULL_TESTS"))
RANDOM_OPERATIONS = 1500 if FULL else 800
# Each kind of operation (a refusal included) must have happened at least this often.
AT_LEAST = 30 if FULL else 8


def test_random_operations_keep_the_invariants_and_never_delete():
    rng = random.Random(8)
    keys = [(f"k{i}", "capital") for i in range(4)]
    ledger = Ledger()
    done = {"refused": 0}
    written: list[tuple] = []          # (key, value, serial) of every version, as first seen
    edges_seen: list[Edge] = []
    for n in range(RANDOM_OPERATIONS):
        key = rng.choice(keys)
        op = rng.choice(["accept", "accept", "contest", "reject", "revoke", "revoke",
                         "resolve", "noop"])
        value = f"v{rng.randrange(6)}"
        try:
            if op == "revoke":
                ledger.revoke(key, ev(n))
            elif op == "resolve":
                parties = [ledger.head(key)] + list(ledger.alternatives(key))
                ledger.resolve(key, rng.choice(parties).id if parties[0] else value)
            else:
                if op == "noop" and ledger.head(key) and rng.random() < 0.7:
                    value = ledger.head(key).value
                getattr(ledger, op)(key, value, ev(n))
            done[op] = done.get(op, 0) + 1
        except ProvenanceError:
            done["refused"] += 1
        _check_invariants(ledger)
        written += [(v.key, v.value, v.serial) for v in
                    (ledger.version(i) for i in range(len(written), len(ledger)))]
        edges_now = ledger.edges()
        assert edges_now[:len(edges_seen)] == tuple(edges_seen)
        edges_seen = list(edges_now)
    assert [(v.key, v.value, v.serial) for v in
            (ledger.version(i) for i in range(len(ledger)))] == written
    assert all(done.get(op, 0) > AT_LEAST for op in
               ["accept", "contest", "reject", "revoke", "resolve", "noop", "refused"]), done


# ---- FactConsolidation's write path --------------------------------------------------------
def _store(size: str) -> FactStore:
    dataset, _ = load([bundled_path(BUNDLED[size])])
    return next(iter(dataset.haystacks.values())).store


@pytest.mark.parametrize("size", sorted(BUNDLED))
def test_the_frontier_is_latest_wins_on_every_bundled_haystack(size):
    store = _store(size)
    frontier = store.ledger.frontier()
    assert len(frontier) == len(store.keys())
    for subject, relation in store.keys():
        head = frontier[(norm(subject), relation)]
        latest = store.current(subject, relation)
        assert (head.serial, head.value, head.status) == (latest.serial, latest.object, ACTIVE)
        # what the resolver reads: every version, newest first, the older ones superseded
        versions = store.versions(subject, relation)
        assert [(v.serial, v.status) for v in store.lineage(subject, relation)] == \
            [(latest.serial, ACTIVE)] + [(f.serial, SUPERSEDED) for f in reversed(versions[:-1])]
    by_key = sorted(store.keys(), key=lambda k: (norm(k[0]), k[1]))
    assert [(s, h.serial) for s, h in store.frontier()] == \
        [(s, store.current(s, r).serial) for s, r in by_key]


def test_accept_many_equals_accept_in_serial_order_on_the_262k_haystack():
    facts = list(_store("262k"))
    one_by_one = Ledger()
    for key, value, fact in _writes(facts):
        one_by_one.accept(key, value, fact)
    assert _store("262k").ledger.dump() == one_by_one.dump()
    assert len(one_by_one) == len(facts) == 18332


def test_the_store_keeps_its_ledger_up_to_date_and_names_each_facts_status():
    text = ("Here is a list of facts:\n0. The capital of Rome is Lazio.\n"
            "1. The capital of Rome is Latium.\n2. The capital of France is Paris.\n")
    facts = parse_context(text).facts
    store = FactStore(facts[:2])
    assert [store.status(f) for f in facts[:2]] == [SUPERSEDED, ACTIVE]
    store.extend(facts[2:])
    assert store.status(facts[2]) == ACTIVE
    assert [(s, h.value) for s, h in store.frontier()] == [("France", "Paris"),
                                                           ("Rome", "Latium")]
    assert store.frontier("capital") == store.frontier()
    assert store.frontier("author") == []
    assert store.status(parse_context("Here is a list of facts:\n7. The capital of Rome is "
                                      "Lazio.\n").facts[0]) is None


def test_store_history_names_unknown_entities_and_relations():
    text = ("Here is a list of facts:\n0. The capital of Rome is Lazio.\n"
            "1. The capital of Rome is Latium.\n2. The capital of France is Paris.\n")
    store = FactStore(parse_context(text).facts)
    assert [v.value for v in store.history("ROME")["capital"]] == ["Lazio", "Latium"]
    for args, message in [
        (("Rom",), "no entity 'Rom' in the store (did you mean: Rome?)"),
        (("Paris",), "'Paris' is never the subject of a fact (it appears only as an object)"),
        (("Rome", "capitol"), "unknown relation 'capitol' (did you mean: capital?)"),
        (("Rome", "author"), "'Rome' has no author facts (its relations: capital)"),
    ]:
        with pytest.raises(ProvenanceError) as caught:
            store.history(*args)
        assert str(caught.value) == message


# ---- the resolver names the status of every version it takes -------------------------------
def test_trace_hops_carry_the_ledger_status():
    from resolver.plan.planning import live_plan_sets
    from resolver.search.resolve import resolve_dataset

    dataset, _ = load([bundled_path()])
    for mode in ("search", "plain"):
        seen = set()
        for prediction in resolve_dataset(dataset, live_plan_sets(dataset), mode=mode):
            for candidate in prediction.candidates:
                for hop in candidate.hops:
                    expected = ACTIVE if hop.version == 0 else SUPERSEDED
                    assert hop.status == expected
                    assert hop.to_json()["status"] == expected
                    seen.add(hop.status)
        assert ACTIVE in seen


# ---- the resolver reads through the ledger ---------------------------------------------------
def _resolver_store() -> FactStore:
    text = ("Here is a list of facts:\n0. The capital of Norland is Brimvik.\n"
            "1. The capital of Norland is Ostby.\n2. The capital of Norland is Vale.\n")
    return FactStore(parse_context(text).facts)


def _latest_capital(store: FactStore):
    from resolver.plan.plans import Plan
    from resolver.search.resolve import execute_latest
    return execute_latest(Plan("Norland", ("capital",), "city"), store)


def test_the_lineage_is_head_first_then_older_versions_with_their_status():
    store = _resolver_store()
    assert [(v.value, v.status) for v in store.lineage("norland", "capital")] == \
        [("Vale", ACTIVE), ("Ostby", SUPERSEDED), ("Brimvik", SUPERSEDED)]
    assert store.lineage("Norland", "author") == ()


def test_a_revoke_through_the_ledger_changes_what_the_resolver_takes():
    from resolver.search.hops import hops_over
    store = _resolver_store()
    hop = _latest_capital(store).hops[0]
    assert (hop.object, hop.status, hop.passed_over) == ("Vale", ACTIVE, ((0, 2), (1, 3)))
    store.ledger.revoke(("norland", "capital"), ev(9))
    hop = _latest_capital(store).hops[0]
    assert (hop.object, hop.status, hop.passed_over) == ("Ostby", ACTIVE, ((0, 2),))
    # the revoked version is gone from what the search may take; its history keeps it
    assert [h.object for h in hops_over(store, "Norland", "capital")] == ["Ostby", "Brimvik"]
    assert [v.status for v in store.history("Norland", "capital")["capital"]] == \
        [SUPERSEDED, ACTIVE, REVOKED, REVOKED]


def test_a_contested_head_is_read_with_its_alternative_next():
    from resolver.search.hops import hops_over
    store = _resolver_store()
    store.ledger.contest(("norland", "capital"), "Ostby-on-Sea", ev(9))
    hops = hops_over(store, "Norland", "capital")
    assert [(h.object, h.status, h.version) for h in hops] == [
        ("Vale", CONTESTED, 0), ("Ostby-on-Sea", CONTESTED, 1), ("Ostby", SUPERSEDED, 2),
        ("Brimvik", SUPERSEDED, 3)]
    store.ledger.reject(("norland", "capital"), "Hald", ev(10))
    assert [h.object for h in hops_over(store, "Norland", "capital")] == \
        ["Hald", "Ostby", "Brimvik"]          # contradicted values are never taken
