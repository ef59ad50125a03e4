"""A run written as MemoryAgentBench result files (`factres export`), so that the tools built for
the harness's format read factres's runs and imported runs alike. The inverse of `imported`
(which reads the format through `mab.result_files`): `factres score` on the exported files
reproduces the run's per-question EM exactly (tests/test_export.py).

One file per source, `<DIR>/Conflict_Resolution/<name>`, laid out as the harness lays out
`<output_dir>/<dataset>/`, named, shaped and scored as the harness does it
(`mab.result_records`: the record's fields, the per-record metrics, the file name). Written as
the harness writes them: Python's `json.dumps(indent=4)`, ASCII-escaped, keys in the harness's
order, no final newline.

What each file holds that the run decides (nothing is invented: a field factres cannot know is
left out):

- `data`: one record per question that has a prediction (every question of a resolver run; an
  imported run's questions that had a record), in the run's order; `query_id` is the question's
  index in its row, from the run's data. `time_cost` is left out.
- `agent_config`, `dataset_config`: an imported run's own, as its harness file recorded them
  (meta.json `files`); else what factres knows. A resolver run: `agent_name`
  `factres:<run id>` and `model` (the reader lane, or null: no model reads); `dataset`
  `Conflict_Resolution`, `sub_dataset`, `shots` 0 (the query is the zero-shot prompt),
  `max_test_samples` null (every question) and `tag` null. An import from a generic file:
  `agent_name` (the system) and `dataset`, `sub_dataset`. Left out: temperature, lengths and
  limits, chunk size, seed, file paths, chat template.
- `factres`: where the file comes from (the run id, its kind, factres's version).

The folder must be new: it is claimed and written like a run folder
(`run_folder.write_new_folder`), so an export never overwrites anything and an interrupted one
never passes for a whole one. Refused: an unscored run (no gold: the files hold the answer and
the scores), a source that is no MemoryAgentBench FactConsolidation source."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from resolver._version import __version__
from resolver.errors import InputError, RunExistsError
from resolver.mab.result_records import DATASET, FC_SOURCE, file_name, record, result_file
from resolver.results.reader import RunFolder, read_run
from resolver.results.result_schema import IMPORTED_KIND, results_root
from resolver.run.run_folder import write_new_folder

FORMATS = ("mab",)


@dataclass
class Export:
    """What `export_run` wrote."""
    folder: Path                       # the new folder
    files: list[tuple[Path, int]] = field(default_factory=list)   # each file, its records
    warnings: list[str] = field(default_factory=list)


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


def source_file(run: RunFolder, source: str, rows: list[dict], index: dict[str, int]) -> dict:
    """The result file of one source: its config blocks, records, metric lists and averages."""
    agent, dataset = _configs(run, source)
    records = [record(r["prediction"], r["gold"], r["question"], index[r["qid"]], r["qid"])
               for r in rows]
    return result_file(agent, dataset, records,
                       {"factres": {"run_id": run.run_id, "kind": run.kind,
                                    "version": __version__}})


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
    new folder `out` (default `<results dir>/<run name>-mab`: nothing is written where no
    explicit path says, but under the results folder)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown export format {fmt!r}", expected=", ".join(FORMATS))
    run = read_run(ref, results_dir)
    _check(run)
    final = Path(out) if out is not None else results_root(results_dir) / f"{run.name}-mab"
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
