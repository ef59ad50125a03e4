"""The shapes of a run folder, `results/<run-id>/`, written down in one place.

    meta.json          MetaJson: configuration, inputs' sha256, versions, git state
    predictions.jsonl  one PredictionRow per question, in dataset order (byte-deterministic)
    traces.jsonl       one TraceRow per question: resolve.Prediction.to_json() plus lanes
    metrics.json       MetricsJson: one MetricsRow per source, then the pooled rows
    table.md/.tex      the metrics rows rendered by resolver.run.tables

An imported run (`factres score`: another system's predictions) has the same files; its
meta.json is an ImportedMetaJson (`"kind": "imported"`), its rows ImportedPredictionRows, and
its traces.jsonl is empty.

Every JSON file is written with orjson and sorted keys; JSONL files hold one object per line.
Nothing time-dependent goes into predictions.jsonl, traces.jsonl or metrics.json: only
meta.json carries a creation time. A folder named `<run-id>` is complete (it is renamed into
place after metrics.json is written); `.tmp-*` folders, which hold an `.incomplete` marker while
they are written, are unfinished runs, and every reader refuses them (`incomplete`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, TypedDict

import orjson

RESULTS_ENV = "FACTRES_RESULTS"
# The paper tables' folder under the results folder (`factres tables`): never a run id.
TABLES_DIR = "tables"
META_FILE = "meta.json"
PREDICTIONS_FILE = "predictions.jsonl"
TRACES_FILE = "traces.jsonl"
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


class PlanSetRecord(TypedDict):
    set_id: str                    # "live:rules", "live:lexicon", an archive id, "repair:<model>"
    source: str                    # "live" (compiled in this run), "archive" or "repair"
    planner: str | None            # the manifest's planner ("rules", "lexicon", "ollama", ...)
    model: str | None              # model name for model planners, else None
    level: str | None              # "relation" or "family"
    manifest_sha256: str | None    # sha256 of the archive's manifest.json (archive sets only)
    compiler_sha256: dict[str, str] | None  # live sets: path -> sha256 of compiler sources
    plans_sha256: str              # sha256 of the set's plans for this run's questions
    questions_covered: int         # questions of this run the set has an entry for
    questions_with_plans: int      # questions of this run the set has at least one plan for
    fallback_count: int            # questions of this run whose plans are the lexicon's, put
                                   # in by a model planner whose call failed (0: none)


class MetaJson(TypedDict):
    schema: str                    # META_SCHEMA
    run_id: str
    created_utc: str               # ISO 8601; metadata only, never hashed
    config_sha256: str             # sha256 of `config_identity`; default run ids carry its
                                   # first 8 hex digits
    config_identity: dict[str, Any]  # what decides the results: data sha256, plan sets' plans
                                   # sha256, split, lanes, grammar and the sha256 of every file
                                   # of the deciding stages (identity.RESOLVER_FILES)
    config: dict[str, Any]         # data, plans, split, reader, repair, host, timeout, bootstrap
    data: list[str]                # haystack files, as given (oracle/ re-reads them from here)
    data_sha256: dict[str, str]    # path -> sha256 of the file's bytes
    split: str                     # "dev" (gold read and scored) or "test" (gold never read)
    grammar_sha256: str            # grammars/facts.lark
    lexicon_sha256: dict[str, str] # path -> sha256 of the lexicon sources (plan/lexicon.py, ...)
    plan_sets: list[PlanSetRecord] # every plan set used, in the order the resolver tried them
    reader: str                    # "none" or the reader's name ("ollama:MODEL")
    repair: str                    # "none" or the repairer's name
    lanes: dict[str, dict | None]  # reader/repair self-descriptions (prompt sha256, host, ...)
    counts: dict[str, int]         # questions, answered, abstained, repaired, reader_failures
    unparsed: dict[str, Any]       # {"count": fact lines that fit no template, "first": the
                                   # first 5 as {"path", "row", "line", "text", "reason"}}
    notes: list[str]               # input quirks handled (a BOM, a plain-string gold, a parse
                                   # cache that could not be written), each naming its file
    warnings: list[str]            # plan sets covering part of the questions, fallback plans
    versions: dict[str, str | None]  # python, factres and dependency versions
    git: dict[str, Any]            # {"commit": sha or None, "dirty": bool or None}
    protocol: "ProtocolRecord"     # how the run passed the dev/test gate (resolver.run.protocol)


class ProtocolRecord(TypedDict):
    split: str                     # "dev" or "test"
    frozen: bool                   # a frozen configuration was named and matched exactly
    frozen_config: str | None      # its path, as given
    frozen_sha256: str | None      # its own sha256 (the "sha256" field of the file)
    frozen_commit: str | None      # the commit it was frozen at (a later commit whose package
                                   # files all match is no mismatch; both are named)
    mismatches: list[str]          # differences from it (only with allow_dirty)
    allow_dirty: bool              # --allow-dirty: tables mark every row built from this run
    dirty: bool | None             # tracked files differed from the commit (None: no git)
    commit: str | None             # the commit checked out
    off_split_sources: list[str]   # official sources whose size is the other split's (dev is
                                   # 6K; test is 32K, 64K, 262K): noted, not refused


class PredictionRow(TypedDict):
    qid: str
    source: str                    # e.g. "factconsolidation_sh_6k"
    question: str
    prediction: str                # the scored answer ("" = unanswered; the reader's if on)
    resolver_answer: str           # the resolver's own string (equals prediction without reader)
    gold: list[str] | None         # accepted answers; None on the test split
    em: int | None                 # substring exact match, 0/1; None on the test split
    plan: dict | None              # the winner's Plan.to_json(), None when unanswered
    plan_set: str | None           # the winner's plan set
    reader: str                    # "none" or the reader's name
    reason: str                    # why unanswered, else "" ("abstained: ..." under
                                   # --abstain-below)
    confidence: "ConfidenceRecord"  # the resolver answer's label (absent in runs made before
                                   # issue 20)


class ConfidenceRecord(TypedDict):
    """How sure an answer is (resolver.search.confidence), in predictions.jsonl and
    traces.jsonl rows."""
    label: str                     # "none" (no answer), "low", "medium" or "high"
    reasons: list[str]             # the signals that lowered it ("older version taken at hop
                                   # 2", "close rival ...", ...); ["no answer"] for "none"


class ImportedPredictionRow(TypedDict):
    """A predictions.jsonl row of an imported run (`factres score`, resolver.run.imported)."""
    qid: str
    source: str
    question: str                  # the rows' question text
    prediction: str                # the file's raw prediction ("" = unanswered or no record)
    parsed_prediction: str         # the harness's parse_output(prediction)
    gold: list[str]                # the rows' answers: what is scored
    em: int                        # harness EM: the max over prediction and parsed_prediction
    stale: bool | None             # single-hop, gold the final value of a key with several
                                   # versions: answered with an earlier value; else None
    file: str | None               # the file the record came from; None when it has none
    record: str | None             # where in it ("record 3", "line 4"); None when missing
    file_gold: list[str] | None    # the file's own gold (compared, never scored)
    reported_em: int | None        # the file's own score of the record (its em field)


class ImportedFile(TypedDict):
    """One imported file, as meta.json's `files` records it."""
    path: str                      # as given
    sha256: str
    format: str                    # "mab", "jsonl", "csv" or "json"
    fields: dict[str, str]         # field map used: id, prediction, gold, source, em -> key
    source: str | None             # the source the file names (mab: sub_dataset)
    sources: list[str]             # the sources its records (and name) cover
    records: int
    agent_config: dict | None      # mab: the harness's configuration, as written
    dataset_config: dict | None
    notes: list[str]               # byte-order mark removed, CRLF read as LF
    reported_score: float | None   # the file's own EM in percent, if it reports one
    reported_from: str | None      # "averaged_metrics.substring_exact_match" or "mean of 'X'"
    factres_score: float | None    # factres's EM (percent) of the same records
    agrees: bool | None            # same score and no record scored differently; None: nothing
                                   # reported to compare
    differing: list[dict]          # records scored differently: qid, record, reported, factres,
                                   # file_gold_differs


class ImportedMetaJson(TypedDict):
    """meta.json of an imported run. Shares with MetaJson: schema, run_id, created_utc,
    config_sha256, config_identity, data, data_sha256, split, reader, counts, versions, git."""
    schema: str                    # IMPORTED_META_SCHEMA
    kind: str                      # "imported" (a resolver run's meta has no kind)
    system: str                    # the system's name (--name, else the files' agent_name)
    system_from: str               # "--name", "agent_config.agent_name" or "file name"
    data: list[str]                # row files: their contexts rebuild the stores, their gold
                                   # is what was scored
    split: str                     # the splits of the sources, joined by "+" ("dev", "test")
    splits: dict[str, str]         # source -> "dev" (6K), "test" (32K-262K) or "other"
    scoring: dict[str, str]        # the metric, its rule and which gold
    files: list[ImportedFile]
    missing: list[str]             # questions of covered sources with no record (scored 0)
    empty: list[str]               # questions whose record has an empty prediction
    gold_disagreements: list[dict] # qid, file, record, file_gold, gold


class TraceRow(TypedDict, total=False):
    # ... every key of resolve.Prediction.to_json() (winner, candidates, plans_tried, ...,
    # confidence: a ConfidenceRecord), and:
    reader: dict | None            # {"name", "answer", "error", "facts"} when the reader ran
    repair: dict | None            # {"name", "plans", "before", "after", "error"} when repaired


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


def dumps(obj: Any) -> bytes:
    """A JSON file's bytes: sorted keys, two-space indent, final newline."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def dumps_lines(rows: Iterable[Any]) -> bytes:
    """A JSONL file's bytes: one sorted-key object per line."""
    return b"".join(orjson.dumps(r, option=orjson.OPT_SORT_KEYS) + b"\n" for r in rows)


def loads_lines(data: bytes) -> list[Any]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def results_root(override: str | Path | None = None) -> Path:
    """Where run folders go: the argument, else $FACTRES_RESULTS, else ./results."""
    return Path(override or os.environ.get(RESULTS_ENV) or "results")


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
