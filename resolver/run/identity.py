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
import subprocess
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
                out += [prefix + name for name in files
                        if os.path.splitext(name)[1] in _SOURCE_SUFFIXES
                        and os.path.isfile(os.path.join(folder, name))]
    return tuple(sorted(set(out)))


_SOURCE_SUFFIXES = (".py", ".txt", ".json", ".md")


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
    """Python's version and each VERSIONED distribution's (None for one not installed)."""
    # lazily: importlib.metadata loads the email package (about 20 ms); a run with workers
    # loads it while they search (`load_ahead` in runs.execute)
    from importlib import metadata
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


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
