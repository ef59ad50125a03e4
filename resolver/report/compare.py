"""Runs side by side, question by question (`factres compare`): is the difference between two
systems real?

The first run is the baseline, A; every other run, B, is compared with it over the questions
both have, from their per-question EM (predictions.jsonl, through the one reader,
`resolver.results.reader`). Per source (a source is one kind at one size, e.g.
`factconsolidation_mh_6k`) and pooled per kind: both EMs, the difference B - A with its paired
bootstrap 95% interval, the exact McNemar test (two-sided p), the counts of questions only A
and only B answers right, and the ids of those questions (the flips). The statistics are
`resolver.metrics.stats` (scipy.stats): one random stream per source, so a source's interval is the
same whichever other runs or sources are compared beside it.

Pooled rows follow the benchmark's convention, the mean over sizes (each size weighs the same,
as metrics.json's pooled rows): "pooled sh" and "pooled mh" over the sizes of their kind,
"pooled all" over every single-hop and multi-hop source (when both kinds are there). Their
interval resamples within each size (`stratified_paired_bootstrap`); their test is the exact
McNemar test stratified by size, which is the exact test on the discordant questions summed
over the sizes (`stratified_mcnemar`, where the why is written down).

Refused, each before anything is computed or written, naming the run (its folder) and the
question: a run that is not found or does not read (an unfinished or incomplete folder, files
that disagree: the reader's errors); a run given twice; an unscored run (the test split: no
gold was read, so there is no per-question EM); runs that hold a shared question id with
another source, question text or gold; runs over different question sets, naming how many
questions each lacks, unless `intersect`, which compares the questions every run has and
records how many were dropped per source. Rendering is `compare_report`'s."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from resolver.errors import InputError
from resolver.metrics.scoring import KIND_ORDER, size_order
from resolver.metrics.stats import (
    LEVEL,
    RESAMPLES,
    SEED,
    McNemar,
    check_bootstrap,
    mcnemar_exact,
    paired_bootstrap,
    stratified_mcnemar,
    stratified_paired_bootstrap,
)
from resolver.results.reader import RunFolder, read_run, refuse_copies
from resolver.results.result_schema import IMPORTED_KIND, PREDICTIONS_FILE

SIGNIFICANCE = 0.05        # the level `factres tables --baseline` marks cells at
POOLED_KINDS = KIND_ORDER  # kinds with pooled rows; "all" pools both when both are there


@dataclass(frozen=True)
class RunSide:
    """A run as the comparison names it."""
    name: str                     # its folder's name
    run_id: str
    kind: str                     # "resolver" or "imported"
    label: str                    # plan sets, mode and reader; or the imported system
    questions: int                # questions in the run
    missing: int                  # imported: questions with no prediction in its files
    abstain_below: str | None = None   # --abstain-below: the level answers below were emptied
    abstained: int = 0            # ... and how many were


@dataclass(frozen=True)
class Row:
    """One source (or one pooled kind) of a pair of runs, over the questions both have."""
    label: str                    # the source, or "pooled sh" / "pooled mh" / "pooled all"
    kind: str
    sizes: tuple[str, ...]        # the sizes the row covers
    pooled: bool
    n: int                        # questions
    em_a: float                   # pooled: the mean over the sources (sizes)
    em_b: float
    difference: float             # em_b - em_a
    ci: tuple[float, float]       # paired bootstrap interval of the difference
    a_only: int                   # questions only A answers right
    b_only: int                   # questions only B answers right
    p: float                      # exact McNemar, two-sided (pooled: stratified by size)
    a_only_ids: tuple[str, ...]   # the flips, in the baseline's question order
    b_only_ids: tuple[str, ...]


@dataclass(frozen=True)
class Pair:
    a: RunSide                    # the baseline
    b: RunSide
    rows: tuple[Row, ...]         # per source (sh, then mh, sizes ascending), then pooled


@dataclass(frozen=True)
class Dropped:
    """Questions of one source that --intersect left out: some run lacks them."""
    source: str
    dropped: int
    lacking: tuple[tuple[str, int], ...]   # (run name, questions of the source it lacks)


@dataclass(frozen=True)
class Comparison:
    """What `compare_runs` computes: the runs (baseline first), one `Pair` per other run (its
    `rows`: per source, then pooled per kind, each with both EMs, the difference, its paired
    bootstrap interval, the discordant counts, the exact McNemar p and the flipped ids), the
    questions compared per source, what --intersect dropped, and the bootstrap's settings.
    `resolver.report.compare_report` renders it as Markdown, LaTeX or JSON."""
    runs: tuple[RunSide, ...]     # the baseline first
    pairs: tuple[Pair, ...]       # the baseline against each other run, in the order given
    intersect: bool
    shared: tuple[tuple[str, int], ...]    # source -> questions compared, in row order
    dropped: tuple[Dropped, ...]  # with intersect: per source, when some were dropped
    resamples: int
    seed: int
    level: float
    # what the reader could not check ("RUN: ..."): a run's data not found, say
    notes: tuple[str, ...] = ()


# ---- the runs' outcomes -----------------------------------------------------------------------
@dataclass(frozen=True)
class Outcomes:
    """A scored run's per-question rows, by question id (file order), and its sources' kinds."""
    side: RunSide
    path: Path
    rows: dict[str, dict]                  # qid -> predictions.jsonl row
    kinds: dict[str, tuple[str, str]]      # source -> (kind, size), from metrics.json


def describe(run: RunFolder) -> str:
    """How the comparison names what a run is: its plan sets, mode and reader; or, for an
    imported run, the system."""
    meta = run.meta
    if run.kind == IMPORTED_KIND:
        return f"{meta['system']} (imported)"
    sets = " + ".join(r["set_id"] for r in meta.get("plan_sets", [])) or "no plan set"
    mode = (meta.get("config") or {}).get("mode") or "search"
    reader = meta.get("reader") or "none"
    level = (meta.get("config") or {}).get("abstain_below")
    return (f"{sets}, {mode}" + (f", reader {reader}" if reader != "none" else "")
            + (f", abstaining below {level}" if level else ""))


def outcomes(run: RunFolder) -> Outcomes:
    """The per-question outcomes of a read run; an unscored run is refused."""
    if not run.scored:
        raise InputError(f"run {run.name} is unscored (split {run.meta['split']}: its gold was "
                         "never read), so it has no per-question EM to compare",
                         path=str(run.path), expected="scored runs (the dev split, or "
                         "imported runs)")
    missing = (run.meta.get("counts") or {}).get("missing", 0) \
        if run.kind == IMPORTED_KIND else 0
    level = (run.meta.get("config") or {}).get("abstain_below") \
        if run.kind != IMPORTED_KIND else None
    side = RunSide(run.name, run.run_id, run.kind, describe(run), len(run.predictions),
                   missing, level, (run.meta.get("counts") or {}).get("abstained", 0)
                   if level else 0)
    kinds = {r["source"]: (r["kind"], r["size"]) for r in run.metrics["rows"] if not r["pooled"]}
    rows = {r["qid"]: r for r in run.predictions}
    return Outcomes(side, run.path, rows, kinds)


def _source_order(kinds: dict[str, tuple[str, str]]):
    def key(source: str):
        kind, size = kinds[source]
        return (KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER),
                size_order(size), source)
    return key


def check_agreement(runs: Sequence[Outcomes], qids) -> None:
    """Every run holds each of `qids` with the same source, question text and gold (scoring
    takes the best over the answers, so their order does not matter); the first disagreement is
    an error naming both runs and the question."""
    first = runs[0]
    for other in runs[1:]:
        for qid in qids:
            mine, theirs = first.rows[qid], other.rows[qid]
            for field, shown in (("source", "source"), ("question", "question text"),
                                 ("gold", "gold")):
                a, b = mine[field], theirs[field]
                if field == "gold":
                    a, b = sorted(a), sorted(b)
                if a != b:
                    raise InputError(
                        f"runs {first.side.name} and {other.side.name} disagree on question "
                        f"{qid!r}: its {shown} is {a!r} in {first.side.name} and {b!r} in "
                        f"{other.side.name}", path=str(other.path / PREDICTIONS_FILE),
                        expected="runs over the same rows (one source, question and gold per "
                        "question id)")


def _question_sets(runs: Sequence[Outcomes], intersect: bool
                   ) -> tuple[list[str], tuple[Dropped, ...]]:
    """The questions to compare, in the baseline's order (then the others' for questions the
    baseline lacks, which only --intersect drops), and what --intersect dropped per source."""
    union: dict[str, str] = {}                     # qid -> source, in first-seen order
    for run in runs:
        for qid, row in run.rows.items():
            union.setdefault(qid, row["source"])
    shared = [q for q in union if all(q in run.rows for run in runs)]
    if len(shared) == len(union):
        return shared, ()
    lacks = [(run, [q for q in union if q not in run.rows]) for run in runs]
    if not intersect:
        said = []
        for run, lacked in lacks:
            if lacked:
                per = _per_source(lacked, union)
                said.append(f"{run.side.name} lacks {len(lacked)} of the {len(union)} ("
                            + ", ".join(f"{s}: {n}" for s, n in per.items()) + ")")
        raise InputError("the runs cover different questions: " + "; ".join(said)
                         + (f"; --intersect compares the {len(shared)} questions every run has"
                            if shared else "; no question is in every run"),
                         expected="runs over the same questions, or --intersect")
    if not shared:
        raise InputError("the runs have no question in common: nothing to compare",
                         expected="runs over the same rows")
    kept = set(shared)
    dropped = []
    by_source: dict[str, int] = {}
    for qid, source in union.items():
        if qid not in kept:
            by_source[source] = by_source.get(source, 0) + 1
    for source, n in by_source.items():
        lacking = tuple((run.side.name, count) for run, lacked in lacks
                        if (count := sum(1 for q in lacked if union[q] == source)))
        dropped.append(Dropped(source, n, lacking))
    return shared, tuple(dropped)


def _per_source(qids: list[str], source_of: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for q in qids:
        out[source_of[q]] = out.get(source_of[q], 0) + 1
    return out


# ---- the statistics -----------------------------------------------------------------------------
def _vectors(a: Outcomes, b: Outcomes, qids: list[str]) -> dict[str, tuple[list[str], list[int],
                                                                             list[int]]]:
    """source -> (question ids, A's EMs, B's EMs) over `qids`, in their order."""
    out: dict[str, tuple[list[str], list[int], list[int]]] = {}
    for qid in qids:
        source = a.rows[qid]["source"]
        ids, x, y = out.setdefault(source, ([], [], []))
        ids.append(qid)
        x.append(a.rows[qid]["em"])
        y.append(b.rows[qid]["em"])
    return out


def _kinds(runs: Sequence[Outcomes]) -> dict[str, tuple[str, str]]:
    kinds: dict[str, tuple[str, str]] = {}
    for run in reversed(runs):           # the baseline's word last, so it wins
        kinds.update(run.kinds)
    return kinds


def pooled_groups(sources: Sequence[str], kinds: dict[str, tuple[str, str]]
                  ) -> list[tuple[str, list[str]]]:
    """(kind, its sources) of the pooled rows: each kind of POOLED_KINDS present, then "all"
    over both when both are there."""
    groups = [(k, [s for s in sources if kinds[s][0] == k]) for k in POOLED_KINDS]
    groups = [(k, g) for k, g in groups if g]
    if len(groups) > 1:
        groups.append(("all", [s for _, g in groups for s in g]))
    return groups


def compare_pair(a: Outcomes, b: Outcomes, qids: list[str], kinds: dict[str, tuple[str, str]],
                 *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL) -> Pair:
    """The baseline `a` against `b` over `qids` (present in both, agreement checked)."""
    vectors = _vectors(a, b, qids)
    sources = sorted(vectors, key=_source_order(kinds))
    flips = {s: _flips(*vectors[s]) for s in sources}
    rows = []
    for source in sources:
        _, x, y = vectors[source]
        diff = paired_bootstrap(x, y, name=source, resamples=resamples, seed=seed, level=level)
        test = mcnemar_exact(x, y)
        rows.append(Row(source, kinds[source][0], (kinds[source][1],), False, diff.n, diff.em_a,
                        diff.em_b, diff.difference, diff.ci, test.a_only, test.b_only, test.p,
                        *flips[source]))
    for kind, group in pooled_groups(sources, kinds):
        strata = {s: vectors[s][1:] for s in group}
        diff = stratified_paired_bootstrap(strata, resamples=resamples, seed=seed, level=level)
        test = stratified_mcnemar(strata)
        sizes = tuple(sorted({kinds[s][1] for s in group}, key=size_order))
        rows.append(Row(f"pooled {kind}", kind, sizes, True, diff.n, diff.em_a, diff.em_b,
                        diff.difference, diff.ci, test.a_only, test.b_only, test.p,
                        tuple(q for s in group for q in flips[s][0]),
                        tuple(q for s in group for q in flips[s][1])))
    return Pair(a.side, b.side, tuple(rows))


def _flips(ids: list[str], x: list[int], y: list[int]) -> tuple[tuple[str, ...],
                                                               tuple[str, ...]]:
    return (tuple(q for q, i, j in zip(ids, x, y) if i > j),
            tuple(q for q, i, j in zip(ids, x, y) if j > i))


def compare_runs(refs: Sequence[str | Path], results_dir: str | Path | None = None, *,
                 intersect: bool = False, resamples: int = RESAMPLES, seed: int = SEED,
                 level: float = LEVEL) -> Comparison:
    """Compare runs question by question, as `factres compare` does. Everything is read and
    checked before any statistic is computed.

    Args:
        refs: two or more runs (ids or folder paths, as `read_run` takes them); the first is
            the baseline A, each other run B is compared with it.
        results_dir: the results folder run ids are looked up in.
        intersect: compare the questions every run has (and record what was dropped) instead
            of refusing runs over different question sets.
        resamples: the paired bootstrap's resamples, an integer from 1 to 100,000.
        seed: its random seed, an integer from 0 (one random stream per source).
        level: the interval's level, between 0 and 1 (0.95).

    Returns:
        A `Comparison`: per pair of runs, per source and pooled per kind, both EMs, the
        difference B - A with its paired bootstrap interval, the exact McNemar p and the
        flipped question ids. `resolver.report.compare_report` renders it.

    Raises:
        InputError: a bootstrap setting out of its range (naming the argument), fewer than
            two runs, a run given twice, an unscored run, runs that
            disagree on a question (source, text or gold), runs over different question sets
            (without `intersect`), and every error of `read_run`.
    """
    check_bootstrap(resamples, seed, level)
    if isinstance(refs, (str, os.PathLike)):
        refs = (refs,)                   # one run, not the letters of its name
    refs = tuple(refs)
    if len(refs) < 2:
        raise InputError(f"{len(refs)} run given", expected="a baseline run and at least one "
                         "run to compare with it")
    folders = [read_run(ref, results_dir) for ref in refs]
    refuse_copies(refs, folders)        # by path, and by content (verification W03)
    runs = [outcomes(f) for f in folders]
    qids, dropped = _question_sets(runs, intersect)
    check_agreement(runs, qids)
    kinds = _kinds(runs)
    pairs = tuple(compare_pair(runs[0], b, qids, kinds, resamples=resamples, seed=seed,
                               level=level) for b in runs[1:])
    shared = _per_source(qids, {q: runs[0].rows[q]["source"] for q in qids})
    order = sorted(shared, key=_source_order(kinds))
    dropped = tuple(sorted(dropped, key=lambda d: _source_order(kinds)(d.source)))
    notes = tuple(n for f in folders for n in f.notes)
    return Comparison(tuple(r.side for r in runs), pairs, intersect,
                      tuple((s, shared[s]) for s in order), dropped, resamples, seed, level,
                      notes)


# ---- significance per cell (factres tables --baseline) ------------------------------------------
def cell_tests(baseline: Outcomes, other: Outcomes) -> dict[str, McNemar]:
    """The exact McNemar test of `other` against `baseline` per source and per pooled kind
    ("pooled sh", ...: stratified by size), over the questions both runs have (their agreement
    checked); a source neither shares is absent."""
    qids = [q for q in baseline.rows if q in other.rows]
    check_agreement([baseline, other], qids)
    kinds = _kinds([baseline, other])
    vectors = _vectors(baseline, other, qids)
    sources = sorted(vectors, key=_source_order(kinds))
    tests = {s: mcnemar_exact(*vectors[s][1:]) for s in sources}
    for kind, group in pooled_groups(sources, kinds):
        tests[f"pooled {kind}"] = stratified_mcnemar({s: vectors[s][1:] for s in group})
    return tests
