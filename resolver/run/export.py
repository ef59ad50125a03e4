"""A run written as MemoryAgentBench result files (`factres export`), so that the tools built for
the harness's format read factres's runs and imported runs alike. The inverse of
`harness_files` (which reads the format): `factres score` on the exported files reproduces the
run's per-question EM exactly (tests/test_export.py).

One file per source, `<DIR>/Conflict_Resolution/<name>`, laid out as the harness lays out
`<output_dir>/<dataset>/`, named as the harness names them:
`<sub_dataset>_<tag>_in<context_max_length>_size<generation_max_length>_shots<shots>_
max_samples<max_test_samples>_results.json`, each value from the file's `dataset_config`
and a value the config leaves out or null written "unknown", as the harness writes a null (the
pattern and the rendering of null read off the two real files in tests/data/mab-outputs/,
whose names an export of their imported run reproduces). Written as the harness writes them:
Python's `json.dumps(indent=4)`, ASCII-escaped, keys in the harness's order, no final newline.

What each file holds, and where each value comes from (nothing is invented: a field factres
cannot know is left out):

- `data`: one record per question that has a prediction (every question of a resolver run; an
  imported run's questions that had a record), in the run's order: `output` (the prediction),
  `parsed_output` (the harness's `parse_output`), `exact_match`, `f1`,
  `substring_exact_match` (`harness_metrics`: the harness's definitions, checked against
  every record of the real files), `answer` (the run's gold), `query` (the harness's
  instruction prompt around the question, `memory.harness.prompt`, knowledge-pool style, as
  its long-context and RAG agents ask), `query_id` (the question's index in its row, from the
  run's data), `qa_pair_id`. Left out: `input_len`, `output_len` (a model tokenizer's counts),
  `memory_construction_time`, `query_time_len` (timings factres does not record) and the
  ROUGE scores (`harness_metrics` says why).
- `metrics`: the same per-record values as parallel lists; `averaged_metrics`: their means in
  percent, as the harness computes them (numpy's mean times 100). `time_cost` is left out.
- `agent_config`, `dataset_config`: an imported run's own, as its harness file recorded them
  (meta.json `files`); else what factres knows. A resolver run: `agent_name`
  `factres:<run id>` and `model` (the reader lane, or null: no model reads); `dataset`
  `Conflict_Resolution`, `sub_dataset`, `shots` 0 (the query is the zero-shot prompt),
  `max_test_samples` null (every question) and `tag` null. An import from a generic file:
  `agent_name` (the system) and `dataset`, `sub_dataset`. Left out: temperature, lengths and
  limits, chunk size, seed, file paths, chat template.
- `factres`: where the file comes from (the run id, its kind, factres's version).

The folder must be new: it is claimed and written like a run folder
(`run_folder.write_new_folder`), so an export never overwrites anything and an interrupted one never passes for a
whole one. Refused: an unscored run (no gold: the files hold the answer and the scores), a
source that is no MemoryAgentBench FactConsolidation source."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import resolver.escape as escape
from resolver._version import __version__
from resolver.errors import InputError, RunExistsError
from resolver.memory.harness import prompt
from resolver.run.reader import RunFolder, read_run
from resolver.run.result_schema import IMPORTED_KIND
from resolver.run.run_folder import write_new_folder
from resolver.run.scoring import harness_score, normalize_answer, parse_output

FORMATS = ("mab",)
DATASET = "Conflict_Resolution"       # the harness's dataset (and folder) of FactConsolidation
FC_SOURCE = re.compile(r"factconsolidation_(sh|mh)_(\d+k)\Z")
METRICS = ("exact_match", "f1", "substring_exact_match")
UNKNOWN = "unknown"                   # how the harness's file names write a null


@dataclass
class Export:
    """What `export_run` wrote."""
    folder: Path                       # the new folder
    files: list[tuple[Path, int]] = field(default_factory=list)   # each file, its records
    warnings: list[str] = field(default_factory=list)


# ---- the harness's per-record metrics --------------------------------------------------------
# Here, not in scoring.py: scoring.py is part of every run's identity (identity.RESOLVER_FILES),
# and these metrics decide nothing a run records.
def exact_match(prediction: str, gold_answers: Iterable[str]) -> bool:
    """MemoryAgentBench's (HELMET's) `exact_match` of one output: some gold answer normalises to
    the normalised prediction. A bool, as the harness writes it."""
    pred = normalize_answer(prediction)
    return max((normalize_answer(g) == pred for g in gold_answers), default=False)


def token_f1(prediction: str, gold_answers: Iterable[str]) -> int | float:
    """MemoryAgentBench's (SQuAD's) `f1` of one output: the best over the gold answers of the F1
    of the normalised words in common. The integer 0 when no word is in common (as the harness
    writes it), else a float."""
    pred = normalize_answer(prediction).split()
    best: int | float = 0
    for gold in gold_answers:
        truth = normalize_answer(gold).split()
        same = sum((Counter(pred) & Counter(truth)).values())
        if same == 0:
            continue
        # SQuAD's arithmetic, step by step: another order can differ in the last bit
        precision = 1.0 * same / len(pred)
        recall = 1.0 * same / len(truth)
        best = max(best, (2 * precision * recall) / (precision + recall))
    return best


def harness_metrics(output: str, gold_answers: Sequence[str]) -> dict[str, bool | int | float]:
    """The per-record metrics a MemoryAgentBench result file holds that factres can compute as
    the harness does, in the harness's order and types: `exact_match`, `f1` and
    `substring_exact_match`, each the better of the raw output and `parse_output(output)`
    (tests/test_export.py checks every record of the two real result files, values and types).
    `substring_exact_match` is `harness_score`, the rule `factres score` reads them with. The
    ROUGE scores are not computed: the files' few non-trivial values cannot pin down the
    tokenizer and stemmer the harness uses."""
    parsed = parse_output(output)
    sub = bool(harness_score(output, gold_answers))
    em = exact_match(output, gold_answers)
    f1 = token_f1(output, gold_answers)
    # max(parsed, raw) in the harness's order: on a tie the parsed output's value (and type)
    em = max(exact_match(parsed, gold_answers), em)
    f1 = max(token_f1(parsed, gold_answers), f1)
    return {"exact_match": em, "f1": f1, "substring_exact_match": sub}


NAME_KEYS = ("sub_dataset", "tag", "context_max_length", "generation_max_length", "shots",
             "max_test_samples")
# What a value may not bring into a file name: a path separator (a folder, or a way out of
# --out), a run of dots ("..": the folder above), a control, line-separator or bidirectional
# character (escape.HIDDEN: a newline in a file name). Each is replaced, never kept.
_SEPARATORS = re.compile(r"[/\\]")
_DOTS = re.compile(r"\.{2,}")


def safe_part(text: str) -> str:
    """`text` as part of one file name: separators and hidden characters become "-", a run of
    dots one dot. The harness's own values ("factconsolidation_mh_6k", "unknown", "0",
    "100") come out unchanged."""
    text = escape.HIDDEN.sub("-", _SEPARATORS.sub("-", text))
    return _DOTS.sub(".", text)


def file_name(dataset_config: dict, changed: list[str] | None = None) -> str:
    """The harness's name of a result file, from its dataset config. A value that cannot be
    part of a file name is made safe (`safe_part`); each one changed is said in `changed`."""
    def value(key: str) -> str:
        v = dataset_config.get(key)
        raw = UNKNOWN if v is None else str(v)
        safe = safe_part(raw)
        if safe != raw and changed is not None:
            changed.append(f"dataset_config.{key} {json.dumps(v, ensure_ascii=False)} "
                           f"written as {json.dumps(safe, ensure_ascii=False)}")
        return safe
    return (f"{value('sub_dataset')}_{value('tag')}_in{value('context_max_length')}"
            f"_size{value('generation_max_length')}_shots{value('shots')}"
            f"_max_samples{value('max_test_samples')}_results.json")


def _configs(run: RunFolder, source: str) -> tuple[dict, dict]:
    """(agent_config, dataset_config) of one source: an imported run's own, else what factres
    knows (module docstring)."""
    meta = run.meta
    if run.kind == IMPORTED_KIND:
        for f in meta["files"]:
            if source in f["sources"] and f.get("dataset_config") is not None \
                    and f["dataset_config"].get("sub_dataset") == source:
                agent = f.get("agent_config") or {"agent_name": meta["system"]}
                return dict(agent), dict(f["dataset_config"])
        return {"agent_name": meta["system"]}, {"dataset": DATASET, "sub_dataset": source}
    reader = meta.get("reader") or "none"
    model = None if reader == "none" else reader
    return ({"agent_name": f"factres:{run.run_id}", "model": model},
            {"dataset": DATASET, "sub_dataset": source, "shots": 0, "max_test_samples": None,
             "tag": None})


def _record(row: dict, index: int) -> dict:
    """One harness record, keys in the harness's order (less what factres cannot know)."""
    output = row["prediction"]
    metrics = harness_metrics(output, row["gold"])
    return {"output": output, "parsed_output": parse_output(output), **metrics,
            "answer": list(row["gold"]), "query": prompt(row["question"]),
            "query_id": index, "qa_pair_id": row["qid"]}


def _averages(records: list[dict]) -> dict:
    import numpy as np   # lazily, as everywhere: the harness averages with numpy's mean
    return {m: (float(np.mean([r[m] for r in records]) * 100) if records else None)
            for m in METRICS}


def source_file(run: RunFolder, source: str, rows: list[dict], index: dict[str, int]) -> dict:
    """The result file of one source: its config blocks, records, metric lists and averages."""
    agent, dataset = _configs(run, source)
    records = [_record(r, index[r["qid"]]) for r in rows]
    return {"agent_config": agent, "dataset_config": dataset, "data": records,
            "metrics": {m: [r[m] for r in records] for m in METRICS},
            "averaged_metrics": _averages(records),
            "factres": {"run_id": run.run_id, "kind": run.kind, "version": __version__}}


def _check(run: RunFolder) -> None:
    if not run.scored:
        raise InputError(f"run {run.name} is unscored (split {run.meta['split']}: its gold was "
                         "never read); MemoryAgentBench result files hold each question's "
                         "answer and scores", path=str(run.path),
                         expected="a scored run (the dev split, or an imported run)")
    other = sorted({r["source"] for r in run.predictions if not FC_SOURCE.match(r["source"])})
    if other:
        raise InputError(f"run {run.name} has source(s) {', '.join(other)}, which "
                         "MemoryAgentBench FactConsolidation does not name", path=str(run.path),
                         expected="a run of factconsolidation_sh|mh_<size> sources")


def export_run(ref: str | Path, results_dir: str | Path | None = None, *,
               out: str | Path | None = None, fmt: str = "mab") -> Export:
    """`factres export`: read the run, build one harness file per source, write them into the
    new folder `out` (default `./<run name>-mab`)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}", expected=", ".join(FORMATS))
    run = read_run(ref, results_dir)
    _check(run)
    final = Path(out) if out is not None else Path(f"{run.name}-mab")
    if final.exists():          # before the data is read; write_new_folder checks again
        raise RunExistsError(f"{final} exists: factres export writes a new folder and never "
                             "overwrites; choose another --out")
    # the question's index in its row (the harness's query_id): from the run's own data
    dataset, _ = run.load_data()
    index = {q.qid: q.index for q in dataset.questions}
    exported = [r for r in run.predictions
                if run.kind != IMPORTED_KIND or r["record"] is not None]
    by_source: dict[str, list[dict]] = {}
    for row in exported:
        by_source.setdefault(row["source"], []).append(row)
    files = {source: source_file(run, source, rows, index) for source, rows in by_source.items()}
    result = Export(final)
    differ = [row["qid"] for source, rows in by_source.items()
              for record, row in zip(files[source]["data"], rows)
              if int(record["substring_exact_match"]) != row["em"]]
    if differ:
        # the run's recorded EM, not its prediction, is off (a folder edited by hand, or scored
        # by another rule): the files carry the harness's score of the prediction
        result.warnings.append(f"{len(differ)} question(s) score otherwise under the harness's "
                               f"rule than the run records: {', '.join(differ)}; the files "
                               "hold the harness's score, so factres score on them will not "
                               "reproduce the run there")
    names = {}
    for source, payload in files.items():
        changed: list[str] = []
        names[source] = file_name(payload["dataset_config"], changed)
        if changed:
            # an imported file's own config names the file: what cannot be part of a file name
            # (a path out of --out, a newline) is replaced, and said
            result.warnings.append(f"{source}: the imported file's {'; '.join(changed)} (a "
                                   "file name holds no path separator, '..' or control "
                                   "character)")
    taken: dict[str, str] = {}
    for source, name in names.items():
        if name in taken:
            raise InputError(f"sources {taken[name]} and {source} would both be written to "
                             f"{DATASET}/{name} (their dataset_config gives one file name)",
                             path=str(run.path), expected="one file name per source")
        taken[name] = source
    write_new_folder(final, {f"{DATASET}/{names[s]}": json.dumps(p, indent=4)
                             for s, p in files.items()}, "factres export")
    result.files = [(final / DATASET / names[s], len(p["data"])) for s, p in files.items()]
    return result
