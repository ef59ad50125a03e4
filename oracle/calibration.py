"""`factres oracle calibration RUN [RUN ...]`: how the confidence labels sort right answers from
wrong ones.

For every question of every run: its label (the `confidence` of its predictions.jsonl row) and
whether the answer it labels is right. That answer is the resolver's own (`resolver_answer`):
a run made with `--abstain-below` emptied its prediction where the label was below the level,
but the label still labels the answer the resolver gave, so that is what it is judged on; the
abstentions are counted apart (how many, how many of their answers were right). Right means:
the answer scores EM 1 against the rows' gold (MemoryAgentBench's substring match,
`oracle.gold.is_hit`); for a question of a row marked `metadata.unanswerable: true` (such rows
have no answers and are run with `--split test`), no answer is right and any answer is wrong. A
question with no gold that is not marked unanswerable cannot be judged and is counted apart.

Per label, per run (and per source inside it) and pooled over the runs: the questions, the
right ones, the precision (share right), the coverage (share of the judged questions at or
above the label) and the precision at or above it (what `--abstain-below` that label keeps).
Runs are named by their folders (a copy keeps meta.json's run id). The pool adds up the runs'
questions, so it is made only when no question is in two of the runs (two systems over the same
questions would count each twice): a question is the same by its id, or by its content (its
text, blanks collapsed, over the same context, compared by its facts: the same rows under
other ids or source names, with blanks added or not); otherwise the report says so and pools
nothing. A run made
with `--split test` is calibrated only on its unanswerable rows: the gold of a test run's other
questions is never read (the protocol's blind set), and such a run is refused.
Gold is read here and only here, after the runs are made."""
from __future__ import annotations

from collections import defaultdict

from resolver.errors import InputError
from resolver.haystack import read_row, read_rows
from resolver.results.derived import abstained
from resolver.results.reader import (
    RunFolder,
    locate_data,
    read_run,
    refuse_copies,
    resolver_answer,
)
from resolver.results.result_schema import RESOLVER_KIND, run_kind
from resolver.search.confidence import LEVELS

from .gold import is_hit

POOLED = "pooled"
UNANSWERABLE_KEY = "unanswerable"       # row metadata.unanswerable: true


def question_key(text: str) -> str:
    """A question's text as the pool compares it: blanks collapsed and stripped, case folded,
    trailing punctuation ("?", ".", "!") and the blanks before it left out, so a lower-cased
    copy or one without its "?" is the same question (verification D06)."""
    return " ".join(text.casefold().split()).rstrip("?.! ")


def context_key(haystack) -> str:
    """A context as the pool compares it: the sha256 of its facts (serial, subject, relation,
    object, names as the store looks them up: blanks collapsed, case folded), so a blank added
    to its header or anywhere else between the facts leaves it the same; a context of no facts
    by its lines with blanks collapsed (blank lines left out)."""
    import hashlib

    from resolver.store.fact_store import norm
    digest = hashlib.sha256()
    facts = haystack.parse.facts
    if facts:
        # in serial order, not line order: a blank line added moves the lines, not the facts
        for fact in sorted((int(f.serial), norm(f.subject), f.relation, norm(f.object))
                           for f in facts):
            digest.update(repr(fact).encode("utf-8", "surrogatepass"))
        return "facts:" + digest.hexdigest()
    for line in haystack.text.splitlines():
        if line.split():
            digest.update((" ".join(line.split()) + "\n").encode("utf-8", "surrogatepass"))
    return "text:" + digest.hexdigest()


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
    """One record per question: qid, source, label, the answer the label labels (the
    resolver's), the prediction, verdict (True right, False wrong, None cannot be judged),
    whether the row is unanswerable and whether the run abstained from the answer."""
    if run_kind(run.meta) != RESOLVER_KIND:
        raise InputError(f"run {run.name!r} is {run.meta.get('kind')}: it has no confidence "
                         "labels", path=str(run.path), expected="a run of factres's resolver")
    dataset, gold = run.load_data()
    unanswerable = unanswerable_qids(run)
    if run.meta["split"] == "test":
        blind = [r["qid"] for r in run.predictions
                 if r["qid"] not in unanswerable and gold.answers.get(r["qid"])]
        if blind:
            raise InputError(f"run {run.name!r} was made with --split test (unscored: factres "
                             f"never read its gold), and {len(blind)} of its questions have "
                             f"gold (first: {blind[0]}): calibrating them would read it",
                             path=str(run.path), expected="a dev run, or a test run of rows "
                             "marked unanswerable only")
    # an abstained row of a run made before abstentions kept the resolver's answer: its trace
    old = any(abstained(r) and not r["resolver_answer"] for r in run.predictions)
    traces = run.traces if old else {}
    out = []
    for row in run.predictions:
        confidence = row.get("confidence")
        if not confidence:
            raise InputError(f"run {run.name!r} has no confidence labels (question "
                             f"{row['qid']!r}): it was made before the labels existed",
                             path=str(run.path), expected="a run made with the labels "
                             "(factres run records them in every row)")
        qid = row["qid"]
        answer = resolver_answer(row, traces.get(qid))
        golds = gold.answers.get(qid, ())
        if qid in unanswerable:
            verdict = answer == ""
        elif golds:
            verdict = is_hit(answer, golds)
        else:
            verdict = None
        out.append({"qid": qid, "source": row["source"], "label": confidence["label"],
                    "answer": answer, "prediction": row.get("prediction", ""),
                    "right": verdict, "unanswerable": qid in unanswerable,
                    "abstained": abstained(row)})
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
    """Per run (and per source of each run) and pooled: the label rows. Several runs are pooled
    only when no question is in two of them; else `pooled` is None and `not_pooled` says
    which runs share how many questions."""
    per_run, everything, owner, shared = [], [], {}, {}
    for run in runs:
        records = judge(run)
        everything += records
        dataset, _ = run.load_data()          # read by judge already
        questions = {q.qid: q for q in dataset.questions}
        contexts: dict[str, str] = {}
        for r in records:
            # one question by its id, or by its content (its text over the same context): two
            # systems over the same rows under other ids are the same questions (verification
            # V13), whatever blanks were added to the question or the context (W02)
            q = questions[r["qid"]]
            if q.context_sha256 not in contexts:
                contexts[q.context_sha256] = context_key(dataset.haystack_of(q))
            keys = (("id", r["qid"]),
                    ("content", question_key(q.text), contexts[q.context_sha256]))
            first = next((owner[k] for k in keys if k in owner), None)
            if first is not None and first != run.name:
                pair = (first, run.name)
                shared[pair] = shared.get(pair, 0) + 1
            for k in keys:
                owner.setdefault(k, run.name)
        sources = sorted({r["source"] for r in records})
        mine = [r for r in records if r["abstained"]]
        per_run.append({
            "run": run.name, "run_id": run.run_id, "questions": len(records),
            "unjudged": sum(1 for r in records if r["right"] is None),
            "unanswerable": sum(1 for r in records if r["unanswerable"]),
            "abstain_below": (run.meta.get("config") or {}).get("abstain_below"),
            "abstained": len(mine), "abstained_right": sum(1 for r in mine if r["right"]),
            "labels": label_rows(records),
            "sources": {s: label_rows([r for r in records if r["source"] == s])
                        for s in sources},
            "records": records})
    pooled = None
    if not shared:
        pooled = {"questions": len(everything),
                  "unjudged": sum(1 for r in everything if r["right"] is None),
                  "labels": label_rows(everything)}
    return {"runs": per_run, POOLED: pooled,
            "not_pooled": [{"runs": list(pair), "shared_questions": n}
                           for pair, n in shared.items()]}


def summary_rows(report: dict) -> list[list]:
    """The summary table's rows: per run, then pooled (when there are several runs over
    different questions)."""
    out = []
    blocks = [(r["run"], r["labels"]) for r in report["runs"]]
    if len(report["runs"]) > 1 and report[POOLED] is not None:
        blocks.append((POOLED, report[POOLED]["labels"]))
    for name, labels in blocks:
        for row in labels:
            out.append([name, row["label"], row["questions"], row["right"], row["precision"],
                        row["coverage"], row["precision_at_or_above"]])
    return out


HEADERS = ["run", "label", "questions", "right", "precision", "coverage",
           "precision at or above"]


def notes(report: dict) -> list[tuple[str, ...]]:
    """What the table does not say by itself, per run: abstentions, unanswerable and unjudged
    questions, and runs not pooled. Each note alternates factres's words and user text (run
    names), starting with factres's, for the writer to escape."""
    out = []
    for run in report["runs"]:
        if run["abstained"]:
            out.append(("", run["run"], f": made with --abstain-below {run['abstain_below']}; "
                        f"{run['abstained']} answer(s) abstained from (left unanswered) are "
                        "judged here on the resolver's own answer, which their label labels; "
                        f"{run['abstained_right']} of them were right."))
        if run["unjudged"] or run["unanswerable"]:
            out.append(("", run["run"], f": {run['unanswerable']} unanswerable question(s); "
                        f"{run['unjudged']} without gold, not judged."))
    for item in report["not_pooled"]:
        a, b = item["runs"]
        out.append(("Not pooled: runs ", a, " and ", b, f" share {item['shared_questions']} "
                    "question(s) (the same id, or the same question over the same context), "
                    "which a pool would count twice (two systems over the same questions)."))
    return out


def calibration_markdown(report: dict) -> str:
    import resolver.escape as escape

    from .report import md_table
    out = ["# Confidence labels: precision and coverage\n",
           "Right: the answer the label labels (the resolver's own, also where the run "
           "abstained from it) scores EM 1 against the rows' gold; for a row marked "
           "unanswerable, no answer. Coverage: share of the judged questions at or above the "
           "label. Precision at or above: what abstaining below the label keeps.\n",
           md_table(HEADERS, summary_rows(report))]
    for note in notes(report):
        out.append("\n" + "".join(escape.markdown(p) if i % 2 else p
                                   for i, p in enumerate(note)) + "\n")
    for run in report["runs"]:
        if len(run["sources"]) > 1:
            out.append(f"\n## {escape.markdown(run['run'])} by source\n")
            out.append(md_table(["source"] + HEADERS[1:], [
                [s, r["label"], r["questions"], r["right"], r["precision"], r["coverage"],
                 r["precision_at_or_above"]] for s, rows in run["sources"].items()
                for r in rows]))
    return "\n".join(out)


def analyse(run_refs, root=None):
    """`factres oracle calibration RUN [RUN ...]`."""
    from .report import Analysis
    runs = [read_run(ref, root) for ref in run_refs]
    refuse_copies(run_refs, runs)        # by path, and by content (verification W03)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        # two folders of one name (in two places) would give one name two rows
        raise InputError(f"two runs have one folder name: {', '.join(names)}",
                         expected="runs in folders of different names")
    report = calibration_report(runs)
    payload = dict(report, command="calibration", levels=list(LEVELS))
    tag = "+".join(names) if len(names) <= 3 else f"{names[0]}+{len(names) - 1}-more"
    return Analysis("calibration", tag, payload, calibration_markdown(report))
