"""Loading haystacks: official Hugging Face rows (.json, .jsonl, .parquet) or a bare context
(.txt), into questions without gold plus a separate `Gold` book.

Gold is split off here and handed only to scoring and oracle/: planning and search receive
`Dataset`, which has no answers in it. Rows of one size share one context, parsed once."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import orjson

from resolver.errors import InputError, MissingExtraError
from resolver.store.fact_store import FactStore
from resolver.text.facts import ParseResult

_SOURCE = re.compile(r"(?:^|_)(?P<kind>sh|mh)_(?P<size>\d+k)$")


@dataclass(frozen=True)
class Question:
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
    paths: tuple[str, ...]
    files_sha256: dict[str, str]
    questions: list[Question]
    haystacks: dict[str, Haystack]       # context sha256 -> haystack

    def haystack_of(self, question: Question) -> Haystack:
        return self.haystacks[question.context_sha256]

    @property
    def sources(self) -> list[str]:
        return sorted({q.source for q in self.questions})


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def decode(data: bytes, path: str) -> tuple[str, tuple[str, ...]]:
    """UTF-8 text with a BOM dropped and CRLF turned into LF; notes say what was handled."""
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
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        notes.append("CRLF line endings read as LF")
    return text, tuple(notes)


def _rows_from_json(data: bytes, path: str) -> list[dict]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", path=path,
                         expected="a row, a list of rows or {\"data\": [rows]}") from None
    if isinstance(obj, dict) and "data" in obj and isinstance(obj["data"], list):
        return obj["data"]
    if isinstance(obj, dict):
        return [obj]
    if isinstance(obj, list):
        return obj
    raise InputError("JSON top level is neither an object nor a list", path=path,
                     expected="a row, a list of rows or {\"data\": [rows]}")


def _rows_from_jsonl(data: bytes, path: str) -> list[dict]:
    rows = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            rows.append(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", path=path, line=number,
                             expected="one JSON row per line") from None
    return rows


def _rows_from_parquet(path: str) -> list[dict]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError(
            f"{path}: reading .parquet needs pyarrow; install it with "
            "`pip install 'factres[parquet]'`") from None
    return pq.read_table(path).to_pylist()


def read_rows(path: str | Path) -> tuple[list[dict], str, tuple[str, ...]]:
    """Rows of a file and the file's sha256. A .txt file is one row with only a context."""
    path = str(path)
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path=path)
    data = p.read_bytes()
    digest = sha256_bytes(data)
    suffix = p.suffix.lower()
    if suffix == ".txt":
        text, notes = decode(data, path)
        return [{"context": text, "questions": [], "answers": [],
                 "metadata": {"source": p.stem}}], digest, notes
    if suffix == ".jsonl":
        rows = _rows_from_jsonl(decode(data, path)[0].encode("utf-8"), path)
    elif suffix == ".json":
        rows = _rows_from_json(decode(data, path)[0].encode("utf-8"), path)
    elif suffix == ".parquet":
        rows = _rows_from_parquet(path)
    else:
        raise InputError(f"unknown file type {suffix!r}", path=path,
                         expected=".json, .jsonl, .parquet or .txt")
    return rows, digest, ()


def _check_row(row: dict, path: str, number: int) -> None:
    where = f"row {number}"
    if not isinstance(row, dict):
        raise InputError(f"{where} is not an object", path=path)
    if not isinstance(row.get("context"), str):
        raise InputError(f"{where} has no string 'context'", path=path,
                         expected="the Hugging Face row layout (context, questions, answers, "
                                  "metadata)")
    questions, answers = row.get("questions", []), row.get("answers", [])
    if not isinstance(questions, list) or not isinstance(answers, list):
        raise InputError(f"{where}: 'questions' and 'answers' must be lists", path=path)
    if answers and len(answers) != len(questions):
        raise InputError(f"{where}: {len(questions)} questions but {len(answers)} answer lists",
                         path=path, expected="one answer list per question")


def load(paths: Iterable[str | Path], *, use_cache: bool = True) -> tuple[Dataset, Gold]:
    """Load one or more haystack files. Returns the dataset (no gold) and the gold book."""
    from resolver.text.cache import (
        load_parse,  # cache sits beside the parser, keyed by context + grammar
    )

    paths = [str(p) for p in paths]
    if not paths:
        raise InputError("no input files given")
    questions: list[Question] = []
    gold: dict[str, tuple[str, ...]] = {}
    haystacks: dict[str, Haystack] = {}
    digests = {}
    for path in paths:
        rows, digest, notes = read_rows(path)
        digests[path] = digest
        for number, row in enumerate(rows):
            _check_row(row, path, number)
            context, row_notes = row["context"], notes
            if "\r" in context or context.startswith("\ufeff"):
                context, more = decode(context.encode("utf-8"), path)
                row_notes = notes + more
            csha = sha256_bytes(context.encode("utf-8"))
            if csha not in haystacks:
                parsed = load_parse(context, path=path, notes=row_notes, use_cache=use_cache)
                haystacks[csha] = Haystack(csha, context, parsed, FactStore(parsed.facts))
            meta = row.get("metadata") or {}
            source = str(meta.get("source") or f"{Path(path).stem}_row{number}")
            ids = meta.get("qa_pair_ids") or [f"{source}_no{i}" for i in
                                               range(len(row.get("questions", [])))]
            match = _SOURCE.search(source)
            kind = match["kind"] if match else "unknown"
            size = match["size"] if match else "unknown"
            for i, text in enumerate(row.get("questions", [])):
                qid = str(ids[i])
                if qid in gold or any(q.qid == qid for q in questions[-1:]):
                    raise InputError(f"duplicate question id {qid!r}", path=path)
                questions.append(Question(qid, source, i, str(text), kind, size, csha))
                answers = row.get("answers") or []
                gold[qid] = tuple(str(a) for a in (answers[i] if answers else ()))
    return Dataset(tuple(paths), digests, questions, haystacks), Gold(gold)


def bundled_path(name: str = "factconsolidation_6k.json") -> Path:
    """Path of a bundled data file (the 6K dev rows by default)."""
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
    of the store."""
    dataset, _ = load([path], use_cache=use_cache)
    reports = []
    for sha, haystack in dataset.haystacks.items():
        parsed, stats = haystack.parse, haystack.store.stats()
        reports.append({
            "path": str(path),
            "context_sha256": sha,
            "lines": parsed.lines,
            "header": parsed.has_header,
            "blank_lines": parsed.blank_lines,
            "facts": len(parsed.facts),
            "unparsed": len(parsed.unparsed),
            "unparsed_lines": [{"line": u.line, "text": u.text, "reason": u.reason}
                               for u in parsed.unparsed],
            "keys": stats["keys"],
            "keys_with_several_versions": stats["keys_with_several_versions"],
            "deepest_version_chain": stats["deepest_version_chain"],
            "entities": stats["entities"],
            "relations": stats["relations"],
            "notes": list(parsed.notes),
        })
    return reports
