"""Provenance: typed write operations on versioned keys, rollback, and the active frontier.

A `Ledger` keeps every version ever written for a key (a tuple of strings; `FactStore` uses
(normalised subject, relation)), each with its evidence (serial, line, source text), a support
count and a status, and the typed edges between versions. Nothing is ever deleted: statuses
change, versions and edges only accumulate. Evidence and values never change.

Statuses
    active        the head of its key, uncontested
    contested     the head while an alternative to it is open, and every open alternative
    superseded    a head that a later value replaced (accept), or an open alternative that an
                  accept closed
    contradicted  a value judged wrong: the head a reject replaced, the losers of a resolve, the
                  open alternatives a reject closed
    revoked       a head a revoke retracted; every tombstone also carries this status

Edges, `src -> dst` (version ids, except where noted)
    supersedes      a head -> the head it replaced (accept, reject, resolve to an alternative)
    alternative-of  an alternative -> the head it contests (contest)
    revokes         a tombstone -> the head it retracted (revoke)
    supported-by    a version -> an observation id (noop); `observation(id)` is its evidence

Every version has at most one outgoing supersedes edge and it always points to an older
version (a smaller id), so the supersedes chain is acyclic by construction.

Operations (each checks everything before it changes anything; a refused operation raises
`ProvenanceError` and leaves the ledger exactly as it was, `dump()` byte for byte):
    accept(key, value, ev)   value becomes the head (active). The old head becomes superseded;
                             on a contested key the open alternatives become superseded too
                             (a newer report outranks every claim about the older state). On an
                             empty key it is the first version. Accepting the head's own value
                             is allowed: it is a new version (the write path keeps every report).
    contest(key, value, ev)  value is kept as an open alternative of the head; head and every
                             open alternative are contested. Refused on an empty key (nothing to
                             contest: accept), for the head's value or an open alternative's
                             value (agreement: noop).
    reject(key, value, ev)   as accept, but the old head (and open alternatives) become
                             contradicted. Refused on an empty key (accept) and for the head's
                             value or an open alternative's value (noop or resolve).
    revoke(key, ev)          the head is retracted: a tombstone version (value None, the
                             retraction's evidence) revokes it; the most recent predecessor
                             along the supersedes edges that is not revoked becomes the head
                             again, active, whatever its status was (a value contradicted by a
                             reject comes back when the rejecting report is retracted). With no
                             such predecessor the key becomes empty. Consecutive revokes walk
                             back one predecessor at a time. Refused on an empty key and on a
                             contested key (resolve first: a retraction restores a value, not a
                             contest).
    resolve(key, choice)     choice (a version id, or a value) is the head or one open
                             alternative of a contested key; it becomes the head (active) and
                             the other parties are contradicted. Choosing an alternative writes
                             a supersedes edge from it to the old head, so a later revoke walks
                             back to the old head. Refused when the key is not contested or the
                             choice is not a party.
    noop(key, value, ev)     a supporting observation: the version holding `value` (the head,
                             or an open alternative) gains one support and a supported-by edge
                             to the observation. Refused on an empty key (accept) and for a
                             value no open version holds (accept, contest or reject).

The order of operations is the order of precedence; serials are evidence, not ordering.
FactConsolidation's write path is `accept` in serial order, so its frontier is latest-wins.
Internally the ledger keeps parallel lists indexed by version id (a version is a few list
slots, not an object: 18K accepts cost about as much as building the store's lookup tables);
`Version` is a frozen snapshot made on request."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import Iterable, NamedTuple, Protocol

import orjson

from resolver.errors import ProvenanceError
from resolver.text.facts import Fact

ACTIVE = "active"
CONTESTED = "contested"
SUPERSEDED = "superseded"
CONTRADICTED = "contradicted"
REVOKED = "revoked"
STATUSES = (ACTIVE, CONTESTED, SUPERSEDED, CONTRADICTED, REVOKED)

SUPERSEDES = "supersedes"
ALTERNATIVE_OF = "alternative-of"
REVOKES = "revokes"
SUPPORTED_BY = "supported-by"
EDGE_KINDS = (SUPERSEDES, ALTERNATIVE_OF, REVOKES, SUPPORTED_BY)

_NONE = -1          # no predecessor


class EvidenceLike(Protocol):
    serial: int
    line: int
    text: str


class Evidence(NamedTuple):
    """Where a version or an observation comes from. A `Fact` serves as evidence as it is."""
    serial: int
    line: int          # 1-based line in the context (0 when there is no line)
    text: str          # the source text as written


@dataclass(frozen=True, slots=True)
class Version:
    """A snapshot of one version, taken when asked for: `status` and `support` are the
    ledger's state at that moment; the rest never changes."""
    id: int
    key: tuple[str, ...]
    value: str | None          # None: a tombstone (the record of a revoke)
    status: str
    serial: int                # evidence
    line: int
    text: str
    support: int               # observations backing it: 1 for its own, +1 per noop

    @property
    def tombstone(self) -> bool:
        return self.value is None

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.serial, self.line, self.text)

    def to_json(self) -> dict:
        return {"id": self.id, "key": list(self.key), "value": self.value,
                "status": self.status, "serial": self.serial, "line": self.line,
                "text": self.text, "support": self.support}


@dataclass(frozen=True, slots=True)
class Edge:
    kind: str                  # one of EDGE_KINDS
    src: int                   # version id
    dst: int                   # version id; an observation id for supported-by

    def to_json(self) -> dict:
        return {"kind": self.kind, "src": self.src, "dst": self.dst}


def show_key(key: tuple[str, ...]) -> str:
    return "(" + ", ".join(key) + ")"


_EVIDENCE_TYPES = (Fact, Evidence)


def _check_evidence(evidence) -> None:
    if type(evidence) in _EVIDENCE_TYPES:
        return
    try:
        ok = (isinstance(evidence.serial, int) and isinstance(evidence.line, int)
              and isinstance(evidence.text, str))
    except AttributeError:
        ok = False
    if not ok:
        raise ProvenanceError(f"evidence must have serial (int), line (int) and text (str); "
                              f"got {evidence!r}")


def _check_write(key, value, evidence) -> None:
    if type(key) is not tuple:
        raise ProvenanceError(f"a key is a tuple of strings; got {key!r}")
    if type(value) is not str or not value:
        raise ProvenanceError(f"a value is a non-empty string; got {value!r} for "
                              f"{show_key(key)}")
    _check_evidence(evidence)


class _Newest(Sequence):
    """The first `n` ids of a key's id list (oldest first), read newest first; the list only
    ever grows at its end, so the view is fixed when made."""
    __slots__ = ("_ids", "_n")

    def __init__(self, ids: list[int], n: int) -> None:
        self._ids, self._n = ids, n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._ids[self._n - 1 - i]

    def oldest_first(self) -> list[int]:
        return self._ids[:self._n]


class Ledger:
    """Versions, statuses and typed edges of every key; see the module docstring for the
    exact meaning of each operation. Operations return the id of the version they wrote
    (accept, contest, reject), the tombstone (revoke), the new head (resolve) or the version
    supported (noop)."""

    def __init__(self) -> None:
        # Parallel lists indexed by version id.
        self._key: list[tuple[str, ...]] = []
        self._value: list[str | None] = []
        self._evidence: list[EvidenceLike] = []
        self._status: list[str] = []
        self._support: list[int] = []
        self._pred: list[int] = []            # target of the version's supersedes edge
        self._edges: list[tuple[str, int, int]] = []
        self._observations: list[EvidenceLike] = []
        self._ids: dict[tuple[str, ...], list[int]] = {}   # key -> version ids, oldest first
        self._head: dict[tuple[str, ...], int] = {}        # absent: the key is empty
        self._open: dict[tuple[str, ...], list[int]] = {}  # contested key -> open alternatives
        # Keys an operation other than accept (and noop) ever touched: only their lineage needs
        # the walk along the supersedes edges; every other key's lineage is its ids, newest
        # first (`lineage_ids`).
        self._irregular: set[tuple[str, ...]] = set()
        # Counts the writes that went through: readers keep derived reads (lineages, hops) until
        # it moves. Not part of dump(): two equal ledgers may have taken different paths.
        self._revision = 0

    @property
    def revision(self) -> int:
        """A number that changes whenever an operation changes the ledger (never otherwise
        decreases or repeats)."""
        return self._revision

    # ---- writing -----------------------------------------------------------------------
    def _append(self, key, value, evidence, status: str, support: int, pred: int) -> int:
        self._revision += 1
        vid = len(self._value)
        self._key.append(key)
        self._value.append(value)
        self._evidence.append(evidence)
        self._status.append(status)
        self._support.append(support)
        self._pred.append(pred)
        ids = self._ids.get(key)
        if ids is None:
            self._ids[key] = [vid]
        else:
            ids.append(vid)
        return vid

    def accept(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """The new value becomes the head; the old head becomes superseded."""
        _check_write(key, value, evidence)
        return self._replace(key, value, evidence, SUPERSEDED)

    def reject(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """The new value becomes the head; the old head becomes contradicted."""
        _check_write(key, value, evidence)
        head = self._need_head(key, "reject", "accept")
        self._need_new_value(key, value, head, "reject",
                             "noop supports the head; resolve picks an alternative")
        self._irregular.add(key)
        return self._replace(key, value, evidence, CONTRADICTED)

    def _replace(self, key, value, evidence, old_status: str) -> int:
        head = self._head.get(key)
        vid = self._append(key, value, evidence, ACTIVE, 1, _NONE if head is None else head)
        if head is not None:
            self._status[head] = old_status
            self._edges.append((SUPERSEDES, vid, head))
            for alt in self._open.pop(key, ()):
                self._status[alt] = old_status
        self._head[key] = vid
        return vid

    def accept_many(self, writes: Iterable[tuple[tuple[str, ...], str, EvidenceLike]]) -> int:
        """`accept` of each (key, value, evidence) in order, faster; returns the number
        accepted. The same result as calling accept in order, to the byte (a test checks it),
        including on a bad write: the writes before it stay, and ProvenanceError is raised."""
        keys, values, evidences = self._key, self._value, self._evidence
        statuses, supports, preds = self._status, self._support, self._pred
        edges, ids_of, heads, open_ = self._edges, self._ids, self._head, self._open
        known = _EVIDENCE_TYPES
        # Counted before the first write: a bad write midway keeps the writes before it.
        self._revision += 1
        vid = len(values)
        start = vid
        for key, value, evidence in writes:
            if type(key) is not tuple or type(value) is not str or not value \
                    or type(evidence) not in known:
                _check_write(key, value, evidence)
            head = heads.get(key)
            if head is None:
                preds.append(_NONE)
                ids = ids_of.get(key)
                if ids is None:
                    ids_of[key] = [vid]
                else:
                    ids.append(vid)
            else:
                if open_ and key in open_:
                    self._replace(key, value, evidence, SUPERSEDED)
                    vid += 1
                    continue
                statuses[head] = SUPERSEDED
                edges.append((SUPERSEDES, vid, head))
                preds.append(head)
                ids_of[key].append(vid)
            keys.append(key)
            values.append(value)
            evidences.append(evidence)
            statuses.append(ACTIVE)
            supports.append(1)
            heads[key] = vid
            vid += 1
        return vid - start

    def contest(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """The new value is kept as an alternative; the head becomes contested."""
        _check_write(key, value, evidence)
        head = self._need_head(key, "contest", "accept")
        self._need_new_value(key, value, head, "contest", "noop supports it")
        vid = self._append(key, value, evidence, CONTESTED, 1, _NONE)
        self._irregular.add(key)
        self._status[head] = CONTESTED
        self._edges.append((ALTERNATIVE_OF, vid, head))
        self._open.setdefault(key, []).append(vid)
        return vid

    def revoke(self, key: tuple[str, ...], evidence: EvidenceLike) -> int:
        """Retract the head: a tombstone revokes it and its most recent predecessor that is
        not revoked becomes the head again (the key is empty when there is none)."""
        if type(key) is not tuple:
            raise ProvenanceError(f"a key is a tuple of strings; got {key!r}")
        _check_evidence(evidence)
        head = self._need_head(key, "revoke", None)
        if key in self._open:
            raise ProvenanceError(
                f"cannot revoke {show_key(key)}: it is contested (head #{head} and "
                f"{len(self._open[key])} open alternative(s)); settle it with resolve first")
        tomb = self._append(key, None, evidence, REVOKED, 0, _NONE)
        self._irregular.add(key)
        self._edges.append((REVOKES, tomb, head))
        self._status[head] = REVOKED
        back = self._pred[head]
        while back != _NONE and self._status[back] == REVOKED:
            back = self._pred[back]
        if back == _NONE:
            del self._head[key]
        else:
            self._status[back] = ACTIVE
            self._head[key] = back
        return tomb

    def resolve(self, key: tuple[str, ...], choice: int | str) -> int:
        """Settle a contest: `choice` (a version id or a value) becomes the head, the other
        parties are contradicted."""
        alternatives = self._open.get(key)
        if not alternatives:
            state = "empty" if key not in self._head else \
                f"{self._status[self._head[key]]}, not contested"
            raise ProvenanceError(f"cannot resolve {show_key(key)}: the key is {state}")
        head = self._head[key]
        parties = [head] + alternatives
        if type(choice) is int:
            chosen = choice if choice in parties else None
        else:
            chosen = next((p for p in parties if self._value[p] == choice), None)
        if chosen is None:
            listed = ", ".join(f"#{p} {self._value[p]!r}" for p in parties)
            raise ProvenanceError(f"cannot resolve {show_key(key)} to {choice!r}: not a "
                                  f"party to the contest (parties: {listed})")
        self._revision += 1
        del self._open[key]
        for party in parties:
            self._status[party] = CONTRADICTED
        self._status[chosen] = ACTIVE
        if chosen != head:
            self._pred[chosen] = head
            self._edges.append((SUPERSEDES, chosen, head))
            self._head[key] = chosen
        return chosen

    def noop(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """A supporting observation: the open version holding `value` gains one support."""
        _check_write(key, value, evidence)
        head = self._need_head(key, "noop", "accept")
        target = next((p for p in [head] + self._open.get(key, [])
                       if self._value[p] == value), None)
        if target is None:
            raise ProvenanceError(
                f"noop on {show_key(key)}: no open version holds {value!r} (head #{head} is "
                f"{self._value[head]!r}); a new value needs accept, contest or reject")
        self._revision += 1
        self._support[target] += 1
        self._edges.append((SUPPORTED_BY, target, len(self._observations)))
        self._observations.append(evidence)
        return target

    def _need_head(self, key, op: str, instead: str | None) -> int:
        head = self._head.get(key)
        if head is None:
            state = "empty (every version revoked)" if key in self._ids else "empty"
            hint = f"; {instead} writes a first value" if instead else ""
            raise ProvenanceError(f"cannot {op} {show_key(key)}: the key is {state}{hint}")
        return head

    def _need_new_value(self, key, value: str, head: int, op: str, hint: str) -> None:
        for party in [head] + self._open.get(key, []):
            if self._value[party] == value:
                raise ProvenanceError(f"cannot {op} {show_key(key)} with {value!r}: version "
                                      f"#{party} already holds it ({hint})")

    # ---- reading -----------------------------------------------------------------------
    def __len__(self) -> int:
        """Number of versions, tombstones included."""
        return len(self._value)

    def version(self, vid: int) -> Version:
        if not 0 <= vid < len(self._value):
            raise ProvenanceError(f"no version #{vid} (the ledger has {len(self._value)} "
                                  "versions)")
        ev = self._evidence[vid]
        return Version(vid, self._key[vid], self._value[vid], self._status[vid], ev.serial,
                       ev.line, ev.text, self._support[vid])

    def status(self, vid: int) -> str:
        return self._status[vid]

    def status_of(self, key: tuple[str, ...], evidence: EvidenceLike) -> str | None:
        """Status of the version of `key` written with this evidence (the same object, else
        an equal one; the latest such version), or None if there is none."""
        ids = self._ids.get(key)
        if not ids:
            return None
        found = self._evidence
        for vid in reversed(ids):
            if found[vid] is evidence:
                return self._status[vid]
        for vid in reversed(ids):
            if found[vid] == evidence:
                return self._status[vid]
        return None

    def head(self, key: tuple[str, ...]) -> Version | None:
        """The current value of the key (active, or contested), None when the key is empty."""
        vid = self._head.get(key)
        return None if vid is None else self.version(vid)

    def history(self, key: tuple[str, ...]) -> tuple[Version, ...]:
        """Every version of the key, tombstones included, in the order they were written."""
        return tuple(self.version(v) for v in self._ids.get(key, ()))

    def lineage(self, key: tuple[str, ...]) -> tuple[Version, ...]:
        """The versions a reader may take, in the order it should prefer them: the head, the
        open alternatives of a contested head (newest first), then the head's predecessors
        along the supersedes edges (newest first). Tombstones, revoked and contradicted
        versions (retracted, or judged wrong) are not in it; an empty key has none."""
        head = self._head.get(key)
        if head is None:
            return ()
        order = [head, *reversed(self._open.get(key, ()))]
        back = self._pred[head]
        while back != _NONE:
            order.append(back)
            back = self._pred[back]
        return tuple(self.version(v) for v in order
                     if self._status[v] not in (REVOKED, CONTRADICTED))

    def lineage_ids(self, key: tuple[str, ...]) -> Sequence[int]:
        """The ids of `lineage(key)`, in the same order, without a `Version` per id: what a
        reader that steps back one version at a time needs (the path search). A key only ever
        accepted gets a view of its ids, newest first, that costs nothing to make however
        many versions it has; it keeps showing the versions of the moment it was made."""
        if key in self._irregular:
            return tuple(v.id for v in self.lineage(key))
        ids = self._ids.get(key)
        if not ids:
            return ()
        return _Newest(ids, len(ids))

    def value(self, vid: int) -> str | None:
        """The value of version `vid` (None for a tombstone)."""
        return self._value[vid]

    def evidence(self, vid: int) -> EvidenceLike:
        """The evidence version `vid` was written with, as it was given (a `Fact` for the
        store's versions)."""
        return self._evidence[vid]

    def alternatives(self, key: tuple[str, ...]) -> tuple[Version, ...]:
        """The open alternatives of a contested key (empty otherwise), oldest first."""
        return tuple(self.version(v) for v in self._open.get(key, ()))

    def predecessor(self, vid: int) -> int | None:
        """The version `vid` supersedes, if any."""
        back = self._pred[vid]
        return None if back == _NONE else back

    def keys(self) -> list[tuple[str, ...]]:
        """Every key ever written, empty ones included, sorted."""
        return sorted(self._ids)

    def frontier(self) -> dict[tuple[str, ...], Version]:
        """The active frontier: key -> head, for every key that is not empty, sorted by key."""
        return {key: self.version(self._head[key]) for key in sorted(self._head)}

    def edges(self, key: tuple[str, ...] | None = None) -> tuple[Edge, ...]:
        """Typed edges in the order written; with a key, those leaving its versions."""
        if key is None:
            return tuple(Edge(*e) for e in self._edges)
        return tuple(Edge(*e) for e in self._edges if self._key[e[1]] == key)

    def observation(self, oid: int) -> Evidence:
        ev = self._observations[oid]
        return Evidence(ev.serial, ev.line, ev.text)

    def observations(self, vid: int) -> tuple[Evidence, ...]:
        """Evidence of the noops that support version `vid`, in order."""
        return tuple(self.observation(dst) for kind, src, dst in self._edges
                     if kind == SUPPORTED_BY and src == vid)

    def dump(self) -> bytes:
        """The whole ledger as canonical JSON (sorted keys): equal dumps, equal ledgers."""
        return orjson.dumps({
            "versions": [self.version(v).to_json() | {"pred": self._pred[v]}
                         for v in range(len(self._value))],
            "edges": self._edges,
            "heads": [[list(k), v] for k, v in sorted(self._head.items())],
            "open": [[list(k), v] for k, v in sorted(self._open.items())],
            "observations": [list(self.observation(i))
                             for i in range(len(self._observations))],
        }, option=orjson.OPT_SORT_KEYS)
