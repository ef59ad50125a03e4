"""The values a run or oracle folder derives from its own rows, checked against them: what the
one reader (`reader`) believes only once it has recomputed or bounded it.

A folder's files are validated for their shapes by `result_schema`; a shape says nothing of a
score edited by hand, a metrics.json copied from another run, or a trace whose answer is not where
its winning path ends. So, for each file:

- predictions.jsonl: every row's `em` is the harness's scoring of its `prediction` against its
  `gold` (`exact_match.score_answer` for a resolver run, `exact_match.harness_score`, the better of the
  raw and the parsed prediction, for an imported one); an imported row's `parsed_prediction` is
  `exact_match.parse_output` of its prediction; a resolver row's `prediction` is its
  `resolver_answer` when the run had no reader (empty when the answer was abstained from).
- metrics.json: each source once; per source `n`, the EM mean and the share answered are those
  of the rows (6 decimals, as metrics.json keeps them); the pooled rows are the ones `scoring`
  writes, from the per-source rows as it computes them (the mean over sizes); every share in
  [0, 1]; stale counts in 0 <= stale <= eligible <= n, stale at most the wrong answers given,
  with the rate their quotient (an imported run's counts are recounted from its rows' `stale`;
  a resolver run's need the store and the rule compiler, which `factres table` does not load).
  The bootstrap interval is bounded, not recomputed: it must lie in [0, 1], hold the EM and
  reach no further from it than MAX_HALF_WIDTH standard errors (the EM itself when every
  answer is right or every one wrong). Recomputing it would need numpy, which `factres table`
  and `tables` do not load (tests/test_startup.py), and numpy does not promise its random
  streams across versions, so an exact check could refuse an honest run after an upgrade.
- meta.json of an imported run: `missing` (rows without a record), `empty` (records with an
  empty prediction), `gold_disagreements` (records whose own gold differs from the rows') and
  their counts are those of its rows.
- traces.jsonl: each candidate (the winner too) has at least one hop, each hop starting where
  the one before lands, with a version in [0, the versions it passed over], and its answer is
  where its last hop lands; a hop's status is one of the store's ledger statuses (the schema);
  the winner's answer is the trace's answer (runs before abstentions kept the resolver's answer recorded "" for an
  abstained question); the row's plan and plan set are the winner's.
- readout.jsonl: every read at most its budget (at least 1), its disclosure modes known and each
  once, every row read in the configurations (budget, modes) of the first.
- the data (`reader.load_run_data`): each row's gold is the data's gold for its question.
- nbest.json: 0 <= success <= candidate recall <= plan recall <= questions and strict recall
  <= plan recall, the recalls non-decreasing in N, N counting 1, 2, ... along `plan_sets`.
- ceiling.json: 0 <= latest wins <= optimum <= gold path <= questions, bound >= optimum, and
  the haystacks' figures summing to the sources' (and to the totals); each source's figures
  the counts of its question rows; each haystack's optimum (and bound) its `questions_free`
  plus its components' best (and bounds), as the oracle adds them; OPTIMAL only with the bound
  at the optimum (totals, haystacks, components) and only when every component (haystack) is
  proven; each question row's flags agree with the contested keys of the file (a row of one
  alternative is optimal exactly when the policy keeps every contested key it is listed
  under in that version; a kept version is one the key is needed in). Nothing re-solves the
  problem: a file edited consistently at every level, rows, components and contested keys
  included, still reads.

Each failure is one `InputError` naming the file, the line (JSONL) and the field, with the value
the file has and the value it should have. A row's EM is recomputed with MemoryAgentBench's exact
match (`mab.exact_match`, strings only); `metrics.scoring`, which loads the search records that
`factres table` would not need otherwise, is imported lazily where the pooled rows are checked
(it sits below this room, so the stage order holds either way)."""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import orjson

from resolver.errors import InputError
from resolver.mab import exact_match
from resolver.results.result_schema import (
    CEILING_FILE,
    IMPORTED_KIND,
    META_FILE,
    METRICS_FILE,
    NBEST_FILE,
    PREDICTIONS_FILE,
)

# metrics.json keeps 6 decimals (scoring._round): a recomputed value may differ by half of one
# in the last place, and a float sum by far less.
TOLERANCE = 1e-6
ABSTAINED = "abstained"          # search.confidence.ABSTAINED: an abstention's reason begins so
_SOURCE = re.compile(r"(?:^|_)(?P<kind>sh|mh)_(?P<size>\d+k)$")   # as haystack reads a source
SHOWN = 80                       # characters of a value a message shows


def shown(value: Any) -> str:
    """A JSON value as a message shows it: as the file writes it, cut to SHOWN characters."""
    text = orjson.dumps(value).decode("utf-8")
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text)} characters)"


def _mean(values: list) -> float | None:
    return sum(values) / len(values) if values else None


def _edited(path: Path, message: str, expected: str, line: int | None = None) -> InputError:
    return InputError(message, path=str(path), line=line,
                      expected=f"{expected}; edited?")


def abstained(row: dict) -> bool:
    """Whether a resolver row's answer was abstained from (`--abstain-below`)."""
    return row.get("reason", "").startswith(ABSTAINED + ":")


# ---- predictions.jsonl ----------------------------------------------------------------------
def check_predictions(path: Path, kind: str, rows: list[dict], lines: list[int],
                      scored: bool) -> None:
    """Every row's em (and an imported row's parsed prediction) recomputed from its own
    prediction and gold."""
    file = path / PREDICTIONS_FILE
    imported = kind == IMPORTED_KIND
    score = exact_match.harness_score if imported else exact_match.score_answer
    rule = ("the harness's rule: the better of the prediction and its parsed answer" if imported
            else "substring exact match; an empty prediction scores 0")
    for row, line in zip(rows, lines):
        gold = row["gold"]
        if imported:
            parsed = exact_match.parse_output(row["prediction"])
            if row["parsed_prediction"] != parsed:
                raise _edited(file, f"question {row['qid']!r}: field 'parsed_prediction' is "
                              f"{shown(row['parsed_prediction'])}, but the prediction parses "
                              f"to {shown(parsed)}", "the harness's parse of the prediction",
                              line)
        if (gold is None) == scored:
            raise InputError(f"question {row['qid']!r} has gold {shown(gold)} in a run that is "
                             f"{'scored' if scored else 'unscored'}", path=str(file), line=line,
                             expected="the answers in a scored run, null in an unscored one")
        if not scored:
            continue
        em = score(row["prediction"], gold)
        if row["em"] != em:
            raise _edited(file, f"question {row['qid']!r}: field 'em' is {row['em']}, but "
                          f"prediction {shown(row['prediction'])} scores {em} against gold "
                          f"{shown(gold)}", f"the em its prediction scores ({rule})", line)


def check_resolver_answers(path: Path, rows: list[dict], lines: list[int]) -> None:
    """In a run without a reader the prediction is the resolver's answer, or empty when the run
    abstained from it."""
    for row, line in zip(rows, lines):
        want = "" if abstained(row) else row["resolver_answer"]
        if row["prediction"] != want:
            what = ("an abstained question's prediction is empty" if abstained(row)
                    else "the resolver's answer as the prediction")
            raise _edited(path / PREDICTIONS_FILE,
                          f"question {row['qid']!r}: field 'prediction' is "
                          f"{shown(row['prediction'])}, but resolver_answer is "
                          f"{shown(row['resolver_answer'])} in a run without a reader"
                          + (f" (reason {shown(row['reason'])})" if abstained(row) else ""),
                          what, line)


# ---- metrics.json ---------------------------------------------------------------------------
def _source_parts(source: str) -> tuple[str, str]:
    """(kind, size) of a source as the loader reads them from its name."""
    match = _SOURCE.search(source)
    return (match["kind"], match["size"]) if match else ("unknown", "unknown")


def _cells(rows: list[dict]) -> dict[str, dict]:
    """source -> its questions' outcomes, in file order."""
    cells: dict[str, dict] = {}
    for row in rows:
        cell = cells.setdefault(row["source"], {"em": [], "answered": [], "stale": []})
        cell["em"].append(row["em"])
        cell["answered"].append(int(row["prediction"] != ""))
        cell["stale"].append(row.get("stale"))
    return cells


def check_metrics(path: Path, kind: str, metrics: dict, rows: list[dict]) -> None:
    """metrics.json's rows against the predictions (module docstring)."""
    from resolver.metrics.scoring import KIND_ORDER, size_order  # lazily (module doc)
    file = path / METRICS_FILE
    scored = metrics["scored"]
    cells = _cells(rows)
    seen: dict[str, int] = {}
    per_source: dict[str, dict] = {}
    pooled: dict[str, dict] = {}
    for i, row in enumerate(metrics["rows"]):
        where = f"rows[{i}]"
        if row["source"] in seen:
            raise _edited(file, f"{where} is a second row of {row['source']!r} (also "
                          f"rows[{seen[row['source']]}])", "one row per source")
        seen[row["source"]] = i
        if row["reader"] != metrics["reader"]:
            raise _edited(file, f"{where}.reader is {shown(row['reader'])}, the file's reader "
                          f"{shown(metrics['reader'])}", "the run's reader in every row")
        (pooled if row["pooled"] else per_source)[row["source"]] = dict(row, where=where)
    derived = {}
    for source, row in per_source.items():
        cell = cells[source]              # the counts per source are checked before this
        kind_, size = _source_parts(source)
        want = {"label": source, "kind": kind_, "size": size, "sizes": [size]}
        want.update(_figures(file, cell, kind_, scored, kind == IMPORTED_KIND, row))
        se = _se(cell["em"]) if scored and cell["em"] else None
        _compare(file, row, want, se)
        derived[source] = (kind_, size, dict(want, se=se), row)
    _check_pooled(file, derived, pooled, scored, KIND_ORDER, size_order)


def _figures(file: Path, cell: dict, kind: str, scored: bool, imported: bool,
             row: dict) -> dict:
    """The figures of a source's row recomputed from its questions. Stale counts of a resolver
    run need the store: they are taken from the row, bounded; an imported run's rows carry
    their own `stale`, recounted."""
    n = len(cell["answered"])
    want: dict[str, Any] = {"n": n, "answered": _mean(cell["answered"]),
                            "em": _mean(cell["em"]) if scored else None,
                            "stale": None, "stale_eligible": None, "stale_rate": None}
    if not (scored and kind == "sh"):
        return want
    if imported:
        stale = sum(1 for s in cell["stale"] if s)
        eligible = sum(1 for s in cell["stale"] if s is not None)
    else:
        stale, eligible = row["stale"], row["stale_eligible"]
        if not (isinstance(stale, int) and isinstance(eligible, int)
                and 0 <= stale <= eligible <= n):
            raise _edited(file, f"{row['where']} ({row['source']}): stale {shown(stale)} of "
                          f"stale_eligible {shown(eligible)} with n {n}",
                          "0 <= stale <= stale_eligible <= n")
        # a stale answer is a wrong one that was given (verification V01)
        wrong = sum(1 for em, answered in zip(cell["em"], cell["answered"])
                    if em == 0 and answered)
        if stale > wrong:
            raise _edited(file, f"{row['where']} ({row['source']}): stale {stale}, but only "
                          f"{wrong} of its answered questions are wrong",
                          "stale <= the wrong answers given")
    want.update(stale=stale, stale_eligible=eligible,
                stale_rate=stale / eligible if eligible else None)
    return want


def _same(have: Any, want: Any) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (have, want))
    return abs(have - want) <= TOLERANCE if numbers else have == want


def _compare(file: Path, row: dict, want: dict, se: float | None = None) -> None:
    """Each field of `want` against the row's; then the interval against the EM (and its
    standard error `se`, when scored)."""
    for name, value in want.items():
        have = row.get(name)
        if not _same(have, value):
            raise _edited(file, f"{row['where']} ({row['source']}): field {name!r} is "
                          f"{shown(have)}, but the predictions give {shown(_round(value))}",
                          f"{name} as the rows of predictions.jsonl give it")
    _check_interval(file, row, se)


def _se(values: list) -> float:
    """The standard error of the mean of 0/1 outcomes."""
    p = sum(values) / len(values)
    return math.sqrt(p * (1 - p) / len(values))


# How far from the EM a bootstrap percentile interval can reach, in standard errors: the 95%
# intervals of the committed runs reach 3.1 at most; beyond 8, 25 of 1000 resampled means would
# all have to fall where one falls with a chance below 1e-15. A bound, not a recomputation
# (module docstring): it catches an interval widened by hand, and a degenerate one (every answer
# right, or every one wrong) must be the EM itself.
MAX_HALF_WIDTH = 8.0


def _round(value: Any) -> Any:
    return round(value, 6) if isinstance(value, float) else value


def _check_interval(file: Path, row: dict, se: float | None = None) -> None:
    ci, em = row["ci"], row["em"]
    if em is None:
        if ci is not None:
            raise _edited(file, f"{row['where']} ({row['source']}): an interval {shown(ci)} "
                          "without an EM", "no interval where there is no EM")
        return
    fits = (ci is not None and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci)
            and all(math.isfinite(x) for x in ci)
            and -TOLERANCE <= ci[0] <= em + TOLERANCE and em - TOLERANCE <= ci[1]
            <= 1 + TOLERANCE)
    if not fits:
        raise _edited(file, f"{row['where']} ({row['source']}): field 'ci' is {shown(ci)} "
                      f"for em {em}", "a 95% interval [low, high] with 0 <= low <= em <= high "
                      "<= 1")
    if se is not None and max(em - ci[0], ci[1] - em) > MAX_HALF_WIDTH * se + TOLERANCE:
        raise _edited(file, f"{row['where']} ({row['source']}): field 'ci' is {shown(ci)} "
                      f"for em {em}, reaching {max(em - ci[0], ci[1] - em):.6f} from it with a "
                      f"standard error of {se:.6f}", "a bootstrap interval: within "
                      f"{MAX_HALF_WIDTH:g} standard errors of the em (the em itself when every "
                      "answer is right, or every one wrong)")


def _check_pooled(file: Path, derived: dict, pooled: dict, scored: bool, kind_order,
                  size_order) -> None:
    """The pooled rows `scoring.pooled_rows` writes, recomputed from the per-source rows: per
    kind of KIND_ORDER present (the mean over its sources), then "all"."""
    groups = [(k, [s for s, d in derived.items() if d[0] == k]) for k in kind_order]
    groups = [(k, g) for k, g in groups if g]
    if groups:
        groups.append(("all", [s for _, g in groups for s in g]))
    expected = {f"pooled {k}": (k, g) for k, g in groups}
    extra = sorted(set(pooled) - set(expected))
    lacking = sorted(set(expected) - set(pooled))
    if extra or lacking:
        said = "; ".join(([f"no row {shown(s)}" for s in lacking])
                         + [f"row {shown(s)} pools no kind of its sources" for s in extra])
        raise _edited(file, f"pooled rows: {said}", "the pooled rows of the run's sources: "
                      + (", ".join(expected) or "none (no sh or mh source)"))
    for label, (kind, group) in expected.items():
        rows = [derived[s][2] for s in group]
        sh = [derived[s] for s in group if derived[s][0] == "sh"]
        counted = scored and kind != "mh"
        rates = [d[2]["stale_rate"] for d in sh if d[2]["stale_eligible"]]
        want = {"label": label, "kind": kind, "size": "mean", "pooled": True,
                "sizes": sorted({derived[s][1] for s in group}, key=size_order),
                "n": sum(r["n"] for r in rows),
                "em": _mean([r["em"] for r in rows]) if scored else None,
                "answered": _mean([r["answered"] for r in rows]),
                "stale": sum(d[2]["stale"] for d in sh) if counted else None,
                "stale_eligible": sum(d[2]["stale_eligible"] for d in sh) if counted else None,
                "stale_rate": _mean(rates) if counted and rates else None}
        # the pooled interval averages the sources' resampled means, size by size
        ses = [d[2]["se"] for d in (derived[s] for s in group)]
        se = (math.sqrt(sum(x * x for x in ses)) / len(ses)
              if scored and all(x is not None for x in ses) else None)
        _compare(file, pooled[label], want, se)


# ---- meta.json of an imported run -----------------------------------------------------------
def check_imported_meta(path: Path, meta: dict, rows: list[dict]) -> None:
    """`missing`, `empty`, `gold_disagreements` and their counts against the rows."""
    file = path / META_FILE
    records = [r for r in rows if r["record"] is not None]
    lists = {"missing": [r["qid"] for r in rows if r["record"] is None],
             "empty": [r["qid"] for r in records if r["prediction"] == ""],
             "gold_disagreements": [r["qid"] for r in records if r["file_gold"] is not None
                                    and sorted(r["file_gold"]) != sorted(r["gold"])]}
    for name, qids in lists.items():
        have = meta[name] if name != "gold_disagreements" else \
            [d.get("qid") for d in meta[name]]
        if have != qids:
            differ = [q for q in dict.fromkeys(have + qids) if (q in have) != (q in qids)]
            first = (f"; {shown(differ[0])} is in "
                     + ("meta.json only" if differ[0] in have else "predictions.jsonl only")
                     if differ else "; the same questions in another order")
            raise _edited(file, f"field {name!r} names {len(have)} question(s), the rows of "
                          f"predictions.jsonl give {len(qids)}{first}",
                          f"the {name} questions of predictions.jsonl")
        if meta["counts"][name] != len(qids):
            raise _edited(file, f"field 'counts.{name}' is {meta['counts'][name]}, but "
                          f"predictions.jsonl gives {len(qids)}",
                          f"the count of {name} questions")
    if meta["counts"]["records"] != len(records):
        raise _edited(file, f"field 'counts.records' is {meta['counts']['records']}, but "
                      f"predictions.jsonl has {len(records)} rows with a record",
                      "the count of questions with a record")
    for row in rows:
        if row["record"] is None and (row["prediction"] != "" or row["file"] is not None):
            raise _edited(path / PREDICTIONS_FILE, f"question {row['qid']!r} has no record but "
                          f"prediction {shown(row['prediction'])} from file "
                          f"{shown(row['file'])}", "no prediction and no file without a record")


# ---- traces.jsonl ---------------------------------------------------------------------------
def check_trace(file: Path, line: int, trace: dict, row: dict) -> None:
    """One trace against itself and its prediction row (module docstring)."""
    from resolver.store.fact_store import norm  # lazily: the store is no need of `table`
    qid = row["qid"]
    for name, other in (("source", "source"),):
        if trace[name] != row[other]:
            raise _edited(file, f"the trace of {qid!r} has {name} {shown(trace[name])}, "
                          f"predictions.jsonl {shown(row[other])}", "the trace of the "
                          "prediction", line)
    winner = trace["winner"]
    for i, candidate in enumerate(([winner] if winner else []) + trace["candidates"]):
        hops = candidate["hops"]
        what = "the winner" if winner and i == 0 else f"candidate {i - (1 if winner else 0)}"
        if not hops:
            # the search writes a candidate only for a path it walked: with no hop, nothing
            # says where its answer came from (audit V04)
            raise _edited(file, f"the trace of {qid!r}: {what} answers "
                          f"{shown(candidate['answer'])} with no hop", "a candidate of at "
                          "least one hop, its answer where the last hop lands", line)
        if hops[-1]["object"] != candidate["answer"]:
            raise _edited(file, f"the trace of {qid!r}: {what} answers "
                          f"{shown(candidate['answer'])}, but its path ends at "
                          f"{shown(hops[-1]['object'])}", "a candidate's answer where its last "
                          "hop lands", line)
        for j, hop in enumerate(hops):
            # a hop's subject is the store's spelling, the object the fact's: one name
            if j and norm(hop["subject"]) != norm(hops[j - 1]["object"]):
                raise _edited(file, f"the trace of {qid!r}: {what}'s hop {j} starts at "
                              f"{shown(hop['subject'])}, but hop {j - 1} lands at "
                              f"{shown(hops[j - 1]['object'])}", "a path: each hop starting "
                              "where the one before lands", line)
            # version k is the k-th before the latest; the key's other versions are passed over
            if not 0 <= hop["version"] <= len(hop["passed_over"]):
                raise _edited(file, f"the trace of {qid!r}: {what}'s hop {j} takes version "
                              f"{hop['version']} of a key with {len(hop['passed_over']) + 1} "
                              "version(s) (itself and the ones it passed over)",
                              "0 <= version <= the versions passed over", line)
    answer = trace["answer"]
    if winner is None:
        if answer != "":
            raise _edited(file, f"the trace of {qid!r} answers {shown(answer)} with no winner",
                          "an answer only from a winning path", line)
    elif winner["answer"] != answer and not (answer == "" and abstained(trace)):
        raise _edited(file, f"the trace of {qid!r} answers {shown(answer)}, but its winning "
                      f"path ends at {shown(winner['answer'])}", "the winner's answer as the "
                      "trace's", line)
    for name in ("plan", "plan_set"):
        have = row[name]
        want = winner[name] if winner else None
        if have != want:
            raise _edited(file.parent / PREDICTIONS_FILE, f"question {qid!r}: field {name!r} "
                          f"is {shown(have)}, but the trace's winner has {shown(want)}",
                          f"the winner's {name}")


def check_reads(file: Path, line: int, row: dict, configurations: list | None) -> None:
    """A readout.jsonl row: each read within its budget, its modes known; the configurations
    of `configurations` (the first row's), when given."""
    # the memory's renderer names the modes; imported here, when a readout file is read
    from resolver.memory.readout import DISCLOSURES
    for at, read in enumerate(row["reads"]):
        field = f"reads[{at}]"
        if read["budget"] < 1:
            raise _edited(file, f"{row['qid']!r}: {field}.budget is {read['budget']}",
                          "a budget of at least 1 character", line)
        if not 0 <= read["chars"] <= read["budget"]:
            raise _edited(file, f"{row['qid']!r}: {field}.chars is {read['chars']}, over its "
                          f"budget of {read['budget']}" if read["chars"] > 0 else
                          f"{row['qid']!r}: {field}.chars is {read['chars']}",
                          f"0 to {read['budget']} characters", line)
        modes = read["disclose"]
        if any(m not in DISCLOSURES for m in modes) or len(set(modes)) != len(modes):
            raise _edited(file, f"{row['qid']!r}: {field}.disclose is {modes}",
                          f"some of {', '.join(DISCLOSURES)}, each once", line)
    have = [(r["budget"], r["disclose"]) for r in row["reads"]]
    if configurations is not None and have != configurations:
        raise _edited(file, f"{row['qid']!r} is read as {have}, the first row as "
                      f"{configurations}", "every question read in the same configurations",
                      line)


def check_gold(path: Path, rows: list[dict], lines: list[int], gold) -> None:
    """Each row's gold is the data's gold for its question (order aside: scoring takes the best
    over the answers)."""
    for row, line in zip(rows, lines):
        if row["gold"] is None:
            continue
        want = list(gold[row["qid"]])
        if sorted(row["gold"]) != sorted(want):
            raise _edited(path / PREDICTIONS_FILE, f"question {row['qid']!r}: field 'gold' is "
                          f"{shown(row['gold'])}, but the run's data has {shown(want)}",
                          "the gold of the run's data", line)


# ---- oracle folders -------------------------------------------------------------------------
def nbest_abstention(payload: dict) -> tuple[str | None, int] | None:
    """(level, questions abstained from) of an nbest.json made from a run with
    --abstain-below, None otherwise: from the top-level `abstain_below` and `abstained`, else
    from the per-source `abstained` counts (any above 0: the run abstained, its level not
    recorded), so the mark does not rest on one top-level field (verification D10).
    `check_nbest` makes the two agree."""
    if "abstain_below" in payload:
        return payload["abstain_below"], payload.get("abstained", 0)
    counts = [s.get("abstained", 0) for s in payload["sources"].values()]
    return (None, sum(counts)) if any(counts) else None


def _check_nbest_abstention(file: Path, payload: dict) -> None:
    """oracle.nbest writes `abstain_below` and `abstained` at the top, a per-source
    `abstained` count and a per-question `abstained` flag all together (a run made with
    --abstain-below) or none of them; the counts add up."""
    top = [name for name in ("abstain_below", "abstained") if name in payload]
    if len(top) == 1:
        raise _edited(file, f"the top level has {top[0]} without "
                      f"{'abstained' if top[0] == 'abstain_below' else 'abstain_below'}",
                      "abstain_below and abstained together (a run made with --abstain-below)")
    sources = payload["sources"]
    carried = [s for s, v in sources.items() if "abstained" in v]
    if top and len(carried) != len(sources):
        missing = sorted(set(sources) - set(carried))[0]
        raise _edited(file, f"the top level says the run was made with --abstain-below "
                      f"{shown(payload['abstain_below'])}, but sources.{missing} has no "
                      "abstained count", "an abstained count in every source of such a run")
    counted = sum(sources[s]["abstained"] for s in carried)
    if top and payload["abstained"] != counted:
        raise _edited(file, f"the top level says {shown(payload['abstained'])} questions were "
                      f"abstained from, but its sources count {counted}",
                      "the top-level abstained count summing the sources'")
    if not top and counted:
        raise _edited(file, f"its sources count {counted} questions abstained from, but the "
                      "top level has no abstain_below (removed?)", "abstain_below and "
                      "abstained at the top level of a run that abstained")
    rows = payload.get("questions")
    if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
        for source in carried:
            flagged = sum(r.get("abstained") is True for r in rows if r.get("source") == source)
            if flagged != sources[source]["abstained"]:
                raise _edited(file, f"sources.{source}.abstained is "
                              f"{sources[source]['abstained']}, but {flagged} of its question "
                              "rows are marked abstained", "the abstained count of the rows")


def check_nbest(path: Path, payload: dict) -> None:
    file = path / NBEST_FILE
    sets = payload["plan_sets"]
    for source, summary in payload["sources"].items():
        total = summary["questions"]
        where = f"sources.{source}"
        for name in ("rerun_agrees", "abstained"):
            if name in summary and not 0 <= summary[name] <= total:
                raise _edited(file, f"{where}.{name} is {summary[name]} of {total} questions",
                              f"0 <= {name} <= questions")
        before: dict[str, int] = {}
        for i, step in enumerate(summary["by_n"]):
            at = f"{where}.by_n[{i}]"
            if step["n"] != i + 1 or (i < len(sets) and step["set"] != sets[i]) \
                    or i >= len(sets):
                raise _edited(file, f"{at} is N {step['n']} adding {shown(step['set'])}",
                              f"N = {i + 1} adding plan set "
                              + (shown(sets[i]) if i < len(sets) else "(none: "
                                 f"{len(sets)} plan sets)"))
            plan = step["plan_recall"]
            strict = step.get("strict_plan_recall", 0)
            candidate = step.get("candidate_recall", step["success"])
            if not (0 <= step["success"] <= candidate <= plan <= total and 0 <= strict <= plan):
                raise _edited(file, f"{at}: success {step['success']}, candidate recall "
                              f"{step.get('candidate_recall', '-')}, strict plan recall "
                              f"{step.get('strict_plan_recall', '-')}, plan recall {plan} of "
                              f"{total} questions", "0 <= success <= candidate recall <= plan "
                              "recall <= questions, and strict plan recall <= plan recall")
            for name in ("plan_recall", "strict_plan_recall", "candidate_recall"):
                if name in step and step[name] < before.get(name, 0):
                    raise _edited(file, f"{at}.{name} is {step[name]}, below "
                                  f"{before[name]} at N {i}", f"{name} non-decreasing in N "
                                  "(more plan sets reach at least as much)")
                if name in step:
                    before[name] = step[name]
    _check_nbest_abstention(file, payload)


_CEILING = ("questions", "with_gold_path", "latest_wins", "optimal")


def check_ceiling(path: Path, payload: dict) -> None:
    file = path / CEILING_FILE
    parts = [(f"per_source.{s}", v) for s, v in payload["per_source"].items()]
    haystacks = payload.get("per_haystack")
    parts += [(f"per_haystack.{h}", v) for h, v in (haystacks or {}).items()]
    if all(name in payload for name in _CEILING):
        parts.append(("the totals", payload))
    for where, v in parts:
        q, gold, latest, best = (v[name] for name in _CEILING)
        if not 0 <= latest <= best <= gold <= q:
            raise _edited(file, f"{where}: latest wins {latest}, optimum {best}, gold path "
                          f"{gold}, questions {q}", "0 <= latest wins <= optimum <= gold path "
                          "<= questions")
        bound = v.get("bound")
        if bound is not None and not (isinstance(bound, int) and best <= bound <= q):
            raise _edited(file, f"{where}: bound {shown(bound)} with optimum {best} of {q} "
                          "questions", "optimum <= bound <= questions")
    sums = {name: sum(v[name] for v in payload["per_source"].values()) for name in _CEILING}
    against = ([("per_haystack", {name: sum(v[name] for v in haystacks.values())
                                  for name in _CEILING})] if haystacks is not None else [])
    if all(name in payload for name in _CEILING):
        against.append(("the totals", {name: payload[name] for name in _CEILING}))
    for where, figures in against:
        for name in _CEILING:
            if figures[name] != sums[name]:
                raise _edited(file, f"{where}: {name} sums to {figures[name]}, the sources' "
                              f"to {sums[name]}", f"{where} summing to per_source")
    _check_ceiling_rows(file, payload)
    _check_ceiling_flags(file, payload)
    _check_ceiling_components(file, payload)
    _check_ceiling_one_key(file, payload)
    _check_ceiling_status(file, payload)


PROVEN, FOUND, NONE_FOUND = "OPTIMAL", "FEASIBLE", "UNKNOWN"    # oracle.ceiling's statuses


def _check_ceiling_rows(file: Path, payload: dict) -> None:
    """Each source's figures are the counts of its question rows (when the rows carry them)."""
    rows = payload.get("rows") or []
    if not rows or not all(isinstance(r, dict) and isinstance(r.get("source"), str)
                           and all(isinstance(r.get(n), bool) for n in ("optimal",
                                                                         "latest_wins"))
                           for r in rows):
        return            # written before the rows carried their outcome: nothing to count
    for source, v in payload["per_source"].items():
        mine = [r for r in rows if r["source"] == source]
        counted = {"questions": len(mine), "optimal": sum(r["optimal"] for r in mine),
                   "latest_wins": sum(r["latest_wins"] for r in mine)}
        for name, want in counted.items():
            if v[name] != want:
                raise _edited(file, f"per_source.{source}: {name} is {v[name]}, but its "
                              f"question rows count {want}", f"{name} counted from rows")


def _check_ceiling_flags(file: Path, payload: dict) -> None:
    """Each question row's flags against the contested keys of the same file, as
    oracle.ceiling derives them (verification W01). A contested key keeps one of the versions
    it is needed in. A question of ONE alternative needs every key of it in one version; a key
    it needs that no other question needs in another version is kept in that version (the
    oracle sets such a key freely), so its `optimal` flag is true exactly when each contested
    key listing it keeps the version it is listed under, and `latest_wins` is true only when
    each of them lists it under version 0. A question of several alternatives may be satisfied
    by one that needs no contested key, so its flags are bounded by nothing here; one of none
    is never satisfied."""
    rows = payload.get("rows") or []
    contested = payload.get("contested_keys")
    if not isinstance(contested, list) or not all(
            isinstance(r, dict) and isinstance(r.get("qid"), str)
            and isinstance(r.get("alternatives"), int)
            and all(isinstance(r.get(n), bool) for n in ("optimal", "latest_wins"))
            for r in rows):
        return            # written before the rows carried their alternatives: nothing to match
    listed: dict[str, list[tuple[int, dict, int]]] = {}
    for i, key in enumerate(contested):
        where = f"contested_keys[{i}]"
        needed = key.get("needed") if isinstance(key, dict) else None
        if not isinstance(needed, list) or not all(
                isinstance(n, dict) and isinstance(n.get("version"), int)
                and isinstance(n.get("questions"), list) for n in needed):
            raise _edited(file, f"{where} has no needed versions with their questions",
                          "needed: [{version, questions}, ...]")
        keeps = key.get("optimal_version")
        versions = [n["version"] for n in needed]
        if keeps is not None and keeps not in versions:
            raise _edited(file, f"{where} ({_key_name(key)}): optimal_version {shown(keeps)}, "
                          f"but the key is needed in version(s) "
                          f"{', '.join(map(str, versions))}", "a kept version the key is "
                          "needed in")
        for n in needed:
            for qid in n["questions"]:
                listed.setdefault(qid, []).append((i, key, n["version"]))
    for i, row in enumerate(rows):
        where = f"rows[{i}] ({row['qid']})"
        if row["alternatives"] == 0:
            for name in ("optimal", "latest_wins"):
                if row[name]:
                    raise _edited(file, f"{where}: {name} is true with no alternative (no gold "
                                  "path)", f"{name} false for a question no policy satisfies")
            continue
        if row["alternatives"] != 1:
            continue
        # the keys of its own haystack (a key of another store is another key)
        mine = [(j, key, v) for j, key, v in listed.get(row["qid"], [])
                if None in (key.get("haystack"), row.get("haystack"))
                or key.get("haystack") == row.get("haystack")]
        missed = [(j, key, v) for j, key, v in mine if key.get("optimal_version") != v]
        if row["optimal"] and missed:
            j, key, v = missed[0]
            raise _edited(file, f"{where}: optimal is true, but it needs {_key_name(key)} in "
                          f"version {v} (contested_keys[{j}]) and the policy keeps version "
                          f"{shown(key.get('optimal_version'))}", "optimal true only when the "
                          "policy keeps every version its one alternative needs")
        if not row["optimal"] and not missed:
            keys = (f"the policy keeps each contested key it needs in that version "
                    f"({', '.join(_key_name(k) for _, k, _ in mine)})" if mine
                    else "it needs no contested key")
            raise _edited(file, f"{where}: optimal is false, but {keys}, and each other key "
                          "of its one alternative is needed in one version only (kept in it)",
                          "optimal true when the policy keeps every version its one "
                          "alternative needs")
        older = [(j, key, v) for j, key, v in mine if v != 0]
        if row["latest_wins"] and older:
            j, key, v = older[0]
            raise _edited(file, f"{where}: latest_wins is true, but it needs {_key_name(key)} "
                          f"in version {v} (contested_keys[{j}])", "latest_wins true only "
                          "when every version its one alternative needs is the latest (0)")


def _check_ceiling_one_key(file: Path, payload: dict) -> None:
    """A component of one contested key, proven optimal, keeps a version that satisfies the
    most of its questions (verification D09). Counted from the contested key's needed lists:
    a question of ONE alternative listed under version v is in the component and satisfied
    exactly when v is kept; any question listed under the kept version may be satisfied by
    it (one of several alternatives, or satisfied without the key, counts too, so the check
    never refuses what the solver wrote). So no version's one-alternative questions may
    outnumber every question listed under the kept one. A row of one alternative that needs
    only latest versions of its contested keys may still need an older version of a key no
    other question contests (not listed), so its `latest_wins` is not checked that way."""
    components = payload.get("components")
    contested = payload.get("contested_keys")
    rows = payload.get("rows") or []
    if not isinstance(components, list) or not isinstance(contested, list):
        return
    single = {r["qid"] for r in rows if isinstance(r, dict) and r.get("alternatives") == 1}
    by_name: dict[tuple, list[tuple[int, dict]]] = {}
    for j, key in enumerate(contested):
        if isinstance(key, dict):
            by_name.setdefault((key.get("haystack"), key.get("subject"), key.get("relation")),
                               []).append((j, key))
    for i, c in enumerate(components):
        if not (isinstance(c, dict) and c.get("keys") == 1 and c.get("status") == PROVEN
                and isinstance(c.get("members"), list) and len(c["members"]) == 1
                and isinstance(c["members"][0], list) and len(c["members"][0]) == 2):
            continue
        subject, relation = c["members"][0]
        found = by_name.get((c.get("haystack"), subject, relation), [])
        if len(found) != 1:
            continue            # not contested (one question's own alternatives), or ambiguous
        j, key = found[0]
        keeps = key.get("optimal_version")
        needed = {n["version"]: n["questions"] for n in key["needed"]}
        if keeps not in needed:
            continue            # refused by _check_ceiling_flags
        reachable = len(set(needed[keeps]))
        for version, qids in needed.items():
            sure = len(set(qids) & single)
            if sure > reachable:
                raise _edited(file, f"components[{i}], one key {_key_name(key)} "
                              f"(contested_keys[{j}]), proven optimal, keeps version {keeps}, "
                              f"which {reachable} question(s) need, but {sure} question(s) of "
                              f"one alternative need version {version}", "the kept version of "
                              "a one-key component one that the most questions need")


def _key_name(key: dict) -> str:
    return f"({shown(key.get('subject'))}, {shown(key.get('relation'))})"


def _check_ceiling_components(file: Path, payload: dict) -> None:
    """The optimum and the bound as oracle.ceiling adds them up: the questions the keys of one
    requested version satisfy alone (`questions_free`), plus each solved component's best (and
    bound); a component proven optimal has its bound at its best. Checked per haystack (its
    components name it), or for the whole file when it was solved as one store."""
    components = payload.get("components")
    if not isinstance(components, list):
        return
    for i, c in enumerate(components):
        where = f"components[{i}]"
        figures = [c.get(n) for n in ("best", "bound", "questions")]
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in figures[:1]):
            return        # an older shape without the solver's figures: nothing to add up
        best, bound, questions = figures
        if bound is None:
            continue
        if not (isinstance(bound, int) and isinstance(questions, int)
                and 0 <= best <= bound <= questions):
            raise _edited(file, f"{where}: best {shown(best)}, bound {shown(bound)} of "
                          f"{shown(questions)} questions", "0 <= best <= bound <= questions")
        if c.get("status") == PROVEN and best != bound:
            raise _edited(file, f"{where}: status OPTIMAL with best {best} and bound {bound}",
                          "a bound equal to the best where the solver proved it optimal")
    haystacks = payload.get("per_haystack")
    if haystacks is None:
        groups = {"the totals": (payload, components)} if "questions_free" in payload else {}
    else:
        groups = {f"per_haystack.{h}": (v, [c for c in components if c.get("haystack") == h])
                  for h, v in haystacks.items()}
        stray = sorted({str(c.get("haystack")) for c in components} - set(haystacks))
        if stray:
            raise _edited(file, f"components of haystack {shown(stray[0])}, which per_haystack "
                          "does not have", "components of the file's haystacks")
    for where, (v, mine) in groups.items():
        if isinstance(v.get("components"), int) and v["components"] != len(mine):
            raise _edited(file, f"{where}: components is {shown(v['components'])}, but "
                          f"{len(mine)} component(s) are listed", "the components listed")
        free = v.get("questions_free")
        if not isinstance(free, int):
            continue
        parts = (f"questions_free {free} + the components' best "
                 f"{' + '.join(str(c['best']) for c in mine) or '(none)'}")
        if v["optimal"] != free + sum(c["best"] for c in mine):
            raise _edited(file, f"{where}: optimum {v['optimal']}, but {parts} = "
                          f"{free + sum(c['best'] for c in mine)}", "the optimum as the "
                          "oracle adds it up: questions_free plus each component's best")
        if v.get("bound") is not None and all(isinstance(c.get("bound"), int) for c in mine) \
                and v["bound"] != free + sum(c["bound"] for c in mine):
            raise _edited(file, f"{where}: bound {v['bound']}, but questions_free {free} + "
                          f"the components' bounds = {free + sum(c['bound'] for c in mine)}",
                          "the bound as the oracle adds it up")
        statuses = [c.get("status") for c in mine]
        if "status" in v and all(isinstance(x, str) for x in statuses):
            want = PROVEN if all(x == PROVEN for x in statuses) else FOUND
            if v["status"] != want:
                raise _edited(file, f"{where}: status {shown(v['status'])}, but its components "
                              f"are {', '.join(statuses) or '(none)'}", f"status {want} (OPTIMAL "
                              "only when every component is proven optimal)")


def _check_ceiling_status(file: Path, payload: dict) -> None:
    """OPTIMAL means proven: the bound is the optimum, in the totals and in each haystack, and a
    source is proven when each of its haystacks is (audit V06)."""
    haystacks = payload.get("per_haystack") or {}
    parts = [(f"per_haystack.{h}", v) for h, v in haystacks.items()]
    if "status" in payload:
        parts.append(("the totals", payload))
    for where, v in parts:
        if v.get("status") not in (PROVEN, FOUND):
            raise _edited(file, f"{where}: status {shown(v.get('status'))}",
                          "status OPTIMAL or FEASIBLE")
        if v["status"] == PROVEN and v.get("bound") is not None and v["bound"] != v["optimal"]:
            raise _edited(file, f"{where}: status OPTIMAL with optimum {v['optimal']} and bound "
                          f"{v['bound']}", "a bound equal to the optimum where it is proven "
                          "optimal")
    if "status" in payload and haystacks:
        want = PROVEN if all(v["status"] == PROVEN for v in haystacks.values()) else FOUND
        if payload["status"] != want:
            raise _edited(file, f"the totals: status {shown(payload['status'])}, but the "
                          f"haystacks' are {', '.join(v['status'] for v in haystacks.values())}",
                          f"status {want} (OPTIMAL only when every haystack is)")
    for source, v in payload["per_source"].items():
        if "status" not in v:
            continue
        if v["status"] not in (PROVEN, FOUND):
            raise _edited(file, f"per_source.{source}: status {shown(v['status'])}",
                          "status OPTIMAL or FEASIBLE")
        mine = [haystacks[h] for h in v.get("haystacks") or [] if h in haystacks]
        if mine and v["status"] != (PROVEN if all(h["status"] == PROVEN for h in mine)
                                    else FOUND):
            raise _edited(file, f"per_source.{source}: status {v['status']}, but its haystacks "
                          f"are {', '.join(h['status'] for h in mine)}", "a source proven "
                          "optimal exactly when each of its haystacks is")
