"""`factres oracle calibration RUN [RUN ...]`: how the confidence labels sort right answers from
wrong ones.

For every question of every run: its label (the `confidence` of its predictions.jsonl row) and
whether its prediction is right. Right means: the prediction scores EM 1 against the rows' gold
(MemoryAgentBench's substring match, `oracle.gold.is_hit`); for a question of a row marked
`metadata.unanswerable: true` (such rows have no answers and are run with `--split test`), an
empty prediction (unanswered or abstained) is right and any answer is wrong. A question with no
gold that is not marked unanswerable cannot be judged and is counted apart.

Per label, per run (and per source inside it) and pooled over the runs: the questions, the
right ones, the precision (share right), the coverage (share of the judged questions at or
above the label) and the precision at or above it (what `--abstain-below` that label keeps).
Gold is read here and only here, after the runs are made."""
from __future__ import annotations

from collections import defaultdict

from resolver.errors import InputError
from resolver.haystack import read_row, read_rows
from resolver.run.reader import RunFolder, locate_data, read_run
from resolver.run.result_schema import RESOLVER_KIND, run_kind
from resolver.search.confidence import LEVELS

from .gold import is_hit

POOLED = "pooled"
UNANSWERABLE_KEY = "unanswerable"       # row metadata.unanswerable: true


def unanswerable_qids(run: RunFolder) -> set[str]:
    """The questions of the run's rows that are marked unanswerable."""
    found: set[str] = set()
    for name in run.meta.get("data") or []:
        path = locate_data(name, run.meta, run.path)
        raw_rows, _, _ = read_rows(path)
        for number, raw in enumerate(raw_rows):
            meta = raw.get("metadata") if isinstance(raw, dict) else None
            if isinstance(meta, dict) and meta.get(UNANSWERABLE_KEY) is True:
                found.update(read_row(raw, path, number).qids)
    return found


def judge(run: RunFolder) -> list[dict]:
    """One record per question: qid, source, label, prediction, verdict (True right, False
    wrong, None cannot be judged) and whether the row is unanswerable."""
    if run_kind(run.meta) != RESOLVER_KIND:
        raise InputError(f"run {run.run_id!r} is {run.meta.get('kind')}: it has no confidence "
                         "labels", path=str(run.path), expected="a run of factres's resolver")
    dataset, gold = run.load_data()
    unanswerable = unanswerable_qids(run)
    out = []
    for row in run.predictions:
        confidence = row.get("confidence")
        if not confidence:
            raise InputError(f"run {run.run_id!r} has no confidence labels (question "
                             f"{row['qid']!r}): it was made before the labels existed",
                             path=str(run.path), expected="a run made with the labels "
                             "(factres run records them in every row)")
        qid, prediction = row["qid"], row.get("prediction", "")
        golds = gold.answers.get(qid, ())
        if qid in unanswerable:
            verdict = prediction == ""
        elif golds:
            verdict = is_hit(prediction, golds)
        else:
            verdict = None
        out.append({"qid": qid, "source": row["source"], "label": confidence["label"],
                    "prediction": prediction, "right": verdict,
                    "unanswerable": qid in unanswerable})
    return out


def label_rows(records: list[dict]) -> list[dict]:
    """Per label, highest first: questions, right, precision, coverage, precision at or
    above. Only judged questions count; `unjudged` says how many were not."""
    judged = [r for r in records if r["right"] is not None]
    by_label: dict[str, list[dict]] = defaultdict(list)
    for r in judged:
        by_label[r["label"]].append(r)
    rows, seen, right_seen = [], 0, 0
    for label in reversed(LEVELS):
        mine = by_label.get(label, [])
        right = sum(1 for r in mine if r["right"])
        seen += len(mine)
        right_seen += right
        rows.append({"label": label, "questions": len(mine), "right": right,
                     "precision": right / len(mine) if mine else None,
                     "coverage": seen / len(judged) if judged else None,
                     "precision_at_or_above": right_seen / seen if seen else None})
    return rows


def calibration_report(runs: list[RunFolder]) -> dict:
    """Per run (and per source of each run) and pooled: the label rows."""
    per_run, everything = [], []
    for run in runs:
        records = judge(run)
        everything += records
        sources = sorted({r["source"] for r in records})
        per_run.append({
            "run": run.run_id, "questions": len(records),
            "unjudged": sum(1 for r in records if r["right"] is None),
            "unanswerable": sum(1 for r in records if r["unanswerable"]),
            "labels": label_rows(records),
            "sources": {s: label_rows([r for r in records if r["source"] == s])
                        for s in sources},
            "records": records})
    return {"runs": per_run,
            POOLED: {"questions": len(everything),
                     "unjudged": sum(1 for r in everything if r["right"] is None),
                     "labels": label_rows(everything)}}


def summary_rows(report: dict) -> list[list]:
    """The summary table's rows: per run, then pooled (when there are several runs)."""
    out = []
    blocks = [(r["run"], r["labels"]) for r in report["runs"]]
    if len(report["runs"]) > 1:
        blocks.append((POOLED, report[POOLED]["labels"]))
    for name, labels in blocks:
        for row in labels:
            out.append([name, row["label"], row["questions"], row["right"], row["precision"],
                        row["coverage"], row["precision_at_or_above"]])
    return out


HEADERS = ["run", "label", "questions", "right", "precision", "coverage",
           "precision at or above"]


def calibration_markdown(report: dict) -> str:
    from .report import md_table
    out = ["# Confidence labels: precision and coverage\n",
           "Right: EM 1 against the rows' gold; for a row marked unanswerable, an empty "
           "prediction. Coverage: share of the judged questions at or above the label. "
           "Precision at or above: what abstaining below the label keeps.\n",
           md_table(HEADERS, summary_rows(report))]
    for run in report["runs"]:
        if run["unjudged"] or run["unanswerable"]:
            out.append(f"\n{run['run']}: {run['unanswerable']} unanswerable question(s); "
                       f"{run['unjudged']} without gold, not judged.\n")
        if len(run["sources"]) > 1:
            out.append(f"\n## {run['run']} by source\n")
            out.append(md_table(["source"] + HEADERS[1:], [
                [s, r["label"], r["questions"], r["right"], r["precision"], r["coverage"],
                 r["precision_at_or_above"]] for s, rows in run["sources"].items()
                for r in rows]))
    return "\n".join(out)


def analyse(run_refs, root=None):
    """`factres oracle calibration RUN [RUN ...]`."""
    from .report import Analysis
    runs = [read_run(ref, root) for ref in run_refs]
    ids = [r.run_id for r in runs]
    if len(set(ids)) != len(ids):
        raise InputError(f"a run is named twice: {', '.join(ids)}")
    report = calibration_report(runs)
    payload = dict(report, command="calibration", levels=list(LEVELS))
    tag = "+".join(ids) if len(ids) <= 3 else f"{ids[0]}+{len(ids) - 1}-more"
    return Analysis("calibration", tag, payload, calibration_markdown(report))
