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
    revoke(key, ev, value)   the version holding value is retracted: the head as above; an open
                             alternative (the contest closes with the last one) or an older
                             version of the lineage is marked revoked, the head stays.
    resolve(key, choice[, ev]) choice (a version id, or a value) is the head or one open
                             alternative of a contested key; it becomes the head (active) and
                             the other parties are contradicted. Choosing an alternative writes
                             a supersedes edge from it to the old head, so a later revoke walks
                             back to the old head. Refused when the key is not contested or the
                             choice is not a party.
    noop(key, value, ev)     a supporting observation: the version holding `value` (the head,
                             or an open alternative) gains one support and a supported-by edge
                             to the observation. Refused on an empty key (accept) and for a
                             value no open version holds (accept, contest or reject).

The order of operations is the order of precedence; serials are evidence, not ordering. The
ledger keeps the record of them too, the operation log (`operations`): every operation that
went through, in arrival order, with its key, value and evidence, from which `Ledger.replay`
rebuilds the state exactly (a memory file stores it, docs/memory.md).
FactConsolidation's write path is `accept` in serial order, so its frontier is latest-wins.
Internally the ledger keeps parallel columns indexed by version id (a version is a few array
and list slots, not an object; a key is a number, its versions chained newest to oldest) and
keeps a support count, a supersedes target or a head only where it is not what an accept
writes: a million accepts cost about 100 bytes each. `Version` is a frozen snapshot made on
request."""
from __future__ import annotations

from dataclasses import dataclass
from array import array
from collections.abc import Sequence
from typing import Iterable, Iterator, NamedTuple, Protocol

import orjson

from resolver.errors import ProvenanceError
from resolver.text.facts import Fact

ACTIVE = "active"
CONTESTED = "contested"
SUPERSEDED = "superseded"
CONTRADICTED = "contradicted"
REVOKED = "revoked"
STATUSES = (ACTIVE, CONTESTED, SUPERSEDED, CONTRADICTED, REVOKED)

# The operations, in the order of their codes in the operation log.
ACCEPT, REJECT, CONTEST, REVOKE, RESOLVE, NOOP = (
    "accept", "reject", "contest", "revoke", "resolve", "noop")
OPERATIONS = (ACCEPT, REJECT, CONTEST, REVOKE, RESOLVE, NOOP)

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


class Operation(NamedTuple):
    """One entry of the operation log (`Ledger.operations`): what `Ledger.apply` takes to do it
    again, with the same result."""
    op: str                            # one of OPERATIONS
    key: tuple[str, ...]
    value: str | None                  # written (accept, contest, reject), supported (noop) or
                                       # chosen (resolve); for a revoke None (the head), or
                                       # the value of the older version it retracted
    evidence: "EvidenceLike | None"    # None only for a resolve given no evidence


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


_STATUS_CODE = {status: code for code, status in enumerate(STATUSES)}
_EDGE_CODE = {kind: code for code, kind in enumerate(EDGE_KINDS)}
_ACTIVE, _CONTESTED, _SUPERSEDED, _CONTRADICTED, _REVOKED = range(len(STATUSES))
_SUPERSEDES, _ALTERNATIVE_OF, _REVOKES, _SUPPORTED_BY = range(len(EDGE_KINDS))
_ACCEPT, _REJECT, _CONTEST, _REVOKE, _RESOLVE, _NOOP = range(len(OPERATIONS))


class _Newest(Sequence):
    """The ids of a key only ever accepted, newest first: its newest version when the view
    was made, then back along the versions of the key (`Ledger._prev`, which only ever grows
    at its end, so the view is fixed when made). Read in order, as a reader steps back, each
    id costs one step; reading backwards starts again from the newest."""
    __slots__ = ("_prev", "_newest", "_n", "_at", "_vid")

    def __init__(self, prev: array, newest: int, n: int) -> None:
        self._prev, self._newest, self._n = prev, newest, n
        self._at, self._vid = 0, newest

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        at, vid = self._at, self._vid
        if i < at:
            at, vid = 0, self._newest
        prev = self._prev
        while at < i:
            vid = prev[vid]
            at += 1
        self._at, self._vid = at, vid
        return vid

    def __iter__(self):
        prev, vid = self._prev, self._newest
        for _ in range(self._n):
            yield vid
            vid = prev[vid]

    def oldest_first(self) -> list[int]:
        out = []
        prev, vid = self._prev, self._newest
        for _ in range(self._n):
            out.append(vid)
            vid = prev[vid]
        out.reverse()
        return out


class Ledger:
    """Versions, statuses and typed edges of every key; see the module docstring for the
    exact meaning of each operation. Operations return the id of the version they wrote
    (accept, contest, reject), the tombstone (revoke), the new head (resolve) or the version
    supported (noop)."""

    def __init__(self) -> None:
        # Per version, indexed by version id. Numbers live in arrays of 4-byte integers (a
        # ledger of 2**31 versions would need hundreds of GB first) and statuses are codes
        # (STATUSES' positions): a million versions cost tens of MB, not hundreds.
        self._kno = array("i")                # the version's key, as its key number
        self._value: list[str | None] = []
        self._evidence: list[EvidenceLike] = []
        self._status = bytearray()
        # Support and the supersedes target are kept where they are not what an accept
        # writes (support 1; the key's version before it), which is almost nowhere.
        self._support_other: dict[int, int] = {}     # version -> its support, when not 1
        self._pred_other: dict[int, int] = {}        # version -> its target, when not _prev
        self._prev = array("i")               # the key's version before it (_NONE: first)
        # Typed edges, in the order written: kind code, src, dst.
        self._edge_kind = bytearray()
        self._edge_src = array("i")
        self._edge_dst = array("i")
        self._observations: list[EvidenceLike] = []
        # Per key, indexed by key number.
        self._keyno: dict[tuple[str, ...], int] = {}
        self._keys: list[tuple[str, ...]] = []
        self._last = array("i")               # the key's newest version
        self._count = array("i")              # how many versions the key has
        # The key's head (_NONE: the key is empty), where it is not the key's newest version.
        self._heads_other: dict[int, int] = {}
        self._open: dict[tuple[str, ...], list[int]] = {}  # contested key -> open alternatives
        # Keys an operation other than accept (and noop) ever touched: only their lineage needs
        # the walk along the supersedes edges; every other key's lineage is its ids, newest
        # first (`lineage_ids`).
        self._irregular: set[tuple[str, ...]] = set()
        # Counts the writes that went through: readers keep derived reads (lineages, hops) until
        # it moves. Not part of dump(): two equal ledgers may have taken different paths.
        self._revision = 0
        # The operation log, in arrival order: each operation's code (OPERATIONS' position) and
        # the version it wrote (accept, contest, reject), the tombstone (revoke), the version
        # chosen (resolve) or supported (noop); key, value and evidence are that version's (a
        # noop's evidence is its observation). Five bytes per operation.
        self._log_op = bytearray()
        self._log_vid = array("i")
        self._log_evidence: dict[int, EvidenceLike] = {}   # a resolve's evidence, when given
        # A revoke of a version other than the head: log entry -> the version it retracted.
        self._log_target: dict[int, int] = {}

    @property
    def revision(self) -> int:
        """A number that changes whenever an operation changes the ledger (never otherwise
        decreases or repeats)."""
        return self._revision

    # ---- the tables ----------------------------------------------------------------------
    def _head_of(self, key) -> int | None:
        k = self._keyno.get(key)
        if k is None:
            return None
        head = self._heads_other.get(k, self._last[k])
        return None if head == _NONE else head

    def _set_head(self, key, vid: int) -> None:
        k = self._keyno[key]
        if vid == self._last[k]:
            self._heads_other.pop(k, None)
        else:
            self._heads_other[k] = vid

    def _pred_of(self, vid: int) -> int:
        """The target of the version's supersedes edge, _NONE when it has none."""
        found = self._pred_other.get(vid)
        return self._prev[vid] if found is None else found

    def _set_pred(self, vid: int, pred: int) -> None:
        if pred == self._prev[vid]:
            self._pred_other.pop(vid, None)
        else:
            self._pred_other[vid] = pred

    def _support_of(self, vid: int) -> int:
        return self._support_other.get(vid, 1)

    def _ids_of(self, key) -> list[int]:
        """The key's version ids, oldest first."""
        k = self._keyno.get(key)
        if k is None:
            return []
        return _Newest(self._prev, self._last[k], self._count[k]).oldest_first()

    def _edge(self, kind: int, src: int, dst: int) -> None:
        self._edge_kind.append(kind)
        self._edge_src.append(src)
        self._edge_dst.append(dst)

    def _edge_list(self) -> list[tuple[str, int, int]]:
        return [(EDGE_KINDS[k], s, d)
                for k, s, d in zip(self._edge_kind, self._edge_src, self._edge_dst)]

    # ---- writing -----------------------------------------------------------------------
    def _append(self, key, value, evidence, status: str, support: int, pred: int) -> int:
        self._revision += 1
        vid = len(self._value)
        k = self._keyno.get(key)
        if k is None:
            k = self._keyno[key] = len(self._keys)
            self._keys.append(key)
            self._last.append(vid)
            self._count.append(1)
            self._heads_other[k] = _NONE          # empty until the caller sets its head
            self._prev.append(_NONE)
        else:
            # The head stays where it is (the caller moves it): past the new version now.
            head = self._heads_other.get(k, self._last[k])
            self._prev.append(self._last[k])
            self._last[k] = vid
            self._count[k] += 1
            self._heads_other[k] = head
        self._kno.append(k)
        self._value.append(value)
        self._evidence.append(evidence)
        self._status.append(_STATUS_CODE[status])
        if support != 1:
            self._support_other[vid] = support
        self._set_pred(vid, pred)
        return vid

    def accept(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """The new value becomes the head; the old head becomes superseded."""
        _check_write(key, value, evidence)
        if key in self._open:
            return self._logged(_ACCEPT, self._replace(key, value, evidence, _SUPERSEDED))
        # What `_replace` does, for the common case (no open alternative), in one place.
        self._revision += 1
        vid = len(self._value)
        self._log_op.append(_ACCEPT)
        self._log_vid.append(vid)
        k = self._keyno.get(key)
        if k is None:
            self._keyno[key] = len(self._keys)
            self._keys.append(key)
            self._last.append(vid)
            self._count.append(1)
            self._prev.append(_NONE)
            k = len(self._keys) - 1
        else:
            previous = self._last[k]
            heads = self._heads_other
            head = heads.pop(k, previous) if heads else previous
            if head == _NONE:
                self._pred_other[vid] = _NONE
            else:
                self._status[head] = _SUPERSEDED
                self._edge_kind.append(_SUPERSEDES)
                self._edge_src.append(vid)
                self._edge_dst.append(head)
                if head != previous:
                    self._pred_other[vid] = head
            self._prev.append(previous)
            self._last[k] = vid
            self._count[k] += 1
        self._kno.append(k)
        self._value.append(value)
        self._evidence.append(evidence)
        self._status.append(_ACTIVE)
        return vid

    def reject(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """The new value becomes the head; the old head becomes contradicted."""
        _check_write(key, value, evidence)
        head = self._need_head(key, "reject", "accept")
        self._need_new_value(key, value, head, "reject",
                             "noop supports the head; resolve picks an alternative")
        self._irregular.add(key)
        return self._logged(_REJECT, self._replace(key, value, evidence, _CONTRADICTED))

    def _logged(self, code: int, vid: int) -> int:
        self._log_op.append(code)
        self._log_vid.append(vid)
        return vid

    def _replace(self, key, value, evidence, old_status: int) -> int:
        head = self._head_of(key)
        vid = self._append(key, value, evidence, ACTIVE, 1, _NONE if head is None else head)
        if head is not None:
            self._status[head] = old_status
            self._edge(_SUPERSEDES, vid, head)
            for alt in self._open.pop(key, ()):
                self._status[alt] = old_status
        self._set_head(key, vid)
        return vid

    def accept_many(self, writes: Iterable[tuple[tuple[str, ...], str, EvidenceLike]]) -> int:
        """`accept` of each (key, value, evidence) in order, faster; returns the number
        accepted. The same result as calling accept in order, to the byte (a test checks it),
        including on a bad write: the writes before it stay, and ProvenanceError is raised."""
        # Counted before the first write: a bad write midway keeps the writes before it.
        self._revision += 1
        start = len(self._value)
        try:
            self._accept_each(writes, start)
        finally:
            # every write that went through is in the log, even when a bad one stopped them
            done = len(self._value)
            self._log_op.extend(bytes(done - start))          # _ACCEPT is 0
            self._log_vid.extend(range(start, done))
        return done - start

    def _accept_each(self, writes, vid: int) -> None:
        """`accept_many`'s loop, from version id `vid` on (a bad write raises ProvenanceError
        with the writes before it done)."""
        kno, values, evidences = self._kno, self._value, self._evidence
        statuses, prevs, pred_other = self._status, self._prev, self._pred_other
        edge_kind, edge_src, edge_dst = self._edge_kind, self._edge_src, self._edge_dst
        keyno, keys, last, count, heads_other = (self._keyno, self._keys, self._last,
                                                 self._count, self._heads_other)
        open_ = self._open
        known = _EVIDENCE_TYPES
        for key, value, evidence in writes:
            if type(key) is not tuple or type(value) is not str or not value \
                    or type(evidence) not in known:
                _check_write(key, value, evidence)
            k = keyno.get(key)
            if k is None:
                k = keyno[key] = len(keys)
                keys.append(key)
                last.append(vid)
                count.append(1)
                prevs.append(_NONE)
            else:
                previous = last[k]
                head = heads_other.pop(k, previous) if heads_other else previous
                if head == _NONE:
                    pred_other[vid] = _NONE
                else:
                    if open_ and key in open_:
                        heads_other[k] = head
                        self._replace(key, value, evidence, _SUPERSEDED)
                        vid += 1
                        continue
                    statuses[head] = _SUPERSEDED
                    edge_kind.append(_SUPERSEDES)
                    edge_src.append(vid)
                    edge_dst.append(head)
                    if head != previous:
                        pred_other[vid] = head
                prevs.append(previous)
                last[k] = vid
                count[k] += 1
            kno.append(k)
            values.append(value)
            evidences.append(evidence)
            statuses.append(_ACTIVE)
            vid += 1

    def contest(self, key: tuple[str, ...], value: str, evidence: EvidenceLike) -> int:
        """The new value is kept as an alternative; the head becomes contested."""
        _check_write(key, value, evidence)
        head = self._need_head(key, "contest", "accept")
        self._need_new_value(key, value, head, "contest", "noop supports it")
        vid = self._append(key, value, evidence, CONTESTED, 1, _NONE)
        self._irregular.add(key)
        self._status[head] = _CONTESTED
        self._edge(_ALTERNATIVE_OF, vid, head)
        self._open.setdefault(key, []).append(vid)
        return self._logged(_CONTEST, vid)

    def revoke(self, key: tuple[str, ...], evidence: EvidenceLike, value: str | None = None
               ) -> int:
        """Retract the head: a tombstone revokes it and its most recent predecessor that is
        not revoked becomes the head again (the key is empty when there is none). With
        `value`, retract the version holding it: the head (as without), else an open
        alternative of a contested head (the contest closes when it was the last) or an older
        version of the head's lineage (the newest holding it), which is marked revoked while
        the head stays; refused when no such version holds it."""
        if type(key) is not tuple:
            raise ProvenanceError(f"a key is a tuple of strings; got {key!r}")
        _check_evidence(evidence)
        head = self._need_head(key, "revoke", None)
        if value is not None and self._value[head] != value:
            return self._revoke_older(key, head, value, evidence)
        if key in self._open:
            raise ProvenanceError(
                f"cannot revoke {show_key(key)}: it is contested (head #{head} and "
                f"{len(self._open[key])} open alternative(s)); settle it with resolve first")
        tomb = self._tombstone(key, head, evidence)
        back = self._pred_of(head)
        while back != _NONE and self._status[back] == _REVOKED:
            back = self._pred_of(back)
        if back == _NONE:
            self._set_head(key, _NONE)
        else:
            self._status[back] = _ACTIVE
            self._set_head(key, back)
        return self._logged(_REVOKE, tomb)

    def _tombstone(self, key, target: int, evidence) -> int:
        """The tombstone of a revoke, written: it revokes `target`."""
        tomb = self._append(key, None, evidence, REVOKED, 0, _NONE)
        self._irregular.add(key)
        self._edge(_REVOKES, tomb, target)
        self._status[target] = _REVOKED
        return tomb

    def _revoke_older(self, key, head: int, value: str, evidence) -> int:
        """`revoke` of the version holding `value` that is not the head (see `revoke`)."""
        alternatives = self._open.get(key, [])
        target = next((a for a in alternatives if self._value[a] == value), None)
        if target is None:
            target = next((v for v in self._lineage(key)[1:] if self._value[v] == value
                           and v not in alternatives), None)
        if target is None:
            raise ProvenanceError(f"cannot revoke {value!r} of {show_key(key)}: no version "
                                  f"the key holds has it (head #{head} is "
                                  f"{self._value[head]!r})")
        tomb = self._tombstone(key, target, evidence)
        if target in alternatives:
            alternatives.remove(target)
            if not alternatives:
                del self._open[key]
                self._status[head] = _ACTIVE
        self._log_target[len(self._log_op)] = target
        return self._logged(_REVOKE, tomb)

    def resolve(self, key: tuple[str, ...], choice: int | str,
                evidence: EvidenceLike | None = None) -> int:
        """Settle a contest: `choice` (a version id or a value) becomes the head, the other
        parties are contradicted. `evidence`, when given, is kept in the operation log (what
        settled it); the ledger's state does not depend on it."""
        if evidence is not None:
            _check_evidence(evidence)
        alternatives = self._open.get(key)
        if not alternatives:
            head = self._head_of(key)
            state = "empty" if head is None else f"{self.status(head)}, not contested"
            raise ProvenanceError(f"cannot resolve {show_key(key)}: the key is {state}")
        head = self._head_of(key)
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
            self._status[party] = _CONTRADICTED
        self._status[chosen] = _ACTIVE
        if chosen != head:
            self._set_pred(chosen, head)
            self._edge(_SUPERSEDES, chosen, head)
            self._set_head(key, chosen)
        if evidence is not None:
            self._log_evidence[len(self._log_op)] = evidence
        return self._logged(_RESOLVE, chosen)

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
        self._support_other[target] = self._support_of(target) + 1
        self._edge(_SUPPORTED_BY, target, len(self._observations))
        self._observations.append(evidence)
        return self._logged(_NOOP, target)

    # ---- the operation log -------------------------------------------------------------
    @property
    def logged(self) -> int:
        """How many operations the log holds (every operation that went through)."""
        return len(self._log_op)

    def operation_counts(self) -> dict[str, int]:
        """How many operations of each kind the log holds (kinds never used left out)."""
        codes = self._log_op
        counts = {op: codes.count(code) for code, op in enumerate(OPERATIONS)}
        return {op: n for op, n in counts.items() if n}

    @property
    def key_count(self) -> int:
        """How many keys were ever written (empty ones included)."""
        return len(self._keys)

    def accepted_since(self, start: int) -> list[EvidenceLike] | None:
        """The evidence of each operation from log entry `start` on when every one of them is
        an accept (a writer's common case: the facts of one ingest), else None."""
        codes = self._log_op
        if codes.count(_ACCEPT, start) != len(codes) - start:
            return None
        evidence = self._evidence
        return [evidence[vid] for vid in self._log_vid[start:]]

    def operations(self, start: int = 0) -> list[Operation]:
        """The operation log from entry `start` on, in arrival order: every operation that went
        through, with its key, value and evidence. `Ledger.replay` of the whole log gives this
        ledger again, `dump()` byte for byte."""
        codes, vids = self._log_op, self._log_vid
        keys, kno, values, evidences = self._keys, self._kno, self._value, self._evidence
        resolved, observations = self._log_evidence, self._observations
        oid = codes.count(_NOOP, 0, start)            # a noop's evidence is its observation
        out = []
        for i in range(start, len(codes)):
            code, vid = codes[i], vids[i]
            if code == _NOOP:
                evidence = observations[oid]
                oid += 1
            elif code == _RESOLVE:
                evidence = resolved.get(i)
            else:
                evidence = evidences[vid]
            value = values[vid]
            if code == _REVOKE and i in self._log_target:
                value = values[self._log_target[i]]        # the version it retracted
            out.append(Operation(OPERATIONS[code], keys[kno[vid]], value, evidence))
        return out

    def apply(self, operation: Operation) -> int:
        """Do one operation of the log again (`operations`): its method, with its arguments;
        returns what the method returns. ProvenanceError when it does not apply here."""
        op, key, value, evidence = operation
        if op == ACCEPT:
            return self.accept(key, value, evidence)
        if op == REJECT:
            return self.reject(key, value, evidence)
        if op == CONTEST:
            return self.contest(key, value, evidence)
        if op == REVOKE:
            return self.revoke(key, evidence, value)
        if op == RESOLVE:
            return self.resolve(key, value, evidence)
        if op == NOOP:
            return self.noop(key, value, evidence)
        raise ProvenanceError(f"unknown operation {op!r} (expected one of "
                              f"{', '.join(OPERATIONS)})")

    @classmethod
    def replay(cls, operations: Iterable[Operation], *, refused: list | None = None
               ) -> "Ledger":
        """A new ledger holding `operations` done in order (runs of accepts in one
        `accept_many`). An operation that does not apply raises ProvenanceError, unless
        `refused` is a list: it is then left out and (operation, error) appended to it."""
        ledger = cls()
        run: list[tuple] = []
        for operation in operations:
            if operation.op == ACCEPT:
                run.append((operation.key, operation.value, operation.evidence))
                continue
            if run:
                ledger.accept_many(run)
                run = []
            try:
                ledger.apply(operation)
            except ProvenanceError as exc:
                if refused is None:
                    raise
                refused.append((operation, exc))
        if run:
            ledger.accept_many(run)
        return ledger

    def _need_head(self, key, op: str, instead: str | None) -> int:
        head = self._head_of(key)
        if head is None:
            state = "empty (every version revoked)" if key in self._keyno else "empty"
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
        return Version(vid, self._keys[self._kno[vid]], self._value[vid],
                       STATUSES[self._status[vid]], ev.serial, ev.line, ev.text,
                       self._support_of(vid))

    def status(self, vid: int) -> str:
        return STATUSES[self._status[vid]]

    def status_of(self, key: tuple[str, ...], evidence: EvidenceLike) -> str | None:
        """Status of the version of `key` written with this evidence (the same object, else
        an equal one; the latest such version), or None if there is none."""
        ids = self._ids_of(key)
        if not ids:
            return None
        found = self._evidence
        for vid in reversed(ids):
            if found[vid] is evidence:
                return self.status(vid)
        for vid in reversed(ids):
            if found[vid] == evidence:
                return self.status(vid)
        return None

    def head(self, key: tuple[str, ...]) -> Version | None:
        """The current value of the key (active, or contested), None when the key is empty."""
        vid = self._head_of(key)
        return None if vid is None else self.version(vid)

    def history(self, key: tuple[str, ...]) -> tuple[Version, ...]:
        """Every version of the key, tombstones included, in the order they were written."""
        return tuple(self.version(v) for v in self._ids_of(key))

    def lineage(self, key: tuple[str, ...]) -> tuple[Version, ...]:
        """The versions a reader may take, in the order it should prefer them: the head, the
        open alternatives of a contested head (newest first), then the head's predecessors
        along the supersedes edges (newest first). Tombstones, revoked and contradicted
        versions (retracted, or judged wrong) are not in it; an empty key has none."""
        return tuple(self.version(v) for v in self._lineage(key))

    def _lineage(self, key) -> list[int]:
        head = self._head_of(key)
        if head is None:
            return []
        order = [head, *reversed(self._open.get(key, ()))]
        back = self._pred_of(head)
        while back != _NONE:
            order.append(back)
            back = self._pred_of(back)
        status = self._status
        return [v for v in order if status[v] not in (_REVOKED, _CONTRADICTED)]

    def lineage_ids(self, key: tuple[str, ...]) -> Sequence[int]:
        """The ids of `lineage(key)`, in the same order, without a `Version` per id: what a
        reader that steps back one version at a time needs (the path search). A key only ever
        accepted gets a view of its ids, newest first, that costs nothing to make however
        many versions it has; it keeps showing the versions of the moment it was made."""
        if key in self._irregular:
            return tuple(self._lineage(key))
        k = self._keyno.get(key)
        if k is None:
            return ()
        return _Newest(self._prev, self._last[k], self._count[k])

    def value(self, vid: int) -> str | None:
        """The value of version `vid` (None for a tombstone)."""
        return self._value[vid]

    def values(self, vids: Iterable[int]) -> Iterator[str | None]:
        """The value of each version, in the order given (a reader stepping back along a
        lineage reads many)."""
        values = self._value
        return (values[vid] for vid in vids)

    def evidence(self, vid: int) -> EvidenceLike:
        """The evidence version `vid` was written with, as it was given (a `Fact` for the
        store's versions)."""
        return self._evidence[vid]

    def alternatives(self, key: tuple[str, ...]) -> tuple[Version, ...]:
        """The open alternatives of a contested key (empty otherwise), oldest first."""
        return tuple(self.version(v) for v in self._open.get(key, ()))

    def predecessor(self, vid: int) -> int | None:
        """The version `vid` supersedes, if any."""
        back = self._pred_of(vid)
        return None if back == _NONE else back

    def keys(self) -> list[tuple[str, ...]]:
        """Every key ever written, empty ones included, sorted."""
        return sorted(self._keyno)

    def _heads_by_key(self) -> list[tuple[tuple[str, ...], int]]:
        heads, last = self._heads_other, self._last
        found = ((key, heads.get(k, last[k])) for key, k in self._keyno.items())
        return sorted((key, head) for key, head in found if head != _NONE)

    def frontier(self) -> dict[tuple[str, ...], Version]:
        """The active frontier: key -> head, for every key that is not empty, sorted by key."""
        return {key: self.version(head) for key, head in self._heads_by_key()}

    def edges(self, key: tuple[str, ...] | None = None) -> tuple[Edge, ...]:
        """Typed edges in the order written; with a key, those leaving its versions."""
        if key is None:
            return tuple(Edge(*e) for e in self._edge_list())
        k = self._keyno.get(key)
        kno = self._kno
        return tuple(Edge(*e) for e in self._edge_list() if kno[e[1]] == k)

    def observation(self, oid: int) -> Evidence:
        ev = self._observations[oid]
        return Evidence(ev.serial, ev.line, ev.text)

    def observations(self, vid: int) -> tuple[Evidence, ...]:
        """Evidence of the noops that support version `vid`, in order."""
        return tuple(self.observation(dst) for kind, src, dst in self._edge_list()
                     if kind == SUPPORTED_BY and src == vid)

    def dump(self) -> bytes:
        """The whole ledger as canonical JSON (sorted keys): equal dumps, equal ledgers."""
        return orjson.dumps({
            "versions": [self.version(v).to_json() | {"pred": self._pred_of(v)}
                         for v in range(len(self._value))],
            "edges": self._edge_list(),
            "heads": [[list(k), v] for k, v in self._heads_by_key()],
            "open": [[list(k), v] for k, v in sorted(self._open.items())],
            "observations": [list(self.observation(i))
                             for i in range(len(self._observations))],
        }, option=orjson.OPT_SORT_KEYS)
