"""Scoring a run against the gold: each prediction's EM by MemoryAgentBench's exact match
(`mab.exact_match`), the stale rate, per-source and pooled metrics rows with bootstrap intervals.

This is the only resolver module that reads gold (`haystack.Gold`), with `exchange.imported`,
which scores other systems' predictions through it. Planning and search never import either
(tests/test_gold_isolation.py checks the import graph).

Pooled figures are the mean over sizes (as the benchmark's papers report them), not the mean
over questions: 6K and 262K weigh the same whatever their question counts.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from resolver.haystack import Dataset, Gold, Question
from resolver.mab.exact_match import score_answer, substring_exact_match
from resolver.plan.plans import Compiled
from resolver.search.resolve import Prediction

if TYPE_CHECKING:
    import numpy as np

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20240601          # fixed: the same run gives the same intervals
BOOTSTRAP_LEVEL = 0.95
KIND_ORDER = ("sh", "mh")          # pooled rows, in this order, then "all"

Scorer = Callable[[str, Sequence[str]], int]     # (prediction, gold answers) -> 0 or 1


# ---- stale rate -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Staleness:
    """Stale-rate bookkeeping of one single-hop question."""
    key: tuple[str, str] | None     # (subject, relation) the question asks about, if found
    eligible: bool                  # gold is the final value of a key with > 1 version
    stale: bool                     # eligible, wrong, and the prediction is an earlier value


def _question_keys(prediction: Prediction, question: Question, store,
                   rules: Compiled | None = None) -> list[tuple[str, str]]:
    """Keys a single-hop question may ask about, in the order they are tried: the winner's
    one hop, then every one-relation plan of the rule compiler (which works from the question
    text alone, so unanswered questions get a key too). `rules`: the rule compiler's plans for
    the question over this store when already at hand (a run's live:rules set), the same as
    compiling them again."""
    if rules is None:
        from resolver.plan.compile_rules import compile_question
        rules = compile_question(question.text, store)
    keys = []
    winner = prediction.winner
    if winner is not None and len(winner.hops) == 1:
        hop = winner.hops[0]
        if not hop.reverse:
            keys.append((hop.subject, hop.relation))
    for plan in rules.plans:
        if len(plan.chain) == 1 and not plan.chain[0].startswith("family:"):
            keys.append((plan.entity, plan.chain[0]))
    return keys


def staleness(prediction: Prediction, question: Question, store, gold_answers: Sequence[str],
              em: int, score: Scorer = substring_exact_match,
              rules: Compiled | None = None) -> Staleness:
    """Is this single-hop prediction stale?

    The question's key is the first of `_question_keys` whose *final* value matches the gold
    (`substring_exact_match(final object, gold)`); no such key -> not eligible. The question
    is eligible when that key has more than one version, and stale when it is eligible, scored
    0, and its prediction matches (by `score`: the substring rule, or the harness's rule for
    imported outputs) the object of an earlier version of the key. Multi-hop questions are never
    eligible. `rules`: see `_question_keys`."""
    if question.kind != "sh" or not gold_answers:
        return Staleness(None, False, False)
    for subject, relation in _question_keys(prediction, question, store, rules):
        versions = store.versions(subject, relation)
        if not versions or not substring_exact_match(versions[-1].object, gold_answers):
            continue
        if len(versions) < 2:
            return Staleness((subject, relation), False, False)
        earlier = [v.object for v in versions[:-1]]
        stale = (em == 0 and prediction.answer != ""
                 and any(score(prediction.answer, (e,)) for e in earlier))
        return Staleness((subject, relation), True, stale)
    return Staleness(None, False, False)


# ---- bootstrap ------------------------------------------------------------------------------
def bootstrap_means(values: Sequence[float], name: str, resamples: int = BOOTSTRAP_RESAMPLES,
                    seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """Means of `resamples` resamples (with replacement, over questions) of `values`.

    Each cell draws from its own stream, seeded by the fixed seed and the cell's name, so
    cells do not share resampling patterns and a cell's interval does not depend on which
    other cells the run has."""
    import numpy as np  # lazily: only scoring needs it, and loading it costs ~0.1 s
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
    index = rng.integers(0, len(data), size=(resamples, len(data)))
    return data[index].mean(axis=1)


def prepare() -> None:
    """Load what scoring needs (numpy, ~0.1 s) ahead of time: a run does it while its workers
    search."""
    import numpy  # noqa: F401
    import numpy.ma  # noqa: F401  (np.percentile loads it, through np.unique)


def interval(means: np.ndarray, level: float = BOOTSTRAP_LEVEL) -> tuple[float, float]:
    """Percentile interval of bootstrap means."""
    import numpy as np  # lazily, as in bootstrap_means
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


# ---- cells and pooled rows -------------------------------------------------------------------
@dataclass
class Cell:
    """The scored questions of one source (e.g. factconsolidation_sh_6k)."""
    source: str
    kind: str
    size: str
    em: list[int]                 # one per question; empty when unscored
    answered: list[int]
    stale: int = 0
    stale_eligible: int = 0

    @property
    def n(self) -> int:
        return len(self.answered)


def size_order(size: str) -> tuple[int, str]:
    digits = size[:-1] if size.endswith("k") else ""
    return (int(digits) if digits.isdigit() else 10**9, size)


def _kind_order(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def build_cells(dataset: Dataset, predictions: list[Prediction], gold: Gold | None,
                score: Scorer = score_answer, rules: Mapping[str, Compiled] | None = None
                ) -> tuple[list[Cell], list[int | None], list[Staleness | None]]:
    """Score every prediction (EM and staleness, both by `score`: `score_answer` for the
    resolver's strings, `harness_score` for imported outputs) and group them by source.
    `rules`: the rule compiler's plans by question id, when the run compiled them (its
    live:rules set): staleness reads them instead of compiling them again.

    Returns the cells (ordered sh then mh, sizes ascending), and per prediction its EM and
    staleness (None when unscored, i.e. `gold` is None)."""
    by_qid = {q.qid: q for q in dataset.questions}
    cells: dict[str, Cell] = {}
    ems: list[int | None] = []
    stales: list[Staleness | None] = []
    for pred in predictions:
        question = by_qid[pred.qid]
        cell = cells.get(question.source)
        if cell is None:
            cell = cells[question.source] = Cell(question.source, question.kind, question.size,
                                                 [], [])
        cell.answered.append(int(pred.answer != ""))
        if gold is None:
            ems.append(None)
            stales.append(None)
            continue
        answers = gold[pred.qid]
        em = score(pred.answer, answers)
        stale = staleness(pred, question, dataset.haystack_of(question).store, answers, em,
                          score, rules.get(pred.qid) if rules is not None else None)
        cell.em.append(em)
        cell.stale += int(stale.stale)
        cell.stale_eligible += int(stale.eligible)
        ems.append(em)
        stales.append(stale)
    ordered = sorted(cells.values(), key=lambda c: (_kind_order(c.kind), size_order(c.size),
                                                    c.source))
    return ordered, ems, stales


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def cell_row(cell: Cell, reader: str, scored: bool, drawn: dict | None = None) -> dict:
    """A metrics row (result_schema.MetricsRow) of one source (`drawn`: see `_cell_means`)."""
    em = ci = None
    if scored and cell.n:
        import numpy as np  # lazily, as in bootstrap_means: an unscored run never needs it
        means = _cell_means(cell, drawn)
        em, ci = float(np.mean(cell.em)), interval(means)
    rate = (cell.stale / cell.stale_eligible) if scored and cell.stale_eligible else None
    return {"label": cell.source, "source": cell.source, "kind": cell.kind, "size": cell.size,
            "sizes": [cell.size], "pooled": False, "reader": reader, "n": cell.n,
            "em": _round(em), "ci": [_round(ci[0]), _round(ci[1])] if ci else None,
            "answered": _round(sum(cell.answered) / cell.n if cell.n else None),
            "stale_rate": _round(rate),
            "stale": cell.stale if scored and cell.kind == "sh" else None,
            "stale_eligible": cell.stale_eligible if scored and cell.kind == "sh" else None}


def pooled_rows(cells: list[Cell], reader: str, scored: bool,
                drawn: dict | None = None) -> list[dict]:
    """Pooled rows: sh, mh (each the mean over sizes) and all (the mean over every sh and mh
    cell). The pooled interval comes from averaging the cells' bootstrap means resample by
    resample, so it is an interval of the mean over sizes, not of a pool of questions."""
    if scored:
        import numpy as np  # lazily, as in bootstrap_means: an unscored run never needs it
        mean = np.mean
    else:
        def mean(values):
            return sum(values) / len(values)
    groups = [(k, [c for c in cells if c.kind == k]) for k in KIND_ORDER]
    groups = [(k, g) for k, g in groups if g]
    if groups:
        groups.append(("all", [c for _, g in groups for c in g]))
    rows = []
    for kind, group in groups:
        n = sum(c.n for c in group)
        em = ci = rate = None
        if scored and all(c.n for c in group):
            means = np.mean([_cell_means(c, drawn) for c in group], axis=0)
            em = float(np.mean([np.mean(c.em) for c in group]))
            ci = interval(means)
        if scored and kind != "mh":
            rates = [c.stale / c.stale_eligible for c in group if c.kind == "sh"
                     and c.stale_eligible]
            rate = float(np.mean(rates)) if rates else None
        answered = float(mean([sum(c.answered) / c.n for c in group if c.n]))
        sh = [c for c in group if c.kind == "sh"]
        counted = scored and kind != "mh"
        rows.append({"label": f"pooled {kind}", "source": f"pooled {kind}", "kind": kind,
                     "size": "mean", "sizes": sorted({c.size for c in group}, key=size_order),
                     "pooled": True, "reader": reader, "n": n, "em": _round(em),
                     "ci": [_round(ci[0]), _round(ci[1])] if ci else None,
                     "answered": _round(answered), "stale_rate": _round(rate),
                     "stale": sum(c.stale for c in sh) if counted else None,
                     "stale_eligible": sum(c.stale_eligible for c in sh) if counted else None})
    return rows


def metrics_rows(cells: list[Cell], reader: str, scored: bool) -> list[dict]:
    """Every row of metrics.json: one per source, then the pooled rows. A cell's bootstrap
    means are drawn once, for its own row and the pooled rows it is in."""
    drawn: dict = {}
    return [cell_row(c, reader, scored, drawn) for c in cells] + \
        pooled_rows(cells, reader, scored, drawn)


def _cell_means(cell: Cell, drawn: dict | None) -> np.ndarray:
    """`bootstrap_means` of a cell, kept in `drawn` (by source) when given: the same seed,
    name and values give the same means, so a cell's row and the pooled rows it belongs to
    (sh or mh, and all) read one draw instead of drawing it three times."""
    if drawn is None:
        return bootstrap_means(cell.em, cell.source)
    key = (cell.source, tuple(cell.em))
    found = drawn.get(key)
    if found is None:
        found = drawn[key] = bootstrap_means(cell.em, cell.source)
    return found
