"""The shapes of a run folder, `results/<run-id>/`, written down in one place.

    meta.json          MetaJson: configuration, inputs' sha256, versions, git state
    predictions.jsonl  one PredictionRow per question, in dataset order (byte-deterministic)
    traces.jsonl       one TraceRow per question: resolve.Prediction.to_json() plus lanes
    readout.jsonl      one ReadoutRow per question, in the same order: the characters of its
                       readouts (memory.readout) at the budgets and disclosures a run reads out
                       (runs since issue 33; an imported run has none)
    metrics.json       MetricsJson: one MetricsRow per source, then the pooled rows
    table.md/.tex      the metrics rows rendered by resolver.run.tables

An imported run (`factres score`: another system's predictions) has the same files; its
meta.json is an ImportedMetaJson (`"kind": "imported"`), its rows ImportedPredictionRows, and
its traces.jsonl is empty.

Every JSON file is written with orjson and sorted keys; JSONL files hold one object per line.
An oracle folder (`oracle-<command>-<tag>/`, written by oracle/report.py) holds
`<command>.json` and `<command>.md`; the two `factres tables` reads are NbestJson and
CeilingJson below.

The TypedDicts are the schema the files are validated against when they are read back
(`resolver.results.reader`, through `check`: pydantic, strict types, unknown keys kept so that
newer factres versions may add fields). A field an older factres did not write yet is
`NotRequired`; the committed runs under results/ validate.
Nothing time-dependent goes into predictions.jsonl, traces.jsonl or metrics.json: only
meta.json carries a creation time. A folder named `<run-id>` is complete (it is renamed into
place after metrics.json is written); `.tmp-*` folders, which hold an `.incomplete` marker while
they are written, are unfinished runs, and every reader refuses them (`incomplete`).
"""
# No `from __future__ import annotations` here: TypedDict reads NotRequired[...] from the
# evaluated annotations (`__required_keys__`), so the shapes are defined in order instead.
import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal

import orjson

# pydantic validates TypedDicts only from typing_extensions on Python 3.11
from typing_extensions import NotRequired, TypedDict

from resolver.errors import InputError

RESULTS_ENV = "FACTRES_RESULTS"
# The results folder when neither --results-dir nor $FACTRES_RESULTS names one (relative to the
# working folder), and the repository's committed runs (relative to the checkout).
DEFAULT_RESULTS = "factres-results"
COMMITTED_RESULTS = "results"
# The paper tables' folder under the results folder (`factres tables`): never a run id.
TABLES_DIR = "tables"
META_FILE = "meta.json"
PREDICTIONS_FILE = "predictions.jsonl"
TRACES_FILE = "traces.jsonl"
READOUT_FILE = "readout.jsonl"
METRICS_FILE = "metrics.json"
TABLE_MD_FILE = "table.md"
TABLE_TEX_FILE = "table.tex"

# An unfinished folder: its name starts with TMP_PREFIX, and it holds the marker while written.
TMP_PREFIX = ".tmp-"
INCOMPLETE_MARKER = ".incomplete"

META_SCHEMA = "factres.run/1"
# meta.json "kind": a run factres score wrote; a meta.json without "kind" is a resolver run's.
IMPORTED_KIND, RESOLVER_KIND = "imported", "resolver"
IMPORTED_META_SCHEMA = "factres.imported/1"    # meta.json of an imported run (factres score)
METRICS_SCHEMA = "factres.metrics/1"
RUN_SCHEMAS = (META_SCHEMA, IMPORTED_META_SCHEMA)   # a meta.json with another is not factres's
NBEST_FILE, CEILING_FILE = "nbest.json", "ceiling.json"


class ZeroToOne:
    """Bounds an integer to 0..1 as `annotated_types.Interval(ge=0, le=1)` does (the same core
    schema, so the same errors), through a hook: annotated_types costs about 8 ms to import,
    and every command that writes a run folder imports this module (see `_adapter`)."""

    def __get_pydantic_core_schema__(self, source, handler):
        schema = handler(source)
        schema["ge"], schema["le"] = 0, 1
        return schema


# An EM of one question: 0 or 1, an integer (strict: not true, not 1.0, not "1").
ZeroOrOne = Annotated[int, ZeroToOne()]


class ListPair:
    """Marks a two-item tuple as read from a JSON list: the tuple is not strict (JSON has no
    tuples; in strict mode pydantic takes only a tuple), its items are (the files' config). A
    hook rather than pydantic's `Strict`: this module must not import pydantic (see `_adapter`)."""

    def __get_pydantic_core_schema__(self, source, handler):
        schema = handler(source)
        schema["strict"] = False
        return schema


# A score term [name, value] and a version passed over [serial, line]: JSON lists of exactly
# two items, each of its type.
Term = Annotated[tuple[str, float], ListPair()]
SerialLine = Annotated[tuple[int, int], ListPair()]


class PlanSetRecord(TypedDict):
    set_id: str                    # "live:rules", "live:lexicon", an archive id, "repair:<model>"
    source: str                    # "live" (compiled in this run), "archive" or "repair"
    planner: str | None            # the manifest's planner ("rules", "lexicon", "ollama", ...)
    model: str | None              # model name for model planners, else None
    level: str | None              # "relation" or "family"
    manifest_sha256: str | None    # sha256 of the archive's manifest.json (archive sets only)
    compiler_sha256: dict[str, str] | None  # live sets: path -> sha256 of compiler sources
    plans_sha256: str              # sha256 of the set's plans for this run's questions (the
                                   # JSONL of qid, plans, reason in question order: runs.
                                   # plans_sha256), NOT the sha256 of an archive's plans.jsonl
                                   # (SHA256SUMS, a frozen configuration's files_sha256), which
                                   # holds every question of the set and its text's sha256
    questions_covered: NotRequired[int]   # questions of this run the set has an entry for
    questions_with_plans: int      # questions of this run the set has at least one plan for
    fallback_count: NotRequired[int]  # questions of this run whose plans are the lexicon's,
                                   # put in by a model planner whose call failed (0: none)


class RunConfigRecord(TypedDict, total=False):
    """meta.json `config`: the run's options as given (older runs lack the later ones)."""
    data: list[str]
    plans: list[str]
    split: str
    reader: str | None
    repair: str | None
    host: str | None
    timeout: float
    mode: str                      # "search" or "plain"
    frozen: str | None
    allow_dirty: bool
    strict: bool
    allow_partial_plans: bool
    bootstrap: dict[str, Any]
    abstain_below: str | None      # --abstain-below: answers labelled below it are emptied


class GitRecord(TypedDict):
    commit: str | None             # None: not a git checkout
    dirty: bool | None


class RunCounts(TypedDict):
    questions: int
    answered: int                  # questions with a non-empty prediction
    repaired: NotRequired[int]
    repair_changed: NotRequired[int]
    reader_failures: NotRequired[int]
    abstained: NotRequired[int]    # answers emptied by --abstain-below (runs since issue 20)


class UnparsedLineRecord(TypedDict):
    path: str
    row: int | None
    line: int
    text: str                      # cut to 200 characters
    reason: str


class UnparsedRecord(TypedDict):
    count: int                     # fact lines that fit no template
    first: list[UnparsedLineRecord]  # the first 5


class ProtocolRecord(TypedDict):
    split: str                     # "dev" or "test"
    frozen: bool                   # a frozen configuration was named and matched exactly
    frozen_config: str | None      # its path, as given
    frozen_sha256: str | None      # its own sha256 (the "sha256" field of the file)
    frozen_commit: NotRequired[str | None]  # the commit it was frozen at (a later commit whose
                                   # package files all match is no mismatch; both are named)
    mismatches: list[str]          # differences from it (only with allow_dirty)
    allow_dirty: bool              # --allow-dirty: tables mark every row built from this run
    dirty: bool | None             # tracked files differed from the commit (None: no git)
    commit: str | None             # the commit checked out
    off_split_sources: NotRequired[list[str]]  # official sources whose size is the other
                                   # split's (dev is 6K; test is 32K, 64K, 262K): noted


class MetaJson(TypedDict):
    schema: str                    # META_SCHEMA
    run_id: str
    label: NotRequired[str]        # `factres run --name`: the run's rows in the tables (without
                                   # it, `label_of` derives one from the mode)
    created_utc: str               # ISO 8601; metadata only, never hashed
    config_sha256: str             # sha256 of `config_identity`; default run ids carry its
                                   # first 8 hex digits
    config_identity: dict[str, Any]  # what decides the results: data sha256, plan sets' plans
                                   # sha256, split, lanes, grammar and the sha256 of every file
                                   # of the deciding stages (identity.RESOLVER_FILES)
    config: RunConfigRecord        # data, plans, split, reader, repair, host, timeout, bootstrap
    data: list[str]                # haystack files, as given (oracle/ re-reads them from here)
    data_sha256: dict[str, str]    # path -> sha256 of the file's bytes
    cwd: NotRequired[str]          # the working folder the run started in: a relative path of
                                   # `data` is relative to it (runs since the third audit)
    split: str                     # "dev" (gold read and scored) or "test" (gold never read)
    grammar_sha256: str            # grammars/facts.lark
    lexicon_sha256: dict[str, str] # path -> sha256 of the lexicon sources (plan/lexicon.py, ...)
    plan_sets: list[PlanSetRecord] # every plan set used, in the order the resolver tried them
    reader: str                    # "none" or the reader's name ("ollama:MODEL")
    repair: str                    # "none" or the repairer's name
    lanes: dict[str, dict[str, Any] | None]  # reader/repair self-descriptions (prompt sha256,
                                   # host, ...)
    counts: RunCounts              # questions, answered, abstained, repaired, reader_failures
    unparsed: NotRequired[UnparsedRecord]  # fact lines that fit no template: counted, the
                                   # first 5 named
    notes: NotRequired[list[str]]  # input quirks handled (a BOM, a plain-string gold, a parse
                                   # cache that could not be written), each naming its file
    warnings: NotRequired[list[str]]  # plan sets covering part of the questions, fallback plans
    versions: dict[str, str | None]  # python, factres and dependency versions
    git: GitRecord                 # {"commit": sha or None, "dirty": bool or None}
    protocol: NotRequired[ProtocolRecord]  # how the run passed the dev/test gate
                                   # (resolver.run.protocol)


class PlanJson(TypedDict):
    """plan.plans.Plan.to_json()."""
    entity: str
    chain: list[str]
    answer_type: NotRequired[str]
    compiler: NotRequired[str]
    rule: NotRequired[str]
    note: NotRequired[str]


class Confidence(TypedDict):
    """How sure an answer is (resolver.search.confidence), in predictions.jsonl and
    traces.jsonl rows."""
    label: Literal["none", "low", "medium", "high"]   # "none": no answer
    reasons: list[str]             # the signals that lowered it ("older version taken at hop
                                   # 2", "close rival ...", ...); ["no answer"] for "none"


class PredictionRow(TypedDict):
    qid: str
    source: str                    # e.g. "factconsolidation_sh_6k"
    question: str
    prediction: str                # the scored answer ("" = unanswered; the reader's if on)
    resolver_answer: str           # the resolver's own string (equals prediction without reader)
    gold: list[str] | None         # accepted answers; None on the test split
    em: ZeroOrOne | None           # substring exact match, 0/1; None on the test split
    plan: PlanJson | None          # the winner's Plan.to_json(), None when unanswered
    plan_set: str | None           # the winner's plan set
    reader: str                    # "none" or the reader's name
    reason: str                    # why unanswered, else "" ("abstained: ..." under
                                   # --abstain-below)
    confidence: NotRequired[Confidence]  # the resolver answer's label (absent in runs made
                                   # before issue 20)


class ImportedPredictionRow(TypedDict):
    """A predictions.jsonl row of an imported run (`factres score`, resolver.exchange.imported)."""
    qid: str
    source: str
    question: str                  # the rows' question text
    prediction: str                # the file's raw prediction ("" = unanswered or no record)
    parsed_prediction: str         # the harness's parse_output(prediction)
    gold: list[str]                # the rows' answers: what is scored
    em: ZeroOrOne                  # harness EM: the max over prediction and parsed_prediction
    stale: bool | None             # single-hop, gold the final value of a key with several
                                   # versions: answered with an earlier value; else None
    file: str | None               # the file the record came from; None when it has none
    record: str | None             # where in it ("record 3", "line 4"); None when missing
    file_gold: list[str] | None    # the file's own gold (compared, never scored)
    reported_em: ZeroOrOne | None  # the file's own score of the record (its em field)


class ImportedFile(TypedDict):
    """One imported file, as meta.json's `files` records it."""
    path: str                      # as given
    sha256: str
    format: str                    # "mab", "jsonl", "csv" or "json"
    fields: dict[str, str]         # field map used: id, prediction, gold, source, em -> key
    source: str | None             # the source the file names (mab: sub_dataset)
    sources: list[str]             # the sources its records (and name) cover
    records: int
    agent_config: dict[str, Any] | None  # mab: the harness's configuration, as written
    dataset_config: dict[str, Any] | None
    notes: list[str]               # byte-order mark removed, CRLF read as LF
    reported_score: float | None   # the file's own EM in percent, if it reports one
    reported_from: str | None      # "averaged_metrics.substring_exact_match" or "mean of 'X'"
    reported_unusable: NotRequired[str | None]  # what the file has where its score belongs
                                   # when that is no finite number (Infinity, NaN, "85%"), as
                                   # written; never compared
    factres_score: float | None    # factres's EM (percent) of the same records
    agrees: bool | None            # same score and no record scored differently; None: nothing
                                   # reported to compare
    differing: list[dict[str, Any]]  # records scored differently: qid, record, reported,
                                   # factres, file_gold_differs


class ImportedCounts(TypedDict):
    questions: int
    records: int
    answered: int
    missing: int
    empty: int
    gold_disagreements: int
    files_disagreeing: int


class ImportedMetaJson(TypedDict):
    """meta.json of an imported run. Shares with MetaJson: schema, run_id, created_utc,
    config_sha256, config_identity, data, data_sha256, split, reader, counts, versions, git."""
    schema: str                    # IMPORTED_META_SCHEMA
    kind: str                      # "imported" (a resolver run's meta has no kind)
    run_id: str
    created_utc: str
    config_sha256: str
    config_identity: dict[str, Any]
    system: str                    # the system's name (--name, else the files' agent_name)
    system_from: str               # "--name", "agent_config.agent_name" or "file name"
    reader: str                    # the system's name again (the metrics rows' reader)
    data: list[str]                # row files: their contexts rebuild the stores, their gold
                                   # is what was scored
    data_sha256: dict[str, str]
    cwd: NotRequired[str]          # what a relative path of `data` is relative to
    split: str                     # the splits of the sources, joined by "+" ("dev", "test")
    splits: dict[str, str]         # source -> "dev" (6K), "test" (32K-262K), "neither" (not
                                   # an official source; "other" before issue 30)
    scoring: dict[str, str]        # the metric, its rule and which gold
    bootstrap: dict[str, Any]
    files: list[ImportedFile]
    counts: ImportedCounts
    missing: list[str]             # questions of covered sources with no record (scored 0)
    empty: list[str]               # questions whose record has an empty prediction
    gold_disagreements: list[dict[str, Any]]  # qid, file, record, file_gold, gold
    notes: NotRequired[list[str]]
    unparsed: NotRequired[UnparsedRecord]
    versions: dict[str, str | None]
    git: GitRecord


# store.provenance.STATUSES, and "" for a hop of a store without a ledger (search.candidates.Hop)
HopStatus = Literal["", "active", "contested", "superseded", "contradicted", "revoked"]


class HopJson(TypedDict):
    """search.candidates.Hop.to_json()."""
    subject: str
    relation: str
    object: str
    serial: int
    line: int
    text: str
    version: int
    reverse: bool
    passed_over: list[SerialLine]  # [serial, line] of the versions not taken
    status: NotRequired[HopStatus]  # the version's ledger status (runs before the ledger lack it)


class CandidateJson(TypedDict):
    """search.candidates.Candidate.to_json()."""
    plan: PlanJson | None
    plan_set: str | None
    hops: list[HopJson]
    answer: str
    score: float
    terms: list[Term]              # [name, value] pairs: the score's parts
    complete: bool


class TraceRow(TypedDict):
    """A traces.jsonl row: resolve.Prediction.to_json() plus the lanes."""
    qid: str
    question: str
    source: str
    answer: str                    # the resolver's own answer (predictions' resolver_answer)
    reason: str
    winner: CandidateJson | None
    candidates: list[CandidateJson]  # the best few, winner first
    plans_tried: int
    plan_sets: list[str]
    suspicious: str
    reader: dict[str, Any] | None  # {"name", "answer", "error", "facts"} when the reader ran
    repair: dict[str, Any] | None  # {"name", "plans", "before", "after", "error"} if repaired
    confidence: NotRequired[Confidence]
    # search.contested.Contest.to_json() of each contested cell the winner reads, and
    # search.history.HistoryRead.to_json() for a question with a history cue: only when present
    contests: NotRequired[list[dict[str, Any]]]
    history: NotRequired[dict[str, Any]]


class ReadSize(TypedDict):
    """One readout of a question (`Memory.readout`, `memory.readout.render`), measured."""
    budget: int                    # characters at most
    disclose: list[str]            # the disclosure modes, in order ([]: the cells alone)
    chars: int                     # the readout's length in characters (at most `budget`)


class ReadoutRow(TypedDict):
    """A readout.jsonl row: the sizes of one question's readouts, each read in the same
    configurations (runs.RUN_READS: 600 characters with no disclosure, 2,400 with history and
    alternatives)."""
    qid: str
    reads: list[ReadSize]


class MetricsRow(TypedDict):
    label: str                     # the source, or "pooled sh" / "pooled mh" / "pooled all"
    source: str
    kind: str                      # "sh", "mh", "all" or "unknown"
    size: str                      # "6k", ...; "mean" for pooled rows
    sizes: list[str]               # the sizes the row covers
    pooled: bool
    reader: str                    # "none" for the resolver's own string
    n: int                         # questions (unanswered ones included)
    em: float | None               # mean EM in [0, 1] (pooled: mean over sizes); None unscored
    ci: list[float] | None         # 95% bootstrap interval [low, high] of `em`
    answered: float | None         # share of questions with a non-empty prediction
    stale_rate: float | None       # stale / stale_eligible (pooled: mean over sizes)
    stale: int | None              # single-hop questions answered with an earlier value
    stale_eligible: int | None     # single-hop questions whose gold is the final value of a
                                   # key with more than one version


class MetricsJson(TypedDict):
    schema: str                    # METRICS_SCHEMA
    run_id: str
    split: str
    scored: bool                   # False on the test split: em, ci, stale are None
    reader: str
    bootstrap: dict[str, Any]      # {"resamples", "seed", "level"}
    rows: list[MetricsRow]


# ---- oracle folders that `factres tables` reads ---------------------------------------------
class NbestStep(TypedDict):
    n: int
    set: str                       # the plan set added at this N
    plan_recall: int               # questions (counts, not shares)
    strict_plan_recall: NotRequired[int]
    candidate_recall: NotRequired[int]
    success: int


class NbestSource(TypedDict):
    questions: int
    rerun_agrees: int              # questions whose re-selection is the resolver's own answer
    by_n: list[NbestStep]
    abstained: NotRequired[int]    # a run made with --abstain-below: questions abstained from


class NbestJson(TypedDict):
    """nbest.json of `factres oracle nbest RUN` (oracle/nbest.py)."""
    command: str                   # "nbest"
    run: str                       # the run folder's name
    plan_sets: list[str]
    sources: dict[str, NbestSource]


class CeilingSource(TypedDict):
    questions: int
    with_gold_path: int
    latest_wins: int
    optimal: int
    contested_keys: NotRequired[int]
    status: NotRequired[str]       # "OPTIMAL" or "FEASIBLE" (older folders: always optimal)
    size: NotRequired[str]


class CeilingHaystack(TypedDict):
    sources: list[str]
    size: str
    questions: int
    with_gold_path: int
    latest_wins: int
    optimal: int
    contested_keys: int
    status: str


class CeilingJson(TypedDict):
    """ceiling.json of `factres oracle ceiling` (oracle/ceiling.py). Folders written before the
    oracle solved each haystack alone have no per_haystack."""
    command: str                   # "ceiling"
    per_source: dict[str, CeilingSource]
    per_haystack: NotRequired[dict[str, CeilingHaystack]]
    contested_keys: NotRequired[list[dict[str, Any]]]
    rows: NotRequired[list[dict[str, Any]]]
    questions: NotRequired[int]
    with_gold_path: NotRequired[int]
    latest_wins: NotRequired[int]
    optimal: NotRequired[int]


# Strict types (an `em` of "yes" or 1.0 is an error, so is a list where an object belongs);
# unknown keys are kept: a newer factres may add fields.
_CONFIG = {"strict": True, "extra": "allow"}
for _shape in (PlanSetRecord, RunConfigRecord, GitRecord, RunCounts, UnparsedLineRecord,
               UnparsedRecord, ProtocolRecord, MetaJson, PlanJson, Confidence, PredictionRow,
               ImportedPredictionRow, ImportedFile, ImportedCounts, ImportedMetaJson, HopJson,
               CandidateJson, TraceRow, MetricsRow, MetricsJson, NbestStep, NbestSource,
               NbestJson, CeilingSource, CeilingHaystack, CeilingJson, ReadSize, ReadoutRow):
    _shape.__pydantic_config__ = _CONFIG


@lru_cache(maxsize=None)
def _adapter(shape: Any) -> Any:
    # pydantic is imported here, when a file is first checked: commands that read no run
    # folder never load it
    from pydantic import TypeAdapter
    return TypeAdapter(shape)


_EXPECTED = {"int_type": "an integer", "int_parsing": "an integer", "float_type": "a number",
             "string_type": "a string", "bool_type": "true or false", "list_type": "a list",
             "tuple_type": "a list", "dict_type": "an object", "model_type": "an object",
             "missing": None, "none_required": "null", "too_short": None, "too_long": None}


def _field_name(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _found(value: Any) -> str:
    """A JSON value as a message shows it: its kind and, when short, itself."""
    if value is None:
        return "null"
    kinds = {bool: "a boolean", str: "a string", int: "a number", float: "a number",
             list: "a list", dict: "an object"}
    kind = kinds.get(type(value), type(value).__name__)
    if isinstance(value, (list, dict)):
        return kind
    if isinstance(value, str):
        shown = orjson.dumps(value).decode()         # as the file has it, quoted
    elif isinstance(value, bool):
        shown = "true" if value else "false"
    else:
        shown = repr(value)
    return f"{kind} ({shown[:60] + '...' if len(shown) > 60 else shown})"


def check(shape, value: Any, *, path: str, line: int | None = None,
          lines: list[int] | None = None) -> None:
    """Validate `value` against `shape` (one of the TypedDicts above, or a list of one); raise
    InputError naming the file, the line and the field, what was found and what was expected.
    `lines` maps the items of a list (the rows of a JSONL file) to their line numbers."""
    from pydantic import ValidationError
    try:
        _adapter(shape).validate_python(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        if lines is not None and loc and isinstance(loc[0], int):
            line, loc = lines[loc[0]], loc[1:]
        kind = first["type"]
        if (kind == "missing" and loc and isinstance(loc[-1], int)) or kind == "too_long" \
                and (first.get("ctx") or {}).get("field_type") == "Tuple":
            # a pair ([name, value], [serial, line]) of another length
            if kind == "missing":
                loc = loc[:-1]
            raise InputError(f"field {_field_name(loc)!r} is {_found(first.get('input'))} of "
                             f"{len(first.get('input') or ())} item(s)", path=path, line=line,
                             expected="a pair: a list of exactly 2 items") from None
        field = _field_name(loc)
        if kind == "missing":
            message = f"no field {field!r}" if field else "a field is missing"
            expected = _EXPECTED.get(kind)
        else:
            message = (f"field {field!r} is {_found(first.get('input'))}" if field
                       else f"the {'line' if lines is not None else 'file'} is "
                            f"{_found(first.get('input'))}")
            bound = first.get("ctx") or {}
            expected = (_EXPECTED.get(kind) or (f"at most {bound['le']}" if "le" in bound else
                                                f"at least {bound['ge']}" if "ge" in bound else
                                                first["msg"].lower()
                                                .removeprefix("input should be ")))
        raise InputError(message, path=path, line=line, expected=expected) from None


def dumps(obj: Any) -> bytes:
    """A JSON file's bytes: sorted keys, two-space indent, final newline."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def dumps_lines(rows: Iterable[Any]) -> bytes:
    """A JSONL file's bytes: one sorted-key object per line."""
    return b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows)


def loads_lines(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def results_root(override: str | Path | None = None) -> Path:
    """Where run and oracle folders are written, and run ids looked up first: the argument,
    else $FACTRES_RESULTS, else ./factres-results (git-ignored in the repository: a user's work
    never touches the checkout's tracked files; the repository's own committed runs are made
    with an explicit `--results-dir results`)."""
    return Path(override or os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)


def committed_results() -> Path | None:
    """The repository's committed results/ when the package runs from a checkout (an editable
    install or a clone on the path), else None. Run ids not found in the results folder are
    looked up here, read only."""
    repo = Path(__file__).resolve().parents[2]
    folder = repo / COMMITTED_RESULTS
    return folder if folder.is_dir() and (repo / "pyproject.toml").is_file() else None


def lookup_roots(override: str | Path | None = None) -> list[Path]:
    """Where a run id is looked up, in order: the results folder, then (read only) the
    repository's committed results/ when that is another folder."""
    root = results_root(override)
    committed = committed_results()
    roots = [root]
    if committed is not None and committed.resolve() != root.resolve():
        roots.append(committed)
    return roots


def incomplete(folder: Path) -> str | None:
    """Why `folder` is an unfinished run or report (None when it is not): every reader of
    result folders refuses these."""
    if folder.name.startswith(TMP_PREFIX):
        return (f"an unfinished folder ({TMP_PREFIX}*: a run or report that was interrupted "
                "or is still being written)")
    if (folder / INCOMPLETE_MARKER).exists():
        return f"an unfinished folder (it holds the {INCOMPLETE_MARKER} marker)"
    return None


def run_kind(meta: dict) -> str:
    """What wrote a run folder: IMPORTED_KIND or RESOLVER_KIND (the default)."""
    return meta.get("kind") or RESOLVER_KIND


def run_mode(meta: dict) -> str:
    """How a run answered: "search" or "plain" (a resolver run's mode), or IMPORTED_KIND."""
    if run_kind(meta) == IMPORTED_KIND:
        return IMPORTED_KIND
    return (meta.get("config") or {}).get("mode") or "search"


def label_of(meta: dict) -> str:
    """How tables and `factres runs` name a run: its label (`factres run --name`), an imported
    run's system name, else "factres <mode>" with its reader when it has one."""
    if meta.get("label"):
        return meta["label"]
    if run_kind(meta) == IMPORTED_KIND:
        return meta.get("system") or "?"
    reader = meta.get("reader") or "none"
    return f"factres {run_mode(meta)}" + (f" + {reader}" if reader != "none" else "")
