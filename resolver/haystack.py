"""Loading haystacks: official Hugging Face rows (.json, .jsonl, .parquet) or a bare context
(.txt), into questions without gold plus a separate `Gold` book.

Gold is split off here and handed only to scoring and oracle/: planning and search receive
`Dataset`, which has no answers in it. Rows of one size share one context, parsed once.

Every row passes `read_row`, the one check of the row layout that every loader of rows uses:
questions must be strings of at most MAX_QUESTION characters, answers lists of strings (a plain
string is read as a one-answer list and noted, never split into letters), qa_pair_ids one per
question; an empty or blank question is kept (it counts as unanswered) and noted. A key given
twice in a JSON row is an error (`strict_json`), and so is a file given twice. A bad row is an
InputError naming the file, the row and what was expected; nothing is dropped or guessed
silently."""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import resolver.hub as hub
from resolver.errors import InputError, MissingExtraError, several
from resolver.store.fact_store import FactStore
from resolver.store.operations import read_context
from resolver.strict_json import loads, loads_lines, loads_list
from resolver.text.facts import NOTE_CRLF, ParseResult, crlf_as_lf

_SOURCE = re.compile(r"(?:^|_)(?P<kind>sh|mh)_(?P<size>\d+k)$")


@dataclass(frozen=True)
class Question:
    """One question of a row: its id, source, position in the row, text, kind ("sh"
    single-hop, "mh" multi-hop), size ("6k", "32k", ...) and the sha256 of its context (its
    haystack). No gold: that is in the `Gold` book."""
    qid: str          # metadata.qa_pair_ids[i], or "<source>_no<i>" when the row has none
    source: str       # metadata.source, e.g. "factconsolidation_mh_6k"
    index: int        # position in the row
    text: str
    kind: str         # "sh" (single-hop), "mh" (multi-hop) or "unknown"
    size: str         # "6k", "32k", ... or "unknown"
    context_sha256: str


@dataclass
class Haystack:
    """One context, parsed once, with its store."""
    sha256: str
    text: str
    parse: ParseResult
    store: FactStore
    path: str = ""                # the file it was first read from
    row: int | None = None        # its first row there (None for a bare .txt context)


@dataclass(frozen=True)
class Gold:
    """qid -> accepted answers. Only scoring and oracle/ may read it."""
    answers: dict[str, tuple[str, ...]]

    def __getitem__(self, qid: str) -> tuple[str, ...]:
        return self.answers[qid]

    def __contains__(self, qid: str) -> bool:
        return qid in self.answers


@dataclass
class Dataset:
    """What `load` read, without gold: the files (and their sha256), the questions in file
    order, one `Haystack` (context, parse and `FactStore`) per distinct context, and notes on
    input quirks handled. `haystack_of(question).store` is the store a question is resolved
    over."""
    paths: tuple[str, ...]
    files_sha256: dict[str, str]
    questions: list[Question]
    haystacks: dict[str, Haystack]       # context sha256 -> haystack
    notes: tuple[str, ...] = ()          # input quirks handled, each naming its file

    def haystack_of(self, question: Question) -> Haystack:
        return self.haystacks[question.context_sha256]

    @property
    def sources(self) -> list[str]:
        return sorted({q.source for q in self.questions})


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_CHUNK = 1 << 20


def sha256_text(text: str) -> str:
    """sha256 of the text's UTF-8 bytes, encoded a MiB at a time: a context of 70 MB is hashed
    without a second copy of itself in memory."""
    if len(text) <= _CHUNK:
        return sha256_bytes(text.encode("utf-8"))
    digest = hashlib.sha256()
    for at in range(0, len(text), _CHUNK):
        digest.update(text[at:at + _CHUNK].encode("utf-8"))
    return digest.hexdigest()


def decode(data: bytes, path: str) -> tuple[str, tuple[str, ...]]:
    """UTF-8 text with a BOM dropped and CRLF turned into LF; notes say what was handled. A
    carriage return alone is left to the reader of the format (a context's line holding one is
    reported, a CSV reader ends a line there) and noted by it."""
    notes = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        notes.append("byte-order mark removed")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start}",
                         path=path, line=line, expected="UTF-8 text") from None
    if "\r\n" in text:
        text = crlf_as_lf(text)
        notes.append(NOTE_CRLF)
    return text, tuple(notes)


def _rows_from_json(data: bytes, path: str) -> list[dict]:
    # a row at a time, a context the rows repeat decoded once (strict_json.loads_list); read
    # whole only when that is not the layout, or something in it is wrong, to name it
    rows = loads_list(data, key="data", shared="context")
    if rows is not None:
        return rows
    obj = loads(data, path=path, what="a row, a list of rows or {\"data\": [rows]}")
    if isinstance(obj, dict) and "data" in obj and isinstance(obj["data"], list):
        return obj["data"]
    if isinstance(obj, dict):
        return [obj]
    if isinstance(obj, list):
        return obj
    raise InputError("JSON top level is neither an object nor a list", path=path,
                     expected="a row, a list of rows or {\"data\": [rows]}")


def _rows_from_jsonl(data: bytes, path: str) -> list[dict]:
    rows = loads_lines(data, shared="context")     # as _rows_from_json
    if rows is not None:
        return rows
    rows = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        rows.append(loads(raw, path=path, line=number, what="one JSON row per line"))
    return rows


def _rows_from_parquet(path: str) -> list[dict]:
    try:
        import pyarrow as pa  # the parquet extra, needed for .parquet files only
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(
            f"{path}: reading .parquet needs pyarrow; install it with "
            "`pip install 'factres[parquet]'`") from None
    try:
        return pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not a readable Parquet file: {str(exc)[:200]}", path=path,
                         expected="a Parquet table of rows (context, questions, answers, "
                                  "metadata)") from None


def _as_json(data: bytes, path: str) -> bytes:
    """The bytes the JSON reader takes: the file's own, unless `decode` has something to
    handle (a BOM, CRLF). The reader checks the UTF-8 itself (orjson refuses a file that is
    not), so the file is not decoded and encoded again only to be read."""
    if data.startswith(b"\xef\xbb\xbf") or b"\r\n" in data:
        return decode(data, path)[0].encode("utf-8")
    return data


def _one_copy(rows: list) -> None:
    """Rows of one size carry the same context, each row its own copy as the JSON reader
    makes them: every row is given the first copy, so one is kept (a context repeated to
    70 MB is held once, not once per row)."""
    first: dict[str, str] = {}
    for raw in rows:
        if isinstance(raw, dict) and isinstance(raw.get("context"), str):
            raw["context"] = first.setdefault(raw["context"], raw["context"])


ROW_FILES = (".json", ".jsonl", ".parquet")
_LAYOUT = "the Hugging Face row layout (context, questions, answers, metadata)"
# The longest question factres reads: reading and planning one grow faster than its length (the
# lexicon compiler tries orders of its cue phrases; the search, paths through each), and a
# 100 KB "question" took minutes. The longest bundled question has 156 characters.
MAX_QUESTION = 1000


def read_rows(path: str | Path) -> tuple[list[dict], str, tuple[str, ...]]:
    """Rows of a file and the file's sha256. A .txt file is one row with only a context;
    "hf:NAME" is the FactConsolidation rows of a Hugging Face dataset (`resolver.hub`)."""
    path = str(path)
    if hub.is_hub(path):
        return hub.hub_rows(path)
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=path)
    if p.is_dir():
        raise InputError("is a folder, not a file", path=path,
                         expected=".json, .jsonl, .parquet or .txt")
    data = p.read_bytes()
    digest = sha256_bytes(data)
    suffix = p.suffix.lower()
    if suffix == ".txt":
        text, notes = decode(data, path)
        return [{"context": text, "questions": [], "answers": [],
                 "metadata": {"source": p.stem}}], digest, notes
    if suffix in (".json", ".jsonl"):
        read = _rows_from_jsonl if suffix == ".jsonl" else _rows_from_json
        try:
            rows = read(_as_json(data, path), path)
        except InputError:
            decode(data, path)        # bytes that are no UTF-8 are named as such, first
            raise
    elif suffix == ".parquet":
        rows = _rows_from_parquet(path)
    else:
        raise InputError(f"unknown file type {suffix!r}", path=path,
                         expected=".json, .jsonl, .parquet or .txt")
    if not rows:
        raise InputError("no rows", path=path,
                         expected="a row, a list of rows or {\"data\": [rows]}")
    return rows, digest, ()


@dataclass(frozen=True)
class Row:
    """One row, checked: its context, source and questions, and the answers when it has any."""
    number: int                                  # position in the file, from 0
    context: str
    source: str                                  # metadata.source, else "<file stem>_row<N>"
    qids: tuple[str, ...]                        # metadata.qa_pair_ids, else "<source>_no<i>"
    questions: tuple[str, ...]
    answers: tuple[tuple[str, ...], ...] | None  # one tuple per question; None: no answers
    notes: tuple[str, ...] = ()                  # what was read leniently, for a `note:`


def _what(value) -> str:
    """A JSON value's kind, as an error names it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {str: "a string", int: "a number", float: "a number", list: "a list",
             dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _field(row: dict, name: str, path: str, number: int, kind: type = list):
    """row[name] checked to be a `kind`; None when absent or null."""
    value = row.get(name)
    if value is not None and not isinstance(value, kind):
        raise InputError(f"'{name}' is {_what(value)}", path=path, row=number,
                         expected=f"{'a list' if kind is list else 'an object'} in {_LAYOUT}")
    return value


def _answer(value, path: str, number: int, i: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)      # a year or a count written as a number
    raise InputError(f"an answer of question {i} is {_what(value)}", path=path, row=number,
                     expected="answers as strings")


def _gold(answers: list, n_questions: int, path: str, number: int
          ) -> tuple[tuple[tuple[str, ...], ...], list[int]]:
    """The answers, one tuple per question, and the questions whose answers were a plain
    string (read as one answer)."""
    if len(answers) != n_questions:
        raise InputError(f"{n_questions} questions but {len(answers)} answer lists",
                         path=path, row=number, expected="one answer list per question")
    gold, plain = [], []
    for i, value in enumerate(answers):
        if isinstance(value, str):
            plain.append(i)
            value = [value]
        elif not isinstance(value, list):
            raise InputError(f"the answers of question {i} are {_what(value)}", path=path,
                             row=number, expected="a list of answer strings")
        gold.append(tuple(_answer(a, path, number, i) for a in value))
    return tuple(gold), plain


def _qids(meta: dict, source: str, n_questions: int, path: str, number: int
          ) -> tuple[str, ...]:
    ids = meta.get("qa_pair_ids")
    if ids is None:
        return tuple(f"{source}_no{i}" for i in range(n_questions))
    if not isinstance(ids, list) or len(ids) != n_questions:
        found = f"{len(ids)} ids" if isinstance(ids, list) else _what(ids)
        raise InputError(f"metadata.qa_pair_ids is {found} for {n_questions} questions",
                         path=path, row=number, expected="one id per question")
    for i, qid in enumerate(ids):
        if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
            raise InputError(f"metadata.qa_pair_ids[{i}] is {_what(qid)}", path=path,
                             row=number, expected="each id a non-empty string")
    return tuple(str(q) for q in ids)


def read_row(row, path: str, number: int) -> Row:
    """Check one row and read it; InputError naming the file, the row and what was expected.
    Gold given as a plain string ("Paris" instead of ["Paris"]) is one answer, noted."""
    if not isinstance(row, dict):
        raise InputError(f"not an object but {_what(row)}", path=path, row=number,
                         expected=_LAYOUT)
    context = row.get("context")
    if "context" not in row:
        # a missing key is not a null value: say which it is
        raise InputError("no string 'context' ('context' is missing)", path=path, row=number,
                         expected=_LAYOUT)
    if not isinstance(context, str):
        raise InputError(f"no string 'context' ('context' is {_what(context)})",
                         path=path, row=number, expected=_LAYOUT)
    questions = _field(row, "questions", path, number) or []
    blank = []
    for i, text in enumerate(questions):
        if not isinstance(text, str):
            raise InputError(f"question {i} is {_what(text)}", path=path, row=number,
                             expected="each question a string")
        if len(text) > MAX_QUESTION:
            raise InputError(f"question {i} has {len(text)} characters", path=path, row=number,
                             expected=f"a question of at most {MAX_QUESTION} characters")
        if not text.strip():
            blank.append(i)
    answers = _field(row, "answers", path, number)
    gold, plain = _gold(answers, len(questions), path, number) if answers else (None, [])
    meta = _field(row, "metadata", path, number, dict) or {}
    source = meta.get("source")
    if source is not None and not isinstance(source, str):
        raise InputError(f"metadata.source is {_what(source)}", path=path, row=number,
                         expected="a string such as factconsolidation_mh_6k")
    source = source or f"{Path(path).stem}_row{number}"
    notes: tuple[str, ...] = ()
    if plain:
        notes += (f"row {number}: {len(plain)} answer list(s) given as a plain string, each "
                  f"read as one answer, never as letters (first: question {plain[0]})",)
    if blank:
        notes += (f"row {number}: {len(blank)} question(s) empty or blank, kept: they name "
                  f"nothing, so they count as unanswered (first: question {blank[0]})",)
    return Row(number, context, source, _qids(meta, source, len(questions), path, number),
               tuple(questions), gold, notes)


def load(paths: Iterable[str | Path] | str | Path, *, use_cache: bool = True
         ) -> tuple[Dataset, Gold]:
    """Load one or more haystack files: their rows, questions and one parsed store per context.

    Args:
        paths: haystack files (one path alone stands for itself): Hugging Face rows (`.json`:
            one row, a list of rows or `{"data": [rows]}`; `.jsonl`; `.parquet` with the
            `parquet` extra) or a bare context (`.txt`, no questions); or
            `hf:ai-hyz/MemoryAgentBench`, its FactConsolidation rows through the `datasets`
            library (the `hf` extra). Each once.
        use_cache: read and write the parse cache (`$FACTRES_CACHE`, else
            `$XDG_CACHE_HOME/factres`, else `~/.cache/factres`).

    Returns:
        `(dataset, gold)`: the `Dataset` (questions in file order, one `Haystack` with its
        `FactStore` per distinct context, the files' sha256, notes on input quirks handled)
        and the `Gold` book (question id -> accepted answers), split off so that only scoring
        reads it.

    Raises:
        InputError: no file, a file given twice, a file that cannot be read, a bad row (naming
            the file and the row), a duplicate question id, bad bytes in a context.
    """
    # the parse cache sits beside the parser (keyed by context, grammar and parsing code)
    from resolver.text.cache import load_parse

    # one file, not the letters of its name; bytes and an int are refused
    paths = [os.fspath(p) for p in several(paths, "paths", "file paths",
                                           "a path (str or Path) or a list of them",
                                           kinds=(str, os.PathLike),
                                           alone=(str, os.PathLike))]
    if not paths:
        raise InputError("no input files given")
    questions: list[Question] = []
    gold: dict[str, tuple[str, ...]] = {}
    haystacks: dict[str, Haystack] = {}
    digests = {}
    notes: list[str] = []
    hashed: dict[str, str] = {}          # a context's text -> its sha256: hashed once
    for path in paths:
        raw_rows, digest, file_notes = read_rows(path)
        twice = next((p for p, d in digests.items() if d == digest), None)
        if twice is not None:
            # its question ids would all be "duplicates": say what happened instead
            same = "the same file" if Path(twice).resolve() == Path(path).resolve() else \
                f"the same content as {twice} (sha256 {digest[:12]}...)"
            raise InputError(f"given twice: {same}", path=path,
                             expected="each data file once")
        digests[path] = digest
        in_rows = hub.is_hub(path) or Path(path).suffix.lower() in ROW_FILES
        _one_copy(raw_rows)
        for number, raw in enumerate(raw_rows):
            row = read_row(raw, path, number)
            notes += [f"{path}: {n}" for n in row.notes]
            context, row_notes = row.context, file_notes
            if "\r" in context or context.startswith("\ufeff"):
                context, more = decode(context.encode("utf-8"), path)
                row_notes = file_notes + tuple(n for n in more if n not in file_notes)
            csha = hashed.get(context)
            if csha is None:
                csha = hashed[context] = sha256_text(context)
            if csha not in haystacks:
                try:
                    parsed = load_parse(context, path=path, notes=row_notes,
                                        use_cache=use_cache, context_sha256=csha)
                except InputError as exc:
                    # a row's context line is not a line of the file: name the row too
                    raise (exc.at_row(number) if in_rows else exc) from None
                # correction lines (issue 32) applied in place; any other context: its facts
                parsed, store = read_context(parsed, context)
                haystacks[csha] = Haystack(csha, context, parsed, store, path,
                                           number if in_rows else None)
                notes += [f"{path}: {n}" for n in parsed.notes]
            match = _SOURCE.search(row.source)
            kind = match["kind"] if match else "unknown"
            size = match["size"] if match else "unknown"
            for i, (qid, text) in enumerate(zip(row.qids, row.questions)):
                if qid in gold:
                    raise InputError(f"duplicate question id {qid!r}", path=path, row=number,
                                     expected="each qa_pair_id once")
                questions.append(Question(qid, row.source, i, text, kind, size, csha))
                gold[qid] = row.answers[i] if row.answers is not None else ()
    dataset = Dataset(tuple(paths), digests, questions, haystacks, tuple(dict.fromkeys(notes)))
    return dataset, Gold(gold)


def bundled_path(name: str = "factconsolidation_6k.json") -> Path:
    """The path of a data file bundled in the package.

    Args:
        name: a file of `resolver/data/fc/`: `factconsolidation_6k.json` (the 6K dev rows with
            questions and gold, the default) or `factconsolidation_{32k,64k,262k}_context.txt`
            (the test sizes' contexts, without questions).

    Returns:
        The file's path (inside the installed package).

    It raises nothing: a name that is not bundled gives a path that does not exist, which the
    loader then names.
    """
    from importlib import resources
    ref = resources.files("resolver.data").joinpath("fc", name)
    return Path(str(ref))


BUNDLED = {
    "6k": "factconsolidation_6k.json",
    "32k": "factconsolidation_32k_context.txt",
    "64k": "factconsolidation_64k_context.txt",
    "262k": "factconsolidation_262k_context.txt",
}


def parse_report(path: str | Path, *, use_cache: bool = True) -> list[dict]:
    """What `factres parse` prints: one report per distinct context in the file (a .txt or a
    row file of one size has one). Counts lines, facts, unparsed lines (all of them, with
    their line number, text and reason), the relation histogram and the version statistics
    of the store. Notes on the rows themselves (an answer list given as a plain string, an
    empty question), which name their row, go with the first report, as `factres run` prints
    them."""
    dataset, _ = load([path], use_cache=use_cache)
    parse_notes = {f"{path}: {n}" for h in dataset.haystacks.values() for n in h.parse.notes}
    prefix = f"{path}: "
    row_notes = [n.removeprefix(prefix) for n in dataset.notes if n not in parse_notes]
    reports = []
    for sha, haystack in dataset.haystacks.items():
        parsed, stats = haystack.parse, haystack.store.stats()
        reports.append({
            "path": str(path),
            "row": haystack.row,
            "context_sha256": sha,
            "lines": parsed.lines,
            "header": parsed.has_header,
            "blank_lines": parsed.blank_lines,
            "facts": len(parsed.facts),
            "corrections": len(parsed.corrections),
            "corrections_by_operation": _by_operation(parsed.corrections),
            "corrections_changing_nothing": [
                {"line": a.line, "text": a.text, "note": a.note}
                for a in parsed.corrections if a.note and not a.changed],
            "unparsed": len(parsed.unparsed),
            "unparsed_lines": [{"line": u.line, "text": u.text, "reason": u.reason}
                               for u in parsed.unparsed],
            "keys": stats["keys"],
            "keys_with_several_versions": stats["keys_with_several_versions"],
            "deepest_version_chain": stats["deepest_version_chain"],
            "entities": stats["entities"],
            "relations": stats["relations"],
            "notes": list(parsed.notes) + (row_notes if not reports else []),
        })
    return reports


def _by_operation(applied) -> dict[str, int]:
    """How many ledger operations of each kind the context's corrections did, by name."""
    counts: dict[str, int] = {}
    for a in applied:
        for op in a.operations:
            counts[op] = counts.get(op, 0) + 1
    return dict(sorted(counts.items()))
