"""`Memory`: ingest text in any chunks, query any prompt, with the same answers as `factres run`.

The write side commits each complete fact on arrival: the streaming reader (`stream`) cuts the
text into facts and the memory appends them to a `FactStore` with `extend`, which accepts each
into the provenance ledger in serial order (the ledger exists from the start, so nothing is
deferred) and keeps the lookup tables current. The read side is the run's own code path: the
live plan sets compiled by the same compilers (`resolver.plan.planning.compile_live`) and
`resolver.search.resolve` over the same store. A memory fed a row's context holds the store a
run builds from it (the same facts, serials, lines and texts), so it gives the same answers and
the same traces.

When the tail is committed: a fact is complete when the next fact starts, or when a line break
follows it outside a memorize frame; otherwise it waits, since a chunk may end inside it ("... is
Washington, D." + "C."). `flush()` commits the tail for good (the end of the text). A query, and
every read of the store, sees the tail *provisionally*: the facts it would give if the text
ended here (less a trailing fragment that can still become the next fact's serial, "... Apple.
1") are in the store while the query reads it, but they stay pending: when the text goes on,
the tail is read again, and a provisional fact that the rest of the text changed ("St." then
"Louis.") is taken back before the real one is committed. So queries between chunks never
change what the chunks give: the store after the last chunk and a `flush` is the one-shot store,
whatever was asked in between. Thread-safe: one lock around every read and write. A memory
copies (`copy.copy` and `copy.deepcopy` alike) and pickles whole: the copy or the unpickled
memory answers, and reads the rest of the text, as the original would, and never shares its
state; a memory kept in a file refuses (its state is the file's).

Where it lasts: every memory holds a `Record` (resolver/store/record.py) and commits each
ingest to it, as one `Change`: `Memory()` the in-memory record, which keeps nothing (the
objects are the state), `Memory.open(path)` a SQLite file (store/memory_file.py), from which a
memory is rebuilt as it was (the store and ledger from the operation log, the reader from its
state, reader_state.py). docs/memory.md, "Saving and reopening", says what a user sees."""
from __future__ import annotations

import dataclasses
import functools
import os
import pickle
import threading
from collections import Counter
from dataclasses import dataclass, field

from resolver.errors import InputError, MemoryFileError, ProvenanceError
from resolver.haystack import Question
from resolver.mab import harness
from resolver.memory import erasure, reader_state
from resolver.memory.erasure import Erasure
from resolver.memory.readout import check as check_readout
from resolver.memory.readout import render as render_readout
from resolver.memory.stream import PASSED_KINDS, UNPARSED, FactReader, Report
from resolver.plan.planning import LIVE_SETS, compile_live
from resolver.search.candidates import Hop
from resolver.search.confidence import NONE, Confidence, abstention, below, rank
from resolver.search.contested import Contest
from resolver.search.contested import alternatives as contested_values
from resolver.search.history import HistoryRead
from resolver.search.resolve import Prediction, resolve_question, resolve_question_plain
from resolver.store.fact_store import FactStore, norm
from resolver.store.provenance import ACCEPT, Ledger, Operation, Version, show_key
from resolver.store.record import (BYTES, ERASURE, FLUSH, OPERATIONS, TEXT, Change,
                                   InMemoryRecord, LogEntry, Record)
from resolver.store.operations import Applied, Patch, apply_patch, commit, next_serial, read_patch
from resolver.text.corrections import Correction
from resolver.text.facts import Fact

__all__ = ["Answer", "Applied", "IngestResult", "Memory", "harness"]

MODES = ("search", "plain")
MEMORY_SOURCE = "memory"          # the source and id a memory's questions carry
NOTHING_INGESTED = "nothing ingested yet: the memory holds no facts"
NO_QUESTION = "the prompt holds no question (only the instruction's example, or nothing)"
# Reported: an operation on the ledger that a take-back left without the fact it read.
NOT_REAPPLIED = "not reapplied"
# Reported: a correction line that changed nothing, or applied with a note (a move from a
# location the memory did not have).
CORRECTION = "correction"


@dataclass(frozen=True)
class IngestResult:
    """What one `ingest` (or `flush`) did. Counts use the reader's kinds: passed over
    "framing", "instruction", "acknowledgement", "header", "repeat" (the same serial with the
    same fact again); reported "unparsed", "duplicate" (a serial repeated with another fact),
    "out-of-order", "not reapplied" (an operation made on the ledger while the tail was
    read provisionally, which read a provisional fact the text then changed) and "correction"
    (a correction line that changed nothing, or has a note: docs/memory.md)."""
    committed: int                          # facts accepted into the store and its ledger
    passed_over: dict[str, int]             # kind -> count, every kind present
    reports: tuple[Report, ...]             # text not committed, with `factres parse`'s words
    facts: tuple[Fact, ...] = ()            # the facts committed, in serial order
    pending: int = 0                        # characters held (an incomplete fact or shape)
    # the correction lines applied, in arrival order (each with what it did)
    corrections: tuple[Applied, ...] = ()

    @property
    def reported(self) -> dict[str, int]:
        return dict(Counter(r.kind for r in self.reports))

    def to_json(self) -> dict:
        return {"committed": self.committed, "passed_over": dict(self.passed_over),
                "reports": [r.to_json() for r in self.reports], "pending": self.pending,
                "corrections": [c.to_json() for c in self.corrections],
                "serials": [self.facts[0].serial, self.facts[-1].serial] if self.facts else None}


@dataclass(frozen=True)
class Answer:
    """A memory's answer: the string, why it is empty, how sure it is, and the winning path
    (each hop's serial, line and ledger status) with its score terms. `contested`: the path
    reads a cell whose competing values the ledger holds open (`alternatives`, `contests`; the
    confidence is then at most "low"); `history`: what a history cue of the question read
    ("previous", "as of serial N": which versions; docs/history.md)."""
    text: str                               # the answer ("" when none)
    question: str                           # the question found in the prompt
    reason: str = ""                        # why `text` is empty, else ""
    confidence: Confidence = field(default_factory=lambda: Confidence(NONE, ("no answer",)))
    path: tuple[Hop, ...] = ()              # the winning path, hop by hop
    score: float | None = None              # the winner's score (None: no winner)
    terms: tuple[tuple[str, float], ...] = ()   # its parts
    prediction: Prediction | None = None    # what a run records (traces.jsonl) for it
    contests: tuple[Contest, ...] = ()      # the contested cells the path reads, in path order
    history: HistoryRead | None = None      # what a history cue read (None: no cue)

    @property
    def contested(self) -> bool:
        """Whether the path reads a contested cell (until a check or a resolve settles it)."""
        return bool(self.contests)

    @property
    def alternatives(self) -> tuple[str, ...]:
        """The values that compete with the ones the path took, in path order, each once."""
        return contested_values(self.contests)

    def to_json(self) -> dict:
        return {"text": self.text, "question": self.question, "reason": self.reason,
                "confidence": self.confidence.to_json(),
                "path": [h.to_json() for h in self.path],
                "score": None if self.score is None else round(self.score, 6),
                "terms": [[k, round(v, 6)] for k, v in self.terms],
                "contested": self.contested, "alternatives": list(self.alternatives),
                "contests": [c.to_json() for c in self.contests],
                "history": None if self.history is None else self.history.to_json()}


def _text_of(chunk) -> str:
    """The chunk as text; InputError for anything but str or UTF-8 bytes."""
    if isinstance(chunk, (bytes, bytearray, memoryview)):
        data = bytes(chunk)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"a chunk is not UTF-8: byte 0x{data[exc.start]:02x} at offset "
                             f"{exc.start}", expected="text (str), or UTF-8 bytes") from None
    if not isinstance(chunk, str):
        raise InputError(f"a chunk must be text, not {type(chunk).__name__}",
                         expected="text (str), or UTF-8 bytes")
    try:
        chunk.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"a chunk is not valid Unicode text: lone surrogate "
                         f"{chunk[exc.start]!r} at offset {exc.start}",
                         expected="text that UTF-8 can encode") from None
    return chunk


class Memory:
    """A FactConsolidation memory: `ingest` text, `query` questions, `reset` to empty.

    `Memory()` lives in its process; `Memory.open(path)` is a memory kept in a file, the same
    memory each time it is opened (see `open`). `plan_sets` are the live plan sets a query
    compiles ("rules", "lexicon", as `factres run --plans live:NAME`), `mode` the resolver
    ("search", or "plain" latest-wins execution); both may be overridden per query, and neither
    is stored in a file: they are given at each open. `copy.copy`, `copy.deepcopy` and
    `pickle` give an independent memory that answers, and reads the rest of the text, as this
    one would (refused for a memory kept in a file: open the file again)."""

    def __init__(self, plan_sets: tuple[str, ...] | str = LIVE_SETS, mode: str = "search"
                 ) -> None:
        plan_sets = _plan_sets(plan_sets)
        self._check(plan_sets, mode)
        self.plan_sets, self.mode = plan_sets, mode
        self._lock = threading.RLock()
        self._record: Record = InMemoryRecord()
        self._closed = False
        self._empty()

    @classmethod
    def open(cls, path: str | os.PathLike, *, readonly: bool = False,
             plan_sets: tuple[str, ...] | str = LIVE_SETS, mode: str = "search",
             timeout: float = 5.0, fsync: bool = False) -> "Memory":
        """The memory kept in the SQLite file `path`, created when no file is there: the same
        memory it was when last written (it reads on from where the text stopped, and its
        ledger, answers and traces are those of a memory never closed). Each `ingest` and
        `flush` is one transaction: when it returns, what it committed is in the file.

        Args:
            path: the memory file (its folder must exist).
            readonly: read only: no writer lock, every write refused, and each read sees the
                writers' new commits.
            plan_sets: as `Memory()`; given at each open, never stored.
            mode: as `Memory()`; given at each open, never stored.
            timeout: seconds to wait for another process's writer lock before giving up.
            fsync: sync each commit to the disk (SQLite's synchronous=FULL), so a commit
                survives a power loss too; by default a commit survives a crash of the process.

        Raises:
            MemoryFileError: a missing folder, a file locked by another writer
                (`MemoryLockedError`, naming its pid), a file that is no factres memory, of a
                newer schema, damaged or truncated, a read-only file opened for writing.
        """
        memory = cls(plan_sets, mode)
        # sqlite3 is loaded by a memory kept in a file only
        from resolver.store.memory_file import MemoryFile
        memory._record = MemoryFile(path, readonly=readonly, timeout=timeout, fsync=fsync)
        try:
            memory._load()
        except BaseException:
            memory._record.close()
            raise
        return memory

    @staticmethod
    def _check(plan_sets, mode) -> None:
        names = tuple(s.removeprefix("live:") for s in plan_sets)
        unknown = [s for s in names if s not in LIVE_SETS]
        if unknown or not names:
            raise InputError(f"unknown live plan set {unknown[0]!r}" if unknown
                             else "no plan set named", expected=f"some of {', '.join(LIVE_SETS)}")
        if mode not in MODES:
            raise InputError(f"unknown mode {mode!r}", expected=" or ".join(MODES))

    # ---- state -------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget everything: an empty store, ledger and reader. Refused for a memory kept in a
        file (delete the file, or open a new one)."""
        with self._lock:
            self._usable(write=True)
            if self._record.lasting:
                raise MemoryFileError("reset() is refused for a memory kept in a file",
                                      path=self._record.path, expected="a new file (or this "
                                      "one deleted once closed), opened with Memory.open")
            self._empty()

    def _empty(self) -> None:
        store = self._store = FactStore()
        store.ledger                       # from now on every extend accepts into it
        # The reader looks facts up in the store, not through the memory: a bound method
        # would tie the memory and its reader in a cycle, and a dropped memory (a server
        # evicting it) would wait for the cyclic collector instead of being freed at once.
        self._reader = FactReader(functools.partial(_by_serial, store))
        self._held = b""                   # an incomplete UTF-8 sequence between chunks
        # The last facts of the store that are the tail read provisionally (not committed
        # for good), and whether they are up to date with the reader.
        self._provisional: list[Fact] = []
        self._viewed = True
        # Operations a take-back could not do again, reported by the next ingest or flush.
        self._unapplied: list[Report] = []
        # What the record holds: the store's first facts and the log's first operations (a
        # take-back lowers them), and whether a read changed the state since (a query's view
        # of the tail).
        self._saved_facts = self._saved_operations = 0
        self._changed = False
        self._snapshot: dict | None = None     # the last state stored whole (reader_state.py)

    def _load(self) -> None:
        """The state the record holds (see `Memory.open`)."""
        saved = self._record.load()
        self._empty()
        try:
            store = self._store = FactStore.replayed(saved.entries)
            self._reader = FactReader(functools.partial(_by_serial, store))
            state = saved.state
            if state is not None:
                if "replay" in state:            # its pending text is read again
                    reader_state.replayed(self._reader, state,
                                          self._record.bodies(state["replay"]["after"]),
                                          _complete_utf8)
                    self._snapshot = state["replay"]
                else:
                    self._reader.restore(state["reader"])
                    self._snapshot = reader_state.snapshot(state, saved.arrival)
                self._held = bytes.fromhex(state["held"])
                count = state["provisional"]
                self._provisional = store.since(len(store) - count) if count else []
                self._viewed = state["viewed"]
                self._unapplied = [Report(**r) for r in state["unapplied"]]
        except (ValueError, KeyError, TypeError, ProvenanceError) as exc:
            from resolver.store.memory_file import REMEDY
            raise MemoryFileError(f"is damaged: its state cannot be read ({exc})",
                                  path=self._record.path, expected=REMEDY) from None
        self._saved_facts, self._saved_operations = len(store), store.ledger.logged

    def _state(self) -> dict:
        """The memory's own state, as a record keeps it (JSON values)."""
        return {"reader": self._reader.state(), "held": self._held.hex(),
                "provisional": len(self._provisional), "viewed": self._viewed,
                "unapplied": [r.to_json() for r in self._unapplied]}

    def _save(self, kind: str, body: str | bytes | None) -> None:
        """One commit of what changed since the last (nothing to do in process). When it
        fails, the memory goes back to what the record holds, the state before, and the
        error is raised."""
        record = self._record
        if not record.lasting:
            return
        store = self._store
        state, whole = reader_state.stored(self._state(), self._snapshot, kind == ERASURE)
        change = Change(kind, body, store.since(self._saved_facts), store.ledger,
                        self._saved_operations, state)
        try:
            arrival = record.commit(change)
        except BaseException:
            self._load()
            raise
        if whole:
            self._snapshot = reader_state.snapshot(state, arrival)
        self._saved_facts, self._saved_operations = len(store), store.ledger.logged
        self._changed = False

    def _usable(self, write: bool) -> None:
        """Refuse a closed memory, and a write to one opened read-only; a reader takes the
        writers' new commits first."""
        record = self._record
        if self._closed:
            raise MemoryFileError("the memory is closed", path=record.path,
                                  expected="Memory.open(path) again" if record.lasting
                                  else "a new Memory()")
        if record.readonly:
            if write:
                raise MemoryFileError("is open read-only: ingest, flush, forget and reset are "
                                      "refused", path=record.path,
                                      expected="Memory.open(path) without readonly=True")
            if record.changed():
                self._load()

    @property
    def path(self) -> str | None:
        """The memory's file (None in process)."""
        return self._record.path

    @property
    def readonly(self) -> bool:
        return self._record.readonly

    def close(self) -> None:
        """Write what changed since the last commit (operations applied to `ledger`, a query's
        view of the tail) and release the file and its writer lock; the memory is then
        unusable. In process, the memory is only marked closed. Idempotent."""
        with self._lock:
            if self._closed:
                return
            try:
                record = self._record
                if record.lasting and not record.readonly and (
                        self._changed or self._store.ledger.logged != self._saved_operations):
                    self._save(OPERATIONS, None)
            finally:
                self._record.close()
                self._closed = True

    def forget(self, entity: str) -> Erasure:
        """Erase `entity`, for privacy (see `resolver.memory.erasure`): every version of its
        keys, every fact whose text names it and its name in every text kept; the store and
        ledger are rebuilt without them (the operation log replayed), and a memory kept in a
        file is rewritten so that the bytes are gone (VACUUM, the -wal file emptied), leaving a
        tombstone in its log that says an erasure happened (counts only). The provisional tail
        is read again afterwards, its name replaced. ProvenanceError when the memory never
        names the entity."""
        with self._lock:
            self._usable(write=True)
            if self._provisional:
                self._take_back(len(self._provisional))
                self._provisional, self._viewed = [], False
            names = erasure.spellings(self._store, entity)
            target, found = norm(entity), erasure.pattern(names)
            facts = list(self._store)
            gone = {id(f) for f in facts
                    if norm(f.subject) == target or norm(f.object) == target
                    or found.search(f.text)}
            logged = self._store.ledger.operations()
            keep = [i for i, o in enumerate(logged) if not erasure.erased(o, target, found, gone)]
            refused: list = []
            ledger = Ledger.replay([logged[i] for i in keep], refused=refused)
            if refused:                    # they read what was erased: they go with it
                dropped = {id(o) for o, _ in refused}
                keep = [i for i in keep if id(logged[i]) not in dropped]
            kept = [f for f in facts if id(f) not in gone]
            store = self._store = FactStore(kept, ledger)
            state = erasure.redact_json(self._state(), found)
            self._reader = FactReader(functools.partial(_by_serial, store))
            self._reader.restore(state["reader"])
            self._unapplied = [Report(**r) for r in state["unapplied"]]
            counts = {"facts": len(facts) - len(kept), "operations": len(logged) - len(keep)}
            chunks = [0]

            def redact(text: str) -> str:
                out, n = found.subn(erasure.MARK, text)
                chunks[0] += bool(n)
                return out

            arrival, compacted = self._record.erase(keep, kept, ledger, state, redact, counts)
            self._snapshot = reader_state.snapshot(state, arrival)
            self._saved_facts, self._saved_operations = len(kept), ledger.logged
            self._changed = False
            return erasure.Erasure(counts["facts"], counts["operations"], chunks[0], compacted)

    def info(self) -> dict:
        """What the memory holds: facts committed and provisional, keys, operations by kind,
        characters pending; for a memory kept in a file also its path, size in bytes (with the
        -wal and -shm files), schema version and commits (`Record.info`). The counts are what
        a query reads: the tail's facts, as a query reads them provisionally, whether or not
        one was asked (verification U17: before, "0 provisional" until something was asked);
        info itself changes nothing."""
        with self._lock:
            self._usable(write=False)
            ledger = self._store.ledger
            extra, keys = self._unviewed()
            counts = ledger.operation_counts()
            if extra:
                counts[ACCEPT] = counts.get(ACCEPT, 0) + extra
            return {**self._record.info(),
                    "facts": len(self._store) - len(self._provisional),
                    "provisional": len(self._provisional) + extra,
                    "keys": ledger.key_count + keys, "versions": len(ledger) + extra,
                    "operations": ledger.logged + extra,
                    "operations_by_kind": dict(sorted(counts.items())),
                    "pending": len(self._reader.tail)}

    def _unviewed(self) -> tuple[int, int]:
        """(facts, new keys) that a query's view of the tail (`_view`) would add to the store
        now: each fact one accept, one version. When the tail changed under a provisional
        fact, the view is taken, as a query takes it (rare: see `_take_back`)."""
        if self._viewed:
            return 0, 0
        wanted, have = self._reader.provisional(), self._provisional
        if wanted[:len(have)] != have:
            self._view()
            return 0, 0
        ledger = self._store.ledger
        keys = {(norm(f.subject), f.relation) for f in wanted[len(have):]}
        return len(wanted) - len(have), sum(1 for key in keys if not ledger.history(key))

    def text(self) -> str:
        """The text ingested so far, every chunk joined in arrival order, as the file keeps it
        (a server compares it with a resent conversation). In process: "" (nothing kept)."""
        with self._lock:
            self._usable(write=False)
            return self._record.text()

    def log(self) -> list[LogEntry]:
        """The operation log in arrival order, each operation with the commit that wrote it
        (its arrival index and time; in process, the chunk is -1 and the time empty), and for
        a memory kept in a file the erasures (`forget`) where they happened."""
        with self._lock:
            self._usable(write=False)
            if self._record.lasting:
                return list(self._record.log())
            facts = {id(f) for f in self._store}
            return [LogEntry(seq, -1, "", op, op.op == ACCEPT and id(op.evidence) in facts)
                    for seq, op in enumerate(self._store.ledger.operations())]

    def backup(self, destination) -> None:
        """Copy the memory's file to `destination` (a new file) as one consistent snapshot,
        while writers go on (SQLite's backup API): the way to copy a live memory. Refused in
        process (nothing to copy: open a file) and onto a file that exists."""
        with self._lock:
            self._usable(write=False)
            if not self._record.lasting:
                raise MemoryFileError("an in-process memory has no file to back up",
                                      expected="a memory opened with Memory.open(path)")
            self._record.backup(destination)

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def store(self) -> FactStore:
        """The store as a query sees it: every committed fact, and the tail provisionally."""
        with self._lock:
            self._usable(write=False)
            self._view()
            return self._store

    @property
    def ledger(self) -> Ledger:
        """The store's provenance ledger, the provisional tail included; an operation applied
        to it is recorded in the operation log (`Ledger.operations`) and, for a memory kept in
        a file, written by the next commit (ingest, flush or close)."""
        return self.store.ledger

    @property
    def tail(self) -> str:
        """Text held until it is known to be complete (see the module docstring)."""
        with self._lock:
            self._usable(write=False)
            return self._reader.tail

    def history(self, entity: str, relation: str | None = None
                ) -> dict[str, tuple[Version, ...]]:
        """relation -> every version of (entity, relation), oldest first (`FactStore.history`)."""
        with self._lock:
            self._usable(write=False)
            self._view()
            return self._store.history(entity, relation)

    def frontier(self, relation: str | None = None) -> list[tuple[str, Version]]:
        """(subject, head) of every key: the current values (`FactStore.frontier`)."""
        with self._lock:
            self._usable(write=False)
            self._view()
            return self._store.frontier(relation)

    # ---- copies and pickles ------------------------------------------------------------------
    def __getstate__(self) -> dict:
        """What a copy or a pickle holds: a snapshot of the whole state (store, ledger, reader,
        held bytes and tail) taken under the lock, so another thread's ingest never lands
        halfway into it; not the lock (each memory has its own). `copy.copy`, `copy.deepcopy`
        and `pickle` all come through here: the one place a memory that cannot be copied (one
        backed by a file) refuses."""
        with self._lock:
            # a memory kept in a file is the file's: a copy or a pickle would be a second writer
            if self._record.lasting:
                raise MemoryFileError("a memory kept in a file cannot be copied or pickled",
                                      path=self._record.path,
                                      expected="Memory.open(path) again (readonly=True for "
                                      "another reader), or factres memory backup for a copy "
                                      "of the file")
            state = {name: value for name, value in self.__dict__.items() if name != "_lock"}
            # pickled at once, not handed to the caller's pickler to walk after the lock is
            # released; a pickle round trip is also twice as fast as copy.deepcopy here
            return {"memory": pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(pickle.loads(state["memory"]))
        self._lock = threading.RLock()

    def __copy__(self) -> Memory:
        """An independent memory, as `copy.deepcopy` makes: a copy sharing the store and the
        reader would ingest into the original."""
        return self.__deepcopy__({})

    def __deepcopy__(self, memo: dict) -> Memory:
        twin = type(self).__new__(type(self))
        memo[id(self)] = twin
        twin.__setstate__(self.__getstate__())
        return twin

    # ---- writing -----------------------------------------------------------------------------
    def ingest(self, chunk: str | bytes) -> IngestResult:
        """Read a chunk of any size: commit every fact it completes, and report every piece it
        completes that is not committed. A raw text may be cut anywhere; between memorize
        frames see docs/memory.md (the harness cuts between sentences). A chunk that is not
        text, or not UTF-8, raises InputError and changes nothing. Bytes may end inside a
        character: the next chunk must then be bytes that begin with the rest of it (a str
        chunk is refused until they come). A piece's report comes back from the call that
        completes it, which may be a later call than the one that brought its text. For a
        memory kept in a file, one transaction: the chunk, the operations and the reader's
        state are in the file when it returns (MemoryFileError, with the memory and the file
        as they were before, when it cannot be written)."""
        with self._lock:
            self._usable(write=True)
            if isinstance(chunk, (bytes, bytearray, memoryview)):
                body = data = bytes(chunk)
                data = self._held + data
                cut = _complete_utf8(data)
                text, held = _text_of(data[:cut]), data[cut:]
                kind = BYTES
            else:
                if self._held:
                    raise InputError(
                        f"a str chunk after a bytes chunk that ended inside a character (byte(s) "
                        f"{_hex(self._held)} held): the rest of that character must come first",
                        expected="bytes that complete the character, then any chunks")
                body = text = _text_of(chunk)
                held, kind = b"", TEXT
            batch = self._reader.feed(text)     # all or nothing: on failure nothing is held
            self._held = held
            result = self._apply(batch)
            self._save(kind, body)
            return result

    def flush(self) -> IngestResult:
        """Commit the held tail as complete (the end of the text, for now). Bytes that began a
        character which never came whole are reported and dropped."""
        with self._lock:
            self._usable(write=True)
            held, self._held = self._held, b""
            result = self._apply(self._reader.flush())
            self._save(FLUSH, None)
            if held:
                # after the tail, on a line of its own in the canonical layout
                dangling = Report(UNPARSED, self._reader.lines + 1, _hex(held),
                                  f"the text ends inside a UTF-8 character (byte(s) "
                                  f"{_hex(held)} with no continuation): dropped")
                result = dataclasses.replace(result, reports=result.reports + (dangling,))
            return result

    def _apply(self, batch) -> IngestResult:
        """Commit a batch read for good. Provisional facts it confirms are already in the
        store; one it contradicts is taken back first (with every provisional fact after it).
        Correction lines are applied in their place among the facts (`_correct`)."""
        facts = batch.facts
        applied: tuple[Applied, ...] = ()
        notes: list[Report] = []
        if batch.corrections:
            if self._provisional:
                self._take_back(len(self._provisional))
                self._provisional = []
            applied = self._correct(facts, batch.corrections, notes)
        elif self._provisional:
            same = 0
            for real, seen in zip(facts, self._provisional):
                if real != seen:
                    break
                same += 1
            wrong = self._provisional[same:] if same < len(facts) else []
            if wrong:
                self._take_back(len(wrong))
            self._provisional = [] if wrong else self._provisional[same:]
            self._store.extend(facts[same:])
        else:
            self._store.extend(facts)
        self._viewed = False
        passed = {kind: batch.passed.get(kind, 0) for kind in PASSED_KINDS}
        own = sorted(batch.reports + notes, key=_line_of) if notes else batch.reports
        reports = tuple(self._unapplied) + tuple(own)
        self._unapplied = []
        return IngestResult(len(facts), passed, reports, tuple(facts), len(self._reader.tail),
                            applied)

    def _correct(self, facts: list[Fact], corrections: list[Correction],
                 notes: list[Report]) -> tuple[Applied, ...]:
        """Commit `facts` with each correction applied after the facts of the lines before it
        (resolver.store.operations); what a correction changes nothing by, or notes, goes in
        `notes` as a "correction" report."""
        done = commit(self._store, facts, corrections)
        notes += [Report(CORRECTION, a.line, a.text, a.note, a.serial) for a in done if a.note]
        return tuple(done)

    def apply(self, patch: dict | Patch) -> Applied:
        """Apply one operation to the memory's ledger, in P-Mem's patch form: a dict with `op`
        (accept, reject, contest, revoke, resolve, noop), `key` (`{"subject": ...,
        "relation": ...}`, or a fact sentence the grammar reads, whose object is the
        new_value when none is given), `old_value`, `new_value`, `evidence` (its text) and
        `hard_commit`. The version it writes is seen by questions and the search as a fact
        line's is, with the next serial and the evidence text; for a memory kept in a file it
        is in the operation log when this returns. The rules (docs/memory.md, "Corrections
        and operations"): old_value, when given, is the head's value; contest, revoke, reject
        and noop need a head; resolve names the head or an alternative of a contested key.

        Returns:
            `Applied`: the operation done, the key, the serial and the key's head afterwards.

        Raises:
            InputError: a patch of the wrong shape (naming the field), an unknown relation, a
                key sentence the grammar does not read.
            ProvenanceError: a patch that breaks a rule, with the reason (nothing changed),
                unless `hard_commit` is true: it is then applied as an accept of new_value.
        """
        checked = read_patch(patch)
        with self._lock:
            self._usable(write=True)
            self._view()
            applied = apply_patch(self._store, checked, next_serial(self._store))
            self._save(OPERATIONS, None)
            return applied

    def _view(self) -> None:
        """Bring the provisional facts up to date with the tail (see the module docstring)."""
        if self._viewed:
            return
        wanted = self._reader.provisional()
        have = self._provisional
        same = 0
        for a, b in zip(wanted, have):
            if a != b:
                break
            same += 1
        if same < len(have):
            self._take_back(len(have) - same)
        if same < len(wanted):
            self._store.extend(wanted[same:])
            self._changed = True
        self._provisional = wanted
        self._viewed = True

    def _take_back(self, count: int) -> None:
        """Drop the store's last `count` facts (provisional ones the text has changed): the
        store is append-only, so it is built again without them, and its ledger is replayed
        from the operation log without their accepts, so every other operation stays, in its
        order (a revoke made while the tail was provisional is kept). An operation that no
        longer applies without them (a revoke of a provisional head that was its key's only
        version) is reported by the next ingest or flush. Rare: only a query that came while
        the tail ended inside an object holding a full stop ("... city of St.")."""
        facts = list(self._store)
        kept = facts[:len(facts) - count]
        gone = {id(fact) for fact in facts[len(facts) - count:]}
        logged = self._store.ledger.operations()
        operations = [o for o in logged if not (o.op == ACCEPT and id(o.evidence) in gone)]
        # what a record holds past the first operation taken back is written again
        first = next(i for i, o in enumerate(logged) if o.op == ACCEPT and id(o.evidence) in gone)
        self._saved_operations = min(self._saved_operations, first)
        self._saved_facts = min(self._saved_facts, len(kept))
        self._changed = True
        refused: list[tuple[Operation, Exception]] = []
        store = self._store = FactStore(kept, Ledger.replay(operations, refused=refused))
        self._reader.rebind(functools.partial(_by_serial, store))
        for operation, error in refused:
            ev = operation.evidence
            self._unapplied.append(Report(
                NOT_REAPPLIED, ev.line if ev else 0, ev.text if ev else "",
                f"{operation.op} on {show_key(operation.key)} read a provisional fact the text "
                f"then changed, and no longer applies without it: {error}",
                ev.serial if ev else None))

    # ---- reading -----------------------------------------------------------------------------
    def query(self, prompt: str, *, plan_sets: tuple[str, ...] | None = None,
              mode: str | None = None, abstain_below: str | None = None,
              qid: str = MEMORY_SOURCE, source: str = MEMORY_SOURCE) -> Answer:
        """Answer a bare question or a whole harness prompt (`harness.question_of` finds the
        question). The tail is read provisionally, never committed
        by a query (see the module docstring). An empty memory, a prompt without a question
        and an unanswerable question give an empty answer with the reason, never an exception;
        `abstain_below` ("low", "medium", "high") empties an answer labelled below it.
        `qid` and `source` name the question in `Answer.prediction`, as a run would."""
        if not isinstance(prompt, str):
            raise InputError(f"a query must be text, not {type(prompt).__name__}",
                             expected="a question or a harness prompt (str)")
        sets = self.plan_sets if plan_sets is None else _plan_sets(plan_sets)
        mode = self.mode if mode is None else mode
        self._check(sets, mode)
        if abstain_below is not None:
            try:
                rank(abstain_below)
            except ValueError as exc:
                raise InputError(str(exc)) from None
        question = harness.question_of(prompt)
        with self._lock:
            self._usable(write=False)
            self._view()
            if not len(self._store) and not len(self._store.ledger):
                return Answer("", question, NOTHING_INGESTED)
            if not question:
                return Answer("", question, NO_QUESTION)
            q = Question(qid, source, 0, question, "unknown", "unknown", "")
            compiled = compile_live(question, self._store,
                                    tuple(s.removeprefix("live:") for s in sets))
            resolve = resolve_question if mode == "search" else resolve_question_plain
            prediction = resolve(q, self._store, compiled)
        return _answer(prediction, abstain_below)

    def readout(self, question: str | None = None, *, disclose: tuple[str, ...] | str = (),
                budget: int | None = None, mode: str | None = None) -> str:
        """The memory's state for one question as short text for a language model to read:
        one line per cell (`[#serial] subject | relation = value`, the fields escaped), the
        winning path's cells first, then the rival paths' cells in rank order; then, for each
        `disclose` mode asked ("history", "alternatives", "support"), the same cells' older
        versions (with where the rest of the path leads from each), the other parties of a
        contested key, the evidence lines. The line format and the ranking are in
        docs/readout.md.

        Args:
            question: a bare question or a whole harness prompt, as `query` takes; None: the
                whole frontier, one line per key.
            disclose: the disclosure modes, in the order their sections come.
            budget: at most this many characters (with a question, default 600; with none,
                no limit); whole lines are kept in rank order, and a budget shorter than the
                first line gives that line cut, ending with "…".
            mode: "search" or "plain" (the plain path), as `query`; default the memory's.

        Returns:
            The text, lines joined by line breaks ("" for an empty memory or a prompt without
            a question). A question no path answers gives the frontier lines that share its
            words, each marked "shares words"; never an exception.

        Raises:
            InputError: a budget below 1 or not an integer, an unknown disclosure mode (the
                three are named), an unknown mode, a question that is not text.
        """
        disclose, budget = check_readout(disclose, budget)
        with self._lock:
            if question is None:
                return render_readout(self.store, None, disclose=disclose, budget=budget)
            prediction = self.query(question, mode=mode).prediction
            if prediction is None:
                return ""
            return render_readout(self._store, prediction, disclose=disclose, budget=budget)


def _plan_sets(plan_sets) -> tuple[str, ...]:
    """A single name stands for itself ("rules" is ("rules",), not ("r", "u", ...))."""
    if isinstance(plan_sets, str):
        return (plan_sets,)
    try:
        names = tuple(plan_sets)
    except TypeError:
        raise InputError(f"plan_sets must be names, not {type(plan_sets).__name__}",
                         expected=f"a name or a tuple of names, of {', '.join(LIVE_SETS)}") from None
    if not all(isinstance(n, str) for n in names):
        raise InputError("plan_sets must be names (str)",
                         expected=f"a name or a tuple of names, of {', '.join(LIVE_SETS)}")
    return names


def _line_of(report: Report) -> int:
    return report.line


def _hex(data: bytes) -> str:
    return " ".join(f"0x{b:02x}" for b in data)


def _by_serial(store: FactStore, serial: int) -> Fact | None:
    """The stored fact with this serial (the reader asks only when a serial repeats or comes
    out of order)."""
    return next((f for f in store if f.serial == serial), None)


def _answer(prediction: Prediction, abstain_below: str | None) -> Answer:
    winner = prediction.winner
    confidence = prediction.confidence or Confidence(NONE, ("no answer",))
    text, reason = prediction.answer, prediction.reason
    if text and below(confidence, abstain_below):
        text, reason = "", abstention(confidence, abstain_below)
    return Answer(text, prediction.question, reason, confidence,
                  winner.hops if winner else (), winner.score if winner else None,
                  winner.terms if winner else (), prediction, prediction.contests,
                  prediction.history)


def _complete_utf8(data: bytes) -> int:
    """Where the last complete UTF-8 character of `data` ends: a sequence cut short at the end
    waits for the next chunk (an invalid byte elsewhere is left for the decoder to refuse)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:                        # a lead byte or ASCII
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else \
                3 if byte >> 4 == 0b1110 else 4 if byte >> 3 == 0b11110 else 1
            return len(data) - back if need > back else len(data)
    return len(data)
