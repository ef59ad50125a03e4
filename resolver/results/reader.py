"""The one reader of run folders (`<results>/<run-id>/`) and of the oracle folders `factres tables`
reads (`oracle-nbest-*/nbest.json`, `oracle-ceiling-*/ceiling.json`). Every command that reads
them asks here; none reads their JSON itself.

    run = read_run("dev-6k-search-nbest-2", results_dir)    # a run id or a folder path
    run.meta, run.metrics        # validated meta.json and metrics.json (plain dicts)
    run.predictions              # predictions.jsonl rows, in file order (validated)
    run.traces                   # qid -> traces.jsonl row (read and checked by read_run)
    run.readout                  # qid -> readout.jsonl row, None without one (read when asked)
    run.kind                     # "resolver" or "imported" (result_schema.run_kind)
    run.name, run.run_id         # the folder's name; the id meta.json records
    dataset, gold = run.load_data()    # the data it ran on, sha256-checked

What it checks, each failure one `InputError` naming the file, the line (JSONL) and the field:

- Shapes: every file against `result_schema` (strict types, unknown keys kept); a key given
  twice in one JSON object (`strict_json`); a meta.json of another tool (`schema` not
  factres's) is a `ForeignFolderError`.
- Consistency: meta.json, metrics.json and predictions.jsonl agree (run id, split, question
  count and answered count of meta.json `counts`, the questions per source of the metrics rows,
  scored or not); question ids are unique; traces.jsonl, which a resolver run (search or
  plain mode) always writes and so must have (one without it is refused), has one row per
  question, in the same order, with the same question and answer; an imported run's is empty.
  readout.jsonl (runs since issue 33), when asked for, has one row per question in the same
  order, every row read in the same configurations, no read longer than its budget.
- Derived values (`derived`): nothing a file computes from its rows is believed before it is
  recomputed or bounded: each row's em, metrics.json's rows, an imported run's missing and
  empty questions, a trace's answer against its winning path, the figures of nbest.json and
  ceiling.json.
- The data: every question of the run is in the data meta.json names (found by `locate_data`),
  with the same text and the same gold; only the rows' questions and answers are read (no
  context is parsed), once per file within a process. Data that cannot be found is said in a
  note (`RunFolder.notes`), and then not compared.
- Data: `load_data` re-reads the files meta.json names and checks each against its recorded
  sha256; a file changed in place is refused naming both hashes unless a copy with the
  recorded sha256 is found where `locate_data` looks (a relative path from the working folder
  the run recorded, the checkout the folder sits in, the bundled data, by name then by
  sha256).

Gold is read only by `load_data`, for the analyses (oracle/) and later readers that score.
May import the stages below `run` (it rebuilds search candidates from traces) and `run`'s own
schema; nothing above. The loader and the search records are imported where they are used:
`factres table` and `factres tables` need neither."""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

import resolver.hub as hub
from resolver.errors import (
    FEW,
    FactresError,
    FactresNote,
    ForeignFolderError,
    InputError,
    first_few,
)
from resolver.results import derived
from resolver.results import result_schema as schema
from resolver.results.result_schema import (
    CEILING_FILE,
    IMPORTED_KIND,
    IMPORTED_META_SCHEMA,
    META_FILE,
    META_SCHEMA,
    METRICS_FILE,
    METRICS_SCHEMA,
    NBEST_FILE,
    PREDICTIONS_FILE,
    READOUT_FILE,
    RUN_SCHEMAS,
    TABLES_DIR,
    TRACES_FILE,
    incomplete,
    lookup_roots,
    run_kind,
)
from resolver.strict_json import loads

if TYPE_CHECKING:
    from resolver.haystack import Dataset, Gold
    from resolver.search.candidates import Candidate, Hop

SEARCH_SET = "search"      # candidates the search enumerated without a plan set
LOOKUP = ("a run id under the results folder (--results-dir, $FACTRES_RESULTS or "
          "./factres-results) or the repository's committed results/, or a run folder path")


# ---- files ------------------------------------------------------------------------------------
def read_json(path: Path, shape) -> Any:
    """One JSON file, validated against `shape`."""
    if not path.is_file():
        raise InputError(f"no {path.name}", path=str(path.parent),
                         expected=f"a finished folder with {path.name}")
    value = loads(path.read_bytes(), path=str(path))
    schema.check(shape, value, path=str(path))
    return value


def read_jsonl(path: Path, shape) -> list[Any]:
    """The rows of a JSONL file (blank lines skipped), each validated against `shape`."""
    return read_jsonl_lines(path, shape)[0]


def read_jsonl_lines(path: Path, shape) -> tuple[list[Any], list[int]]:
    """(the rows of a JSONL file, validated against `shape`; the line number of each)."""
    if not path.is_file():
        raise InputError(f"no {path.name}", path=str(path.parent),
                         expected=f"a finished folder with {path.name}")
    rows, lines = [], []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if raw.strip():
            rows.append(loads(raw, path=str(path), line=number, what="one JSON object per line"))
            lines.append(number)
    schema.check(list[shape], rows, path=str(path), lines=lines)
    return rows, lines


# ---- finding a folder -------------------------------------------------------------------------
def folder_names(root: Path, *, runs_only: bool = True) -> list[str]:
    """The finished folders under `root`, by name: run folders (with a meta.json), or with
    `runs_only=False` every folder (oracle folders too). Hidden, unfinished and the tables
    folder are left out."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and p.name != TABLES_DIR
                  and not incomplete(p) and (not runs_only or (p / META_FILE).is_file()))


def unknown(ref: str, roots: Path | list[Path], what: str = "run",
            runs_only: bool = True) -> InputError:
    """The error for a name that is neither a folder nor a folder under any of `roots` (the
    results folder, then the committed results/): it names the folders in each (the first few
    and the count)."""
    roots = [roots] if isinstance(roots, Path) else list(roots)
    places = []
    for root in roots:
        names = folder_names(root, runs_only=runs_only)
        plural = "s" if len(names) != 1 else ""
        there = (f"{len(names)} {what}{plural} there: {first_few(names, FEW)}" if names
                 else f"no {what}s there")
        places.append(f"{root}/ ({there})")
    expected = LOOKUP if what == "run" else (
        f"a {what} under the results folder (--results-dir, $FACTRES_RESULTS or "
        "./factres-results) or the repository's committed results/, or a folder path")
    return InputError(f"no {what} {ref!r} in {' or in '.join(places)}", expected=expected)


def locate(ref: str, results_dir: str | Path | None = None, what: str = "run",
           runs_only: bool = True) -> Path:
    """The folder `ref` names: a folder path as it is, else the first `<root>/<ref>` of
    `lookup_roots` (the results folder, then the committed results/). InputError naming what
    each place holds when none has it."""
    path = Path(ref)
    if path.is_dir():
        return path
    if len(path.parts) > 1:          # a path, not an id: nothing to look up
        raise InputError(f"no {what if what == 'folder' else what + ' folder'} {str(ref)!r}",
                         expected=LOOKUP)
    roots = lookup_roots(results_dir)
    found = [root / str(ref) for root in roots if (root / str(ref)).is_dir()]
    if len(found) > 1:
        # a folder made before new folders were kept from taking committed names (or copied
        # in by hand) hides the committed one: which one is read is said, never left silent
        warnings.warn(FactresNote(f"{ref} is in {found[0].parent}/ and in the committed "
                                  f"{found[1].parent}/: read {found[0]}"), stacklevel=2)
    if found:
        return found[0]
    raise unknown(str(ref), roots, what=what, runs_only=runs_only)


def find_run(ref: str | Path, results_dir: str | Path | None = None) -> Path:
    """The folder of a run given as a folder path or as a run id: under the results folder
    (`results_dir`, else $FACTRES_RESULTS, else ./factres-results), then under the repository's
    committed results/ (read only). An unfinished folder is refused; an unknown id names the
    runs in both places."""
    path = locate(str(ref), results_dir)
    reason = incomplete(path)
    if reason:
        raise InputError(reason, path=str(path), expected="a finished run folder")
    if not (path / META_FILE).is_file():
        raise InputError(f"not a run folder: no {META_FILE}", path=str(path), expected=LOOKUP)
    return path


# ---- a run folder -------------------------------------------------------------------------------
@dataclass
class RunFolder:
    """A finished run folder, validated. `traces` and `load_data` read more when asked."""
    path: Path
    meta: dict                         # MetaJson or ImportedMetaJson
    metrics: dict                      # MetricsJson
    predictions: list[dict]            # PredictionRow or ImportedPredictionRow, file order
    lines: list[int] = field(default_factory=list, repr=False)   # each prediction's line
    _data: tuple[Dataset, Gold] | None = field(default=None, repr=False)
    notes: list[str] = field(default_factory=list)   # what could not be checked, and why

    @property
    def name(self) -> str:
        """The folder's name: what a copied folder is called, whatever meta.json says."""
        return self.path.name

    @property
    def run_id(self) -> str:
        return self.meta["run_id"]

    @property
    def kind(self) -> str:
        return run_kind(self.meta)

    @property
    def scored(self) -> bool:
        return bool(self.metrics["scored"])

    @cached_property
    def traces(self) -> dict[str, dict]:
        """qid -> traces.jsonl row (TraceRow). An imported run has none ({}); a resolver run's
        must have one per question, in the predictions' order."""
        return read_traces(self)

    @cached_property
    def readout(self) -> dict[str, dict] | None:
        """qid -> readout.jsonl row (ReadoutRow): the sizes of each question's readouts. None
        for a run without the file (made before issue 33, or imported)."""
        return read_readout(self)

    @property
    def plan_sets(self) -> list[str]:
        """The run's plan sets in the order the resolver tried them (meta.json), then any other
        set named by a candidate (the search's own enumeration last)."""
        sets = [r["set_id"] for r in self.meta.get("plan_sets", [])]
        named = [c.get("plan_set") or SEARCH_SET for t in self.traces.values()
                 for c in t["candidates"]]
        extra = sorted(set(named) - set(sets) - {SEARCH_SET})
        search = [SEARCH_SET] if SEARCH_SET in named and SEARCH_SET not in sets else []
        return sets + extra + search

    def load_data(self) -> tuple[Dataset, Gold]:
        """The dataset and gold book the run was made from: every file meta.json names, found
        by `locate_data` with its recorded sha256; every question of the run must be in it,
        with the same text."""
        if self._data is None:
            self._data = load_run_data(self)
        return self._data


def read_run(ref: str | Path, results_dir: str | Path | None = None, *,
             traces: bool = False) -> RunFolder:
    """A finished run folder, by id or path, validated and checked, as every command reads it.

    Args:
        ref: a run id, looked up under the results folder and then in the repository's
            committed `results/`, or a run folder's path.
        results_dir: the results folder; default `$FACTRES_RESULTS`, else `./factres-results`.
        traces: kept for callers that ask for the traces to be read: traces.jsonl is
            always read and checked now (a folder without it is refused).

    Returns:
        The `RunFolder`: `meta`, `metrics`, `predictions` (validated plain dicts), `traces`
        (qid -> trace row), `kind` ("resolver" or "imported"), `scored`, and `load_data()`
        for the data it ran on (sha256-checked).

    Raises:
        InputError: no such run (the runs that exist are listed), an unfinished folder, a file
            that does not fit its schema or disagrees with another (naming the file, the line
            and the field).
        ForeignFolderError: a meta.json another tool wrote (an `InputError`).
    """
    path = find_run(ref, results_dir)
    meta = read_meta(path)
    imported = run_kind(meta) == IMPORTED_KIND
    metrics = read_json(path / METRICS_FILE, schema.MetricsJson)
    rows, lines = read_jsonl_lines(path / PREDICTIONS_FILE, schema.ImportedPredictionRow
                                   if imported else schema.PredictionRow)
    run = RunFolder(path, meta, metrics, rows, lines)
    _check_consistency(run)
    # the traces always: a prediction edited with its trace left as it was is refused by every
    # command, not only by those that read the traces (verification V03); and a resolver run
    # writes traces.jsonl in either mode, so one without it was cut, never passed with a note
    # (verification W12). An imported run's is read to be empty.
    run.traces
    _check_against_data(run)
    return run


def read_meta(path: Path) -> dict:
    """A run folder's meta.json, validated against its schema (a resolver run's or an imported
    run's); another tool's meta.json is a ForeignFolderError."""
    file = path / META_FILE
    meta = loads(file.read_bytes(), path=str(file))
    if isinstance(meta, dict) and meta.get("schema") not in RUN_SCHEMAS:
        found = meta.get("schema")
        raise ForeignFolderError(
            "not a factres run: meta.json's schema is " + (repr(found) if found is not None
                                                           else "missing"),
            path=str(file), expected=f"schema {META_SCHEMA!r} or {IMPORTED_META_SCHEMA!r}")
    imported = isinstance(meta, dict) and meta.get("schema") == IMPORTED_META_SCHEMA
    schema.check(schema.ImportedMetaJson if imported else schema.MetaJson, meta, path=str(file))
    if imported != (meta.get("kind") == IMPORTED_KIND):
        raise InputError(f"schema {meta['schema']!r} with kind {meta.get('kind')!r}",
                         path=str(file), expected=f"kind {IMPORTED_KIND!r} exactly with schema "
                                                  f"{IMPORTED_META_SCHEMA!r}")
    return meta


def _disagree(path: Path, message: str, expected: str) -> InputError:
    return InputError(f"the run's files disagree: {message}", path=str(path), expected=expected)


def _check_consistency(run: RunFolder) -> None:
    """meta.json, metrics.json and predictions.jsonl describe the same questions."""
    meta, metrics, rows, path = run.meta, run.metrics, run.predictions, run.path
    if metrics["schema"] != METRICS_SCHEMA:
        raise InputError(f"metrics.json's schema is {metrics['schema']!r}",
                         path=str(path / METRICS_FILE), expected=repr(METRICS_SCHEMA))
    for name in ("run_id", "split"):
        if metrics[name] != meta[name]:
            raise _disagree(path, f"metrics.json says {name} {metrics[name]!r}, meta.json "
                            f"{meta[name]!r}", "the files of one run")
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        if row["qid"] in seen:
            raise InputError(f"question {row['qid']!r} twice (also row {seen[row['qid']] + 1})",
                             path=str(path / PREDICTIONS_FILE), expected="one row per question")
        seen[row["qid"]] = i
    counts = meta["counts"]
    if counts["questions"] != len(rows):
        raise _disagree(path, f"predictions.jsonl has {len(rows)} rows, meta.json counts "
                        f"{counts['questions']} questions", "one prediction per question "
                        "(a cut or padded predictions.jsonl?)")
    answered = sum(1 for r in rows if r["prediction"])
    if counts["answered"] != answered:
        raise _disagree(path, f"predictions.jsonl answers {answered} questions, meta.json "
                        f"counts {counts['answered']}", "the predictions the run wrote")
    per_source: dict[str, int] = {}
    for row in rows:
        per_source[row["source"]] = per_source.get(row["source"], 0) + 1
    in_metrics = {r["source"]: r["n"] for r in metrics["rows"] if not r["pooled"]}
    if in_metrics != per_source:
        differ = sorted(set(in_metrics) | set(per_source),
                        key=lambda s: (s not in in_metrics, s))
        shown = [f"{s}: {in_metrics.get(s, 0)} in metrics.json, {per_source.get(s, 0)} in "
                 "predictions.jsonl" for s in differ if in_metrics.get(s) != per_source.get(s)]
        raise _disagree(path, "questions per source: " + first_few(shown, 3, "; "),
                        "metrics rows counting the rows of predictions.jsonl")
    scored = metrics["scored"]
    for row, line in zip(rows, run.lines):
        if (row["em"] is None) == scored:
            raise InputError(f"question {row['qid']!r} has em {derived.shown(row['em'])} in a "
                             f"run that is {'scored' if scored else 'unscored'}",
                             path=str(path / PREDICTIONS_FILE), line=line,
                             expected="0 or 1 in a scored run, null in an unscored one")
    # the values the files derive from the rows: recomputed, or bounded (derived.py)
    if run.kind != IMPORTED_KIND and meta["reader"] == "none":
        derived.check_resolver_answers(path, rows, run.lines)
    derived.check_predictions(path, run.kind, rows, run.lines, scored)
    derived.check_metrics(path, run.kind, metrics, rows)
    if run.kind == IMPORTED_KIND:
        derived.check_imported_meta(path, meta, rows)


def read_traces(run: RunFolder) -> dict[str, dict]:
    """traces.jsonl of a run, validated, one row per question in the predictions' order."""
    file = run.path / TRACES_FILE
    if not file.is_file():
        if run.kind == IMPORTED_KIND:
            what = "an imported run's is written empty"
        else:
            mode = (run.meta.get("config") or {}).get("mode")
            what = f"a resolver run ({mode + ' mode' if mode else 'search or plain mode'}) " \
                   "writes one row per question"
        raise InputError(f"the run has no {TRACES_FILE} (deleted?): {what}, and its "
                         "predictions are not read without it", path=str(run.path),
                         expected=f"the {TRACES_FILE} the run wrote")
    rows, lines = read_jsonl_lines(file, schema.TraceRow)
    if run.kind == IMPORTED_KIND:
        if rows:
            raise InputError(f"an imported run with {len(rows)} trace rows", path=str(file),
                             expected="an empty traces.jsonl (nothing was resolved)")
        return {}
    qids = [r["qid"] for r in run.predictions]
    if not rows and qids:
        raise InputError(f"{TRACES_FILE} is empty: none of the run's {len(qids)} questions has "
                         "a trace (emptied?)", path=str(file),
                         expected="one trace row per question")
    if len(rows) != len(qids):
        have = {r["qid"] for r in rows}
        lost = [q for q in qids if q not in have]
        raise InputError(f"{TRACES_FILE} has {len(rows)} rows for the run's {len(qids)} "
                         "questions" + (f" (no trace for {first_few(lost)})" if lost else ""),
                         path=str(file), expected="one trace row per question (cut short?)")
    by_qid = {}
    for number, (trace, row, line) in enumerate(zip(rows, run.predictions, lines), start=1):
        if trace["qid"] != row["qid"]:
            raise _disagree(file, f"row {number} is the trace of {trace['qid']!r}, "
                            f"predictions.jsonl row {number} is {row['qid']!r}",
                            "traces in the predictions' order")
        for name, other in (("question", "question"), ("answer", "resolver_answer")):
            if trace[name] != row[other]:
                raise _disagree(file, f"the trace of {row['qid']!r} has {name} "
                                f"{trace[name]!r}, predictions.jsonl {row[other]!r}",
                                "the trace of the prediction (edited?)")
        derived.check_trace(file, line, trace, row)
        by_qid[trace["qid"]] = trace
    return by_qid


def read_readout(run: RunFolder) -> dict[str, dict] | None:
    """readout.jsonl of a run, validated: one row per question in the predictions' order, each
    read in the configurations of the first row, no read over its budget; None when the run
    has none."""
    file = run.path / READOUT_FILE
    if not file.is_file():
        return None
    rows, lines = read_jsonl_lines(file, schema.ReadoutRow)
    qids = [r["qid"] for r in run.predictions]
    if len(rows) != len(qids):
        raise InputError(f"{READOUT_FILE} has {len(rows)} rows for the run's {len(qids)} "
                         "questions", path=str(file), expected="one row per question (cut "
                         "short?)")
    configurations = None
    by_qid = {}
    for number, (row, qid, line) in enumerate(zip(rows, qids, lines), start=1):
        if row["qid"] != qid:
            raise _disagree(file, f"row {number} is the readout of {row['qid']!r}, "
                            f"predictions.jsonl row {number} is {qid!r}",
                            "readouts in the predictions' order")
        derived.check_reads(file, line, row, configurations)
        configurations = configurations or [(r["budget"], r["disclose"]) for r in row["reads"]]
        by_qid[qid] = row
    return by_qid


def resolver_answer(row: dict, trace: dict | None = None) -> str:
    """The resolver's own answer of a prediction row, the one its confidence label labels: its
    `resolver_answer` (an imported row's prediction); a run made before abstentions kept that
    answer recorded "" for an abstained question, whose trace's winner still holds it."""
    answer = row.get("resolver_answer", row.get("prediction", ""))
    if not answer and derived.abstained(row) and trace and trace.get("winner"):
        return trace["winner"]["answer"]
    return answer


# ---- the run's data -------------------------------------------------------------------------
def locate_data(name: str, meta: dict, run_path: Path) -> str:
    """The data file a run names, checked against the sha256 meta.json records for it. A run
    records the path it was given (absolute for the bundled default, so a run made in another
    checkout names that checkout) and, since the third audit, the working folder it started
    in (`cwd`), which a relative path is relative to. Tried in order: the path as recorded
    (a relative one from the recorded working folder; a run that recorded none, from the
    current one); a relative path from the current working folder; from the checkout the run
    folder sits in (results/<run>/ -> ..); the bundled file of the same name; then any bundled
    file with the recorded sha256, whatever its name. The first with the recorded sha256 is
    taken; a file at the recorded place whose content changed is an error naming both hashes
    when no copy matches."""
    from resolver.haystack import bundled_path
    want = meta["data_sha256"].get(name)
    if want is None:
        raise InputError(f"meta.json records no sha256 for its data file {name}",
                         path=str(run_path / META_FILE),
                         expected="data_sha256 naming every file of data")
    if hub.is_hub(name):
        return name         # rows of the hub: their sha256 is checked once loaded (load_run_data)
    given = Path(name)
    recorded = given if given.is_absolute() else Path(meta.get("cwd") or ".") / given
    candidates = [recorded]
    if not given.is_absolute():
        candidates += [given, run_path.resolve().parent.parent / name]
    candidates.append(bundled_path(given.name))
    tried, changed = [], []
    for candidate in candidates:
        if str(candidate) in tried:
            continue
        tried.append(str(candidate))
        if candidate.is_file():
            got = file_sha256(candidate)
            if got == want:
                return str(candidate)
            changed.append((candidate, got))
    found = _bundled_with(want)
    if found is not None:
        return str(found)
    tried.append(f"every bundled file ({bundled_path().parent})")
    if changed and changed[0][0] == recorded:
        where = name if given.is_absolute() or meta.get("cwd") else \
            f"{name} (relative to the working folder: the run recorded none)"
        raise InputError(f"the run's data file {where} has changed since the run: its sha256 "
                         f"is {changed[0][1]}, the run recorded {want}; no copy with the "
                         f"recorded sha256 found (tried {', '.join(tried)})",
                         path=str(run_path / META_FILE),
                         expected="the data the run was made from")
    raise InputError(f"the run's data file {name} is gone (tried {', '.join(tried)}"
                     + (f"; {', '.join(f'{c} has sha256 {g}' for c, g in changed)}"
                        if changed else "") + ")",
                     path=str(run_path / META_FILE),
                     expected="the data file it names, or a copy with the sha256 meta.json "
                              f"records for it ({want})")


def _bundled_with(sha256: str) -> Path | None:
    """The bundled data file (resolver/data/fc/) whose bytes have this sha256, if one has."""
    from resolver.haystack import bundled_path
    folder = bundled_path().parent
    for path in sorted(folder.iterdir()):
        if path.is_file() and file_sha256(path) == sha256:
            return path
    return None


# ---- copies: one folder's content under another path --------------------------------------
def value_sha256(value: Any) -> str:
    """The sha256 of a parsed JSON value written canonically (orjson, sorted keys, compact):
    the same for a file re-serialised, re-indented or with its keys in another order."""
    import json

    import orjson
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        # an integer past 64 bits, which orjson does not write: the standard library does
        data = json.dumps(value, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


# What a prediction row's result is: the other fields (the free-text reason, the confidence's
# reasons and their order, the plan's note) explain it and do not make another run.
RESULT_FIELDS = ("prediction", "em", "gold", "source")


def run_content(run: RunFolder) -> tuple[str, str]:
    """What makes two run folders one run (a copy under another path): meta.json's run id
    and the sha256 of each question id's result (`RESULT_FIELDS`), ordered by question id
    (`value_sha256`), so re-serialising or reordering the files makes no other run
    (verification W03), nor does an edit to a field that carries no result, such as a blank
    added to `reason` or the confidence's reasons reordered (D07). Two runs of one
    configuration have their own ids."""
    rows = sorted([r["qid"], *(r.get(name) for name in RESULT_FIELDS)]
                  for r in run.predictions)
    return run.run_id, value_sha256(rows)


# Fields of an oracle JSON that say where it came from, not what it found: the run folder's
# name or path (`run`), the data files' paths, the solver's version.
PROVENANCE_FIELDS = ("run", "solver")


def oracle_content(payload: dict) -> str:
    """What makes two oracle folders (nbest.json, ceiling.json) one analysis: the sha256 of
    the parsed JSON (`value_sha256`) with its provenance left out (`PROVENANCE_FIELDS`, and
    the data files by their sha256, not their paths), so a path spelled another way
    ("t/../res/base") makes no other analysis (verification D07). The run analysed stays in
    it, by its run id (an older nbest.json without one: by its folder's name)."""
    value = {k: v for k, v in payload.items() if k not in PROVENANCE_FIELDS}
    if "run_id" not in value and isinstance(payload.get("run"), str):
        # written before nbest.json carried the run id: the run folder's name, however its
        # path is spelled, stands for it
        value["run_id"] = PurePath(payload["run"].replace("\\", "/")).name
    data = value.get("data")
    if isinstance(data, list):
        value.pop("data")           # nbest.json: the paths alone (the run id says the rest)
    elif isinstance(data, dict):
        value["data"] = {k: (sorted(map(str, v.values())) if k == "files_sha256"
                             and isinstance(v, dict) else v)
                         for k, v in data.items() if k != "paths"}
    return value_sha256(value)


def refuse_copies(refs, runs: list[RunFolder]) -> None:
    """Each run once, by its path and by its content (`run_content`): a run given twice, or
    with a copy of it, would count its questions twice, as if two runs agreed."""
    seen: dict[Path, str] = {}
    copies: dict[tuple[str, str], tuple[str, RunFolder]] = {}
    for ref, run in zip(refs, runs):
        where = run.path.resolve()
        if where in seen:
            raise InputError(f"run {run.name} is given twice ({seen[where]!r} and {str(ref)!r})",
                             expected="each run once")
        seen[where] = str(ref)
        key = run_content(run)
        if key in copies:
            first_ref, first = copies[key]
            raise InputError(f"runs {first.name} and {run.name} are one run: the same run id "
                             f"{run.run_id!r} and the same prediction rows ({first_ref!r} and "
                             f"{str(ref)!r}): a copy", expected="each run once")
        copies[key] = (str(ref), run)


# Within one process a data file is hashed and its questions read once: `factres tables` over
# many runs of one data file checks them all against it. A file is known by its resolved path,
# size and modification time, so one edited meanwhile is read again.
_SHA256: dict[tuple, str] = {}
_QUESTIONS: dict[tuple, dict[str, tuple[str, tuple[str, ...] | None]]] = {}


def _stamp(path: Path) -> tuple:
    stat = path.stat()
    return (str(path.resolve()), stat.st_size, stat.st_mtime_ns)


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes (cached per file within the process)."""
    key = _stamp(path)
    if key not in _SHA256:
        _SHA256[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return _SHA256[key]


def data_questions(path: str | Path) -> dict[str, tuple[str, tuple[str, ...] | None]]:
    """qid -> (question text, its answers or None) of a data file's rows: each row checked as
    the loader checks it (`haystack.read_row`), its context never parsed (cached per file
    within the process)."""
    from resolver.haystack import read_row, read_rows
    key = _stamp(Path(path))
    if key not in _QUESTIONS:
        raw_rows, _, _ = read_rows(path)
        questions = {}
        for number, raw in enumerate(raw_rows):
            row = read_row(raw, str(path), number)
            for i, (qid, text) in enumerate(zip(row.qids, row.questions)):
                questions[qid] = (text, row.answers[i] if row.answers is not None else None)
        _QUESTIONS[key] = questions
    return _QUESTIONS[key]


def _check_against_data(run: RunFolder) -> None:
    """Every question of the run against the data it names (found by `locate_data`): in it,
    with the same text and, in a scored run, the same gold (verification V02: a gold forged
    with its em and metrics once passed every command that does not load the data). Only the
    rows' questions and answers are read, never a context. Data that cannot be found (or
    read) is said in a note, and then not compared."""
    paths = run.meta.get("data") or []
    if not paths:
        run.notes.append(f"{run.name}: meta.json names no data file: its questions and gold "
                         "are not compared with any data")
        return
    remote = [p for p in paths if hub.is_hub(p)]
    if remote:
        # loading a dataset through the datasets library for every table is slow, and needs
        # the hub or its cache: the commands that re-read the data check it (load_run_data)
        run.notes.append(f"{run.name}: its questions and gold are compared with the rows of "
                         f"{', '.join(remote)} only by the commands that load them (explain, "
                         "the oracle)")
        return
    questions: dict[str, tuple[str, tuple[str, ...] | None]] = {}
    found = []
    for name in paths:
        try:
            found.append(locate_data(name, run.meta, run.path))
        except InputError as exc:
            run.notes.append(f"{run.name}: its questions and gold are not compared with the "
                             f"data: {exc}")
            return
    try:
        for file in found:
            questions.update(data_questions(file))
    except FactresError as exc:      # a row file that no longer reads, or needs an extra
        run.notes.append(f"{run.name}: its questions and gold are not compared with the data: "
                         f"{exc}")
        return
    file = run.path / PREDICTIONS_FILE
    for row, line in zip(run.predictions, run.lines):
        have = questions.get(row["qid"])
        if have is None:
            raise InputError(f"question {row['qid']!r} of the run is not in its data "
                             f"({', '.join(found)})", path=str(file), line=line,
                             expected="the data the run was made from")
        if have[0] != row["question"]:
            raise InputError(f"question {row['qid']!r} reads {have[0]!r} in the data but "
                             f"{row['question']!r} in predictions.jsonl", path=str(file),
                             line=line, expected="the questions the run answered")
    derived.check_gold(run.path, run.predictions, run.lines,
                       {q: answers or () for q, (_, answers) in questions.items()})


def load_run_data(run: RunFolder) -> tuple[Dataset, Gold]:
    # the loader, and the store it builds, only for the commands that re-read the data
    from resolver.haystack import load
    paths = run.meta["data"]
    if not paths:
        raise InputError("meta.json names no data files", path=str(run.path / META_FILE),
                         expected='a "data" list of haystack paths')
    dataset, gold = load([locate_data(p, run.meta, run.path) for p in paths])
    for name in (p for p in paths if hub.is_hub(p)):
        if dataset.files_sha256[name] != run.meta["data_sha256"][name]:
            raise InputError(f"the rows of {name} have changed since the run: their sha256 is "
                             f"{dataset.files_sha256[name]}, the run recorded "
                             f"{run.meta['data_sha256'][name]}", path=str(run.path / META_FILE),
                             expected="the data the run was made from")
    questions = {q.qid: q for q in dataset.questions}
    for row in run.predictions:
        question = questions.get(row["qid"])
        if question is None:
            raise InputError(f"question {row['qid']!r} of the run is not in its data "
                             f"({', '.join(dataset.paths)})", path=str(run.path / META_FILE),
                             expected="the data the run was made from")
        if question.text != row["question"]:
            raise InputError(f"question {row['qid']!r} reads {question.text!r} in the data but "
                             f"{row['question']!r} in predictions.jsonl",
                             path=str(run.path / PREDICTIONS_FILE),
                             expected="the questions the run answered")
    derived.check_gold(run.path, run.predictions, run.lines, gold)
    return dataset, gold


# ---- traces back into search records --------------------------------------------------------
def hop_of(obj: dict) -> Hop:
    """A validated trace hop (HopJson) as the search's `Hop`."""
    from resolver.search.candidates import Hop
    return Hop(obj["subject"], obj["relation"], obj["object"], obj["serial"], obj["line"],
               obj["text"], obj["version"], obj["reverse"],
               tuple((p[0], p[1]) for p in obj["passed_over"]), obj.get("status", ""))


def candidate_of(obj: dict) -> Candidate:
    """A validated trace candidate (CandidateJson) as the search's `Candidate`."""
    from resolver.plan.plans import Plan
    from resolver.search.candidates import Candidate
    plan = Plan.from_json(obj["plan"]) if obj["plan"] else None
    return Candidate(plan, obj["plan_set"] or SEARCH_SET, tuple(hop_of(h) for h in obj["hops"]),
                     obj["answer"], float(obj["score"]),
                     tuple((str(k), float(v)) for k, v in obj["terms"]), obj["complete"])


# ---- oracle folders -------------------------------------------------------------------------
ORACLE_FILES = {NBEST_FILE: schema.NbestJson, CEILING_FILE: schema.CeilingJson}


def read_oracle(path: Path, file_name: str) -> dict:
    """An oracle folder's `<command>.json` (NBEST_FILE or CEILING_FILE), validated."""
    reason = incomplete(path)
    if reason:
        raise InputError(reason, path=str(path), expected="a finished oracle folder")
    payload = read_json(path / file_name, ORACLE_FILES[file_name])
    command = file_name.removesuffix(".json")
    if payload["command"] != command:
        raise InputError(f"{file_name} of command {payload['command']!r}",
                         path=str(path / file_name), expected=f"command {command!r}")
    # the figures' own invariants (derived.py): a shape says nothing of a recall of 150%
    (derived.check_nbest if file_name == NBEST_FILE else derived.check_ceiling)(path, payload)
    return payload
