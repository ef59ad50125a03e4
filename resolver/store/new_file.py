"""`make_whole`: a new SQLite file made whole before it appears at its path (verification U04).

SQLite writes a new database in steps (the file, its header, WAL mode, the schema); a process
killed between them leaves a file that is an empty or schema-less database, which no later open
can tell from a foreign one. So a new memory file, or a backup, is made under another name in
the same folder (`<file>-new`), closed (checkpointed, its -wal gone), and hard-linked into place:
the path holds no file or a whole one, whatever moment the process is killed at. A link never
replaces a file that appeared meanwhile (FileExistsError).

One maker at a time per path: the maker holds an OS lock (`flock`) on its `-new` file for as
long as it writes it, and never writes into a `-new` file it finds: one no maker holds is what
a killed maker left (possibly a second name of the finished file, when it was killed between
the link and the removal), so it is removed, with its side files, never opened."""
from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Callable

NEW_SUFFIX = "-new"
_SIDE_FILES = ("-wal", "-shm", "-journal")


def new_path(file: Path) -> Path:
    return file.with_name(file.name + NEW_SUFFIX)


def make_whole(file: Path, fill: Callable[[sqlite3.Connection], None], fsync: bool = False
               ) -> None:
    """Make the SQLite file `file`: `fill` writes it through a connection to its `-new` file,
    which is then set to WAL mode, closed and linked into place. FileExistsError when `file`
    is there already or another process is making it; OSError and sqlite3.Error as they come
    (nothing is left at `file` then)."""
    new = new_path(file)
    fd = _take(new, file)
    try:
        conn = sqlite3.connect(new, isolation_level=None)
        try:
            fill(conn)
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()                 # the last connection: checkpointed, -wal removed
        if fsync:
            os.fsync(fd)
        try:
            os.link(new, file)           # never replaces: FileExistsError when a file came
        except FileExistsError:
            raise
        except OSError:                  # a file system without hard links
            if file.exists():
                raise FileExistsError(errno.EEXIST, "File exists", str(file)) from None
            os.rename(new, file)
    finally:
        _remove(new)
        os.close(fd)                     # the lock goes with it
    if fsync:
        folder = os.open(file.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


def remove_leftover(file: Path) -> None:
    """Remove the `-new` file (and its side files) a maker of `file` killed earlier left; one a
    living maker holds stays."""
    new = new_path(file)
    if not new.exists():
        return
    try:
        fd = _take(new, file, create=False)
    except (FileExistsError, FileNotFoundError):
        return
    try:
        _remove(new)                     # while it is held: no maker can have taken it
    finally:
        os.close(fd)


def _take(new: Path, file: Path, create: bool = True) -> int:
    """A descriptor of a fresh file at `new`, created by this process and locked (`flock`);
    a file found there that no process holds is removed first. FileExistsError when another
    process holds it. With `create` false: the file found, locked (FileNotFoundError when
    there is none), its side files removed."""
    import fcntl  # POSIX only: imported where the lock is taken

    while True:
        try:
            fd = os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644) if create else \
                os.open(new, os.O_RDONLY)
            made = create
        except FileExistsError:
            fd, made = os.open(new, os.O_RDONLY), False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FileExistsError(errno.EEXIST, "another process is making it", str(file)
                                  ) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(new))
        except FileNotFoundError:
            same = False                 # its maker finished and removed it meanwhile
        if not same:
            os.close(fd)
            if not create:
                raise FileNotFoundError(errno.ENOENT, "gone", str(new))
            continue
        # held by this process: the side files are no one else's (a stale -wal would be
        # replayed into the new file)
        for suffix in _SIDE_FILES:
            _unlink(f"{new}{suffix}")
        if made or not create:
            return fd
        # a leftover of a killed maker (maybe a second name of the file it finished): removed,
        # never written into
        _unlink(new)
        os.close(fd)


def _remove(new: Path) -> None:
    for suffix in ("",) + _SIDE_FILES:
        _unlink(f"{new}{suffix}")


def _unlink(path: str | Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
