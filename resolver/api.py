"""The public Python API: every name a user needs, importable from the top of the package.

    from resolver import load, bundled_path, live_plan_sets, resolve
    dataset, gold = load([bundled_path()])
    predictions = resolve(dataset, live_plan_sets(dataset))

`resolver/__init__.py` resolves these names lazily from this module (PEP 562), so `import
resolver` stays cheap and a name costs its imports only when it is first used. Everything
else under `resolver/` is internal by convention: its modules may move between releases, these
names do not.

This module sits at the top of the stages (beside `cli`): it may import every stage, and no
module of `resolver/` imports it, except the package's `__init__`, lazily (the one exception
tests/test_layout.py allows)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from resolver._version import __version__
from resolver.errors import (FactresError, InputError, MemoryFileError, MemoryLockedError,
                             ProvenanceError)
from resolver.haystack import Dataset, Gold, Question, bundled_path, load
from resolver.mab import harness
from resolver.memory.memory import Answer, Applied, IngestResult, Memory
from resolver.plan.planning import live_plan_sets
from resolver.plan.plans import PlanSet
from resolver.report.compare import Comparison, compare_runs
from resolver.results.reader import RunFolder, read_run
from resolver.run.config import MODES, RunConfig
from resolver.run.runs import Run, load_plan_sets
from resolver.run.runs import execute as _execute
from resolver.search.resolve import Prediction, resolve_dataset

__all__ = [
    "Answer", "Applied", "Comparison", "Dataset", "FactresError", "Gold", "IngestResult",
    "InputError", "Memory", "MemoryFileError", "MemoryLockedError", "PlanSet", "Prediction",
    "ProvenanceError", "Question",
    "Run", "RunConfig", "RunFolder", "__version__", "bundled_path", "compare_runs", "execute",
    "harness", "live_plan_sets", "load", "plan_sets", "read_run", "resolve",
]


def plan_sets(dataset: Dataset, specs: Sequence[str] = ("live:rules", "live:lexicon")
              ) -> list[PlanSet]:
    """The plan sets `specs` name, for the questions of `dataset`, as `factres run --plans`
    reads them.

    Args:
        dataset: the questions to plan (from `load`).
        specs: each `live:rules` or `live:lexicon` (compiled now by the current code), an
            archived set id (found under `$FACTRES_PLANS`, else the checkout's `plans/`) or an
            archived set's folder; one spec given alone stands for itself. Default: the live
            rule and lexicon sets, in that order.

    Returns:
        One `PlanSet` per spec, in the order given.

    Raises:
        InputError: an unknown live set, no spec given, or a spec that is not a string.
        ArchiveError: an archived set that is not found or fails its checksums (a
            `FactresError`).
    """
    if isinstance(specs, str):
        specs = (specs,)                 # one spec stands for itself, not for its letters
    if not specs:
        raise InputError("no plan set given", expected="live:rules, live:lexicon or a set id")
    specs = tuple(specs)
    if not all(isinstance(s, str) for s in specs):
        raise InputError(f"plan set specs must be names, not {_kinds(specs)}",
                         expected="live:rules, live:lexicon or a set id")
    sets, _records = load_plan_sets(dataset, specs)
    return sets


def resolve(dataset: Dataset, plan_sets: Sequence[PlanSet] | None = None, *,
            mode: str = "search") -> list[Prediction]:
    """Resolve every question of `dataset`, in question order. No gold is read.

    Args:
        dataset: the questions and their stores (from `load`).
        plan_sets: the plans to execute (one `PlanSet` alone stands for itself); default:
            `live_plan_sets(dataset)` (the live rule and lexicon sets, as `factres run` uses
            by default).
        mode: "search" (the scored path search, `factres run`'s default) or "plain" (the
            plans executed in order, latest version at every hop: the baseline).

    Returns:
        One `Prediction` per question: `answer` ("" when unanswered, `reason` says why), the
        winning path (`winner.hops`, `winner.terms`), the rival candidates and the
        `confidence` label.

    Raises:
        InputError: an unknown mode, or plan sets that are not `PlanSet`s (a spec such as
            "live:rules" goes to `plan_sets`).
    """
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}", expected=" or ".join(MODES))
    if isinstance(plan_sets, PlanSet):
        plan_sets = [plan_sets]          # one set stands for itself
    sets = live_plan_sets(dataset) if plan_sets is None else list(plan_sets)
    if not all(isinstance(s, PlanSet) for s in sets):
        raise InputError(f"plan_sets must be PlanSet objects, not {_kinds(sets)}",
                         expected="plan_sets(dataset, specs) or live_plan_sets(dataset); a "
                                  "spec such as 'live:rules' goes to plan_sets")
    return resolve_dataset(dataset, sets, mode=mode)


def _kinds(items) -> str:
    return ", ".join(sorted({type(i).__name__ for i in items}))


def execute(config: RunConfig | None = None, *, results_dir: str | Path | None = None,
        run_id: str | None = None, use_cache: bool = True, label: str | None = None) -> Run:
    """Resolve, score and record one run, as `factres run` does; return it. (Named `execute`:
    `resolver.run` is the run stage's subpackage.)

    Args:
        config: what to run (data, plan sets, split, mode, lanes); default `RunConfig()`: the
            bundled 6K dev rows, the live plan sets, the search, scored.
        results_dir: the results folder the run folder is written into; default
            `$FACTRES_RESULTS`, else `./factres-results`.
        run_id: the run folder's name (it must be new, and not a committed run's); default
            `<split>-<sizes>-<mode>-<hash>`.
        use_cache: read and write the parse cache (`$FACTRES_CACHE`).
        label: the run's label, its rows' name in the paper tables and `factres runs`
            (`factres run --name`); default `"factres <mode>"`.

    Returns:
        The `Run`: `run_id`, `path` (the finished folder), `meta`, `metrics`, `predictions`
        (the predictions.jsonl rows) and `table` (the Markdown score table).

    Raises:
        InputError: bad data, a results folder that cannot be written, a dev split without
            gold, and the other refusals `factres run` names. (A `RunConfig` with a field out of
            its range is refused when it is made, naming the field.)
        ProtocolError: a test run outside the dev/test protocol (no frozen configuration, a
            dirty tree).
        RunExistsError: `run_id` is taken.
        ArchiveError: a plan set that fails its checksums.
    """
    return _execute(config or RunConfig(), results=results_dir, run_id=run_id,
                   use_cache=use_cache, label=label)
