"""The dev/test protocol: dev is 6K, test is 32K, 64K and 262K, and a test run names a frozen
configuration.

`freeze` records what decides a run's answers: each plan set (an archived set by the sha256 of
its plans.jsonl and manifest.json; a live set, whose plans the current code computes, by the
sha256 of its compiler sources), the search weights (`search.weights()`, by name), the grammar's
sha256, the sha256 of every file of the installed packages (resolver/ and oracle/: code,
grammar, prompts, bundled data), the Python and dependency versions, the mode and the lanes, and
the commit it was frozen at. The file carries the sha256 of its own content and is never
overwritten.

`admit` is the gate `runs.execute` passes first. A test run needs a frozen configuration that
matches the current files, versions, plans and weights, and a clean git tree; otherwise it is
refused, naming every mismatch (each file that changed, appeared or went away), unless
`allow_dirty` is set, in which case it runs and its meta.json records `protocol` with
`frozen: false` or `allow_dirty: true`, and every table row built from it is marked. A dev
run is never refused for a dirty tree or a missing configuration; if it names one, it is
checked the same way. A later commit whose package files all match is no mismatch (a commit of
results or docs changes no prediction): the record names both commits."""
from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from resolver._version import __version__
from resolver.errors import FEW, ArchiveError, InputError, ProtocolError, first_few
from resolver.haystack import sha256_bytes
from resolver.results.result_schema import dumps
from resolver.run import identity
from resolver.run.config import RunConfig
from resolver.run.identity import (
    LIVE_COMPILER_FILES,
    package_files,
    package_versions,
    source_hashes,
)
from resolver.search.path_search import weights
from resolver.text.grammar import grammar_sha256

FROZEN_SCHEMA = "factres.frozen/2"
# /1 pinned three lists of sources only: a change elsewhere ran as frozen. Refused, not read.
OLD_SCHEMAS = ("factres.frozen/1",)
LIVE_PREFIX = "live:"
# The official sizes of each split; sources of other names (hand-written sets) are in neither.
DEV_SIZES = ("6k",)
TEST_SIZES = ("32k", "64k", "262k")
NEITHER = "neither"
_OFFICIAL = re.compile(r"factconsolidation_(?:sh|mh)_(\d+k)$")


def source_split(source: str) -> str:
    """The split a source belongs to: "dev" (an official FactConsolidation source of 6K),
    "test" (of 32K, 64K or 262K), or "neither" (any other source: a hand-written question set,
    even one named for a size, or another size). `factres run` and `factres score` both say it
    so."""
    m = _OFFICIAL.match(source)
    if m is None:
        return NEITHER
    return "dev" if m.group(1) in DEV_SIZES else "test" if m.group(1) in TEST_SIZES else NEITHER


def off_split_sources(split: str, sources) -> list[str]:
    """The official FactConsolidation sources of the data whose size belongs to the other
    split (6K scored blind, or a test size scored as dev). Recorded in meta.json and warned
    about, not refused: the gate is the frozen configuration and the clean tree."""
    other = "test" if split == "dev" else "dev"
    return [source for source in sorted(set(sources)) if source_split(source) == other]


def neither_split_note(sources) -> str | None:
    """The note for sources in neither split (`source_split`), the same from `factres run` and
    `factres score`; None when every source is an official one."""
    neither = sorted({s for s in sources if source_split(s) == NEITHER})
    if not neither:
        return None
    what = "is no official FactConsolidation source" if len(neither) == 1 else \
        "are no official FactConsolidation sources"
    return (f"{first_few(neither)} {what} (factconsolidation_sh/mh_<size>): in neither split "
            "(dev is 6K; test is 32K, 64K and 262K), and in no column of the mab-fc table")


def live_set_name(spec: str) -> str:
    """The compiler a "live:NAME" spec names; InputError for one factres does not have."""
    from resolver.plan.planning import LIVE_SETS
    name = spec[len(LIVE_PREFIX):]
    if name not in LIVE_SETS:
        raise InputError(f"unknown live plan set {spec!r}",
                         expected=", ".join(LIVE_PREFIX + n for n in LIVE_SETS))
    return name


def plan_set_state(spec: str) -> dict[str, Any]:
    """What pins a plan set: compiler sources for a live set, file checksums for an archive."""
    if spec.startswith(LIVE_PREFIX):
        live_set_name(spec)
        return {"spec": spec, "source": "live",
                "compiler_sha256": source_hashes(LIVE_COMPILER_FILES)}
    from resolver.plan.archive import MANIFEST_FILE, PLANS_FILE, set_dir, verify_plan_set
    problems = verify_plan_set(spec)
    if problems:
        raise ArchiveError(f"plan set {spec!r} failed verification: {problems[0]}")
    folder = set_dir(spec)
    return {"spec": spec, "source": "archive",
            "files_sha256": {name: sha256_bytes((folder / name).read_bytes())
                             for name in (PLANS_FILE, MANIFEST_FILE)}}


def current_state(plans: tuple[str, ...], mode: str, reader: str | None = None,
                  repair: str | None = None) -> dict[str, Any]:
    """The frozen-configuration body the current checkout gives for these choices."""
    return {"schema": FROZEN_SCHEMA, "factres": __version__, "mode": mode,
            "reader": reader, "repair": repair,
            "plan_sets": [plan_set_state(spec) for spec in plans],
            "search_weights": weights(), "grammar_sha256": grammar_sha256(),
            "files_sha256": package_files(), "versions": package_versions(),
            "commit": identity.git_state()["commit"]}


def _body_sha256(body: dict) -> str:
    return sha256_bytes(dumps({k: v for k, v in body.items() if k != "sha256"}))


def freeze(plans: tuple[str, ...], mode: str = "search", reader: str | None = None,
           repair: str | None = None) -> dict[str, Any]:
    """A frozen configuration of the current checkout, with the sha256 of its content. The
    lanes are checked as `factres run` checks them: a spec it would refuse is never frozen."""
    # lazily: the model client's module loads its HTTP stack, which a run without lanes
    # never needs
    from resolver.models.ollama_client import model_of
    for spec in (reader, repair):
        if spec is not None:
            model_of(spec)
    body = current_state(plans or RunConfig().plan_specs(), mode, reader, repair)
    body["sha256"] = _body_sha256(body)
    return body


def write_frozen(path: str | Path, frozen: dict) -> Path:
    """Write a frozen configuration; an existing file is never overwritten."""
    path = Path(path)
    try:
        if path.parent and not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        if path.exists():
            raise ProtocolError(f"{path} exists: a frozen configuration is never overwritten; "
                                "freeze into a new file") from None
        raise InputError("cannot create the frozen configuration: a parent is a file",
                         path=str(path), expected="a path in a writable folder") from None
    except OSError as exc:
        raise InputError(f"cannot write the frozen configuration: {exc.strerror or exc}",
                         path=str(path), expected="a path in a writable folder") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(dumps(frozen))
    return path


def load_frozen(path: str | Path) -> dict[str, Any]:
    """A frozen configuration, checked against its own sha256."""
    path = Path(path)
    try:
        frozen = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise InputError("no such frozen configuration", path=str(path)) from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", path=str(path)) from None
    if isinstance(frozen, dict) and frozen.get("schema") in OLD_SCHEMAS:
        raise ProtocolError(f"{path} was frozen by an older factres ({frozen['schema']}), which "
                            "pinned only part of the code; freeze a new configuration")
    if not isinstance(frozen, dict) or frozen.get("schema") != FROZEN_SCHEMA:
        raise InputError("not a frozen configuration", path=str(path),
                         expected=f'"schema": "{FROZEN_SCHEMA}" (write one with factres freeze)')
    if frozen.get("sha256") != _body_sha256(frozen):
        raise ProtocolError(f"{path}: content does not match its sha256: the frozen "
                            "configuration was edited after freezing")
    return frozen


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) == 64:
        return value[:12] + "..."
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def mismatches(frozen: dict, now: dict) -> list[str]:
    """Every difference between a frozen configuration and the current state, one line each."""
    out = []
    for key, label in (("factres", "factres version"), ("mode", "mode"), ("reader", "reader"),
                       ("repair", "repair"), ("grammar_sha256", "grammar sha256")):
        if frozen.get(key) != now.get(key):
            out.append(f"{label}: frozen {_short(frozen.get(key))}, now {_short(now.get(key))}")
    for key, label in (("search_weights", "search weight"), ("versions", "version of")):
        a, b = frozen.get(key) or {}, now.get(key) or {}
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                out.append(f"{label} {name}: frozen {_short(a.get(name))}, "
                           f"now {_short(b.get(name))}")
    a, b = frozen.get("files_sha256") or {}, now.get("files_sha256") or {}
    for name in sorted(set(a) | set(b)):
        if name not in b:
            out.append(f"file {name}: frozen {_short(a[name])}, now missing")
        elif name not in a:
            out.append(f"file {name}: not in the frozen configuration, now {_short(b[name])}")
        elif a[name] != b[name]:
            out.append(f"file {name} changed: frozen {_short(a[name])}, now {_short(b[name])}")
    old_sets, new_sets = frozen.get("plan_sets") or [], now.get("plan_sets") or []
    if [s.get("spec") for s in old_sets] != [s.get("spec") for s in new_sets]:
        out.append(f"plan sets: frozen {_short([s.get('spec') for s in old_sets])}, "
                   f"now {_short([s.get('spec') for s in new_sets])}")
    else:
        for a, b in zip(old_sets, new_sets):
            for field in ("compiler_sha256", "files_sha256"):
                fa, fb = a.get(field) or {}, b.get(field) or {}
                for name in sorted(set(fa) | set(fb)):
                    if fa.get(name) != fb.get(name):
                        out.append(f"plan set {a['spec']} {name}: frozen "
                                   f"{_short(fa.get(name))}, now {_short(fb.get(name))}")
    return out


def admit(config):
    """(config to run, protocol record for meta.json), or ProtocolError saying why not.
    A frozen configuration supplies the plan sets and mode when the config leaves them out."""
    test = config.split == "test"
    git = identity.git_state()
    record: dict[str, Any] = {"split": config.split, "frozen": False, "frozen_config": None,
                              "frozen_sha256": None, "frozen_commit": None, "mismatches": [],
                              "allow_dirty": bool(config.allow_dirty),
                              "dirty": git["dirty"], "commit": git["commit"]}
    if config.frozen is None:
        if test and not config.allow_dirty:
            raise ProtocolError("a test run needs a frozen configuration: pass --config FILE "
                                "(write one with factres freeze), or --allow-dirty to run "
                                "unfrozen, marked so in meta.json and in every table row")
        return replace(config, mode=config.mode or "search"), record
    frozen = load_frozen(config.frozen)
    specs = tuple(s["spec"] for s in frozen.get("plan_sets", []))
    if config.plans and tuple(config.plans) != specs:
        raise ProtocolError(f"--plans {' '.join(config.plans)} differs from the plan sets of "
                            f"{config.frozen}: {' '.join(specs)} (omit --plans to use them)")
    config = replace(config, plans=specs, mode=config.mode or frozen.get("mode") or "search")
    found = mismatches(frozen, current_state(specs, config.mode, config.reader, config.repair))
    record.update({"frozen_config": str(config.frozen), "frozen_sha256": frozen["sha256"],
                   "frozen_commit": frozen.get("commit"), "mismatches": found,
                   "frozen": not found})
    if found and not config.allow_dirty:
        raise ProtocolError(f"this checkout differs from the frozen configuration "
                            f"{config.frozen}:\n" + "\n".join(f"  - {m}" for m in found)
                            + "\nfreeze a new configuration (a new file) for a new test run, "
                              "or pass --allow-dirty to run marked as unfrozen")
    if test and not config.allow_dirty and git["dirty"] is not False:
        if git["dirty"]:
            files = identity.dirty_files()
            reason = (f"the working tree has uncommitted changes to {len(files)} tracked "
                      f"file{'s' if len(files) != 1 else ''}: {first_few(files, FEW)}"
                      if files else "the working tree has uncommitted changes to tracked files")
        else:
            reason = "cannot tell whether the tree is clean (no git checkout)"
        raise ProtocolError(f"a test run needs a clean tree: {reason}; commit first, or pass "
                            "--allow-dirty to run marked as dirty")
    return config, record
