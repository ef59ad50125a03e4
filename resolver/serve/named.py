"""Named memories (`factres serve --store DIR`): one memory file each, `DIR/NAME.db`, reached at
the base URL `/v1/memories/NAME` (`POST .../chat/completions`, `GET .../models`), listed by `GET
/v1/memories` and removed by `DELETE /v1/memories/NAME`.

A request's memory part is appended to the named memory, as text: the texts of its messages that
hold facts, joined by one space (`conversation.remember`'s rule). When the text the memory
already holds is a prefix of it (a harness resending a growing conversation) only the rest is
ingested, and an equal part ingests nothing; any other part is appended whole, after one space.
Each request's text is one `ingest`, one transaction. The tail is never flushed (a fact cut
across two requests joins; a question reads the tail provisionally). A request in which no
question is found (`question.find_question`: a memorize frame sent alone) ingests its facts and
answers empty, with the reason NO_QUESTION.

The open files are a pool inside the server's memory cache: each open memory counts against
`--cache-mb` (its estimate, with the text it holds), at most `max_open` are open, and one evicted
is closed (its writer lock released) and opened again by the next request that names it. The
server holds each open file's writer lock: a second server on the same folder gets a 409 for a
memory the first holds."""
from __future__ import annotations

import re
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from resolver.errors import InputError, MemoryFileError, MemoryLockedError, ProvenanceError
from resolver.memory.memory import Answer, Memory
from resolver.serve.api_errors import SERVER_ERROR, ApiError, bad_request
from resolver.serve.cache import MemoryCache, estimate_bytes
from resolver.serve.conversation import Conversation, Remembered, memory_messages, tally
from resolver.serve.question import NOT_FOUND
from resolver.serve.readout import reply_answer
from resolver.serve.request import Message
from resolver.store.writer_lock import WriterLock, lock_path

NAME = re.compile(r"(?!\.)[A-Za-z0-9._-]{1,64}\Z")
NAME_RULE = "1 to 64 letters, digits, '.', '_' or '-', not starting with '.'"
SUFFIX = ".db"
SIDE_FILES = ("-wal", "-shm")
NO_QUESTION = "facts ingested; no question"
OPEN_TIMEOUT = 2.0              # seconds to wait for another process holding a memory


def check_name(name: str) -> None:
    """ApiError (400) for a name outside NAME_RULE."""
    if not NAME.match(name):
        shown = name if len(name) <= 80 else name[:80] + "..."
        raise bad_request(f"Invalid memory name {shown!r}: a name is {NAME_RULE}.",
                          param="name", code="invalid_memory_name")


def not_found(name: str) -> ApiError:
    return ApiError(404, f"No memory named {name!r} in this server's store.", param="name",
                    code="memory_not_found")


def _locked(name: str, exc: MemoryLockedError) -> ApiError:
    who = f"process {exc.pid}" if exc.pid else "another process"
    return ApiError(409, f"The memory {name!r} is open for writing by {who} (another server "
                    "on the same --store folder?).", param="name", code="memory_locked")


def _unwritable(name: str, exc: MemoryFileError) -> ApiError:
    return ApiError(500, f"The memory {name!r} could not be used: {exc}", type=SERVER_ERROR,
                    code="memory_file_error")


@dataclass
class Named:
    """An open named memory, the text it holds, and the lock each request holds while it uses
    it (an eviction closes it under the same lock)."""
    name: str
    memory: Memory
    held: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False

    def size(self) -> int:
        return estimate_bytes(len(self.memory.store), len(self.held)) + sys.getsizeof(self.held)

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                self.memory.close()


def close_evicted(key, value) -> None:
    """The cache's `on_evict`: a named memory evicted is closed."""
    if isinstance(value, Named):
        value.close()


@dataclass(frozen=True)
class Request:
    """A named request's parts: the messages whose text is memory, and the question (None:
    facts and no question)."""
    memory: tuple[Message, ...]
    question: str | None


def parts(conversation: Conversation) -> Request:
    """The memory part and the question (see the module docstring): a last user message in
    which no question is found (`question.NOT_FOUND`) is memory, facts and no question."""
    if conversation.found == NOT_FOUND:
        return Request(conversation.memory, None)
    return Request(conversation.memory, conversation.question)


class NamedMemories:
    """The named memories of the store folder `directory` (see the module docstring)."""

    def __init__(self, directory: Path, cache: MemoryCache, max_open: int,
                 plan_sets: tuple[str, ...], mode: str) -> None:
        self.directory = Path(directory)
        self.cache, self.max_open = cache, max_open
        self.plan_sets, self.mode = plan_sets, mode
        self._opening = threading.Lock()

    def path(self, name: str) -> Path:
        return self.directory / f"{name}{SUFFIX}"

    @staticmethod
    def _key(name: str) -> tuple[str, str]:
        return ("named", name)

    def _open(self, name: str) -> Named:
        try:
            memory = Memory.open(self.path(name), plan_sets=self.plan_sets, mode=self.mode,
                                 timeout=OPEN_TIMEOUT)
        except MemoryLockedError as exc:
            raise _locked(name, exc) from None
        except MemoryFileError as exc:
            raise _unwritable(name, exc) from None
        try:
            return Named(name, memory, memory.text())
        except BaseException:
            memory.close()
            raise

    def _open_count(self) -> list:
        return [k for k in self.cache.keys() if isinstance(k, tuple) and k[:1] == ("named",)]

    def entry(self, name: str) -> tuple[Named, bool]:
        """The open memory `name` (opened, or made, when it is not), and whether it was open;
        the least recently used is closed first when `max_open` are."""
        key = self._key(name)
        with self._opening:
            if key not in self.cache:
                open_ = self._open_count()
                for old in open_[:max(0, len(open_) - self.max_open + 1)]:
                    self.cache.discard(old)
        value, cached = self.cache.get(key, lambda: self._open(name), Named.size)
        return value, cached

    def answer(self, name: str, request: Request, model: str, abstain_below: str | None = None
               ) -> tuple[Answer, Remembered, bool, int]:
        """(the answer, what the memory holds and this request did, whether it was open, the
        characters ingested): the request's memory part appended, then its question asked
        (the readout for the model `factres-readout`, as `serve.readout` gives it; an answer
        labelled below `abstain_below` emptied, as `Memory.query` empties it)."""
        while True:
            entry, cached = self.entry(name)
            with entry.lock:
                if entry.closed:                       # evicted meanwhile: open it again
                    continue
                try:
                    found = self._answer(entry, request, cached, model, abstain_below)
                except MemoryFileError as exc:
                    raise _unwritable(name, exc) from None
                except InputError as exc:
                    raise bad_request(f"The messages cannot be read as text: {exc}",
                                      param="messages", code="invalid_value") from None
                size = entry.size()
            # outside the entry's lock: a resize may evict, and close, another entry
            key = self._key(name)
            if key in self.cache:
                self.cache.resize(key, size)
            else:
                entry.close()                          # over the whole budget: not kept
            return found

    def _answer(self, entry: Named, request: Request, cached: bool, model: str,
                abstain_below: str | None) -> tuple[Answer, Remembered, bool, int]:
        passed: Counter = Counter()
        reports: list = []
        read = memory_messages(request.memory, entry.held)
        facts = [m for m, fed in zip(request.memory, read) if fed]
        skipped = Counter(m.role for m, fed in zip(request.memory, read) if not fed)
        text = " ".join(m.text for m in facts)
        held = entry.held
        if text.startswith(held):
            rest = text[len(held):]
        else:
            rest = (" " if held and text else "") + text
        if rest:
            tally(entry.memory.ingest(rest), passed, reports)
            entry.held = held + rest
        if request.question is None:
            answer = Answer("", "", NO_QUESTION)
        else:
            answer = reply_answer(model, entry.memory,
                                  entry.memory.query(request.question, abstain_below=abstain_below))
        words = sum(len(m.text.split()) for m in request.memory)
        remembered = Remembered(entry.memory, f"memory:{entry.name}", len(entry.memory.store),
                                len(entry.held), words, dict(sorted(passed.items())),
                                dict(sorted(skipped.items())),
                                dict(sorted(Counter(r.kind for r in reports).items())),
                                tuple(reports[:20]))
        return answer, remembered, cached, len(rest)

    def operate(self, name: str, patches: list) -> list:
        """Apply `patches` (checked already: `resolver.store.operations.read_patch`) to the
        memory `name` (made when there is none), in order, each one operation of its log
        (`Memory.apply`); the `Applied` of each. A refused one (ProvenanceError) stops them,
        the ones before it applied, and is raised as ApiError 422 naming its index (not 409:
        OpenAI's clients send a 409 again, and the operations before it would be refused)."""
        while True:
            entry, _ = self.entry(name)
            with entry.lock:
                if entry.closed:                       # evicted meanwhile: open it again
                    continue
                done = []
                try:
                    for patch in patches:
                        done.append(entry.memory.apply(patch))
                except MemoryFileError as exc:
                    raise _unwritable(name, exc) from None
                except ProvenanceError as exc:
                    raise ApiError(422, f"Operation {len(done)} refused: {exc} ({len(done)} "
                                   "before it applied).", param=f"operations[{len(done)}]",
                                   code="operation_refused") from None
                return done

    def listing(self) -> list[dict]:
        """Every named memory of the folder, by name, with its size in bytes (the -wal and
        -shm files included) and whether it is open."""
        out = []
        for path in sorted(self.directory.glob(f"*{SUFFIX}")):
            name = path.name[:-len(SUFFIX)]
            if not NAME.match(name):
                continue
            size = sum(_size(Path(f"{path}{side}")) for side in ("",) + SIDE_FILES)
            out.append({"id": name, "object": "memory", "bytes": size,
                        "open": self._key(name) in self.cache})
        return out

    def delete(self, name: str) -> None:
        """Close and remove the memory `name` (its file and side files). ApiError 404 when
        there is none, 409 when another process holds it."""
        path = self.path(name)
        if not path.exists():
            raise not_found(name)
        self.cache.discard(self._key(name))
        try:
            lock = WriterLock(path, OPEN_TIMEOUT)
        except MemoryLockedError as exc:
            raise _locked(name, exc) from None
        try:
            for side in ("",) + SIDE_FILES:
                Path(f"{path}{side}").unlink(missing_ok=True)
            lock_path(path).unlink(missing_ok=True)
        finally:
            lock.release()

    def close_all(self) -> None:
        for key in self._open_count():
            self.cache.discard(key)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
