"""An imported run: another system's predictions (`mab.result_files`), joined to the rows by question
id, scored as the MemoryAgentBench harness scores them, and recorded as a run folder beside
factres's own (`factres score`).

- The rows (`--data`, default the bundled 6K dev rows) hold the questions, their contexts and the
  gold that is scored. A gold inside an imported file is only compared: every disagreement is
  recorded in meta.json and reported, never used.
- EM is `exact_match.harness_score`: the better of the raw output and the harness's
  `parse_output(output)`. The stale rate and the intervals are those of a resolver run.
- A source is covered when a file names it (the harness's `dataset_config.sub_dataset`) or one
  of its questions has a record. Every question of a covered source is in the run: one without
  a record is unanswered, scores 0 and is listed (`missing` in meta.json).
- An id that matches no question, a record of another source than its file or its own `source`
  field names, and a question answered twice are errors naming them.
- A file's own score (`averaged_metrics.substring_exact_match`, or the mean of its per-record
  score field) is compared with factres's score of the same records; a disagreement is recorded
  with the questions that differ, never adjusted.

Scoring reads the gold of any split, 32K-262K included: it is not a test run of factres's
resolver (nothing is resolved), so no frozen configuration is asked for; meta.json records the
split of every source. The folder shapes are in `result_schema` (`ImportedMetaJson`,
`ImportedPredictionRow`); the folder is written by `run_folder.write_run`, with an empty
traces.jsonl (there is no resolver trace)."""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import resolver.hub as hub
from resolver._version import __version__
from resolver.errors import InputError, first_few, place
from resolver.haystack import Dataset, Gold, Question, bundled_path, load, sha256_bytes
from resolver.mab import exact_match
from resolver.mab.result_files import HarnessFile, Record, read_file
from resolver.metrics import scoring
from resolver.results.result_schema import (
    IMPORTED_KIND,
    IMPORTED_META_SCHEMA,
    METRICS_SCHEMA,
    dumps,
    results_root,
)
from resolver.run import run_folder
from resolver.run.identity import git_state, package_versions, source_hashes
from resolver.run.protocol import neither_split_note, source_split
from resolver.run.run_folder import RUN_ID, check_run_id
from resolver.run.runs import Run, unparsed_record
from resolver.search.resolve import Prediction

SCORING = {"metric": exact_match.harness_score.__name__,
           "rule": "substring_exact_match, the max over the output and parse_output(output)",
           "gold": "the rows' answers (--data); a gold inside a file is only compared"}
# Sources whose code decides an imported run's scores (hashed into its id).
SCORING_FILES = ("metrics/scoring.py", "mab/result_files.py", "exchange/imported.py")


def split_of(question: Question) -> str:
    """"dev" for an official FactConsolidation source of 6K, "test" for 32K, 64K and 262K,
    "neither" for any other source (a hand-written set), as `factres run` says
    (`protocol.source_split`)."""
    return source_split(question.source)


@dataclass
class Joined:
    """The files' records matched to the rows' questions."""
    questions: list[Question]                        # of the covered sources, in data order
    records: dict[str, tuple[HarnessFile, Record]]   # qid -> where its prediction comes from
    sources_of: dict[str, list[str]]                 # file path -> sources its records cover


def _rows_hint(dataset: Dataset) -> str:
    return f"the rows in --data ({', '.join(dataset.paths)}; sources: " \
           f"{', '.join(dataset.sources) or 'none'}); {hub.HINT}"


def join(files: list[HarnessFile], dataset: Dataset) -> Joined:
    """Match every record to a question of the rows; raise on what cannot be matched."""
    by_qid = {q.qid: q for q in dataset.questions}
    covered: set[str] = set()
    records: dict[str, tuple[HarnessFile, Record]] = {}
    unknown: list[str] = []
    foreign: list[str] = []
    sources_of: dict[str, list[str]] = {}
    for hf in files:
        if hf.source is not None:
            if hf.source not in dataset.sources:
                raise InputError(f"the file is for source {hf.source!r} (its "
                                 "dataset_config.sub_dataset), which the rows do not have",
                                 path=hf.path, expected=f"rows of that source in --data, not "
                                 f"only {_rows_hint(dataset)}")
            covered.add(hf.source)
        mine = set()
        for r in hf.records:
            question = by_qid.get(r.qid)
            if question is None:
                unknown.append(f"{hf.path} {r.where}: {r.qid}")
                continue
            claimed = r.source or hf.source
            if claimed is not None and claimed != question.source:
                foreign.append(f"{hf.path} {r.where}: {r.qid} is a question of "
                               f"{question.source}, not {claimed}")
                continue
            if r.qid in records:
                other, first = records[r.qid]
                raise InputError(f"{r.where}: question {r.qid!r} is answered twice (also "
                                 f"{other.path} {first.where})", path=hf.path,
                                 expected="one record per question across the files")
            records[r.qid] = (hf, r)
            mine.add(question.source)
        covered |= mine
        sources_of[hf.path] = sorted(mine | ({hf.source} if hf.source else set()))
    if unknown:
        # the count and the first few: a file of a million unknown ids is one short line
        raise InputError(f"{len(unknown)} record id(s) match no question of the rows: "
                         f"{first_few(unknown, sep='; ')}",
                         path=files[0].path if len(files) == 1 else None,
                         expected=f"ids of questions in {_rows_hint(dataset)}")
    if foreign:
        raise InputError(f"{len(foreign)} record(s) of another source than the file says: "
                         f"{first_few(foreign, sep='; ')}", expected="each file's records to "
                         "be questions of the source it names")
    if not covered:
        raise InputError("the files name no source and have no records",
                         path=files[0].path, expected="at least one record, or a harness "
                         "file whose dataset_config names its sub_dataset")
    questions = [q for q in dataset.questions if q.source in covered]
    return Joined(questions, records, sources_of)


def system_name(files: list[HarnessFile], name: str | None) -> tuple[str, str]:
    """(the system's name, where it came from): --name, else the harness files' agent name,
    else the first file's name."""
    if name is not None:
        if not name.strip():
            raise InputError(f"--name {name!r} is empty", expected="the system's name, or no "
                             "--name to take the files' agent_config.agent_name")
        return name, "--name"
    agents = set()
    for hf in files:
        config = hf.agent_config or {}
        key = "agent_name" if config.get("agent_name") else "model"
        agent = config.get(key)
        if not agent:
            continue
        if not isinstance(agent, str):
            # never a Python repr as a system's name
            raise InputError(f"agent_config.{key} is {json.dumps(agent)[:80]}", path=hf.path,
                             expected="the system's name as a string, or --name SYSTEM")
        agents.add(agent)
    agents = sorted(agents)
    if len(agents) > 1:
        raise InputError(f"the files name {len(agents)} systems ({', '.join(agents)}); an "
                         "imported run is one system", expected="--name SYSTEM, or one "
                         "system's files")
    if agents:
        return agents[0], "agent_config.agent_name"
    return Path(files[0].path).stem, "file name"


def _check_gold(questions: list[Question], gold: Gold, dataset: Dataset) -> None:
    missing = [q.qid for q in questions if not gold[q.qid]]
    if missing:
        raise InputError(f"{len(missing)} question(s) have no gold answers in the rows (first: "
                         f"{missing[0]}): there is nothing to score them against",
                         path=dataset.paths[0], expected="rows with answers")


def _same_gold(file_gold: tuple[str, ...], gold: tuple[str, ...]) -> bool:
    # Scoring is a max over the answers, so their order does not matter.
    return sorted(file_gold) == sorted(gold)


def _file_check(hf: HarnessFile, em_of: dict[str, int], gold_differs: set[str]) -> dict:
    """A file's own score against factres's score of the same records."""
    ems = [em_of[r.qid] for r in hf.records]
    factres = 100 * sum(ems) / len(ems) if ems else None
    reported, reported_from = hf.reported_score, None
    if reported is not None or hf.reported_unusable is not None:
        reported_from = "averaged_metrics.substring_exact_match"
    elif "em" in hf.fields and ems and all(r.reported_em is not None for r in hf.records):
        reported = 100 * sum(r.reported_em for r in hf.records) / len(ems)
        reported_from = f"mean of {hf.fields['em']!r}"
    differing = [{"qid": r.qid, "record": r.where, "reported": r.reported_em,
                  "factres": em_of[r.qid], "file_gold_differs": r.qid in gold_differs}
                 for r in hf.records
                 if r.reported_em is not None and r.reported_em != em_of[r.qid]]
    agrees = None
    if reported is not None:
        agrees = (factres is not None and math.isclose(reported, factres, abs_tol=1e-9)
                  and not differing)
    return {"path": hf.path, "sha256": hf.sha256, "format": hf.format, "fields": hf.fields,
            "source": hf.source, "records": len(hf.records), "agent_config": hf.agent_config,
            "dataset_config": hf.dataset_config, "notes": list(hf.notes),
            "reported_score": reported, "reported_from": reported_from,
            "reported_unusable": hf.reported_unusable,
            "factres_score": factres, "agrees": agrees, "differing": differing}


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._") or "system"


def _prediction_rows(joined: Joined, predictions: list[Prediction], ems: list, stales: list,
                     gold: Gold) -> tuple[list[dict], list[dict], list[str], list[str]]:
    """predictions.jsonl rows (result_schema.ImportedPredictionRow), in data order, with the
    gold disagreements, the questions without a record and those with an empty prediction."""
    rows, disagreements, missing, empty = [], [], [], []
    for q, pred, em, stale in zip(joined.questions, predictions, ems, stales):
        found = joined.records.get(q.qid)
        hf, record = found if found else (None, None)
        answers = list(gold[q.qid])
        if record is None:
            missing.append(q.qid)
        elif record.prediction == "":
            empty.append(q.qid)
        if record is not None and record.gold is not None \
                and not _same_gold(record.gold, gold[q.qid]):
            disagreements.append({"qid": q.qid, "file": hf.path, "record": record.where,
                                  "file_gold": list(record.gold), "gold": answers})
        rows.append({"qid": q.qid, "source": q.source, "question": q.text,
                     "prediction": pred.answer,
                     "parsed_prediction": exact_match.parse_output(pred.answer),
                     "gold": answers, "em": em,
                     "stale": stale.stale if stale is not None and stale.eligible else None,
                     "file": hf.path if hf else None, "record": record.where if record else None,
                     "file_gold": list(record.gold) if record and record.gold is not None
                     else None,
                     "reported_em": record.reported_em if record else None})
    return rows, disagreements, missing, empty


RESULT_FILES = "*_results.json"     # what the harness names its result files


def harness_files(files) -> list[str]:
    """The files to score: each file as given; a folder (the harness's output folder) stands
    for every result file under it (`*_results.json`, at any depth, in path order)."""
    paths: list[str] = []
    for f in files:
        folder = Path(f)
        if not folder.is_dir():
            paths.append(str(f))
            continue
        found = sorted(str(p) for p in folder.rglob(RESULT_FILES) if p.is_file())
        if not found:
            raise InputError(f"no MemoryAgentBench result file ({RESULT_FILES}) under the "
                             "folder", path=str(f), expected="the harness's output folder, or "
                             "prediction files")
        paths += found
    return paths


def score_files(files, *, data=(), name: str | None = None, fields: dict[str, str] | None = None,
                fmt: str | None = None, results: str | Path | None = None,
                run_id: str | None = None) -> Run:
    """`factres score`: read the files, join them to the rows, score, write the run folder."""
    root = results_root(results)
    if run_id is not None:
        check_run_id(root, run_id)
    run_folder.ensure_writable(root)          # before any file is read or scored
    if not files:
        raise InputError("no prediction files given", expected="one file per source or more")
    paths = harness_files(files)
    if len(set(paths)) != len(paths):
        raise InputError("a file is named twice", path=next(p for p in paths
                                                             if paths.count(p) > 1))
    harness = [read_file(p, fields, fmt) for p in paths]
    if fields and all(hf.format == "mab" for hf in harness):
        # the harness names its fields itself; a map that changes nothing must not pass silently
        raise InputError(f"--field {', '.join(f'{k}={v}' for k, v in sorted(fields.items()))} "
                         "names fields of generic files, and every file here is a "
                         "MemoryAgentBench harness output, whose fields are fixed "
                         "(qa_pair_id, output, answer, substring_exact_match)", path=paths[0],
                         expected="no --field for harness files, or --format jsonl|csv|json "
                                  "to read the file as generic records")
    system, system_from = system_name(harness, name)
    dataset, gold = load([str(p) for p in data] or [str(bundled_path())])
    joined = join(harness, dataset)
    _check_gold(joined.questions, gold, dataset)

    predictions = []
    for q in joined.questions:
        found = joined.records.get(q.qid)
        predictions.append(Prediction(q.qid, q.text, q.source,
                                      found[1].prediction if found else "",
                                      "" if found else "no record in the import"))
    cells, ems, stales = scoring.build_cells(dataset, predictions, gold, exact_match.harness_score)
    em_of = {p.qid: em for p, em in zip(predictions, ems)}

    rows, disagreements, missing, empty = _prediction_rows(joined, predictions, ems, stales,
                                                           gold)
    gold_differs = {d["qid"] for d in disagreements}
    checks = [_file_check(hf, em_of, gold_differs) for hf in harness]
    for check in checks:
        check["sources"] = joined.sources_of[check["path"]]

    splits = {q.source: split_of(q) for q in joined.questions}
    split = "+".join(sorted(set(splits.values())))
    bootstrap = {"resamples": scoring.BOOTSTRAP_RESAMPLES, "seed": scoring.BOOTSTRAP_SEED,
                 "level": scoring.BOOTSTRAP_LEVEL}
    identity = {"system": system, "files": [[c["sha256"], c["format"], c["fields"]]
                                             for c in checks],
                "data_sha256": sorted(dataset.files_sha256.values()), "factres": __version__,
                "scoring_sha256": source_hashes(SCORING_FILES)}
    config_sha = sha256_bytes(dumps(identity))
    sizes = sorted({q.size for q in joined.questions}, key=scoring.size_order)
    # --name is the id a user will type next (`factres tables NAME`): the default id then, made
    # unique with -2, -3 like any default; without it the id says what and which data
    base = (name if RUN_ID.match(name) else _slug(name)) if name is not None else \
        f"imported-{_slug(system)}-{'-'.join(sizes)}-{config_sha[:8]}"
    claimed = run_folder.claim(root, run_id, base)
    run_id = claimed.run_id

    metrics = {"schema": METRICS_SCHEMA, "run_id": run_id, "split": split, "scored": True,
               "reader": system, "bootstrap": bootstrap,
               "rows": scoring.metrics_rows(cells, system, True)}
    meta = {"schema": IMPORTED_META_SCHEMA, "kind": IMPORTED_KIND, "run_id": run_id,
            "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "system": system, "system_from": system_from, "reader": system,
            "config_sha256": config_sha, "config_identity": identity,
            "data": list(dataset.paths),
            "data_sha256": dict(sorted(dataset.files_sha256.items())),
            "cwd": str(Path.cwd()),           # what a relative data path is relative to
            "split": split, "splits": splits, "scoring": SCORING, "bootstrap": bootstrap,
            "files": checks,
            "counts": {"questions": len(rows), "records": len(joined.records),
                       "answered": sum(1 for r in rows if r["prediction"]),
                       "missing": len(missing), "empty": len(empty),
                       "gold_disagreements": len(disagreements),
                       "files_disagreeing": sum(1 for c in checks if c["agrees"] is False)},
            "missing": missing, "empty": empty, "gold_disagreements": disagreements,
            # what the rows' loader noted (gold given as plain strings, ...) and the fact
            # lines of their contexts that fit no template, as a resolver run records them
            "notes": list(dataset.notes), "unparsed": unparsed_record(dataset),
            "versions": package_versions(), "git": git_state()}
    path = run_folder.write_run(claimed, meta, rows, [], metrics)
    return Run(run_id, path, meta, metrics, rows)


# ---- what to tell the user ------------------------------------------------------------------
def _score_text(value: float) -> str:
    return f"{round(value, 4):g}"


_NUMBERED = re.compile(r"(.*_no)(\d+)\Z")


ID_RUNS_SHOWN = 20     # runs of ids a message names; the rest are counted


def id_list(qids: list[str], limit: int = ID_RUNS_SHOWN) -> str:
    """Question ids for a message, runs of numbered ids of one source shortened:
    "factconsolidation_sh_6k_no40-no99, factconsolidation_mh_6k_no3"; past `limit` runs, the
    ids left are counted ("... and 340 more")."""
    runs: list[list] = []          # [prefix, first, last] or [qid, None, None]
    for qid in qids:
        match = _NUMBERED.match(qid)
        if match and runs and runs[-1][0] == match[1] and runs[-1][2] == int(match[2]) - 1:
            runs[-1][2] = int(match[2])
        elif match:
            runs.append([match[1], int(match[2]), int(match[2])])
        else:
            runs.append([qid, None, None])
    out, shown = [], 0
    for head, first, last in runs[:limit]:
        if first is None:
            out.append(head)
            shown += 1
        else:
            tail = f"-no{last}" if last != first else ""
            out.append(f"{head}{first}{tail}")
            shown += last - first + 1
    more = f" and {len(qids) - shown} more" if len(runs) > limit else ""
    return ", ".join(out) + more


def findings(meta: dict) -> list[str]:
    """The notes and warnings of an imported run, one line each: what the files said of
    themselves, every file score that disagrees (with its questions), every question without a
    record, every empty prediction and every gold the file has otherwise than the rows."""
    lines = [f"note: {n}" for n in meta.get("notes", [])]
    unparsed = meta.get("unparsed") or {"count": 0, "first": []}
    if unparsed["count"]:
        first = unparsed["first"][0]
        where = place(first["path"], first["line"], row=first["row"])
        lines.append(f"warning: {unparsed['count']} fact line(s) of the rows' contexts fit no "
                     "template and were not read (the stale rate and misses see a store "
                     f"without them; recorded in meta.json); the first: {where}: "
                     f"{first['text']}")
    for f in meta["files"]:
        lines += [f"note: {f['path']}: {n}" for n in f["notes"]]
        if f.get("reported_unusable") is not None:
            lines.append(f"warning: {f['path']}: reports {f['reported_from']} as "
                         f"{f['reported_unusable']}, which is no score: recorded in meta.json, "
                         "not compared")
        if f["agrees"] is None:
            continue
        said = (f"{f['path']}: reports {_score_text(f['reported_score'])} "
                f"({f['reported_from']}) over {f['records']} record(s)")
        if f["agrees"]:
            lines.append(f"note: {said}; factres scores the same")
            continue
        differ = ", ".join(f"{d['qid']} (file {d['reported']}, factres {d['factres']}"
                           + ("; the file's gold differs" if d["file_gold_differs"] else "")
                           + ")" for d in f["differing"]) or "none of its records differs"
        factres = "nothing" if f["factres_score"] is None else _score_text(f["factres_score"])
        lines.append(f"warning: {said}; factres scores {factres}; scored differently: {differ}")
    n = meta["counts"]["questions"]
    if meta["missing"]:
        lines.append(f"warning: {len(meta['missing'])} of {n} question(s) have no record in "
                     f"the import and count as unanswered and wrong: "
                     f"{id_list(meta['missing'])}")
    if meta["empty"]:
        lines.append(f"note: {len(meta['empty'])} record(s) have an empty prediction "
                     f"(unanswered): {id_list(meta['empty'])}")
    for d in meta["gold_disagreements"]:
        lines.append(f"warning: {d['file']} {d['record']}: the file's gold for {d['qid']} is "
                     f"{d['file_gold']}, the rows' is {d['gold']}; the rows' gold was scored")
    test = sorted(s for s, split in meta["splits"].items() if split == "test")
    if test:
        lines.append(f"note: scored the gold of test-split source(s) {', '.join(test)}: an "
                     "imported run resolves nothing, so no frozen configuration is asked for; "
                     "the split of every source is in meta.json")
    neither = neither_split_note(meta["splits"])
    if neither:
        lines.append(f"note: {neither}")
    return lines
