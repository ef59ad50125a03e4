"""A run folder on disk, `<results>/<run-id>/`: its id, claimed before any work, written into a
temporary folder and renamed into place. (Reading one back is `reader`'s.)

- The results folder is checked for writing before a run does any work.
- A run id is claimed atomically by creating `<results>/.tmp-<run-id>/` (mkdir either creates
  it or fails), so two runs started together never pick the same id: a default id takes the
  next free suffix (-2, -3, ...), an explicit id that is taken is an error. A name the
  repository's committed results/ holds counts as taken (`taken`): a new folder never shadows
  a committed one, which a lookup by id would otherwise stop finding.
- The temporary folder holds a marker, `.incomplete` (who writes it: pid, host, start time).
  Every reader refuses a folder that has the marker or a `.tmp-` name, so a run killed before
  or at its final rename never passes for a result. Such folders are removed by a later run
  once they are older than a day and their process is gone (or, without a marker, unknown:
  a full disk can stop the marker being written).
- Oracle folders are claimed and written the same way (`reserve`, `finish`: oracle/report.py),
  and so are the new folders of `factres compare --out` and `factres export`
  (`write_new_folder`).
- A file that cannot be written (a full disk) is an OSError naming it (`write_file`).
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

from resolver.errors import InputError, RunExistsError
from resolver.escape import HIDDEN
from resolver.results.result_schema import (
    INCOMPLETE_MARKER,
    META_FILE,
    METRICS_FILE,
    PREDICTIONS_FILE,
    READOUT_FILE,
    TABLE_MD_FILE,
    TABLE_TEX_FILE,
    TABLES_DIR,
    TMP_PREFIX,
    TRACES_FILE,
    committed_results,
    dumps,
    dumps_lines,
)
from resolver.run import tables

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
STALE_AFTER_S = 24 * 3600       # a temporary folder younger than this is never removed


def committed_elsewhere(root: Path) -> Path | None:
    """The repository's committed results/ when it is not `root` itself (the repository's own
    runs are written there with `--results-dir results`)."""
    committed = committed_results()
    if committed is None or committed.resolve() == root.resolve():
        return None
    return committed


def taken(root: Path, name: str) -> bool:
    """Whether a new folder `<root>/<name>` may not be made: it exists, or the committed
    results/ holds a folder of that name (a lookup by id reads the results folder first, so the
    new one would hide the committed one)."""
    committed = committed_elsewhere(root)
    return (root / name).exists() or (committed is not None and (committed / name).exists())


def check_run_id(root: Path, run_id: str) -> None:
    """An explicit run id: well formed and not taken."""
    if not RUN_ID.match(run_id):
        raise InputError(f"bad run id {run_id!r}",
                         expected="letters, digits, '.', '_' or '-', not starting with "
                                  "'.', '_' or '-'")
    if run_id == TABLES_DIR:
        # `factres tables` writes into <results>/tables/: a run there would be written over
        raise InputError(f"run id {run_id!r} is the paper tables' folder",
                         expected="another run id")
    if (root / run_id).exists():
        raise RunExistsError(f"run {run_id!r} exists in {root}/: results are never "
                             "overwritten; choose another --run-id or omit it")
    committed = committed_elsewhere(root)
    if committed is not None and (committed / run_id).exists():
        raise RunExistsError(f"{run_id!r} is a committed folder in {committed}/: a new run of "
                             "that name would hide it from every lookup by id; choose another "
                             "--run-id or omit it")


def ensure_writable(root: Path, expected: str = "a writable results folder (--results-dir or "
                                                "$FACTRES_RESULTS)") -> None:
    """Fail before any work when run folders cannot be written under `root`. Folders made to
    check are removed again: a run refused later leaves nothing behind."""
    made = [p for p in (root, *root.parents) if not p.exists()]
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=root)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"cannot write here: {exc.strerror or exc}", path=str(root),
                         expected=expected) from None
    finally:
        for folder in made:           # deepest first
            try:
                folder.rmdir()
            except OSError:
                break


@dataclass
class Claim:
    """A run id reserved by its temporary folder; `release` gives it up (after a failure)."""
    root: Path
    run_id: str
    tmp: Path

    def release(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _owner(tmp: Path) -> dict:
    """Who wrote a temporary folder: its marker, else the pid an older factres put in the name
    (`.tmp-<id>-<pid>`)."""
    try:
        return orjson.loads((tmp / INCOMPLETE_MARKER).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        match = re.search(r"-(\d+)\Z", tmp.name)
        return {"pid": int(match[1])} if match else {}


def _alive(owner: dict) -> bool:
    """Whether the owner process may still run (a process on another host may). A folder
    whose owner is unknown (no marker, no pid in its name: the marker could not be written)
    counts as abandoned; it is only ever removed once it is older than a day."""
    if not owner:
        return False
    pid = owner.get("pid")
    if not isinstance(pid, int) or owner.get("host", socket.gethostname()) != \
            socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True       # it exists, as another user's process
    return True


def clean_stale(root: Path, now: float | None = None) -> list[Path]:
    """Remove temporary run folders older than a day whose process is gone; return them."""
    now = time.time() if now is None else now
    removed = []
    if not root.is_dir():
        return removed
    for tmp in sorted(root.glob(f"{TMP_PREFIX}*")):
        try:
            age = now - tmp.stat().st_mtime
        except OSError:
            continue
        if tmp.is_dir() and age > STALE_AFTER_S and not _alive(_owner(tmp)):
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def write_file(path: Path, data: bytes | str) -> None:
    """Write a new file into a claimed folder, never over an existing one (O_EXCL: not a file
    of that name, not a link planted there); an OSError without a file name (a full disk
    reports ENOSPC on the write, not the open) is raised again naming `path`."""
    try:
        with open(path, "xb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
    except OSError as exc:
        if exc.filename is None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def replace_file(path: Path, data: bytes | str) -> None:
    """Write a derived file (a paper table, a figure) through a temporary file renamed over
    `path`: a reader sees the old file or the new one, never half of one. The file gets the
    mode any new file gets (0644 under the usual umask, as run folders' files), not mkstemp's
    private 0600. A failed write (a full disk) names `path` and leaves the old file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename is None or exc.filename == tmp:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def reserve(root: Path, name: str) -> Path | None:
    """Claim `<root>/<name>` by creating `<root>/.tmp-<name>/` (mkdir is atomic) with the
    marker naming this process; None when another process holds the claim or the folder
    exists. A claim whose marker cannot be written is given up again."""
    tmp = root / f"{TMP_PREFIX}{name}"
    try:
        tmp.mkdir()
    except FileExistsError:
        return None
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    try:
        write_file(tmp / INCOMPLETE_MARKER, dumps({"pid": os.getpid(),
                                                   "host": socket.gethostname(),
                                                   "started_utc": started}))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if (root / name).exists():      # finished by another process since we looked
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return tmp


def finish(tmp: Path, final: Path, what: str) -> None:
    """Take the marker off a claimed folder and rename it into place; `what` names the folder
    in the error if `final` appeared meanwhile (os.rename would silently replace an empty
    folder of that name)."""
    (tmp / INCOMPLETE_MARKER).unlink()
    if final.exists():
        raise RunExistsError(f"{what} appeared in {final.parent}/ while this one was being "
                             "written; nothing was overwritten")
    os.rename(tmp, final)


def inside(folder: Path, name: str) -> Path:
    """`folder / name` for a relative file name that stays inside `folder`: no absolute path, no
    "." or ".." part, no control or bidirectional character, and nothing (a link) that leads
    out once resolved. Anything else is an InputError: a file is never written elsewhere."""
    relative = Path(name)
    bad = (relative.is_absolute() or not relative.parts or "\\" in name
           or any(part in (".", "..") for part in name.split("/"))
           or HIDDEN.search(name) is not None)
    path = folder / relative
    if bad or not path.resolve().is_relative_to(folder.resolve()):
        raise InputError(f"file name {name!r} would not be a file inside {folder.name}/",
                         expected="a relative file name without '..', separators other than "
                                  "'/', or control characters")
    return path


def claim_new(final: Path, command: str) -> Path:
    """Claim `final`, a folder that must be new (`--out` of `factres compare`, `export` and the
    oracle commands): the claimed temporary folder to write into, then `finish`. Refused when
    `final` exists or another process claimed it; `command` names the command in the refusal."""
    if final.exists():
        raise RunExistsError(f"{final} exists: {command} writes a new folder and never "
                             "overwrites; choose another --out")
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = reserve(final.parent, final.name)
    if tmp is None:
        raise RunExistsError(f"{final} is being written by another process (or an "
                             f"interrupted one left {final.parent / (TMP_PREFIX + final.name)})"
                             "; choose another --out")
    return tmp


def write_new_folder(final: Path, files: dict[str, bytes | str], command: str) -> list[Path]:
    """A folder that must be new (`factres compare --out`, `factres export`), holding `files`
    (relative path -> content): claimed and written like a run folder (`claim_new`, then every
    file, then `finish`), so nothing is ever overwritten and an interrupted write leaves no
    folder that passes for a whole one. `command` names the command in the refusal."""
    tmp = claim_new(final, command)
    try:
        for name, data in files.items():
            path = inside(tmp, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_file(path, data)
        finish(tmp, final, f"the folder {final.name}")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [final / name for name in files]


def claim(root: Path, run_id: str | None = None, base: str | None = None) -> Claim:
    """Reserve `run_id` (an error if taken or being written), or the first free id of `base`,
    `base-2`, `base-3`, ..."""
    root.mkdir(parents=True, exist_ok=True)
    clean_stale(root)
    if run_id is not None:
        check_run_id(root, run_id)
        tmp = reserve(root, run_id)
        if tmp is None:
            owner = _owner(root / f"{TMP_PREFIX}{run_id}")
            state = "is writing it" if _alive(owner) else "is gone; remove that folder"
            raise RunExistsError(f"run {run_id!r} is claimed by {root / (TMP_PREFIX + run_id)}"
                                 f"/ (process {owner.get('pid', '?')} {state}); choose another "
                                 "--run-id or omit it")
        return Claim(root, run_id, tmp)
    candidate, n = base, 1
    while True:
        if not taken(root, candidate):
            tmp = reserve(root, candidate)
            if tmp is not None:
                return Claim(root, candidate, tmp)
        n += 1
        candidate = f"{base}-{n}"


def write_run(claimed: Claim, meta: dict, rows: list[dict], traces: list[dict],
              metrics: dict, readout: list[dict] | None = None) -> Path:
    """Write the claimed run folder: every file into the temporary folder (readout.jsonl when
    `readout` rows are given), metrics.json last, the marker off, then a rename into place. On
    any failure nothing is left behind."""
    tmp, final = claimed.tmp, claimed.root / claimed.run_id
    try:
        write_file(tmp / META_FILE, dumps(meta))
        write_file(tmp / PREDICTIONS_FILE, dumps_lines(rows))
        write_file(tmp / TRACES_FILE, dumps_lines(traces))
        if readout is not None:
            write_file(tmp / READOUT_FILE, dumps_lines(readout))
        write_file(tmp / TABLE_MD_FILE, tables.score_table(meta, metrics["rows"], "md"))
        write_file(tmp / TABLE_TEX_FILE, tables.score_table(meta, metrics["rows"], "latex"))
        write_file(tmp / METRICS_FILE, dumps(metrics))
        finish(tmp, final, f"run {claimed.run_id!r}")
    except BaseException:
        claimed.release()
        raise
    return final
