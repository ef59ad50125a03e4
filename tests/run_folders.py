"""Hand-made run folders that the reader (`resolver.results.reader`) accepts: every file of a run,
complete and consistent, from a few rows. Tests that need a run of a shape the resolver would
not produce (a given winner, a reader that replaced a right answer) write it with
`write_run_folder`; tests of the reader's refusals then break one file."""
from __future__ import annotations

from pathlib import Path

import orjson

from resolver.haystack import load, sha256_bytes
from resolver.metrics.scoring import Cell, metrics_rows
from resolver.results.result_schema import META_SCHEMA, METRICS_SCHEMA, dumps, dumps_lines


def _metrics_rows(rows: list[dict], reader: str, scored: bool) -> list[dict]:
    """metrics.json's rows as scoring writes them (the reader recomputes them from the rows);
    no question is stale-eligible (that needs the store)."""
    cells = []
    for source in dict.fromkeys(r["source"] for r in rows):
        mine = [r for r in rows if r["source"] == source]
        kind = "mh" if "_mh_" in source else "sh" if "_sh_" in source else "unknown"
        size = source.rsplit("_", 1)[-1] if kind != "unknown" else "unknown"
        cells.append(Cell(source, kind, size, [r["em"] for r in mine] if scored else [],
                          [int(r["prediction"] != "") for r in mine]))
    return metrics_rows(cells, reader, scored)


def trace_of(row: dict, candidates: list[dict], plan_sets) -> dict:
    """The traces.jsonl row of a prediction row; the first candidate is the winner. An answer
    without candidates gets a winner of one hop landing on it and no plan (the reader wants
    every answer to be a winner's, and every winner to have walked a hop)."""
    winner = candidates[0] if candidates else None
    if winner is None and row["resolver_answer"]:
        hop = {"subject": "Somewhere", "relation": "capital", "object": row["resolver_answer"],
               "serial": 1, "line": 1, "text": "", "version": 0, "reverse": False,
               "passed_over": [], "status": "active"}
        winner = {"plan": None, "plan_set": None, "hops": [hop],
                  "answer": row["resolver_answer"], "score": 0.0, "terms": [],
                  "complete": True}
    return {"qid": row["qid"], "question": row["question"], "source": row["source"],
            "answer": row["resolver_answer"], "reason": row["reason"],
            "winner": winner, "candidates": candidates,
            "plans_tried": len(candidates), "plan_sets": list(plan_sets), "suspicious": "",
            "reader": None, "repair": None}


def write_run_folder(folder: Path, data: list[str], cases: dict, *,
                     plan_sets=("live:rules", "live:lexicon"), reader: str = "none",
                     split: str = "dev") -> Path:
    """A resolver run folder over the rows of `data`. `cases`: qid -> (prediction, em,
    [candidates]) or (prediction, em, [candidates], resolver_answer); the question, source and
    gold come from the data."""
    dataset, gold = load(data, use_cache=False)
    questions = {q.qid: q for q in dataset.questions}
    scored = split == "dev"
    rows, traces = [], []
    for qid, case in cases.items():
        prediction, em, candidates = case[:3]
        resolver_answer = case[3] if len(case) > 3 else prediction
        q = questions[qid]
        row = {"qid": qid, "source": q.source, "question": q.text, "prediction": prediction,
               "resolver_answer": resolver_answer,
               "gold": list(gold[qid]) if scored else None, "em": em if scored else None,
               "plan": candidates[0]["plan"] if candidates else None,
               "plan_set": candidates[0]["plan_set"] if candidates else None,
               "reader": reader, "reason": "" if candidates else "no path"}
        rows.append(row)
        traces.append(trace_of(row, candidates, plan_sets))
    return _write_folder(folder, rows, traces, [str(p) for p in data], plan_sets=plan_sets,
                         reader=reader, split=split, mode="search")


def _write_folder(folder: Path, rows: list[dict], traces: list[dict], data: list[str], *,
                  plan_sets, reader: str, split: str, mode: str) -> Path:
    """The four files of a resolver run folder around its prediction and trace rows."""
    scored = split == "dev"
    run_id = folder.name
    meta = {"schema": META_SCHEMA, "run_id": run_id, "created_utc": "2026-01-01T00:00:00+00:00",
            "config_sha256": "0" * 64, "config_identity": {},
            "config": {"mode": mode, "plans": list(plan_sets), "split": split},
            "data": data,
            "data_sha256": {p: sha256_bytes(Path(p).read_bytes()) for p in data},
            "split": split, "grammar_sha256": "", "lexicon_sha256": {},
            "plan_sets": [{"set_id": s, "source": "live", "planner": None, "model": None,
                           "level": None, "manifest_sha256": None, "compiler_sha256": None,
                           "plans_sha256": "", "questions_with_plans": 0} for s in plan_sets],
            "reader": reader, "repair": "none", "lanes": {"reader": None, "repair": None},
            "counts": {"questions": len(rows),
                       "answered": sum(1 for r in rows if r["prediction"])},
            "versions": {}, "git": {"commit": None, "dirty": None}}
    metrics = {"schema": METRICS_SCHEMA, "run_id": run_id, "split": split, "scored": scored,
               "reader": reader, "bootstrap": {}, "rows": _metrics_rows(rows, reader, scored)}
    folder.mkdir(parents=True)
    (folder / "meta.json").write_bytes(dumps(meta))
    (folder / "predictions.jsonl").write_bytes(dumps_lines(rows))
    (folder / "traces.jsonl").write_bytes(dumps_lines(traces))
    (folder / "metrics.json").write_bytes(dumps(metrics))
    return folder


def rewrite_lines(path: Path, change) -> None:
    """Apply `change(rows)` (in place, or returning a new list of rows) to a JSONL file."""
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    result = change(rows)
    rows = result if isinstance(result, list) else rows
    path.write_bytes(dumps_lines(rows))


def write_outcome_folder(folder: Path, outcomes: list[tuple], *, split: str = "dev",
                         plan_sets=("live:rules", "live:lexicon"), mode: str = "search") -> Path:
    """A resolver run folder from outcomes alone, with no data behind it (for the readers that
    never re-read the data: compare, tables). `outcomes`: (qid, source, em) or (qid, source,
    em, gold) or (qid, source, em, gold, question); the prediction is the gold's first answer
    when em is 1, else "wrong"; the gold is ["right"] and the question "<qid>?" unless given.
    On the test split em is dropped (an unscored run)."""
    scored = split == "dev"
    rows, traces = [], []
    for case in outcomes:
        qid, source, em = case[:3]
        gold = list(case[3]) if len(case) > 3 else ["right"]
        question = case[4] if len(case) > 4 else f"{qid}?"
        prediction = gold[0] if em else "wrong"
        row = {"qid": qid, "source": source, "question": question, "prediction": prediction,
               "resolver_answer": prediction, "gold": gold if scored else None,
               "em": em if scored else None, "plan": None, "plan_set": None, "reader": "none",
               "reason": ""}
        rows.append(row)
        traces.append(trace_of(row, [], plan_sets))
    return _write_folder(folder, rows, traces, [], plan_sets=plan_sets, reader="none",
                         split=split, mode=mode)
