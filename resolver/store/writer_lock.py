"""`WriterLock`: one writer per memory file, by an OS lock on a side file (`<file>-lock`) that
holds the writer's process id.

SQLite's own locks last one transaction; a memory open for writing must hold the file for as long
as it is open, or two writers would interleave their ingests. `flock` is the kernel's: it belongs
to the open file, so it is released when the writer closes the memory or when its process ends
in any way (a SIGKILL included): no stale lock is ever left to clean up. The side file stays
behind (removing it would race a writer waiting on it) and holds the last writer's pid, which a
writer that cannot get the lock names. Readers never take it."""
from __future__ import annotations

import os
import time
from pathlib import Path

from resolver.errors import MemoryFileError, MemoryLockedError

LOCK_SUFFIX = "-lock"
POLL = 0.05                       # seconds between tries while another writer holds it


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + LOCK_SUFFIX)


class WriterLock:
    """The writer lock of the memory file `path`, taken when made (waiting up to `timeout`
    seconds), released by `release` or when the process ends."""

    def __init__(self, path: Path, timeout: float) -> None:
        import fcntl  # POSIX only: imported where the lock is taken

        self.path = lock_path(path)
        try:
            self._file = open(self.path, "a+", encoding="ascii")
        except OSError as exc:
            raise MemoryFileError(f"cannot make the writer lock {self.path}: "
                                  f"{exc.strerror or exc}", path=str(path),
                                  expected="a folder this process may write in, or "
                                  "readonly=True") from None
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid = self._holder()
                    self._file.close()
                    who = f"process {pid}" if pid else "another process"
                    raise MemoryLockedError(
                        f"is open for writing by {who} (waited {timeout:g} s)", pid=pid,
                        path=str(path), expected="that writer to close it, or readonly=True "
                        "(the read-only commands of factres memory never wait)") from None
                time.sleep(POLL)
        self._file.seek(0)
        self._file.truncate()
        self._file.write(f"{os.getpid()}\n")
        self._file.flush()

    def _holder(self) -> int | None:
        self._file.seek(0)
        text = self._file.read(32).strip()
        return int(text) if text.isdigit() else None

    def release(self) -> None:
        """Give the lock up (closing the side file releases it). Idempotent."""
        if not self._file.closed:
            self._file.close()
