"""Reading hops from a store, version by version: what the path search walks.

`hops_over` gives every hop over one relation from an entity (the head, older versions, and
for a symmetric relation the facts naming the entity that are the head of their key);
`latest_hops` only those of version 0. The search reads them through a `HopTable`, which makes
the hops of an (entity, relation) as they are asked for (`_KeyHops`: the head first, then one
older version at a time) and keeps them in the store's read cache, so a key thousands of
versions deep costs only the versions a reader steps back to. `WORK` counts what the search
does, for tests that check it does not grow with version depth."""
from __future__ import annotations

import weakref
from functools import lru_cache
from itertools import count

from resolver.search.candidates import Hop
from resolver.store.fact_store import FactStore, norm
from resolver.text.relations import inventory

_UNREAD = object()          # a subject whose head `_reverse` has not read yet

# Work done by the search, counted (not timed) so tests can check that it does not grow with
# how many versions a key has: `expansions` counts hops followed by plan execution, `keys` the
# (entity, relation) hop lists made. Module-wide and only ever increasing; read differences.
WORK = {"expansions": 0, "keys": 0}


class _PassedOver:
    """A hop's `passed_over`, made when it is read: the (serial, line) of the key's other
    versions, oldest first, as they were when the hop was made."""
    __slots__ = ("_ids", "_own", "_evidence")

    def __init__(self, ids, own: int, evidence) -> None:
        self._ids, self._own, self._evidence = ids, own, evidence

    def any(self) -> bool:
        """Whether the key has another version, without making the list: the hop's own
        version is one of the key's."""
        return len(self._ids) > 1

    def __call__(self) -> tuple[tuple[int, int], ...]:
        ids = self._ids
        oldest_first = ids.oldest_first() if hasattr(ids, "oldest_first") else sorted(ids)
        evidence, own = self._evidence, self._own
        out = []
        for vid in oldest_first:
            if vid != own:
                ev = evidence(vid)
                out.append((ev.serial, ev.line))
        return tuple(out)


class _KeyHops:
    """The hops over one relation from one entity, read through the provenance ledger and
    made as they are asked for: the head (with, for a symmetric relation, the facts that name
    the entity as object and are the head of their key) first, then older versions one at a
    time. A key thousands of versions deep costs only the versions a reader steps back to."""
    __slots__ = ("_store", "_entity", "_relation", "_subject", "_ids", "_made", "_latest",
                 "_groups", "_seen", "_older")

    def __init__(self, store: FactStore, entity: str, relation: str, ids=None) -> None:
        WORK["keys"] += 1
        # A proxy, not the store: these live in the store's own read cache, and a strong
        # reference back would keep every dropped store (a server's evicted memories) alive
        # until the cyclic collector came round.
        self._store = weakref.proxy(store)
        self._entity, self._relation = entity, relation
        self._ids = store.lineage_ids(entity, relation) if ids is None else ids
        self._subject = store.spelling(entity) or entity
        self._made: dict[int, Hop] = {}
        self._latest: tuple[Hop, ...] | None = None
        self._groups: list[tuple[Hop, ...]] = []
        self._seen: set[str] = set()
        self._older = None        # (rank, version id) of the versions not yet stepped back to

    def __len__(self) -> int:
        return len(self._ids)

    def hop(self, rank: int, vid: int | None = None) -> Hop:
        """The version `rank` steps back from the head (0: the head), as a hop; `vid`, its
        version id, when the caller has it at hand."""
        found = self._made.get(rank)
        if found is None:
            ledger = self._store.ledger
            if vid is None:
                vid = self._ids[rank]
            ev = ledger.evidence(vid)
            found = self._made[rank] = Hop(
                self._subject, self._relation, ledger.value(vid), ev.serial, ev.line, ev.text,
                rank, False, _PassedOver(self._ids, vid, ledger.evidence), ledger.status(vid))
        return found

    def latest(self) -> tuple[Hop, ...]:
        """The head, then the reverse hops of a symmetric relation: every hop of version 0."""
        if self._latest is None:
            out = [self.hop(0)] if self._ids else []
            if inventory()[self._relation].symmetric:
                out.extend(self._reverse())
            self._latest = tuple(out)
        return self._latest

    def _reverse(self) -> list[Hop]:
        store, entity, relation = self._store, self._entity, self._relation
        out = []
        # A subject that revised its fact many times is named here once per version, and
        # one of them at most is its head: read newest first, each subject (as written) reads
        # its head once, at its newest fact, and is decided at the fact that is its head (the
        # newest, unless a correction retracted it: the ledger says), its other facts costing
        # one set lookup.
        decided: set[str] = set()
        heads: dict[str, object] = {}
        own = norm(entity)
        for fact in reversed(_symmetric_naming(store, entity, relation)):
            subject = fact.subject
            if subject in decided:
                continue
            head = heads.get(subject, _UNREAD)
            if head is _UNREAD:
                if norm(subject) == own:
                    decided.add(subject)
                    continue
                head = heads[subject] = store.head(subject, relation)
                if head is None or norm(head.value) != own:
                    decided.add(subject)          # its head names another entity, or none
                    continue
            # Lines first: they differ for every other fact, and read at no cost.
            if head.line == fact.line and head.serial == fact.serial:
                decided.add(subject)
                out.append(Hop(self._subject, relation, subject, fact.serial, fact.line,
                               fact.text, 0, True, (), head.status))
        out.reverse()               # in serial order, as the facts name the entity
        return out

    def every(self) -> list[Hop]:
        """Every hop: each version, head first, then the reverse hops (`hops_over`)."""
        latest = self.latest()
        own = [self.hop(rank) for rank in range(len(self._ids))]
        return own + [h for h in latest if h.reverse]

    def group(self, j: int) -> tuple[Hop, ...] | None:
        """The j-th group of hops a walk tries, None past the last: the latest hops, then one
        older version at a time, leaving out a version whose object an earlier one already
        had (a walk that reaches it has found that object leads nowhere)."""
        groups = self._groups
        if not groups:
            latest = self.latest()
            if not latest:
                return None
            groups.append(latest)
            self._seen.update(h.object for h in latest if not h.reverse)
        seen = self._seen
        if self._older is None:
            ids = self._ids
            older, values = iter(ids), self._store.ledger.values(ids)
            next(older, None)           # the head: already in the latest group
            next(values, None)
            self._older = zip(count(1), older, values)
        while j >= len(groups):
            for rank, vid, value in self._older:
                if value not in seen:
                    break
            else:
                return None
            hop = self.hop(rank, vid)
            seen.add(hop.object)
            groups.append((hop,))
        return groups[j]


class _NoHops:
    """The hops of an (entity, relation) that has none: most of what a bridge step asks."""
    __slots__ = ()

    def __len__(self) -> int:
        return 0

    def latest(self) -> tuple[Hop, ...]:
        return ()

    def group(self, j: int) -> None:
        return None

    def every(self) -> list[Hop]:
        return []


_NO_HOPS = _NoHops()


def _make_key_hops(store: FactStore, entity: str, relation: str) -> _KeyHops | _NoHops:
    ids = store.lineage_ids(entity, relation)
    if not ids and relation not in symmetric_relations():
        return _NO_HOPS
    return _KeyHops(store, entity, relation, ids)


def _key_hops(store: FactStore, entity: str, relation: str) -> _KeyHops | _NoHops:
    memo = store.read_cache("key-hops")
    key = (entity, relation)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _make_key_hops(store, entity, relation)
    return found


def hops_over(store: FactStore, entity: str, relation: str) -> list[Hop]:
    """Hops over one relation from an entity, read through the provenance ledger: the head
    first, then older versions, then (symmetric relations) facts that name the entity as
    object and are the head of their key. Kept in the store's read cache, which a change to
    the store or its ledger empties: the search asks for the same hops many times."""
    memo = store.read_cache("hops")
    key = (entity, relation)
    found = memo.get(key)
    if found is None:
        found = memo[key] = tuple(read_hops(store, entity, relation))
    return list(found)


def latest_hops(store: FactStore, entity: str, relation: str) -> tuple[Hop, ...]:
    """The hops of `hops_over` at version 0 (the head, then reverse hops), in that order,
    without making a hop for any older version."""
    return _key_hops(store, entity, relation).latest()


def read_hops(store: FactStore, entity: str, relation: str) -> list[Hop]:
    return _KeyHops(store, entity, relation).every()


def _symmetric_naming(store: FactStore, entity: str, relation: str) -> tuple:
    """The facts of a symmetric relation that name `entity` as object (any version), in serial
    order: what reverse hops are made from."""
    return store.symmetric_by_object(entity, relation)


@lru_cache(maxsize=None)
def symmetric_relations() -> frozenset[str]:
    return frozenset(name for name, rel in inventory().items() if rel.symmetric)


def reverse_relations(store: FactStore, entity: str) -> frozenset[str]:
    """The symmetric relations of the facts that name `entity` as object (any version)."""
    memo = store.read_cache("reverse-relations")
    found = memo.get(entity)
    if found is None:
        found = memo[entity] = frozenset(r for r in symmetric_relations()
                                         if store.symmetric_by_object(entity, r))
    return found


class HopTable:
    """(entity, relation) -> its `_KeyHops`, kept in the store's read cache; the table holds
    the cache of the moment it is made, so it serves one plan's execution (the search never
    writes to the store)."""
    __slots__ = ("store", "memo")

    def __init__(self, store: FactStore) -> None:
        self.store = store
        self.memo: dict[tuple[str, str], _KeyHops | _NoHops] = store.read_cache("key-hops")

    def __call__(self, entity: str, relation: str) -> _KeyHops | _NoHops:
        key = (entity, relation)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = _make_key_hops(self.store, entity, relation)
        return found

    def nonempty(self, entity: str) -> tuple[str, ...]:
        """The relations, by name, over which `entity` has a hop of version 0 (a relation
        without one has none at all), kept in the store's read cache."""
        memo = self.store.read_cache("nonempty-relations")
        found = memo.get(entity)
        if found is None:
            # A relation that is not symmetric has a hop of version 0 exactly when the
            # entity's key has a version (its head): read from the lineage, without making
            # the hops of the many relations the entity has none of.
            symmetric = symmetric_relations()
            lineage_ids = self.store.ledger.lineage_ids
            key = norm(entity)
            found = memo[entity] = tuple(
                r for r in _all_in_order()
                if (self(entity, r).latest() if r in symmetric else lineage_ids((key, r))))
        return found


def hop_table(store: FactStore) -> HopTable:
    """The store's hop table of the moment (one plan's execution)."""
    return HopTable(store)


@lru_cache(maxsize=None)
def _all_in_order() -> tuple[str, ...]:
    """Every relation, by name."""
    return tuple(sorted(inventory()))
