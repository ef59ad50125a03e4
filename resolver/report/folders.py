"""The folders `factres tables` and `--plot` read: score runs (meta.json + metrics.json +
predictions.jsonl) and the oracle's N-best and ceiling folders (nbest.json, ceiling.json), with
the source names they carry, all read through the one reader (`resolver.results.reader`). Both the
paper tables and the figures read folders through here, so neither imports the other for it.

Folders named on the command line must read; with none named, every folder under the results
folder is read and one that does not is skipped, never blocking the others: a folder whose
meta.json another tool wrote with a note, a broken one (bad JSON, a wrong shape, files that
disagree) with a warning naming it and why (`Skipped`)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from resolver.errors import ForeignFolderError, InputError
from resolver.results.reader import (
    folder_names,
    locate,
    oracle_content,
    read_oracle,
    read_run,
    run_content,
)
from resolver.results.result_schema import (
    CEILING_FILE,
    META_FILE,
    NBEST_FILE,
    TABLES_DIR,
    incomplete,
    label_of,
    results_root,
)

DEFAULT_OUT = TABLES_DIR        # the tables' folder under the results folder (never read back)
SCORE, NBEST, CEILING = "score run", "oracle nbest", "oracle ceiling"
KIND_FILES = {NBEST: NBEST_FILE, CEILING: CEILING_FILE}
FC_SOURCE = re.compile(r"factconsolidation_(sh|mh)_(\d+k)\Z")
MH_SOURCE = re.compile(r"(?:^|_)mh(?:_|\Z)")


@dataclass(frozen=True)
class Folder:
    name: str                 # the folder's name, shown as provenance
    path: Path
    kind: str                 # SCORE, NBEST or CEILING
    data: dict                # SCORE: {"meta", "metrics", "run_folder": the RunFolder (its
    #                           predictions, for --baseline)}; else the oracle JSON


@dataclass(frozen=True)
class Skipped:
    """A folder `gather` passed over, and why: `foreign` (another tool's; a note) or not (a
    folder factres cannot read; a warning)."""
    name: str
    reason: str
    foreign: bool


def source_order(source: str) -> tuple[int, str]:
    """Sources by size (6K before 32K), then by name."""
    match = re.search(r"_(\d+)k\Z", source)
    return (int(match[1]) if match else 1 << 30, source)


def folder_kind(path: Path) -> str | None:
    """What a folder holds, from its files; None when `factres tables` does not read it. A
    folder with a meta.json is a score run (its other files are the reader's to check)."""
    if (path / META_FILE).is_file():
        return SCORE
    for kind, name in KIND_FILES.items():
        if (path / name).is_file():
            return kind
    return None


def read_folder(path: Path) -> Folder:
    reason = incomplete(path)
    if reason:
        raise InputError(reason, path=str(path), expected="a finished run or oracle folder")
    kind = folder_kind(path)
    if kind is None:
        raise InputError("not a folder factres tables reads", path=str(path),
                         expected="a score run (meta.json and metrics.json) or an oracle "
                                  "folder with nbest.json or ceiling.json")
    if kind == SCORE:
        run = read_run(path)
        data = {"meta": run.meta, "metrics": run.metrics, "run_folder": run}
    else:
        data = read_oracle(path, KIND_FILES[kind])
    return Folder(path.name, path, kind, data)


def content_key(folder: Folder) -> tuple:
    """What makes two folders one, by content, not file bytes (verification W03, D07): a score
    run's id with each question's result (`reader.run_content`: prediction, em, gold, source
    by question id; two runs of one configuration have their own ids), an oracle folder's
    parsed JSON without its provenance (`reader.oracle_content`: written canonically, sorted
    keys, the run folder's name and the data paths left out)."""
    if folder.kind == SCORE:
        return (SCORE, *run_content(folder.data["run_folder"]))
    return (folder.kind, oracle_content(folder.data))


def _what(folder: Folder) -> str:
    if folder.kind == SCORE:
        return f"run (run id {folder.data['meta']['run_id']}, the same prediction rows)"
    return f"{KIND_FILES[folder.kind]} content (sha256 {content_key(folder)[1][:12]}... of " \
           "its parsed value, its run folder's name and data paths left out)"


def gather(refs: tuple[str, ...], results: str | Path | None = None,
           skipped: list[Skipped] | None = None) -> list[Folder]:
    """The folders named by `refs` (run ids under the results folder or, read only, the
    repository's committed results/, or folder paths), in the order given, each of which must
    read; with no refs, every folder under the results folder (not the committed one)
    that factres tables reads, by name (hidden and unfinished folders and the tables folder
    itself are left out), a folder that does not read passed over into `skipped`."""
    root = results_root(results)
    if refs:
        # each named folder: a path, else under the results folder, else the committed results/
        paths = [locate(ref, results, what="folder", runs_only=False) for ref in refs]
        seen: dict[Path, str] = {}
        for ref, path in zip(refs, paths):
            # one folder twice would be two identical rows, as if two runs agreed
            if path.resolve() in seen:
                raise InputError(f"folder {path.name} is given twice ({seen[path.resolve()]!r} "
                                 f"and {str(ref)!r})", expected="each folder once")
            seen[path.resolve()] = str(ref)
        folders = [read_folder(path) for path in paths]
        copies: dict[tuple, tuple[str, Folder]] = {}
        for ref, folder in zip(refs, folders):
            # a copy of one folder (another path, the same content) would be two identical
            # rows too, as if two analyses agreed (verification V14)
            key = content_key(folder)
            if key in copies:
                first_ref, first = copies[key]
                raise InputError(f"folders {first.name} and {folder.name} hold the same "
                                 f"{_what(folder)} ({first_ref!r} and {str(ref)!r}): a copy",
                                 expected="each folder once")
            copies[key] = (str(ref), folder)
        return folders
    if not root.is_dir():
        raise InputError("no results folder", path=str(root),
                         expected="a results folder holding run folders (without RUN, factres "
                                  "tables reads every folder there; name runs to read the "
                                  "repository's committed ones, or pass --results-dir results)")
    folders = []
    copies: dict[tuple, str] = {}
    for name in folder_names(root, runs_only=False):
        path = root / name
        if folder_kind(path) is None:
            continue
        try:
            folder = read_folder(path)
            key = content_key(folder)
            if key in copies:
                if skipped is not None:
                    skipped.append(Skipped(name, f"the same {_what(folder)} as "
                                                 f"{copies[key]}: a copy, read once", False))
                continue
            copies[key] = name
            folders.append(folder)
        except ForeignFolderError as exc:
            if skipped is not None:
                skipped.append(Skipped(name, exc.detail, True))
        except InputError as exc:
            if skipped is not None:
                skipped.append(Skipped(name, str(exc), False))
        except OSError as exc:            # a file that cannot be read (permissions, a folder)
            if skipped is not None:
                where = f"{exc.filename}: " if exc.filename else ""
                skipped.append(Skipped(name, f"{where}{exc.strerror or exc}", False))
    return folders


def run_labels(folders: list[Folder], given: dict[str, str] | None = None
               ) -> tuple[dict[str, str], list[str]]:
    """How mab-fc and its figure name each score run (folder name -> text): `given` first
    (`--label RUN=TEXT`), else its label (`result_schema.label_of`: `factres run --name`, an
    imported system's name, else "factres <mode>"). Two runs of one label would read as one
    system twice: the later ones get " (2)", " (3)", ...; the labels that clashed are returned
    too, for a note."""
    given = given or {}
    out, seen = {}, {}
    for folder in folders:
        if folder.kind != SCORE:
            continue
        text = given.get(folder.name) or label_of(folder.data["meta"])
        seen[text] = seen.get(text, 0) + 1
        out[folder.name] = text if seen[text] == 1 else f"{text} ({seen[text]})"
    return out, [text for text, n in seen.items() if n > 1]
