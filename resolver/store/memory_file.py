"""`MemoryFile`: a memory's record in one SQLite file, through the standard library's sqlite3.

The file holds the evidence (each commit's chunk as it came, with its arrival index and time),
the operation log (one row per operation; the accept of a fact of the store carries the fact),
and the memory's own state after the last commit. Settings first (diskcache's way): the file is
marked as a factres memory (`application_id`) with its schema version (`user_version`, also in the
`settings` table), and a file of another kind or a newer version is refused, never misread.

Durability: WAL journal, one transaction per commit (`BEGIN IMMEDIATE` ... `COMMIT`), so a
process killed at any moment leaves the state of some whole commit. `synchronous=NORMAL` keeps a
commit through a crash of the process; `fsync=True` (`FULL`) through a power loss too, at the
cost of a sync per commit. A new file (and a backup) is made whole before it appears at its
path (new_file.py). One writer: `WriterLock` (writer_lock.py) for as long as the file is open
for writing; readers never take it and see each new commit on their next read
(`changed`, SQLite's `data_version`). The schema is in docs/memory.md."""
from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, Sequence

import orjson

from resolver._version import __version__
from resolver.errors import MemoryFileError
from resolver.store.fact_store import norm
from resolver.store.provenance import ACCEPT, Evidence, Ledger, Operation
from resolver.store.record import (BYTES, ERASURE, KINDS, TEXT, Change, LogEntry, Record,
                                   Saved)
from resolver.store.new_file import make_whole, remove_leftover
from resolver.store.writer_lock import WriterLock
from resolver.text.facts import Fact

SCHEMA_VERSION = 1
APPLICATION_ID = 0x66616374           # "fact"
MAGIC = b"SQLite format 3\x00"
SIDE_FILES = ("-wal", "-shm")         # SQLite's, beside the file while it is open
DEFAULT_TIMEOUT = 5.0                 # seconds a second writer waits for the first
REMEDY = "a backup of it (factres memory backup DB DEST makes one while it is sound)"

_SCHEMA = """
CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE chunks (
    arrival INTEGER PRIMARY KEY,       -- the commit's arrival index, from 0
    kind TEXT NOT NULL,                -- text, bytes, flush, operations, erasure
    time TEXT NOT NULL,                -- UTC, ISO 8601
    body                               -- the chunk as it came (TEXT, a BLOB for bytes), or NULL
);
CREATE TABLE operations (
    seq INTEGER PRIMARY KEY,           -- its place in the operation log, from 0
    chunk INTEGER NOT NULL REFERENCES chunks (arrival),
    op TEXT NOT NULL,                  -- accept, reject, contest, revoke, resolve, noop
    subject TEXT,                      -- the accept of a fact of the store: the fact, whose
    relation TEXT,                     -- key is (subject normalised, relation), its value
    object TEXT,                       -- the object, its evidence the fact
    key TEXT,                          -- any other operation: its key (a JSON array)
    value TEXT,                        -- and its value (NULL for a revoke)
    serial INTEGER,                    -- the evidence (NULL: a resolve given none)
    line INTEGER,
    text TEXT,                         -- its text, or NULL when it is the chunk's own
    at INTEGER,                        -- text: characters [at, at + length) of the chunk's body
    length INTEGER
);
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    memory TEXT NOT NULL               -- the memory's own state after the last commit (JSON)
);
CREATE VIEW facts AS
    SELECT o.seq, o.chunk, o.serial, o.subject, o.relation, o.object, o.line,
           coalesce(o.text, substr(c.body, o.at + 1, o.length)) AS text
    FROM operations AS o JOIN chunks AS c ON c.arrival = o.chunk
    WHERE o.subject IS NOT NULL ORDER BY o.seq;
"""
_TABLES = {"settings", "chunks", "operations", "state"}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def check_path(path: Path, readonly: bool) -> bool:
    """Whether a file is there (False: a new memory). MemoryFileError, with nothing written, for
    a missing folder, a folder, a read-only file opened for writing, and a file that is no
    SQLite file, an empty one or one cut short (its header says how long it is)."""
    where = str(path)
    if not path.parent.is_dir():
        raise MemoryFileError(f"the folder {path.parent} does not exist", path=where,
                              expected="a path in an existing folder (create the folder first)")
    if path.is_dir():
        raise MemoryFileError("is a folder", path=where, expected="the path of a memory file")
    if not path.exists():
        if readonly:
            raise MemoryFileError("no memory file here", path=where,
                                  expected="a memory file (Memory.open(path) or factres memory "
                                  "ingest makes one)")
        if not os.access(path.parent, os.W_OK):
            raise MemoryFileError(f"cannot create a memory file: the folder {path.parent} is "
                                  "read-only", path=where, expected="a folder you may write in")
        return False
    if not readonly and not os.access(path, os.W_OK):
        raise MemoryFileError("is read-only", path=where,
                              expected="readonly=True (the read-only commands of factres memory "
                              "open it so), or write permission on the file")
    with open(path, "rb") as handle:
        head = handle.read(100)
    if not head:
        raise MemoryFileError("is empty, not a factres memory", path=where,
                              expected="a memory file, or a path where no file is yet")
    if len(head) < 100 or not head.startswith(MAGIC):
        raise MemoryFileError("is not an SQLite file, so not a factres memory", path=where,
                              expected="a memory file made by Memory.open or factres memory")
    short = _short_of_header(path)
    if short and not _has_wal(path):
        raise MemoryFileError(f"is truncated: {short}", path=where, expected=REMEDY)
    return True


def _short_of_header(path: Path) -> str | None:
    """"N bytes where its header says M" when the file's header says it is longer than it is;
    None when it is not (or the header gives no size)."""
    with open(path, "rb") as handle:
        head = handle.read(100)
    size = path.stat().st_size
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    # the header's page count holds when its version-valid-for number is the change counter's
    if len(head) == 100 and head[92:96] == head[24:28] and pages * page > size:
        return f"{size:,} bytes where its header says {pages * page:,}"
    return None


def _has_wal(path: Path) -> bool:
    """Whether a write-ahead log with frames is beside the file: the database is then the file
    and the log together, as SQLite reads them (a checkpoint cut short by a full disk leaves a
    file whose header counts pages that are still only in the log, verification U12)."""
    return _size(str(path) + "-wal") > 32            # 32 bytes: the log's header alone


class MemoryFile(Record):
    """The record of a memory in the SQLite file `path` (see the module docstring). Opens it
    for writing (the writer lock held until `close`), creating it when no file is there, or
    `readonly`. Every refusal is a MemoryFileError naming the path and what to do."""

    lasting = True

    def __init__(self, path: str | os.PathLike, *, readonly: bool = False,
                 timeout: float = DEFAULT_TIMEOUT, fsync: bool = False) -> None:
        self.path = str(path)
        self.readonly = readonly
        file = Path(path)
        exists = check_path(file, readonly)
        self._lock: WriterLock | None = None
        self._conn: sqlite3.Connection | None = None
        if exists:
            self._check_kind(file, readonly)
        if not readonly:
            self._lock = WriterLock(file, timeout)
        try:
            if not readonly:
                # the lock held: the path is made whole (new_file.py), or was made by another
                # writer meanwhile; what a creator killed earlier left beside it goes
                remove_leftover(file)
                if not exists and not check_path(file, readonly):
                    self._create(file, fsync)
                elif not exists:
                    self._check_kind(file, readonly)
            self._conn = self._connect(file, readonly, timeout, fsync)
            self._check_kind(file, readonly, self._conn)
            short = _short_of_header(file)
            if short:
                self._check_pages(short)
            self._version = self._data_version()
            self._arrivals = self._scalar("SELECT coalesce(max(arrival) + 1, 0) FROM chunks")
            self._logged = self._scalar("SELECT coalesce(max(seq) + 1, 0) FROM operations")
        except BaseException:
            self.close()
            raise

    # ---- opening -------------------------------------------------------------------------
    def _connect(self, file: Path, readonly: bool, timeout: float, fsync: bool
                 ) -> sqlite3.Connection:
        try:
            if readonly:
                conn = _read_only(file, timeout)
            else:
                conn = sqlite3.connect(file, timeout=timeout, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA synchronous = {'FULL' if fsync else 'NORMAL'}")
            conn.execute("PRAGMA foreign_keys = ON")
            return conn
        except sqlite3.Error as exc:
            raise self._error("cannot be opened", exc) from None

    def _check_kind(self, file: Path, readonly: bool, conn: sqlite3.Connection | None = None
                    ) -> None:
        """Refuse a file that is no factres memory, or one of a newer schema: read before any
        write (a connection of its own when none is open yet)."""
        own = conn is None
        wal = Path(self.path + "-wal")
        if own and not (wal.exists() and wal.stat().st_size):
            # No write-ahead log: the header holds the last commit's marks. Read from it, so
            # that SQLite makes no side file beside a file that is not ours.
            with open(file, "rb") as handle:
                head = handle.read(100)
            app = int.from_bytes(head[68:72], "big")
            version = int.from_bytes(head[60:64], "big")
            if app == APPLICATION_ID and version <= SCHEMA_VERSION:
                return                    # the tables are checked once the file is open
            tables = None
        else:
            try:
                if own:
                    conn = _read_only(file, DEFAULT_TIMEOUT)
                app = conn.execute("PRAGMA application_id").fetchone()[0]
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                tables = {r[0] for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")}
            except sqlite3.Error as exc:
                raise self._error("cannot be read", exc) from None
            finally:
                if own and conn is not None:
                    conn.close()
        if app != APPLICATION_ID:
            count = "" if tables is None else f", {len(tables)} table(s)"
            raise MemoryFileError(
                f"is an SQLite file but not a factres memory (application id {app}{count})",
                path=self.path,
                expected="a memory file made by Memory.open or factres memory; factres never "
                "writes into another database")
        if version > SCHEMA_VERSION:
            raise MemoryFileError(
                f"was written by a newer factres (memory schema version {version}; factres "
                f"{__version__} reads version {SCHEMA_VERSION})", path=self.path,
                expected="a newer factres (pip install -U factres)")
        if tables is not None and not _TABLES <= tables:
            raise MemoryFileError(f"is damaged: table(s) {', '.join(sorted(_TABLES - tables))} "
                                  "missing", path=self.path, expected=REMEDY)

    def _check_pages(self, short: str) -> None:
        """The file is shorter than its header says, with a write-ahead log beside it: sound
        when the log holds the pages the file lacks, which SQLite reads and checks
        (`quick_check`); else truncated."""
        try:
            found = [r[0] for r in self._conn.execute("PRAGMA quick_check").fetchall()]
        except sqlite3.Error as exc:
            found = [str(exc)]
        if found != ["ok"]:
            raise MemoryFileError(f"is truncated: {short}, and its write-ahead log does not "
                                  f"hold the rest ({found[0]})", path=self.path,
                                  expected=REMEDY)

    def _create(self, file: Path, fsync: bool) -> None:
        """A new empty memory at `file`, made whole before it appears there (new_file.py):
        never a file without its schema, whatever moment the process is killed at."""
        def initialise(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.executemany("INSERT INTO settings VALUES (?, ?)",
                             [("schema_version", str(SCHEMA_VERSION)),
                              ("created_by", f"factres {__version__}"),
                              ("created", _now())])
            conn.execute("COMMIT")

        try:
            make_whole(file, initialise, fsync)
        except sqlite3.Error as exc:
            raise self._error("cannot be created", exc) from None
        except OSError as exc:
            raise MemoryFileError(f"cannot be created: {exc.strerror or exc}", path=self.path,
                                  expected="a folder you may write in, with room on its disk"
                                  ) from None

    # ---- the record ----------------------------------------------------------------------
    def load(self) -> Saved:
        conn = self._conn
        try:
            conn.execute("BEGIN")                  # one snapshot: rows and state of one commit
            try:
                rows = conn.execute(
                    "SELECT seq, op, subject, relation, object, key, value, serial, line, text, "
                    "chunk, at, length FROM operations ORDER BY seq").fetchall()
                bodies = dict(conn.execute(
                    "SELECT arrival, body FROM chunks WHERE arrival IN "
                    "(SELECT DISTINCT chunk FROM operations WHERE at IS NOT NULL)"))
                state = conn.execute("SELECT memory FROM state WHERE id = 0").fetchone()
                arrival = conn.execute("SELECT coalesce(max(arrival), -1) FROM chunks"
                                       ).fetchone()[0]
            finally:
                conn.execute("COMMIT")
            self._version = self._data_version()
        except sqlite3.Error as exc:
            raise self._error("cannot be read", exc) from None
        entries: list[Fact | Operation] = []
        try:
            for i, (seq, op, subject, relation, obj, key, value, serial, line, text, chunk, at,
                    length) in enumerate(rows):
                if seq != i:
                    raise ValueError(f"the operation log skips from {i - 1} to {seq}")
                if text is None and at is not None:
                    text = bodies[chunk][at:at + length]
                if subject is not None:
                    entries.append(Fact(serial, subject, relation, obj, line, text))
                else:
                    evidence = None if serial is None else Evidence(serial, line, text)
                    entries.append(Operation(op, tuple(orjson.loads(key)), value, evidence))
            memory = None if state is None else orjson.loads(state[0])
        except (ValueError, TypeError, KeyError) as exc:
            raise MemoryFileError(f"is damaged: {exc}", path=self.path, expected=REMEDY) from None
        return Saved(entries, memory, arrival)

    def commit(self, change: Change) -> int:
        if self.readonly:
            raise MemoryFileError("is open read-only: nothing can be written", path=self.path,
                                  expected="Memory.open(path) without readonly=True")
        if change.kind not in KINDS:
            raise ValueError(f"unknown commit kind {change.kind!r}")
        arrival = self._arrivals
        body = change.body if isinstance(change.body, str) else None
        facts, start = change.facts, change.operations_from
        accepted = change.ledger.accepted_since(start)
        if accepted is not None and len(accepted) == len(facts) \
                and all(a is b for a, b in zip(accepted, facts)):
            rows = _fact_rows(facts, start, arrival, body)      # the common case, faster
        else:
            operations = change.ledger.operations(start)
            rows = _rows(operations, start, facts, [arrival] * len(operations),
                         {arrival: body} if body else {})
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            if change.operations_from < self._logged:          # a take-back: rewritten
                conn.execute("DELETE FROM operations WHERE seq >= ?",
                             (change.operations_from,))
            conn.execute("INSERT INTO chunks VALUES (?, ?, ?, ?)",
                         (arrival, change.kind, _now(), change.body))
            conn.executemany("INSERT INTO operations VALUES "
                             "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("INSERT OR REPLACE INTO state VALUES (0, ?)",
                         (orjson.dumps(change.state, option=orjson.OPT_SORT_KEYS).decode(),))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            what = "ingest" if change.kind in (TEXT, BYTES) else change.kind
            raise self._error(f"could not be written, so the {what} was not saved (the file "
                              "holds the state before it)", exc) from None
        self._arrivals = arrival + 1
        self._logged = start + len(rows)
        self._version = self._data_version()
        return arrival

    def bodies(self, after: int) -> list[tuple[str, str | bytes | None]]:
        try:
            return self._conn.execute("SELECT kind, body FROM chunks WHERE arrival > ? "
                                      "ORDER BY arrival", (after,)).fetchall()
        except sqlite3.Error as exc:
            raise self._error("cannot be read", exc) from None

    def changed(self) -> bool:
        return self._conn is not None and self._data_version() != self._version

    def log(self) -> Iterator[LogEntry]:
        saved = self.load()
        conn = self._conn
        times = dict(conn.execute("SELECT arrival, time FROM chunks"))
        chunks = [r[0] for r in conn.execute("SELECT chunk FROM operations ORDER BY seq")]
        tombstones = list(conn.execute(
            "SELECT arrival, time, body FROM chunks WHERE kind = ? ORDER BY arrival", (ERASURE,)))
        normed: dict[str, str] = {}
        for seq, (entry, chunk) in enumerate(zip(saved.entries, chunks)):
            while tombstones and tombstones[0][0] < chunk:
                yield _tombstone(*tombstones.pop(0))
            fact = entry.__class__ is Fact
            if fact:
                subject = normed.setdefault(entry.subject, norm(entry.subject))
                entry = Operation(ACCEPT, (subject, entry.relation), entry.object, entry)
            yield LogEntry(seq, chunk, times.get(chunk, ""), entry, fact)
        for tombstone in tombstones:
            yield _tombstone(*tombstone)

    def text(self) -> str:
        try:
            bodies = self._conn.execute("SELECT body FROM chunks WHERE kind IN (?, ?) "
                                        "ORDER BY arrival", (TEXT, BYTES)).fetchall()
        except sqlite3.Error as exc:
            raise self._error("cannot be read", exc) from None
        if all(isinstance(b, str) for (b,) in bodies):
            return "".join(b for (b,) in bodies)
        # bytes may cut a character between two chunks: joined before they are decoded
        return b"".join(b.encode() if isinstance(b, str) else b
                        for (b,) in bodies).decode("utf-8", "replace")

    def info(self) -> dict:
        conn = self._conn
        settings = dict(conn.execute("SELECT name, value FROM settings"))
        kinds = dict(conn.execute("SELECT kind, count(*) FROM chunks GROUP BY kind"))
        text = self._scalar("SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM chunks")
        files = {suffix or "file": _size(self.path + suffix) for suffix in ("",) + SIDE_FILES}
        return {"path": self.path, "schema_version": self._scalar("PRAGMA user_version"),
                "created_by": settings.get("created_by"), "created": settings.get("created"),
                "bytes": sum(files.values()), "files": files,
                "commits": sum(kinds.values()), "commits_by_kind": dict(sorted(kinds.items())),
                "text_bytes": text}

    def erase(self, keep: Sequence[int], facts: Sequence[Fact], ledger: Ledger, state: dict,
              redact: Callable[[str], str], erased: dict) -> bool:
        if self.readonly:
            raise MemoryFileError("is open read-only: nothing can be erased", path=self.path,
                                  expected="Memory.open(path) without readonly=True")
        conn = self._conn
        try:
            chunks = [r[0] for r in conn.execute("SELECT chunk FROM operations ORDER BY seq")]
            bodies = dict(conn.execute("SELECT arrival, body FROM chunks WHERE body IS NOT NULL"))
        except sqlite3.Error as exc:
            raise self._error("cannot be read", exc) from None
        redacted = {arrival: _redacted(body, redact) for arrival, body in bodies.items()}
        changed = {a: b for a, b in redacted.items() if b != bodies[a]}
        texts = {a: b for a, b in redacted.items() if isinstance(b, str)}
        rows = _rows(ledger.operations(), 0, facts, [chunks[i] for i in keep], texts)
        arrival = self._arrivals
        try:
            # secure_delete: pages freed by the erasure are overwritten with zeros
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("UPDATE chunks SET body = ? WHERE arrival = ?",
                             [(b, a) for a, b in changed.items()])
            conn.execute("DELETE FROM operations")
            conn.executemany("INSERT INTO operations VALUES "
                             "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("INSERT INTO chunks VALUES (?, ?, ?, ?)",
                         (arrival, ERASURE, _now(), orjson.dumps(erased).decode()))
            conn.execute("INSERT OR REPLACE INTO state VALUES (0, ?)",
                         (orjson.dumps(state, option=orjson.OPT_SORT_KEYS).decode(),))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(conn)
            raise self._error("could not be written, so nothing was erased", exc) from None
        self._arrivals = arrival + 1
        self._logged = len(rows)
        try:
            conn.execute("VACUUM")          # the file rewritten: no page of the old content left
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as exc:
            raise self._error("was erased, but could not be compacted (old bytes may remain "
                              "until factres memory forget runs again)", exc) from None
        finally:
            conn.execute("PRAGMA secure_delete = OFF")
        self._version = self._data_version()
        return arrival, busy == 0

    def backup(self, destination) -> None:
        """SQLite's backup API: one consistent snapshot of the last commit, whatever writers
        do meanwhile; the copy is a memory file of its own (no writer lock, no side files)."""
        target = Path(destination)
        where = str(target)
        if target.exists():
            raise MemoryFileError("exists already: a backup never overwrites a file", path=where,
                                  expected="a path where no file is yet")
        if not target.parent.is_dir():
            raise MemoryFileError(f"the folder {target.parent} does not exist", path=where,
                                  expected="a path in an existing folder")
        try:
            make_whole(target, self._conn.backup)     # no file at `target` until it is whole
        except FileExistsError as exc:
            raise MemoryFileError(f"exists already, or another process is making it ({exc}): "
                                  "a backup never overwrites a file", path=where,
                                  expected="a path where no file is yet") from None
        except (sqlite3.Error, OSError) as exc:
            raise MemoryFileError(f"the backup failed: {exc}", path=where,
                                  expected="room on the disk for a copy, in a folder you may "
                                  "write in") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ---- helpers -------------------------------------------------------------------------
    def _scalar(self, sql: str, args: tuple = ()):
        try:
            return self._conn.execute(sql, args).fetchone()[0]
        except sqlite3.Error as exc:
            raise self._error("cannot be read", exc) from None

    def _data_version(self) -> int:
        return self._conn.execute("PRAGMA data_version").fetchone()[0]

    def _error(self, what: str, exc: sqlite3.Error) -> MemoryFileError:
        """SQLite's failure as the user's error: what failed, SQLite's reason, what to do."""
        code = getattr(exc, "sqlite_errorname", None) or ""
        reason = f"{exc} ({code})" if code else str(exc)
        if code in ("SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC"):
            # a write the file system refused: a full disk, a quota, a file size limit
            expected = ("free disk space (or a higher file size limit or quota), then the same "
                        "call again")
        elif code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in reason:
            expected = REMEDY
        elif code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
            expected = "the other process to finish, or a longer timeout"
        else:
            expected = "a sound memory file on a writable disk"
        return MemoryFileError(f"{what}: {reason}", path=self.path, expected=expected)


def _tombstone(arrival: int, time: str, body: str) -> LogEntry:
    return LogEntry(None, arrival, time, None, erased=orjson.loads(body))


def _read_only(file: Path, timeout: float) -> sqlite3.Connection:
    """A connection that never writes (`query_only`). It is a read-write one underneath, so
    that the last connection to close still removes SQLite's -wal and -shm files (a `mode=ro`
    one cannot, and left them behind every read-only command). A file this process may not
    write (or in a folder it may not write) is opened immutable instead: SQLite then takes no
    lock and needs no side file, and no writer can change it anyway."""
    if os.access(file, os.W_OK) and os.access(file.parent, os.W_OK):
        conn = sqlite3.connect(file, timeout=timeout, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        return conn
    return sqlite3.connect(file.resolve().as_uri() + "?mode=ro&immutable=1", uri=True,
                           timeout=timeout, isolation_level=None, check_same_thread=False)


def _redacted(body: str | bytes, redact: Callable[[str], str]) -> str | bytes:
    """A chunk's body through `redact`; bytes as UTF-8 (a character cut at a chunk's edge kept
    as its bytes)."""
    if isinstance(body, str):
        return redact(body)
    return redact(body.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        pass                             # the transaction is gone already


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _fact_rows(facts: Sequence[Fact], start: int, arrival: int, body: str | None
               ) -> list[tuple]:
    """`_rows` of a log holding only the accepts of `facts`, from entry `start` on."""
    cursor, rows = 0, []
    for seq, fact in enumerate(facts, start):
        text = fact.text
        where = body.find(text, cursor) if body and text else -1
        if where < 0:
            where = length = None
        else:
            cursor = where + len(text)
            text, length = None, cursor - where
        rows.append((seq, arrival, ACCEPT, fact.subject, fact.relation, fact.object, None, None,
                     fact.serial, fact.line, text, where, length))
    return rows


def _rows(operations: list[Operation], start: int, facts: Sequence[Fact], chunks: Sequence[int],
          bodies: dict[int, str]) -> list[tuple]:
    """The operations rows of `operations` (the log from entry `start` on; `chunks`: the
    commit each belongs to): an accept whose evidence is the next of `facts` (the store's facts
    among them, in order) carries the fact; any other operation its key, value and evidence. A
    text found in its commit's body (`bodies`: the text ones) is written as its place there,
    searched on from the previous one's end, so a context's text is in the file once."""
    at = 0
    cursors: dict[int, int] = {}
    rows = []
    for seq, (op, chunk) in enumerate(zip(operations, chunks), start):
        ev = op.evidence
        if ev is None:
            text = where = length = serial = line = None
        else:
            serial, line, text = ev.serial, ev.line, ev.text
            body = bodies.get(chunk)
            where = body.find(text, cursors.get(chunk, 0)) if body and text else -1
            if where < 0:
                where = length = None
            else:
                cursors[chunk] = where + len(text)
                text, length = None, len(text)
        if op.op == ACCEPT and at < len(facts) and ev is facts[at]:
            rows.append((seq, chunk, ACCEPT, ev.subject, ev.relation, ev.object, None, None,
                         serial, line, text, where, length))
            at += 1
        else:
            rows.append((seq, chunk, op.op, None, None, None, orjson.dumps(list(op.key)).decode(),
                         op.value, serial, line, text, where, length))
    if at != len(facts):
        raise ValueError(f"{len(facts) - at} new fact(s) of the store have no accept in the "
                         "operation log")
    return rows
