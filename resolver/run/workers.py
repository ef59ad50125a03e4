"""A run's per-question work spread over worker processes: compiling the live plan sets and
the search (with each answer's readout sizes). Questions are independent (each is compiled and
searched over its own context's store, and every memo the stages keep is a cache of what a
fresh read gives), so the results are the same whatever the number of workers: they come back
in question order and a run's files are byte-identical to a run in one process (a test checks
it).

Workers are forked: they inherit the loaded dataset and plan sets, so nothing big is sent to
them; only each chunk's results come back, pickled. Where fork is unavailable or unsafe (not
Linux), and for runs too small to repay starting workers, the work is done in this process."""
from __future__ import annotations

import os
import sys
from typing import Callable, Sequence, TypeVar

from resolver.errors import InputError, WorkerError

T = TypeVar("T")

# Each worker takes at least this many questions: fewer do not repay a fork (about 10 ms)
# and sending results back.
MIN_QUESTIONS_PER_JOB = 48
# Chunks per worker: small enough that a slow chunk (a deep context's questions) does not
# leave the other workers idle, large enough to keep the hand-offs few.
CHUNKS_PER_JOB = 10
# "auto" takes at most this many: past it the serial rest of a run (reading, scoring,
# writing) is most of the time and every worker copies more of the parent's pages.
AUTO_JOBS_CAP = 4
# ... and none past this many facts in the run's stores: a worker copies the pages of the
# store it reads (reference counts are written as it reads), so over the 262K context repeated
# 64 times (1.17M facts) two workers took 664 MB together where one process peaks at 467 MB
# (issue 35's 600 MB); a store that large is mostly read, not searched, anyway.
AUTO_FACTS_CAP = 250_000

# What a forked worker calls: set just before the workers are forked, read by `_chunk`.
_WORK: Callable[[int], object] | None = None


def can_fork() -> bool:
    """Whether workers can be forked here: Linux only (fork is unsafe on macOS, absent on
    Windows)."""
    import multiprocessing
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_jobs(jobs: int | str | None) -> int | None:
    """`jobs` as a run takes it: None or "auto" (None: decided per run by `jobs_for`) or a
    whole number of at least 1."""
    if jobs is None or jobs == "auto":
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs {jobs!r}", expected="auto or a whole number of at least 1")
    return jobs


def jobs_for(jobs: int | None, questions: int, facts: int = 0) -> int:
    """The workers a run of `questions` questions over stores of `facts` facts gets: `jobs`
    when given (1: this process), else ("auto") one per core up to AUTO_JOBS_CAP, no more than
    the questions repay (MIN_QUESTIONS_PER_JOB each), none over stores of more than
    AUTO_FACTS_CAP facts; and 1 where workers cannot be forked."""
    if jobs is None and facts > AUTO_FACTS_CAP:
        return 1
    wanted = jobs if jobs is not None else min(available_cores(), AUTO_JOBS_CAP)
    wanted = min(wanted, questions // MIN_QUESTIONS_PER_JOB) if jobs is None else \
        min(wanted, questions)
    if wanted <= 1 or not can_fork():
        return 1
    return wanted


def spread(work: Callable[[int], T], count: int, jobs: int,
           advance: Callable[[int], None] | None = None,
           meanwhile: Callable[[], object] | None = None) -> list[T]:
    """`[work(i) for i in range(count)]`, computed by `jobs` forked workers (1: here), in that
    order. `advance(n)` is called as results come in; `meanwhile()` runs in this process while
    the workers work (what the next stage needs and can load now). An error in a worker is
    raised here, as itself; a worker that dies (killed, out of memory) raises WorkerError."""
    if jobs <= 1:
        out = []
        for i in range(count):
            out.append(work(i))
            if advance:
                advance(1)
        if meanwhile:
            meanwhile()
        return out
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _WORK
    size = max(1, -(-count // (jobs * CHUNKS_PER_JOB)))
    chunks = [range(start, min(start + size, count)) for start in range(0, count, size)]
    _WORK = work
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=_quiet)
    try:
        # the first submit forks every worker, before the pool starts its own thread
        futures = [pool.submit(_chunk, chunk) for chunk in chunks]
        if meanwhile:
            meanwhile()
        out: list = []
        for chunk, future in zip(chunks, futures):
            try:
                failed, got = future.result()
            except BrokenProcessPool:
                raise WorkerError(f"a worker process ended without its results (killed, or out "
                                  f"of memory?); nothing was recorded; --jobs 1 runs in one "
                                  f"process") from None
            if failed:
                raise got
            out.extend(got)
            if advance:
                advance(len(chunk))
    finally:
        _WORK = None
        # on an error or an interrupt, chunks not started are dropped; running ones finish
        pool.shutdown(wait=True, cancel_futures=True)
    return out


def _quiet() -> None:
    """In a worker: Ctrl-C is the parent's to handle (it stops the pool), not a traceback
    from every worker."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _chunk(indices: Sequence[int]) -> tuple[bool, object]:
    """In a worker: one chunk's results, or (True, the error) so the parent raises it as it
    was (an error that cannot be pickled comes back as its text)."""
    try:
        return False, [_WORK(i) for i in indices]
    except Exception as exc:        # noqa: BLE001 - raised again in the parent
        import pickle
        try:
            pickle.dumps(exc)
        except Exception:           # noqa: BLE001
            import traceback
            exc = RuntimeError("in a worker: " + "".join(traceback.format_exception(exc)))
        return True, exc
