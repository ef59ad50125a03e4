"""The folders `factres tables` and `--plot` read: score runs (meta.json + metrics.json) and
the oracle's N-best and ceiling folders (nbest.json, ceiling.json), with the source names they
carry. Both the paper tables and the figures read folders through here, so neither imports the
other for it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from resolver.errors import InputError
from resolver.run.result_schema import META_FILE, METRICS_FILE, TABLES_DIR, incomplete, results_root

DEFAULT_OUT = TABLES_DIR        # the tables' folder under the results folder (never read back)
SCORE, NBEST, CEILING = "score run", "oracle nbest", "oracle ceiling"
KIND_FILES = {NBEST: "nbest.json", CEILING: "ceiling.json"}
FC_SOURCE = re.compile(r"factconsolidation_(sh|mh)_(\d+k)\Z")
MH_SOURCE = re.compile(r"(?:^|_)mh(?:_|\Z)")


@dataclass(frozen=True)
class Folder:
    name: str                 # the folder's name, shown as provenance
    path: Path
    kind: str                 # SCORE, NBEST or CEILING
    data: dict                # SCORE: {"meta": ..., "metrics": ...}; else the oracle JSON


def source_order(source: str) -> tuple[int, str]:
    """Sources by size (6K before 32K), then by name."""
    match = re.search(r"_(\d+)k\Z", source)
    return (int(match[1]) if match else 1 << 30, source)


def folder_kind(path: Path) -> str | None:
    """What a folder holds, from its files; None when `factres tables` does not read it."""
    if (path / META_FILE).is_file() and (path / METRICS_FILE).is_file():
        return SCORE
    for kind, name in KIND_FILES.items():
        if (path / name).is_file():
            return kind
    return None


def _read_json(path: Path) -> dict:
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", path=str(path)) from None


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
        data = {"meta": _read_json(path / META_FILE), "metrics": _read_json(path / METRICS_FILE)}
    else:
        data = _read_json(path / KIND_FILES[kind])
    return Folder(path.name, path, kind, data)


def gather(refs: tuple[str, ...], results: str | Path | None = None) -> list[Folder]:
    """The folders named by `refs` (run ids under the results folder, or folder paths), in the
    order given; with no refs, every folder under the results folder that factres tables reads,
    by name (hidden folders and the tables folder itself are skipped)."""
    root = results_root(results)
    if refs:
        folders = []
        for ref in refs:
            path = Path(ref)
            if not path.is_dir():
                path = root / ref
            if not path.is_dir():
                raise InputError(f"no folder {ref!r}", path=str(path),
                                 expected="a run id under the results folder or a folder path")
            folders.append(read_folder(path))
        return folders
    if not root.is_dir():
        raise InputError("no results folder", path=str(root))
    paths = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                   and p.name != DEFAULT_OUT)
    return [read_folder(p) for p in paths if folder_kind(p) and not incomplete(p)]
