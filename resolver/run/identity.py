"""What identifies the code and the environment behind a run: the sha256 of the source files that
decide predictions, of every file of the installed packages, the package versions, and the git
commit and dirtiness of the checkout.

runs.py records these in meta.json and in the run id's hash; protocol.py freezes and compares
them (`package_files`: every file, so no change to code, grammar, prompts or bundled data can
slip past a frozen configuration). Neither imports the other for it (this module sits below
both)."""
from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from importlib.machinery import PathFinder
from pathlib import Path

from resolver.haystack import sha256_bytes

# The resolver package's root folder: the source files below are named relative to it.
PACKAGE = Path(__file__).resolve().parent.parent


def _stage_files(*parts: str) -> tuple[str, ...]:
    """Every source and prompt file of the named stage folders and top-level modules, relative
    to the package root, sorted. Whole folders, not lists of modules: a module added to a stage
    is hashed without anyone remembering to name it."""
    out = []
    for part in parts:
        path = PACKAGE / part
        if path.is_file():
            out.append(part)
        elif path.is_dir():
            # os.walk, not Path.rglob (a third of the time; the two lists below are built at
            # every start): the same files, symlinked folders not entered, __pycache__ left out
            for folder, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                rel = Path(folder).relative_to(PACKAGE).as_posix()
                prefix = "" if rel == "." else rel + "/"
                out += [prefix + name for name in files if _suffix(name) in _SOURCE_SUFFIXES
                        and os.path.isfile(os.path.join(folder, name))]
    return tuple(sorted(set(out)))


_SOURCE_SUFFIXES = (".py", ".txt", ".json", ".md")


def _suffix(name: str) -> str:
    """`Path(name).suffix`."""
    at = name.rfind(".")
    return name[at:] if 0 < at < len(name) - 1 else ""


# What makes the live plans: the reading of questions over the store, the compilers, and the
# search module the lexicon compiler's typed readings share (meta.json's compiler_sha256 of a
# live plan set; a frozen configuration's live sets).
LIVE_COMPILER_FILES = _stage_files("__init__.py", "_version.py", "errors.py", "strict_json.py", "haystack.py",
                                   "hub.py", "text", "store", "plan", "search/path_search.py")
# What decides a run's predictions and scores (the run id's config hash): every stage from the
# text up to the search, the model lanes (reader and repair answer or re-plan), and scoring
# (with MemoryAgentBench's exact match it scores by); and the readout renderer with the
# escaping of its lines, which decide readout.jsonl.
RESOLVER_FILES = _stage_files("__init__.py", "_version.py", "errors.py", "strict_json.py",
                              "haystack.py", "hub.py", "text", "store", "plan", "models",
                              "search", "metrics/scoring.py", "mab/__init__.py",
                              "mab/exact_match.py", "memory/readout.py", "escape.py")
LEXICON_FILES = ("plan/lexicon.py", "plan/compile_lexicon.py", "plan/signatures.py",
                 "plan/asked.py")
VERSIONED = ("factres", "lark", "orjson", "numpy", "click", "ollama")
# The installed packages whose files a frozen configuration pins: resolver/ and, beside it,
# oracle/ (located by folder, never imported: resolver does not import oracle).
PACKAGES = ("resolver", "oracle")
# Files that are not the package's content: caches of compiled code.
_NOT_CONTENT = ("__pycache__",)


def source_hashes(names: tuple[str, ...]) -> dict[str, str]:
    """resolver/<name> -> sha256 for the files of `names` that exist."""
    return {f"resolver/{n}": sha256_bytes((PACKAGE / n).read_bytes())
            for n in names if (PACKAGE / n).is_file()}


def package_files() -> dict[str, str]:
    """"<package>/<path>" -> sha256 of every file of the installed packages: sources, the
    grammar (through the resolver/grammars link), prompts, bundled data. Sorted by name."""
    out = {}
    for name in PACKAGES:
        top = PACKAGE.parent / name
        if not top.is_dir():
            continue
        for folder, dirs, files in os.walk(top, followlinks=True):
            dirs[:] = sorted(d for d in dirs if d not in _NOT_CONTENT)
            for file in files:
                if file.endswith((".pyc", ".pyo")):
                    continue
                path = Path(folder) / file
                out[path.relative_to(PACKAGE.parent).as_posix()] = sha256_bytes(path.read_bytes())
    return dict(sorted(out.items()))


def package_versions() -> dict[str, str | None]:
    """Python's version and each VERSIONED distribution's, as `importlib.metadata.version`
    gives it (None for one not installed)."""
    return {"python": platform.python_version()} | installed_versions(VERSIONED)


# What importlib.metadata takes for a distribution's name in a metadata folder's name, and for
# a header line of its METADATA (the email package's header pattern, a name of one or more
# characters).
_NAME_SEPARATORS = re.compile(r"[-_.]+")
_HEADER = re.compile(r"([\041-\071\073-\176]+):(.*)")


def _normalized(name: str) -> str:
    return _NAME_SEPARATORS.sub("-", name).lower().replace("-", "_")


def installed_versions(names: tuple[str, ...]) -> dict[str, str | None]:
    """name -> `importlib.metadata.version(name)`, None where it raises PackageNotFoundError,
    read the way it reads it but without importing it: importlib.metadata loads the email
    package, zipfile and csv (about 20 ms of every run) to read one header. The first
    `sys.path` folder holding a `<name>-*.dist-info` or `.egg-info` entry (importlib's name
    normalisation; the first in `os.listdir` order, as importlib takes it) gives METADATA, else
    PKG-INFO, else the entry itself as a file, and its `Version` header. Anything past that
    plain layout (another finder of distributions, a zip or egg on the path, a header folded
    over lines before it, no Version header) is left to importlib.metadata itself, so the
    answer is always its answer (tests/test_installed_versions.py compares them)."""
    if any(getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
           for finder in sys.meta_path):
        return {name: _importlib_version(name) for name in names}
    lookups: dict[str, dict[str, str] | None] = {}
    return {name: _installed_version(name, lookups) for name in names}


def _installed_version(name: str, lookups: dict[str, dict[str, str] | None]) -> str | None:
    wanted = _normalized(name)
    for entry in sys.path:
        root = os.fspath(entry)
        if root not in lookups:
            lookups[root] = _metadata_entries(root)
        if lookups[root] is None:
            return _importlib_version(name)
        child = lookups[root].get(wanted)
        if child is not None:
            version = _version_header(Path(root, child))
            return version if version is not None else _importlib_version(name)
    return None


def _metadata_entries(root: str) -> dict[str, str] | None:
    """Normalised name -> the first metadata entry of that name in the folder `root` ({} for a
    path that is no folder), or None for a path importlib reads otherwise (an egg, a zip)."""
    if os.path.basename(root).lower().endswith(".egg"):
        return None
    try:
        children = os.listdir(root or ".")
    except Exception:
        return None if os.path.isfile(root) else {}   # a file: a zip archive importlib opens
    out: dict[str, str] = {}
    for child in children:
        low = child.lower()
        if low.endswith((".dist-info", ".egg-info")):
            out.setdefault(_normalized(low.rpartition(".")[0].partition("-")[0]), child)
    return out


def _version_header(folder: Path) -> str | None:
    """The Version header of a metadata folder (or egg-info file) when its headers up to it are
    one line each, else None (left to importlib.metadata)."""
    for file in ("METADATA", "PKG-INFO", ""):
        try:
            text = folder.joinpath(file).read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, KeyError, NotADirectoryError,
                PermissionError):
            continue
        if text:
            break
    else:
        return None
    lines = text.split("\n")
    for at, line in enumerate(lines):
        header = _HEADER.fullmatch(line)
        if header is None or line.splitlines() != [line]:
            return None         # a folded line, the headers' end, or a break the parser splits at
        if header[1].lower() == "version":
            after = lines[at + 1] if at + 1 < len(lines) else ""
            return None if after[:1] in (" ", "\t") else header[2].lstrip(" \t")
    return None


def _importlib_version(name: str) -> str | None:
    from importlib import metadata  # lazily: only a layout installed_version does not read
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_state() -> dict:
    """Commit and dirtiness of the checkout the package runs from (None outside git).
    Dirty means tracked files differ from the commit; untracked files (new runs under
    results/, say) do not count."""
    repo = PACKAGE.parent
    try:
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                 "--untracked-files=no"], check=True, capture_output=True,
                                text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def dirty_files() -> list[str]:
    """The tracked files of the checkout that differ from its commit (staged or not), as git
    names them relative to the checkout, sorted; [] outside git or on a clean tree. What a
    refused test run names."""
    repo = PACKAGE.parent
    try:
        status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "-z",
                                 "--untracked-files=no"], check=True, capture_output=True,
                                text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    out, entries = [], iter(status.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, name = entry[:2], entry[3:]
        if "R" in code or "C" in code:        # a rename or copy: its source path follows
            next(entries, None)
        out.append(name)
    return sorted(set(out))
