"""Reading a run folder (`results/<run-id>/`, shapes in `resolver.run.result_schema`) back for the
oracle: its rows, its traces rebuilt into `Candidate`s (`resolver.search.candidates`), and its
data re-read from the paths its meta.json names (or, when a path is gone, a file with its
recorded sha256)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from resolver.errors import InputError
from resolver.haystack import Dataset, Gold, bundled_path, load, sha256_bytes
from resolver.plan.plans import Plan
from resolver.run.result_schema import (
    META_FILE,
    PREDICTIONS_FILE,
    TRACES_FILE,
    incomplete,
    loads_lines,
    results_root,
)
from resolver.search.candidates import Candidate, Hop

SEARCH_SET = "search"      # candidates the search enumerated without a plan set


@dataclass
class Run:
    path: Path
    meta: dict
    predictions: list[dict]           # predictions.jsonl rows, in file order
    traces: dict[str, dict]           # qid -> traces.jsonl row

    @property
    def run_id(self) -> str:
        return self.meta.get("run_id") or self.path.name

    @property
    def plan_sets(self) -> list[str]:
        """The run's plan sets in the order the resolver tried them (meta.json), then any other
        set named by a candidate (the search's own enumeration last)."""
        sets = [r["set_id"] for r in self.meta.get("plan_sets", [])]
        extra = sorted({c.get("plan_set") or SEARCH_SET for t in self.traces.values()
                        for c in t.get("candidates", [])} - set(sets) - {SEARCH_SET})
        seen_search = any((c.get("plan_set") or SEARCH_SET) == SEARCH_SET
                          for t in self.traces.values() for c in t.get("candidates", []))
        return sets + extra + ([SEARCH_SET] if seen_search and SEARCH_SET not in sets else [])

    def load_data(self) -> tuple[Dataset, Gold]:
        return load_run_data(self.path, self.meta)


def locate_data(name: str, meta: dict, run_path: Path) -> str:
    """The data file a run names, found again when its recorded path is gone: a run records
    the path it was given (absolute for the bundled default, so a run made in another checkout
    names that checkout). Tried in order: the path as recorded; a relative path from the
    checkout the run folder sits in (results/<run>/ -> ..); the bundled file of the same name.
    Each stand-in must have the sha256 meta.json records for the path."""
    if Path(name).exists():
        return name
    want = (meta.get("data_sha256") or {}).get(name)
    tried = [name]
    candidates = [bundled_path(Path(name).name)]
    if not Path(name).is_absolute():
        candidates.insert(0, run_path.resolve().parent.parent / name)
    for candidate in candidates:
        tried.append(str(candidate))
        if want and candidate.is_file() and sha256_bytes(candidate.read_bytes()) == want:
            return str(candidate)
    raise InputError(f"the run's data file is gone (tried {', '.join(tried)})",
                     path=str(run_path / META_FILE),
                     expected="the data file it names, or a copy with the sha256 meta.json "
                              "records for it")


def load_run_data(run_path: Path, meta: dict) -> tuple[Dataset, Gold]:
    """The dataset and gold book a run was made from, its files found by `locate_data`."""
    paths = meta.get("data") or []
    if not paths:
        raise InputError("meta.json names no data files", path=str(run_path / META_FILE),
                         expected='a "data" list of haystack paths')
    return load([locate_data(p, meta, run_path) for p in paths])


def find_run(run: str | Path, root: str | Path | None = None) -> Path:
    """A run folder given as a path or as a run id under the results folder (`root`, else
    $FACTRES_RESULTS, else ./results); an unfinished folder is refused."""
    path = Path(run)
    if not (path / META_FILE).exists():
        under = results_root(root) / str(run)
        if (under / META_FILE).exists():
            path = under
        else:
            raise InputError(f"no run folder {str(run)!r} (looked for {path / META_FILE} and "
                             f"{under / META_FILE})", expected="a run id under the results "
                             "folder (--results-dir, $FACTRES_RESULTS or ./results) or a run "
                             "folder path")
    reason = incomplete(path)
    if reason:
        raise InputError(reason, path=str(path), expected="a finished run folder")
    return path


def load_run(run: str | Path, root: str | Path | None = None, need_traces: bool = True) -> Run:
    """A finished run read back; without `need_traces` a folder with no traces.jsonl reads as
    one with no traces (`factres explain` sets a prediction against gold paths without them)."""
    path = find_run(run, root)
    for name in (PREDICTIONS_FILE,) + ((TRACES_FILE,) if need_traces else ()):
        if not (path / name).exists():
            raise InputError(f"run folder has no {name}", path=str(path))
    try:
        meta = orjson.loads((path / META_FILE).read_bytes())
        predictions = loads_lines((path / PREDICTIONS_FILE).read_bytes())
        traces_file = path / TRACES_FILE
        traces = {t["qid"]: t for t in loads_lines(traces_file.read_bytes())} \
            if traces_file.exists() else {}
    except (orjson.JSONDecodeError, KeyError) as exc:
        raise InputError(f"run folder is not readable: {exc}", path=str(path)) from None
    return Run(path, meta, predictions, traces)


def hop_from_json(obj: dict) -> Hop:
    return Hop(obj["subject"], obj["relation"], obj["object"], obj.get("serial", -1),
               obj.get("line", 0), obj.get("text", ""), obj.get("version", 0),
               obj.get("reverse", False),
               tuple(tuple(p) for p in obj.get("passed_over", ())), obj.get("status", ""))


def candidate_from_json(obj: dict) -> Candidate:
    plan = Plan.from_json(obj["plan"]) if obj.get("plan") else None
    return Candidate(plan, obj.get("plan_set") or SEARCH_SET,
                     tuple(hop_from_json(h) for h in obj.get("hops", ())), obj.get("answer", ""),
                     float(obj.get("score", 0.0)),
                     tuple((k, v) for k, v in obj.get("terms", ())), obj.get("complete", True))


def select(candidates: list[Candidate]) -> Candidate | None:
    """The resolver's own selection rule (`resolver.search.path_search.select`)."""
    from resolver.search.path_search import select as resolver_select
    return resolver_select(candidates)
