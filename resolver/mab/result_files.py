"""Prediction files of other systems, read into `Record`s: the official MemoryAgentBench harness
output and generic JSONL, CSV or JSON record lists.

- `mab`: one JSON object per source, as the harness writes it
  (`<output_dir>/Conflict_Resolution/<sub_dataset>_..._results.json`): `agent_config`,
  `dataset_config` (`sub_dataset` names the source), `data` (one record per question the model
  answered: `output`, `parsed_output`, `answer`, `qa_pair_id`, per-record metrics), `metrics`,
  `averaged_metrics` (percent).
- `jsonl`, `csv`, `json` (a list of objects, or `{"data": [objects]}` without the harness's
  own top-level keys): one record per question with an id and a
  prediction; the field names come from the field map (`--field prediction=answer`), else from
  the first of `GENERIC_CANDIDATES` the first record has. Harness files always use the
  harness's names (`MAB_FIELDS`), so one field map serves the generic files of a mixed call.

Reading checks the shapes only (every record has an id and a prediction of the right types,
no id twice in a file, no key twice in a JSON record and no column twice in a CSV header, one
cell per column, a field named by `--field` present in some record); joining records to
questions and scoring them is `imported`'s job. A byte-order mark and CRLF line endings are
read through and noted, and so are CR line endings (a carriage return alone) where the format
has lines (CSV, JSONL). A CSV cell may be as long as the file (the csv module's own limit is
131,072 characters); a quote never closed, or a file separated by another character than the
comma, is refused naming the line. The rows' gold is what gets scored: a gold inside the file
is kept only to be compared."""
from __future__ import annotations

import csv
import io
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from resolver.errors import InputError
from resolver.haystack import decode, sha256_bytes
from resolver.strict_json import is_finite_number, loads

FORMATS = ("mab", "jsonl", "csv", "json")
# What a field map may name: the question id, the prediction, the file's own gold, the source a
# record claims, and the file's own per-record score (0/1 or a boolean).
FIELDS = ("id", "prediction", "gold", "source", "em")
REQUIRED = ("id", "prediction")
# Top-level keys only the harness writes: an object with "data" and none of these is a generic
# record list.
HARNESS_KEYS = {"agent_config", "dataset_config", "metrics", "averaged_metrics"}
MAB_FIELDS = {"id": "qa_pair_id", "prediction": "output", "gold": "answer",
              "em": "substring_exact_match"}
# Generic files: the first of these names the first record has. "answer" is in none of them:
# it is the gold in the harness's files and the prediction in others, so it must be named.
GENERIC_CANDIDATES = {"id": ("qa_pair_id", "qid"), "prediction": ("prediction", "output"),
                      "gold": ("gold", "golds", "answers"), "source": ("source",)}
REPORTED_METRIC = "substring_exact_match"
NOTE_CR = "CR line endings (a carriage return without a line feed) read as line ends"
# Separators a spreadsheet may save a "CSV" with instead of the comma, as a message names them.
OTHER_DELIMITERS = {";": "semicolons (;)", "\t": "tabs", "|": "vertical bars (|)"}
# Excel's first line naming the separator ("sep=;"), which no CSV reader knows.
_SEP_LINE = re.compile(r"sep=([^\r\n\"])[ \t]*(?:\r\n|\r|\n|\Z)")
# A line inside a quoted cell that reads as a record: a cell's text, then the separator (F05).
_ID_NUMBER = re.compile(r"\d+\Z")
_SEPARATOR = re.compile(r"[,;\t|]")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_TRUE = {"1", "1.0", "true"}
_FALSE = {"0", "0.0", "false"}


@dataclass(frozen=True)
class Record:
    """One question's prediction as a file has it."""
    number: int                        # 1-based position among the file's records
    where: str                         # "record 3" or "line 4": what an error names
    qid: str
    prediction: str                    # "" when the file's value is null
    gold: tuple[str, ...] | None       # the file's own gold, if it has one
    source: str | None                 # the source the record claims, if it names one
    reported_em: int | None            # the file's own score of the record, if it has one


@dataclass
class HarnessFile:
    path: str
    sha256: str
    format: str
    fields: dict[str, str]             # the field map used: field -> the file's key
    records: list[Record]
    source: str | None                 # mab: dataset_config.sub_dataset
    agent_config: dict | None          # mab: the harness's agent configuration
    dataset_config: dict | None
    reported_score: float | None       # mab: averaged_metrics.substring_exact_match (percent)
    notes: tuple[str, ...]             # byte-order mark, CRLF, CR
    reported_unusable: str | None = None  # mab: what averaged_metrics has for the score when
                                          # it is no finite number (Infinity, a string), as JSON


def parse_field_map(pairs) -> dict[str, str]:
    """`["prediction=answer", "id=qa_pair_id"]` -> {"prediction": "answer", "id": "qa_pair_id"}."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in FIELDS or not value:
            raise InputError(f"bad --field {pair!r}",
                             expected=f"FIELD=NAME with FIELD one of {', '.join(FIELDS)}")
        if key in out and out[key] != value:
            raise InputError(f"--field {key} given twice ({out[key]!r} and {value!r})")
        out[key] = value
    return out


# ---- formats --------------------------------------------------------------------------------
# The standard library's parser, not orjson: the harness writes with Python's json, which puts
# NaN in averaged_metrics when `data` is empty, and orjson refuses NaN. A key given twice in an
# object is an error either way (strict_json).
def _json(text: str, path: str, line: int | None = None):
    return loads(text, path=path, line=line, allow_nan=True)


# (where, the record, its line when the format has lines): what _record reads
Located = tuple[str, dict, int | None]


def _objects_of_jsonl(text: str, path: str, notes: list[str]) -> list[Located]:
    if "\r" in text:
        # JSON has no raw carriage return inside a string: a CR here ends a line
        text = text.replace("\r", "\n")
        notes.append(NOTE_CR)
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        obj = _json(line, path, number)
        if not isinstance(obj, dict):
            raise InputError("the line is not a JSON object", path=path, line=number,
                             expected="one JSON object per line")
        out.append((f"line {number}", obj, number))
    return out


# The csv module's cell limit is a setting of the process: raised for one read at a time.
_CSV_LIMIT = threading.Lock()


class _CsvLines:
    """The file's lines as the csv reader takes them, and the line the record being read began
    on (a quoted cell may hold line breaks, so a record may span lines)."""

    def __init__(self, text: str) -> None:
        self._lines = iter(io.StringIO(text, newline=""))
        self.number = 0
        self.start: int | None = None

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = next(self._lines)
        self.number += 1
        if self.start is None and line.strip("\r\n"):
            self.start = self.number
        return line


def _objects_of_csv(text: str, path: str, notes: list[str]) -> list[Located]:
    """The records of a CSV file: a header naming the columns, then one record per row, each
    with one cell per column. strict quoting: a quote that is never closed would take the rest
    of the file into one cell."""
    delimiter, skipped = ",", 0
    sep = _SEP_LINE.match(text)
    if sep is not None:
        # Excel writes "sep=;" first when asked to: read with that separator, from line 2
        delimiter, skipped, text = sep[1], 1, text[sep.end():]
        notes.append(f"the first line, {sep.group().strip()!r} (Excel's), names the separator: "
                     f"cells read as separated by {delimiter!r}, the header on line 2")
    with _CSV_LIMIT:
        # a cell may hold a whole file's text (a JSONL record may); the module's limit is not ours
        limit = csv.field_size_limit()
        csv.field_size_limit(max(limit, len(text) + 1))
        try:
            rows = _csv_rows(text, path, delimiter, skipped)
        finally:
            csv.field_size_limit(limit)
    if not rows or not rows[0][1]:
        raise InputError("no header line", path=path, line=1 + skipped,
                         expected="a CSV header naming the columns")
    names = rows[0][1]
    if len(names) == 1:
        found = [d for d in OTHER_DELIMITERS if d in names[0] and d != delimiter]
        if found:
            # a spreadsheet's "CSV" in another locale: every line would read as one cell
            header = json.dumps(names[0], ensure_ascii=False)
            header = header if len(header) <= SHOWN else header[:SHOWN] + "..."
            raise InputError(f"the header is one column, {header}: the file seems separated "
                             f"by {OTHER_DELIMITERS[found[0]]}, not commas", path=path,
                             line=1 + skipped,
                             expected="comma-separated values: save it as CSV with commas")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        # a dict per record would keep the last column of a name: the score would depend on
        # the order
        raise InputError(f"column(s) {', '.join(repr(n) for n in twice)} named twice in the "
                         "header", path=path, line=1 + skipped, expected="each column name once")
    out = []
    for line, cells in rows[1:]:
        if not cells:                      # a blank line, as csv.DictReader skips it
            continue
        if len(cells) != len(names):
            expected = "one cell per header column" + ("" if len(cells) > len(names) else
                " (an empty cell between commas for an empty value)")
            raise InputError(f"{len(cells)} cells for {len(names)} columns", path=path,
                             line=line, expected=expected)
        out.append((f"line {line}", dict(zip(names, cells)), line))
    crs = text.count("\r")
    if crs > sum(cell.count("\r") for _, cells in rows for cell in cells):
        notes.append(NOTE_CR)
    return out


def _csv_rows(text: str, path: str, delimiter: str = ",", skipped: int = 0
              ) -> list[tuple[int, list[str]]]:
    """(the line each record begins on, its cells), the header first; `skipped` lines come
    before `text` in the file."""
    lines = _CsvLines(text)
    reader = csv.reader(lines, strict=True, delimiter=delimiter)
    rows = []
    while True:
        lines.start = None
        try:
            cells = next(reader)
        except StopIteration:
            return rows
        except csv.Error as exc:
            start = (lines.start or lines.number) + skipped
            if str(exc) == "unexpected end of data":
                raise InputError("a quote opened in this record is never closed: the rest of "
                                 f"the file (to line {lines.number + skipped}) would be one cell",
                                 path=path, line=start,
                                 expected='a closing quote ("), and "" for a quote inside a '
                                          'quoted cell') from None
            raise InputError(f"bad quoting: {exc}", path=path, line=start,
                             expected='a cell quoted whole ("...", with "" for a quote '
                                      'inside), or not quoted') from None
        rows.append(((lines.start or lines.number) + skipped, cells))


def _check_swallowed(objects: list[Located], records: list[Record], path: str) -> None:
    """InputError when a quoted cell holds a line break followed by what reads as a record of
    this file: a cell's text shaped like the file's question ids, then a comma ("...Berkeley\n
    factconsolidation_sh_6k_no5,Thomas Kyd"). A quote opened in one record and closed by a
    stray quote some lines on swallows the records between into one cell (verify-e F05)."""
    ids = {r.qid for r in records}
    shapes = {_ID_NUMBER.sub("", q) for q in ids if _ID_NUMBER.search(q)}
    for (_, obj, start), record in zip(objects, records):
        line = start or 0
        for name, cell in obj.items():
            if not isinstance(cell, str) or "\n" not in cell and "\r" not in cell:
                continue
            inner = _LINE_BREAK.split(cell)
            for k, text in enumerate(inner[1:], start=1):
                head = _SEPARATOR.split(text, 1)
                first = head[0].strip().strip('"')
                if len(head) == 2 and (first in ids or (_ID_NUMBER.search(first) and
                                                        _ID_NUMBER.sub("", first) in shapes)):
                    end = line + len(inner) - 1
                    quoted = json.dumps(text, ensure_ascii=False)
                    quoted = quoted if len(quoted) <= SHOWN else quoted[:SHOWN] + '..."'
                    raise InputError(
                        f"the {name!r} cell of {record.qid!r} holds line {line + k}, "
                        f"{quoted}, which reads as a record of this file: a quote "
                        f"opened on line {line} is closed only on line {end} (a stray quote?), "
                        f"and lines {line + 1} to {end} would be one cell",
                        path=path, line=line,
                        expected='a cell quoted whole ("...", with "" for a quote inside)')
            line += len(inner) - 1


def _objects_of_list(obj, path: str, where: str) -> list[Located]:
    if not isinstance(obj, list):
        raise InputError(f"{where} is not a list", path=path, expected="a list of records")
    for i, item in enumerate(obj):
        if not isinstance(item, dict):
            raise InputError(f"record {i + 1} is not an object", path=path,
                             expected="one JSON object per record")
    return [(f"record {i + 1}", item, None) for i, item in enumerate(obj)]


def detect_format(path: str, text: str) -> str:
    """The format of a file from its name and top level."""
    suffix = Path(path).suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return "mab"
    if stripped.startswith("["):
        return "json"
    raise InputError("cannot tell the format", path=path,
                     expected="a MemoryAgentBench results .json (an object with 'data'), a "
                              "JSON list of records, .jsonl or .csv; or name it with --format")


# ---- values ---------------------------------------------------------------------------------
def _fail(path: str, where: str, message: str, expected: str) -> InputError:
    return InputError(f"{where}: {message}", path=path, expected=expected)


_KINDS = {bool: "a boolean", str: "a string", int: "a number", float: "a number",
          list: "a list", dict: "an object"}
SHOWN = 80            # characters of a value a message shows


def shown(value) -> str:
    """A value of a record as a message shows it: its kind, then itself as JSON writes it
    (`true`, `{"a": "Belgium"}`: what the file has, never a Python repr), cut to SHOWN
    characters."""
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > SHOWN:
        text = f"{text[:SHOWN]}... ({len(text)} characters)"
    return f"{_KINDS.get(type(value), 'a value')} {text}"


def _text(value, path: str, where: str, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _fail(path, where, f"{name!r} is {shown(value)}",
                    "a string (or null for no answer)")
    return value


def _gold(value, path: str, where: str, name: str, fmt: str, line: int | None = None
          ) -> tuple[str, ...] | None:
    if value is None:
        return None
    if fmt == "csv" and isinstance(value, str) and value.lstrip().startswith("["):
        value = _json(value, path, line)      # a CSV cell may hold a JSON list of answers
    if isinstance(value, str):          # resumed harness runs store one plain string
        return (value,)
    if isinstance(value, list) and all(isinstance(a, str) for a in value):
        return tuple(value)
    raise _fail(path, where, f"{name!r} is {shown(value)}", "a list of strings or one string")


def _reported(value, path: str, where: str, name: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return int(value.strip().lower() in _TRUE)
    raise _fail(path, where, f"{name!r} is {shown(value)}",
                "a per-record score: 0, 1, true or false")


def _resolve_fields(fmt: str, given: dict[str, str], first: dict | None, path: str
                    ) -> dict[str, str]:
    if fmt == "mab":
        # The harness names its fields itself; a field map is for the generic files beside it.
        return dict(MAB_FIELDS)
    fields = dict(given)
    for field, names in GENERIC_CANDIDATES.items():
        if field not in fields and first is not None:
            found = next((n for n in names if n in first), None)
            if found is not None:
                fields[field] = found
    if first is not None:
        for field in REQUIRED:
            if field not in fields:
                # quoted: a header name with a stray space must be seen to have it
                raise InputError(f"no {field} field: the first record has "
                                 f"{', '.join(repr(k) for k in sorted(first)) or 'no fields'}",
                                 path=path,
                                 expected=f"one of {', '.join(GENERIC_CANDIDATES[field])}, or "
                                          f"--field {field}=NAME")
    return fields


def _check_given(given: dict[str, str], objects: list[Located], path: str) -> None:
    """A field named with --field must be a key of some record: a misspelt key (em=corect)
    would otherwise read as a file without that field."""
    for field, key in sorted(given.items()):
        if objects and not any(key in obj for _, obj, _ in objects):
            first = objects[0][1]
            raise InputError(f"--field {field}={key}: no record has {key!r} (the first record "
                             f"has {', '.join(repr(k) for k in sorted(first)) or 'no fields'})",
                             path=path, expected="a key the records have")


def _record(number: int, where: str, obj: dict, fields: dict[str, str], path: str, fmt: str,
            line: int | None = None) -> Record:
    for field in REQUIRED:
        if fields[field] not in obj:
            raise _fail(path, where, f"no {fields[field]!r} ({field})",
                        f"every record to have {fields[field]!r}")
    qid = obj[fields["id"]]
    if not isinstance(qid, str) or not qid.strip():
        raise _fail(path, where, f"{fields['id']!r} is {shown(qid)}", "a question id string")
    gold = _gold(obj.get(fields["gold"]), path, where, fields["gold"], fmt, line) \
        if "gold" in fields else None
    source = obj.get(fields["source"]) if "source" in fields else None
    if source is not None and not isinstance(source, str):
        raise _fail(path, where, f"{fields['source']!r} is {shown(source)}", "a source name")
    reported = _reported(obj.get(fields["em"]), path, where, fields["em"]) \
        if "em" in fields else None
    return Record(number, where, qid.strip(),
                  _text(obj[fields["prediction"]], path, where, fields["prediction"]),
                  gold, source or None, reported)


def _reported_score(averaged) -> tuple[float | None, str | None]:
    """(the file's own score, what stands there instead when it is no finite number: its JSON,
    e.g. "Infinity" or '"85%"', recorded and never compared)."""
    if not isinstance(averaged, dict) or averaged.get(REPORTED_METRIC) is None:
        return None, None
    value = averaged[REPORTED_METRIC]
    if is_finite_number(value):
        return float(value), None
    return None, json.dumps(value)


def read_file(path: str | Path, fields: dict[str, str] | None = None, fmt: str | None = None
              ) -> HarnessFile:
    """Read one prediction file. `fields` names a generic file's fields; `fmt` skips
    detection. Raises InputError naming the file and the record for anything malformed."""
    path = str(path)
    if not Path(path).is_file():
        raise InputError("no such file", path=path)
    data = Path(path).read_bytes()
    text, notes = decode(data, path)
    fmt_given = fmt
    fmt = fmt or detect_format(path, text)
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}", path=path, expected=", ".join(FORMATS))
    source = agent = dataset_config = reported = unusable = None
    detected = fmt_given is None
    notes = list(notes)
    if fmt == "jsonl":
        objects = _objects_of_jsonl(text, path, notes)
    elif fmt == "csv":
        objects = _objects_of_csv(text, path, notes)
    else:
        top = _json(text, path)
        if detected and fmt == "mab" and isinstance(top, dict) \
                and isinstance(top.get("data"), list) and not set(top) & HARNESS_KEYS:
            # {"data": [records]} with none of the harness's own keys: a generic record list
            fmt = "json"
        if fmt == "json":
            if isinstance(top, dict) and isinstance(top.get("data"), list):
                objects = _objects_of_list(top["data"], path, "'data'")
            else:
                objects = _objects_of_list(top, path, "the top level")
        else:
            if not isinstance(top, dict) or not isinstance(top.get("data"), list):
                raise InputError("no 'data' list at the top level", path=path,
                                 expected="a MemoryAgentBench results file (agent_config, "
                                          "dataset_config, data, averaged_metrics)")
            objects = _objects_of_list(top["data"], path, "'data'")
            agent = top.get("agent_config") if isinstance(top.get("agent_config"), dict) \
                else None
            dataset_config = top.get("dataset_config") \
                if isinstance(top.get("dataset_config"), dict) else None
            source = (dataset_config or {}).get("sub_dataset") or None
            if source is not None and not isinstance(source, str):
                raise InputError(f"dataset_config.sub_dataset is {json.dumps(source)[:80]}",
                                 path=path, expected="the source's name, a string")
            reported, unusable = _reported_score(top.get("averaged_metrics"))
    resolved = _resolve_fields(fmt, dict(fields or {}), objects[0][1] if objects else None,
                               path)
    if fmt != "mab":
        _check_given(dict(fields or {}), objects, path)
    records, seen = [], {}
    for number, (where, obj, line) in enumerate(objects, start=1):
        record = _record(number, where, obj, resolved, path, fmt, line)
        if record.qid in seen:
            raise _fail(path, where, f"question {record.qid!r} again (first at "
                        f"{seen[record.qid]})", "one record per question")
        seen[record.qid] = where
        records.append(record)
    if fmt == "csv":
        _check_swallowed(objects, records, path)
    if not records and fmt != "mab":
        raise InputError("no records", path=path,
                         expected="one record per question with an id and a prediction")
    return HarnessFile(path, sha256_bytes(data), fmt, resolved, records,
                       str(source) if source else None, agent, dataset_config, reported,
                       tuple(notes), unusable)
