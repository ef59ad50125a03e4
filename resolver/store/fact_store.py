"""`FactStore`: every version of each (subject, relation) key, append-only, in serial order.

The latest serial is current; displaced versions stay reachable (history, provenance, rollback
with `as_of`). Subjects are looked up case- and whitespace-insensitively; the text as written
is kept for output. `FactStore.ledger` is the same facts written through the provenance
operations (FactConsolidation's write path: `accept` in serial order), which gives every
version a status."""
from __future__ import annotations

from functools import lru_cache
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence

from resolver.errors import ProvenanceError, clip
from resolver.store.provenance import (ACCEPT, CONTEST, NOOP, OPERATIONS, REJECT, RESOLVE,
                                       REVOKE, Ledger, Operation, Version)
from resolver.text.facts import Fact
from resolver.text.relations import inventory

_WORD = re.compile(r"\w+")
# The operations that write a version holding a value.
WRITES = (ACCEPT, REJECT, CONTEST)


# The memo of `norm` keeps names of at most MEMO_NAME characters, at most MEMO_NAMES of them: a
# process-wide memo whose entries a question's text could fill (a template's entity span of 900
# characters, one per distinct question: +1.4 MB per 1,000 questions, past docs/server.md's
# bound; verify-e E22) is bounded in bytes, not only in entries. Store names are far shorter
# (the longest in the 262K context has 59 characters).
MEMO_NAME = 256
MEMO_NAMES = 1 << 16


def norm(name: str) -> str:
    """Lookup key of a name: case-folded, whitespace collapsed, in Unicode NFC: "Café" typed
    with a combining accent (NFD) is the same name as with the composed "é" (NFC), as it looks
    the same."""
    return _norm_memo(name) if len(name) <= MEMO_NAME else _norm(name)


def _norm(name: str) -> str:
    return " ".join(_nfc(name).split()).casefold()


_norm_memo = lru_cache(maxsize=MEMO_NAMES)(_norm)   # the search normalises the same few names
                                                     # again and again


def name_tokens(text: str) -> tuple[str, ...]:
    """Word tokens used to find names inside questions: case-folded, punctuation and quotes
    ignored ("Mike D'Antoni's" -> mike d antoni s), in NFC as `norm`."""
    return tuple(_WORD.findall(_nfc(text).casefold()))


def _nfc(text: str) -> str:
    # The check is a fast scan; nearly every name is NFC already and is returned as it is.
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


@dataclass(frozen=True, slots=True)
class Mention:
    """A store entity named in a text: token span [start, end) and the names it may be."""
    start: int
    end: int
    names: tuple[str, ...]     # store spellings, sorted
    as_subject: bool           # some spelling is the subject of a fact (it can start a chain)

    @property
    def width(self) -> int:
        return self.end - self.start


class _Index:
    """The lookup tables of a store. Built on first use, then kept up to date by `add`.

    A key's versions are found through its subject (`by_subject[subject][relation]`): a
    table keyed by (subject, relation) besides it would cost a tuple and an entry per key,
    which is most of what a store of a million facts spends per key."""

    def __init__(self) -> None:
        self.by_subject: dict[str, dict[str, Fact | list[Fact]]] = {}
        # Every fact by its object: made on the first `by_object` (the analyses ask it; the
        # search does not), then kept up to date like the rest.
        self.by_object: dict[str, Fact | list[Fact]] | None = None
        # (object, relation) -> the facts of a symmetric relation naming the object, always
        # kept: what reverse hops follow, found without reading every other fact that names
        # the object.
        self.symmetric_by_object: dict[tuple[str, str], Fact | list[Fact]] = {}
        self._symmetric = frozenset(n for n, r in inventory().items() if r.symmetric)
        self.spelling: dict[str, str] = {}
        # Names recur (18K facts of the 262K context name ~11K entities): normalise each
        # spelling once (the ledger's build reuses this too).
        self.normed: dict[str, str] = {}

    def add(self, facts: Iterable[Fact]) -> None:
        by_subject, by_object = self.by_subject, self.by_object
        spelling, normed = self.spelling, self.normed
        symmetric, symmetric_by_object = self._symmetric, self.symmetric_by_object
        for fact in facts:
            subject, obj = fact.subject, fact.object
            s = normed.get(subject)
            if s is None:
                s = normed[subject] = norm(subject)
            o = normed.get(obj)
            if o is None:
                o = normed[obj] = norm(obj)
            relations = by_subject.get(s)
            if relations is None:
                relations = by_subject[s] = {}
            # Most keys have one version and most names one fact naming them as object: a
            # lone fact stands for itself, a list is made for the second.
            versions = relations.get(fact.relation)
            if versions is None:
                relations[fact.relation] = fact
            elif versions.__class__ is list:
                versions.append(fact)
            else:
                relations[fact.relation] = [versions, fact]
            if by_object is not None:
                found = by_object.get(o)
                if found is None:
                    by_object[o] = fact
                elif found.__class__ is list:
                    found.append(fact)
                else:
                    by_object[o] = [found, fact]
            if fact.relation in symmetric:
                pair = (o, fact.relation)
                found = symmetric_by_object.get(pair)
                if found is None:
                    symmetric_by_object[pair] = fact
                elif found.__class__ is list:
                    found.append(fact)
                else:
                    symmetric_by_object[pair] = [found, fact]
            if s not in spelling:
                spelling[s] = subject
            if o not in spelling:
                spelling[o] = obj

    def versions(self, s: str, relation: str) -> list[Fact] | tuple[Fact, ...]:
        """The versions of the key (normalised subject, relation), oldest first."""
        relations = self.by_subject.get(s)
        if relations is None:
            return ()
        return _facts(relations.get(relation, ()))

    def naming(self, o: str, facts: Iterable[Fact]) -> list[Fact] | tuple[Fact, ...]:
        """The facts whose object is `o` (normalised), in serial order; `facts`, every fact
        of the store, makes the table the first time."""
        if self.by_object is None:
            by_object: dict[str, Fact | list[Fact]] = {}
            normed = self.normed
            for fact in facts:
                obj = fact.object
                o_ = normed.get(obj)
                if o_ is None:
                    o_ = normed[obj] = norm(obj)
                found = by_object.get(o_)
                if found is None:
                    by_object[o_] = fact
                elif found.__class__ is list:
                    found.append(fact)
                else:
                    by_object[o_] = [found, fact]
            # Assigned only once complete, so a concurrent reader never sees half a table.
            self.by_object = by_object
        return _facts(self.by_object.get(o, ()))


def _facts(found) -> list[Fact] | tuple[Fact, ...]:
    """A table entry as a sequence of facts: a lone fact stands for itself in the tables."""
    return (found,) if found.__class__ is Fact else found


def _check_relation(relation: str) -> None:
    known = inventory()
    if relation not in known:
        import difflib  # lazily: only an error's hint needs it
        close = difflib.get_close_matches(relation, sorted(known), n=3)
        hint = f" (did you mean: {', '.join(close)}?)" if close else \
            f" (known: {', '.join(sorted(known))})"
        raise ProvenanceError(f"unknown relation {relation!r}{hint}")


def _writes(facts: Iterable[Fact], normed: dict[str, str] | None = None
            ) -> Iterator[tuple[tuple[str, str], str, Fact]]:
    """(key, value, evidence) of each fact, for `Ledger.accept_many`; `normed` caches
    spelling -> normalised name (the store's lookup tables hold one)."""
    normed = {} if normed is None else normed
    for fact in facts:
        subject = fact.subject
        s = normed.get(subject)
        if s is None:
            s = normed[subject] = norm(subject)
        yield (s, fact.relation), fact.object, fact


def _written_of(operations: Iterable[Operation], facts: Sequence[Fact]) -> list[Fact]:
    """The versions `operations` wrote besides the accepts of `facts`, as facts: the evidence
    when it is one (in process), else made from the key, value and evidence (a memory file
    keeps those), the subject spelled as the evidence text writes it when it holds it."""
    own = {id(f) for f in facts}
    out = []
    for op in operations:
        if op.op not in WRITES or (op.op == ACCEPT and id(op.evidence) in own):
            continue
        ev = op.evidence
        if ev.__class__ is Fact and ev.object == op.value:
            out.append(ev)
            continue
        subject = _spelled(op.key[0], ev.text)
        out.append(Fact(ev.serial, subject, op.key[1], op.value, ev.line, ev.text))
    return out


def _spelled(key: str, text: str) -> str:
    """The name `key` (normalised) as `text` writes it, else `key` itself."""
    at = text.casefold().find(key)
    if at >= 0 and len(text.casefold()) == len(text):
        found = text[at:at + len(key)]
        if norm(found) == key:
            return found
    return key


def _increasing(facts: tuple[Fact, ...]) -> bool:
    last = -1
    for fact in facts:
        serial = fact.serial
        if serial <= last:
            return False
        last = serial
    return True


class FactStore:
    """Constructing a store only checks serial order; the lookup tables are built on the
    first lookup (about 80 ms for the 262K context on the 2-core reference machine), so a
    cached haystack loads in well under 0.1 s and callers that only count facts never pay."""

    def __init__(self, facts: Iterable[Fact] = (), ledger: Ledger | None = None) -> None:
        """`ledger`: the ledger these facts were written into, kept as it is (a ledger
        replayed from its operation log, `Ledger.replay`, where operations other than the
        facts' accepts are recorded); by default it is built from the facts on first use."""
        self._facts: list[Fact] | tuple[Fact, ...] = []
        # The versions that entered by an operation other than a fact line's accept (a
        # correction line, an API patch: `operate`), as facts: the lookup tables, the names
        # and the reverse hops hold them as they hold the store's facts.
        self._written: list[Fact] = []
        # The highest serial an operation's evidence had (every operation takes one).
        self._operated = -1
        self._built: _Index | None = None
        self._ledger: Ledger | None = None
        self._token_index: dict[tuple[str, ...], set[str]] | None = None
        self._widths: dict[str, tuple[int, ...]] = {}
        self._name_reads: dict = {}
        # Reads derived from the facts and the ledger (see `read_cache`), and the state they
        # were made in.
        self._reads: dict[str, dict] = {}
        self._reads_revision = -1
        if type(facts) is tuple and _increasing(facts):
            # A parse's facts, kept as they are (the parse holds them too) until a fact is
            # added: a million references saved.
            self._facts = facts
        else:
            self.extend(facts)
        self._ledger = ledger
        if ledger is not None and ledger.logged != len(self._facts):
            # operations besides the facts' accepts: their versions are the store's too
            self._adopt_operations(ledger.operations(), self._facts)

    def __getstate__(self) -> dict:
        """What a copy or a pickle of the store holds: the facts, the lookup tables and the
        ledger, not the reads derived from them (`read_cache`, `name_cache`, the token index),
        which may hold iterators; they are made again on the first read."""
        state = self.__dict__.copy()
        state.update(_reads={}, _reads_revision=-1, _name_reads={}, _token_index=None,
                     _widths={})
        return state

    # ---- writing -----------------------------------------------------------------------
    def add(self, fact: Fact) -> None:
        """Append a fact. Serials must increase: the store is append-only."""
        self.extend((fact,))

    def extend(self, facts: Iterable[Fact]) -> None:
        """Append facts in serial order. On a serial that does not increase, the facts before
        it stay (append-only: never half-undone) and ValueError names both serials."""
        out = self._facts
        if type(out) is tuple:
            out = self._facts = list(out)
        first = len(out)
        last = out[-1].serial if out else -1
        try:
            for fact in facts:
                if fact.serial <= last:
                    raise ValueError(f"serial {fact.serial} after {last}: the store is "
                                     "append-only and ordered by serial")
                last = fact.serial
                out.append(fact)
        finally:
            if self._built is not None and len(out) > first:
                self._built.add(out[first:])
            if self._ledger is not None and len(out) > first:
                self._ledger.accept_many(_writes(out[first:], self._ix.normed))
            if len(out) > first:
                self._token_index = None
                self._name_reads = {}

    def operate(self, op: str, subject: str, relation: str, value: str | None,
                evidence: Fact) -> int:
        """Do one ledger operation (`resolver.store.provenance`: accept, reject, contest,
        revoke, resolve, noop) on the key (subject, relation), with a fact as its evidence
        (its serial, line and text; for a version it writes, its subject as written and its
        value): a version it writes is in the lookup tables, the names and the reverse hops
        from then on, as a fact line's is. `value`: what revoke retracts (None: the head),
        what resolve chooses, what noop supports. Returns what the ledger's operation returns;
        ProvenanceError (nothing changed) when the ledger refuses it."""
        _check_relation(relation)
        key = (norm(subject), relation)
        ledger = self.ledger
        self._operated = max(self._operated, evidence.serial)
        if op in WRITES:
            vid = getattr(ledger, op)(key, value, evidence)
            self._adopt([evidence])
        elif op == REVOKE:
            vid = ledger.revoke(key, evidence, value)
        elif op == RESOLVE:
            vid = ledger.resolve(key, value, evidence)
        elif op == NOOP:
            vid = ledger.noop(key, value, evidence)
        else:
            raise ProvenanceError(f"unknown operation {op!r} (expected one of "
                                  f"{', '.join(OPERATIONS)})")
        return vid

    def _adopt_operations(self, operations: list[Operation], facts: Sequence[Fact]) -> None:
        """Take the versions and serials of `operations` (besides the accepts of `facts`)."""
        self._adopt(_written_of(operations, facts))
        own = {id(f) for f in facts}
        self._operated = max((o.evidence.serial for o in operations
                              if o.evidence is not None and id(o.evidence) not in own),
                             default=self._operated)

    def _adopt(self, written: list[Fact]) -> None:
        if not written:
            return
        self._written.extend(written)
        if self._built is not None:
            self._built.add(written)
        self._token_index = None
        self._name_reads = {}

    @property
    def last_serial(self) -> int | None:
        """The highest serial of the store's facts and of every operation's evidence (a line
        or patch without a serial takes the next one), None when there is none."""
        last = self._operated
        if self._facts:
            last = max(last, self._facts[-1].serial)
        return None if last < 0 else last

    def written(self) -> tuple[Fact, ...]:
        """The versions that entered by an operation (`operate`), as facts, in arrival order."""
        return tuple(self._written)

    @classmethod
    def replayed(cls, entries: Iterable[Fact | Operation]) -> "FactStore":
        """A store rebuilt from its operation log (`Ledger.operations`, as a memory file keeps
        it): each Fact is the accept of a fact of the store, in the order the facts came (its
        key (subject normalised, relation), as `extend` writes it), each Operation any other
        operation on the ledger, done in its place."""
        entries = entries if isinstance(entries, list) else list(entries)
        store = cls(tuple(e for e in entries if e.__class__ is Fact))
        normed = store._ix.normed
        ledger = Ledger()
        start = 0
        for at, entry in enumerate(entries):
            if entry.__class__ is not Fact:
                if start < at:
                    ledger.accept_many(_writes(entries[start:at], normed))
                ledger.apply(entry)
                start = at + 1
        if start < len(entries):
            ledger.accept_many(_writes(entries[start:] if start else entries, normed))
        store._ledger = ledger
        store._adopt_operations([e for e in entries if e.__class__ is not Fact], ())
        return store

    @property
    def _ix(self) -> _Index:
        built = self._built
        if built is None:
            built = _Index()
            built.add(self._facts)
            if self._written:
                built.add(self._written)
            # Assigned only once complete, so a concurrent reader never sees half a table.
            self._built = built
        return built

    @property
    def ledger(self) -> Ledger:
        """The provenance ledger: every fact accepted in serial order, version id = the fact's
        position in the store. Built on first use, then kept up to date by `extend`.
        FactConsolidation only ever accepts, so its frontier is latest-wins (`current`);
        other operations may be applied to it, but `current` and `versions` do not read it."""
        ledger = self._ledger
        if ledger is None:
            ledger = Ledger()
            ledger.accept_many(_writes(self._facts, self._ix.normed))
            self._ledger = ledger
        return ledger

    def prepare(self) -> None:
        """Build now what reads build on first use: the index, the name index and the ledger
        (a run does it before forking its workers, which then share them instead of each
        building its own)."""
        self._index()
        self.ledger

    def status(self, fact: Fact) -> str | None:
        """The ledger status of the fact's version ("active", "superseded", ...), None if the
        fact is not in the store."""
        return self.ledger.status_of((norm(fact.subject), fact.relation), fact)

    def head(self, subject: str, relation: str) -> Version | None:
        """The ledger head of (subject, relation): its current value, None when empty."""
        return self.ledger.head((norm(subject), relation))

    def lineage(self, subject: str, relation: str) -> tuple[Version, ...]:
        """The versions of (subject, relation) a reader may take, head first, then older ones
        (`Ledger.lineage`). What the resolver reads: the frontier and the history, each
        version with its status."""
        return self.ledger.lineage((norm(subject), relation))

    def lineage_ids(self, subject: str, relation: str) -> Sequence[int]:
        """The ledger ids of `lineage(subject, relation)`, in its order, without a `Version`
        per id (`Ledger.lineage_ids`): a reader that steps back one version at a time pays
        for the versions it reaches only."""
        return self.ledger.lineage_ids((norm(subject), relation))

    def read_cache(self, name: str) -> dict:
        """A dict, one per `name`, in which the store and the stages above keep what they
        derive from the store's facts and ledger (the search's hops). Every such
        dict is emptied when the store changes: a fact added, or any operation on the
        ledger (its `revision` moves), so a cached read is always what a fresh read gives."""
        # Every write reaches the ledger once it exists (`extend` accepts into it), and the
        # ledger exists from the first read on: its revision is the store's.
        revision = self.ledger.revision
        if revision != self._reads_revision:
            self._reads = {}
            self._reads_revision = revision
        found = self._reads.get(name)
        if found is None:
            found = self._reads[name] = {}
        return found

    def name_cache(self) -> dict:
        """A dict in which the stages above keep what they read from the store's names only
        (the reading of a question: the entities it names), emptied when a fact is added.
        Ledger operations leave it: they change no name. Its users bound what they keep in it
        (`plan.question.read` keeps the latest READINGS_KEPT readings)."""
        return self._name_reads

    def history(self, entity: str, relation: str | None = None
                ) -> dict[str, tuple[Version, ...]]:
        """relation -> the ledger history of (entity, relation), oldest first, for one
        relation or (None) every relation the entity is the subject of, sorted by name.
        Raises ProvenanceError naming an unknown entity or relation, with close names."""
        if relation is not None:
            _check_relation(relation)
        s = norm(entity)
        found = self._ix.by_subject.get(s)
        if not found:
            raise ProvenanceError(self._unknown_entity(entity))
        if relation is not None and relation not in found:
            raise ProvenanceError(f"{self.spelling(entity)!r} has no {relation} facts (its "
                                  f"relations: {', '.join(sorted(found))})")
        ledger = self.ledger
        return {rel: ledger.history((s, rel))
                for rel in ([relation] if relation is not None else sorted(found))}

    def frontier(self, relation: str | None = None) -> list[tuple[str, Version]]:
        """(subject as written, head) of every key that has one, optionally of one relation,
        sorted by (normalised subject, relation): one current value per key."""
        if relation is not None:
            _check_relation(relation)
        spelling = self._ix.spelling
        return [(spelling[key[0]], head) for key, head in self.ledger.frontier().items()
                if relation is None or key[1] == relation]

    def _unknown_entity(self, entity: str) -> str:
        if norm(entity) in self._ix.spelling:
            return (f"{self.spelling(entity)!r} is never the subject of a fact (it appears "
                    "only as an object)")
        # A name far longer than any in the store has no close match worth the search, and
        # is shown cut, as an offending line is (a 100,000-character argument, audit B A19).
        longest = max(map(len, self._ix.spelling.values()), default=0)
        import difflib  # lazily: only an error's hint needs it
        close = difflib.get_close_matches(entity, sorted(self._ix.spelling.values()), n=3) \
            if len(entity) <= 2 * longest + 10 else []
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        return f"no entity {clip(entity)!r} in the store{hint}"

    # ---- reading -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[Fact]:
        return iter(self._facts)

    def since(self, start: int) -> list[Fact]:
        """The facts from position `start` on, in order (what a memory file writes)."""
        return list(self._facts[start:])

    def versions(self, subject: str, relation: str) -> tuple[Fact, ...]:
        """Every version of the key, oldest first."""
        return tuple(self._ix.versions(norm(subject), relation))

    def current(self, subject: str, relation: str, as_of: int | None = None) -> Fact | None:
        """The latest version (with `as_of`, the latest at or before that serial: rollback)."""
        versions = self._ix.versions(norm(subject), relation)
        if not versions:
            return None
        if as_of is None:
            return versions[-1]
        older = [v for v in versions if v.serial <= as_of]
        return older[-1] if older else None

    def displaced(self, subject: str, relation: str) -> tuple[Fact, ...]:
        """The versions the current one superseded, oldest first (empty if never updated)."""
        return self.versions(subject, relation)[:-1]

    def relations_of(self, subject: str) -> dict[str, tuple[Fact, ...]]:
        """relation -> versions (oldest first) for one subject, relations sorted by name."""
        found = self._ix.by_subject.get(norm(subject), {})
        return {rel: tuple(_facts(found[rel])) for rel in sorted(found)}

    def relation_names(self, subject: str) -> tuple[str, ...]:
        """The relations the subject has facts of, sorted by name (`relations_of` without the
        versions)."""
        found = self._ix.by_subject.get(norm(subject))
        return tuple(sorted(found)) if found else ()

    def symmetric_by_object(self, obj: str, relation: str) -> tuple[Fact, ...]:
        """The facts of `by_object` of one relation that holds both ways (relations.py's
        `symmetric`; empty for any other): what a reverse hop follows, in serial order."""
        return tuple(_facts(self._ix.symmetric_by_object.get((norm(obj), relation), ())))

    def by_object(self, obj: str) -> tuple[Fact, ...]:
        """Every fact, any version, whose object is `obj` (reverse lookup), in serial order."""
        return tuple(self._ix.naming(norm(obj), self._facts))

    def is_subject(self, name: str) -> bool:
        return norm(name) in self._ix.by_subject

    def spelling(self, name: str) -> str | None:
        """The store's own spelling of a name (first seen), or None if the store never saw it."""
        return self._ix.spelling.get(norm(name))

    def keys(self) -> list[tuple[str, str]]:
        """(subject as written, relation) of every key, sorted."""
        ix = self._ix
        return sorted((ix.spelling[s], r) for s, relations in ix.by_subject.items()
                      for r in relations)

    def entities(self) -> list[str]:
        """Every subject and object name as first written, sorted."""
        return sorted(self._ix.spelling.values())

    # ---- names in questions ------------------------------------------------------------
    def _index(self) -> dict[tuple[str, ...], set[str]]:
        if self._token_index is None:
            index: dict[tuple[str, ...], set[str]] = {}
            # a name's first word -> the word counts of the names it starts, widest first
            widths: dict[str, tuple[int, ...]] = {}
            findall = _WORD.findall
            for key in self._ix.spelling:
                # the key is norm(spelling), NFC and case-folded already: its words are
                # name_tokens(spelling) (norm only collapses whitespace, never part of a
                # word); a key of letters and digits between spaces (most) is split on them,
                # as \w is a letter, a digit or "_"
                tokens = tuple(key.split() if key.replace(" ", "").isalnum() else findall(key))
                if tokens:
                    keys = index.get(tokens)
                    if keys is None:
                        index[tokens] = {key}
                        first, width = tokens[0], len(tokens)
                        counts = widths.get(first)
                        if counts is None:
                            widths[first] = (width,)
                        elif width not in counts:
                            widths[first] = tuple(sorted(counts + (width,), reverse=True))
                    else:
                        keys.add(key)
            self._widths = widths
            self._token_index = index
        return self._token_index

    def mentions(self, text: str) -> list[Mention]:
        """Every store entity named in `text` (whole-word token match), widest first, then by
        position. Overlapping mentions are all returned; the planner decides."""
        index = self._index()
        widths = self._widths
        ix = self._ix
        tokens = name_tokens(text)
        found = []
        # only the spans whose first word starts some name, and only as wide as those names
        for start, token in enumerate(tokens):
            for width in widths.get(token, ()):
                end = start + width
                if end <= len(tokens):
                    keys = index.get(tokens[start:end])
                    if keys:
                        names = tuple(sorted(ix.spelling[k] for k in keys))
                        found.append(Mention(start, end, names,
                                             any(k in ix.by_subject for k in keys)))
        found.sort(key=lambda m: (m.start - m.end, m.start))     # widest first, then by position
        return found

    def longest_entity(self, text: str, subjects_only: bool = True) -> str | None:
        """The longest store entity named in `text` (ties: the earliest, then alphabetical)."""
        for mention in self.mentions(text):
            if mention.as_subject or not subjects_only:
                subjects = [n for n in mention.names if self.is_subject(n)]
                return (subjects or list(mention.names))[0]
        return None

    # ---- statistics ----------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts of facts, keys, keys with several versions, the deepest version chain,
        entities and facts per relation. Counted in one pass over the facts, without the
        lookup tables: `factres parse` needs these counts only, and the pass costs half of
        building the tables (tests/test_store.py checks it against them)."""
        normed: dict[str, str] = {}
        versions: dict[tuple[str, str], int] = {}
        histogram: dict[str, int] = defaultdict(int)
        for fact in self._facts:
            subject, obj = fact.subject, fact.object
            s = normed.get(subject)
            if s is None:
                s = normed[subject] = norm(subject)
            if obj not in normed:
                normed[obj] = norm(obj)
            key = (s, fact.relation)
            versions[key] = versions.get(key, 0) + 1
            histogram[fact.relation] += 1
        return {
            "facts": len(self._facts),
            "keys": len(versions),
            "keys_with_several_versions": sum(1 for n in versions.values() if n > 1),
            "deepest_version_chain": max(versions.values(), default=0),
            "entities": len(set(normed.values())),
            "relations": dict(sorted(histogram.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
