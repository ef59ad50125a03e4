"""`MemoryCache`: the memories of recent conversations, by the key of their memory part, least
recently used out, bounded by a budget of estimated resident bytes.

The server's key is the memory part itself (`conversation.MemoryPart`, compared character for
character), so the cache keeps each memory part's text beside its memory: the server counts
that text in the memory's size.

A memory's resident size is estimated from what it holds (`estimate_bytes`: a fixed part, bytes
per fact, bytes per character of text fed), with constants measured once with tracemalloc on
the bundled 32K, 64K and 262K contexts fed as a harness feeds them, after 200 questions each (a
memory grows as it is asked: the store's name index is built by the first question, and the
search keeps the hops it reads). `python benchmarks/serve.py` measures the estimate against
tracemalloc again and the server's resident memory against the budget.

Two requests for the same new conversation build its memory once: the second waits for the
first. At most `builds` memories are built at a time (2 by default): building is Python work
that one interpreter does one thread at a time anyway, and each memory being built is resident
memory the budget does not see, so more at once would only raise the peak. A memory larger
than the whole budget still answers its request, but is not kept.

Named memories (`named.py`, `factres serve --store`) share the budget: their entries are kept
here too, `resize`d as they grow, `discard`ed when deleted, and each one evicted is handed to
`on_evict` (which closes its file), outside the lock."""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable

# Measured with tracemalloc (benchmarks/serve.py, "size"): bytes held by a memory after the
# harness's frames of a context were fed and 200 questions asked (what a harness asks of one
# 6K context). 6K: 2.25 MB, 32K: 4.87 MB, 64K: 7.96 MB, 262K: 25.2 MB; these constants give
# 2.67, 5.03, 7.92 and 25.4 MB. About 2 MB of it is the search's memo of the hops it read
# for those questions; a memory asked far more questions grows past its estimate. Since the
# store's memory per fact went down (the scale work), tracemalloc finds 2.21, 4.15, 6.42 and
# 18.7 MiB, the memory part's text the server keeps included, against estimates of 2.60, 5.06,
# 8.08 and 26.4 MiB with that text (benchmarks/serve.py, 2026-12-01): high by up to 1.4x,
# which keeps fewer memories than the budget would hold, never more.
FIXED_BYTES = 2 * 1024 * 1024
BYTES_PER_FACT = 1150
BYTES_PER_CHAR = 2


def estimate_bytes(facts: int, chars: int) -> int:
    """The resident bytes of a warm memory holding `facts` facts from `chars` characters."""
    return FIXED_BYTES + BYTES_PER_FACT * facts + BYTES_PER_CHAR * chars


@dataclass
class _Slot:
    value: object
    size: int


class _Build:
    """A memory being built: who else asks for it waits on `done`."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class MemoryCache:
    """key -> a built memory (any object with a size), least recently used out past `budget`
    estimated bytes. Thread-safe."""

    def __init__(self, budget: int, builds: int = 2,
                 on_evict: Callable[[Hashable, object], None] | None = None) -> None:
        self.budget = budget
        self._on_evict = on_evict
        self._builds = threading.BoundedSemaphore(builds)
        self._slots: OrderedDict[Hashable, _Slot] = OrderedDict()
        self._building: dict[Hashable, _Build] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = self.evictions = 0

    def get(self, key: Hashable, build: Callable[[], object], size: Callable[[object], int]
            ) -> tuple[object, bool]:
        """(the memory of `key`, whether it was there already). On a miss, `build()` makes it
        (outside the lock; a concurrent request for the same key waits for it and gets it as a
        hit, counted as one) and `size(memory)` is its estimate. An error in `build` is raised to every request
        waiting for it, and nothing is kept."""
        with self._lock:
            slot = self._slots.get(key)
            if slot is not None:
                self._slots.move_to_end(key)
                self.hits += 1
                return slot.value, True
            pending = self._building.get(key)
            owner = pending is None
            if owner:
                pending = self._building[key] = _Build()
                self.misses += 1
        if not owner:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            with self._lock:
                # served the memory another request built: a hit, as its reply says (E25:
                # 16 requests counted 0 hits and 1 miss while 15 replies said cached)
                self.hits += 1
            return pending.value, True
        try:
            with self._builds:
                value = build()
            pending.value = value
            self._keep(key, value, size(value))
        except BaseException as exc:
            pending.error = exc
            raise
        finally:
            with self._lock:
                del self._building[key]
            pending.done.set()
        return value, False

    def lookup(self, key: Hashable) -> object | None:
        """The memory of `key` if it is cached (counted as a hit, made the most recent), else
        None (counted nowhere: `get` follows)."""
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                return None
            self._slots.move_to_end(key)
            self.hits += 1
            return slot.value

    def _keep(self, key: Hashable, value: object, size: int) -> None:
        with self._lock:
            if size > self.budget:
                return                    # answers its own request, never pushes all out
            self._slots[key] = _Slot(value, size)
            self._bytes += size
            evicted = self._over_budget()
        self._evicted(evicted)

    def _over_budget(self) -> list[tuple[Hashable, object]]:
        """Evict the least recently used until the budget holds (under the lock)."""
        evicted = []
        while self._bytes > self.budget and self._slots:
            key, old = self._slots.popitem(last=False)
            self._bytes -= old.size
            self.evictions += 1
            evicted.append((key, old.value))
        return evicted

    def _evicted(self, evicted: Iterable[tuple[Hashable, object]]) -> None:
        if self._on_evict is not None:
            for key, value in evicted:
                self._on_evict(key, value)

    def resize(self, key: Hashable, size: int) -> None:
        """A kept memory grew (or shrank) to `size` estimated bytes: others are evicted as the
        budget needs, and so is this one when it alone is over it."""
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                return
            self._bytes += size - slot.size
            slot.size = size
            self._slots.move_to_end(key)
            if size > self.budget:
                del self._slots[key]
                self._bytes -= size
                self.evictions += 1
                evicted = [(key, slot.value)]
            else:
                evicted = self._over_budget()
        self._evicted(evicted)

    def discard(self, key: Hashable) -> None:
        """Drop `key`'s memory (handed to `on_evict`, not counted as an eviction)."""
        with self._lock:
            slot = self._slots.pop(key, None)
            if slot is not None:
                self._bytes -= slot.size
        if slot is not None:
            self._evicted([(key, slot.value)])

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._slots

    def keys(self) -> list[Hashable]:
        """Keys from the least to the most recently used."""
        with self._lock:
            return list(self._slots)

    def stats(self) -> dict:
        with self._lock:
            return {"memories": len(self._slots), "estimated_bytes": self._bytes,
                    "budget_bytes": self.budget, "hits": self.hits, "misses": self.misses,
                    "evictions": self.evictions}
