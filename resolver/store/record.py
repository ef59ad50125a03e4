"""`Record`: where a memory's state lasts, behind one small interface, and `InMemoryRecord`, the
record of a memory that lives only in its process (`memory_file.MemoryFile` is the other one, a
SQLite file).

A memory's state is three things: the store's facts in arrival order, the ledger's operation
log (`Ledger.operations`, from which `Ledger.replay` rebuilds the ledger exactly) and the
memory's own state (its reader's pending text, held bytes, frame and serial state: a JSON
object the record stores as it is and never reads). The memory hands a record each ingest as
one `Change` (`commit`) and takes its state back with `load`; it never knows which record it
holds, nor do the CLI and the server. Evidence (each chunk's text as it came) is what a lasting
record keeps besides; the in-memory record keeps nothing (the memory's own objects are its
state), so an in-process memory costs what it cost before.

The interface, for what builds on it (corrections that apply typed operations, a readout): a
commit carries every operation of the log since the last one, whatever its kind, so an
operation applied to the ledger is recorded by the next commit; `log` gives the record back in
arrival order."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from resolver.store.provenance import Ledger, Operation
from resolver.text.facts import Fact

# What a commit brings (`Change.kind`): a chunk of text or bytes ingested, the end of the text
# (flush), operations only (the ledger changed with no text: a close, a correction), an erasure.
TEXT, BYTES, FLUSH, OPERATIONS, ERASURE = "text", "bytes", "flush", "operations", "erasure"
KINDS = (TEXT, BYTES, FLUSH, OPERATIONS, ERASURE)


@dataclass(frozen=True)
class Saved:
    """A memory's state as a record gives it back (`Record.load`)."""
    # The operation log, in arrival order: a Fact stands for the accept of that fact of the
    # store (`FactStore.replayed` builds the store and ledger from it), an Operation for any
    # other operation.
    entries: list[Fact | Operation]
    state: dict | None                     # the memory's own state; None: nothing saved yet
    arrival: int = -1                      # the last commit's arrival index (-1: none)


@dataclass(frozen=True)
class Change:
    """One commit: what came in (`kind`, `body`) and what the record does not hold yet: the
    operation log from entry `operations_from` on (a take-back lowers it below what the record
    holds, which then drops what it held past it) and, among those, the accepts of the store's
    new facts (`facts`, in order: the record keeps them as facts), and the memory's state."""
    kind: str                              # one of KINDS
    body: str | bytes | None               # the chunk as it came (TEXT, BYTES), else None
    facts: Sequence[Fact]                  # the store's facts accepted from operations_from on
    ledger: Ledger                         # its log is the operation log
    operations_from: int
    state: dict


@dataclass(frozen=True)
class LogEntry:
    """One entry of the log as a record lists it (`Record.log`): an operation, where it stands
    in the log, the commit that wrote it and that commit's time; or an erasure's tombstone
    (`erased`: what it removed, counts only, never the content)."""
    seq: int | None                        # its place in the log, from 0 (None: a tombstone)
    chunk: int                             # the arrival index of the commit that wrote it
    time: str                              # that commit's time (UTC, ISO 8601)
    operation: Operation | None
    fact: bool = False                     # the accept of a fact of the store, as it arrived
    erased: dict | None = None             # a tombstone: {"facts": n, "operations": n, ...}

    def to_json(self) -> dict:
        if self.operation is None:
            return {"seq": None, "chunk": self.chunk, "time": self.time, "op": ERASURE,
                    "erased": dict(self.erased or {})}
        op = self.operation
        evidence = op.evidence
        return {"seq": self.seq, "chunk": self.chunk, "time": self.time, "op": op.op,
                "key": list(op.key), "value": op.value, "fact": self.fact,
                "serial": evidence.serial if evidence is not None else None,
                "line": evidence.line if evidence is not None else None,
                "text": evidence.text if evidence is not None else None}

    def erased_text(self) -> str:
        """A tombstone in words."""
        return ", ".join(f"{count} {what} erased" for what, count in (self.erased or {}).items())


class Record(ABC):
    """Where a memory's state lasts (see the module docstring)."""

    path: str | None = None                # the file, for a record that has one
    readonly: bool = False
    lasting: bool = False                  # whether a commit outlives the process

    @abstractmethod
    def load(self) -> Saved:
        """The state of the last commit."""

    @abstractmethod
    def commit(self, change: Change) -> int:
        """Write `change` whole, or nothing (the error says why); returns its arrival index."""

    def bodies(self, after: int) -> list[tuple[str, str | bytes | None]]:
        """(kind, body) of every commit after the arrival index `after`, in order."""
        return []

    def changed(self) -> bool:
        """Whether another process committed since the last `load` (a reader loads again)."""
        return False

    def log(self) -> Iterator[LogEntry]:
        """Every operation recorded, in arrival order."""
        return iter(())

    def info(self) -> dict:
        """Counts and sizes, for `factres memory info`."""
        return {}

    def text(self) -> str:
        """The text of every chunk ingested, joined in arrival order (what a record keeps as
        evidence; the in-memory record keeps none)."""
        return ""

    def backup(self, destination) -> None:
        """Copy the record to the new file `destination`, consistently."""
        raise NotImplementedError

    def erase(self, keep: Sequence[int], facts: Sequence[Fact], ledger: Ledger, state: dict,
              redact: Callable[[str], str], erased: dict) -> tuple[int, bool]:
        """Rewrite the record without what an erasure removed (`Memory.forget`): the log is
        `ledger`'s (the operations kept, `keep`: their places in the old log, in order;
        `facts`: the store's facts among them), every text kept is passed through `redact`, a
        tombstone holding `erased` (counts) is written, and the bytes removed are gone from
        the storage. Returns (the tombstone's arrival index, whether the bytes are gone:
        False when a reader still holds old pages)."""
        return -1, True

    def close(self) -> None:
        """Release what the record holds (a file, its writer lock). Idempotent."""


class InMemoryRecord(Record):
    """The record of an in-process memory: the memory's own objects are its state, so a commit
    writes nothing and there is nothing to load."""

    def load(self) -> Saved:
        return Saved([], None)

    def commit(self, change: Change) -> int:
        return -1
