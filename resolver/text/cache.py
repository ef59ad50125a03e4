"""On-disk cache of parsed facts, keyed by the sha256 of the context, of the grammar and of the
code that turns a parse into facts.

A changed grammar, context, parsing code (this package's `facts.py` and `grammar.py`) or
factres version changes the key, so a stale cache is never reused: a frozen test run after a
committed parser change parses afresh instead of reading the old code's facts. The folder is
$FACTRES_CACHE, else $XDG_CACHE_HOME/factres, else ~/.cache/factres. One file per context,
`<key>.json`, written atomically (temporary file, then rename); a file that cannot be read
back or does not match its key is ignored and rewritten. Each entry opens with the sha256 of the
rest of its bytes, on a line of its own: an entry whose content no longer matches it (edited by
hand or another tool, damaged on disk) is never read: the context is parsed afresh, the entry
rewritten, and the parse's notes say so. A folder that cannot be written is no error: the parse
goes on without the cache and its notes say so.

Facts are stored as columns (one list per field, relations as indexes into a name list): that
is the layout orjson reads fastest, and a warm load of the 262K context takes a few tens of ms.
The line text of each fact is not stored: it is cut from the context itself, except on a line
that held several facts (`ParseResult.several`), whose facts and unparsed pieces each keep their
piece's text."""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import orjson

from resolver._version import __version__
from resolver.text import grammar
from resolver.text.facts import (Fact, Lines, ParseResult, UnparsedLine, normalise,
                                 parse_context, parse_normalised, several_note)

ENV = "FACTRES_CACHE"
# Bumped when the file layout below changes; part of the key, so old files are never misread.
# 2: the entry's own sha256 on its first line. 3: lines that held several facts, with their
# pieces' texts.
FORMAT = 3
DIGEST = 64           # hex characters of a sha256: the first line of an entry


def cache_dir() -> Path:
    """$FACTRES_CACHE, else $XDG_CACHE_HOME/factres, else ~/.cache/factres."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "factres"
    return Path.home() / ".cache" / "factres"


# The code whose output the cache holds: a change to either makes every entry stale.
PARSING_CODE = ("facts.py", "grammar.py", "segment.py")


@lru_cache(maxsize=None)
def parsing_code_sha256() -> str:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for name in PARSING_CODE:
        digest.update(name.encode("utf-8") + b"\0" + (here / name).read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(context: str, context_sha256: str | None = None) -> str:
    """sha256 over the context's sha256 (`context_sha256`, when the caller has it already),
    the grammar's sha256, the parsing code's sha256, the factres version and the file
    format."""
    if context_sha256 is None:
        context_sha256 = hashlib.sha256(context.encode("utf-8")).hexdigest()
    parts = (context_sha256, grammar.grammar_sha256(), parsing_code_sha256(), __version__,
             str(FORMAT))
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def cache_file(context: str) -> Path:
    return cache_dir() / f"{cache_key(context)}.json"


def load_parse(context: str, *, path: str | None = None, notes: tuple[str, ...] = (),
               use_cache: bool = True, context_sha256: str | None = None) -> ParseResult:
    """`parse_context(context)`, read from the cache when a matching entry exists, else parsed
    and written to it. `use_cache=False` neither reads nor writes. Input errors (empty input,
    bad serials) are never cached: they are raised again on every call. `context_sha256`: the
    sha256 of the context's UTF-8 bytes, when the caller has hashed it already."""
    if not use_cache:
        return parse_context(context, path=path, notes=notes)
    key = cache_key(context, context_sha256)
    file = cache_dir() / f"{key}.json"
    text, notes = normalise(context, notes)
    cached, damaged = _read(file, key, text, path, notes)
    if cached is not None:
        return cached
    result = parse_normalised(text, path=path, notes=notes)
    if damaged:
        result = replace(result, notes=result.notes + (damaged,))
    problem = _write(file, key, result)
    if problem:
        # A cache that cannot be written costs speed, never the answer: go on without it.
        result = replace(result, notes=result.notes + (problem,))
    return result


def _read(file: Path, key: str, text: str, path: str | None,
          notes: tuple[str, ...]) -> tuple[ParseResult | None, str | None]:
    """(the entry's parse, or None; a note when the entry was there but its content is not
    what was written: a parse must not trust it)."""
    try:
        data = file.read_bytes()
    except OSError:
        return None, None
    digest, body = data[:DIGEST], data[DIGEST + 1:]
    if data[DIGEST:DIGEST + 1] != b"\n" or \
            hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        # (a file of the older layout never gets here: FORMAT is part of its name)
        return None, (f"parse cache entry {file} does not match its own sha256 (edited or "
                      "damaged?): not read; parsed afresh and rewritten")
    return _entry(body, key, text, path, notes), None


def _entry(data: bytes, key: str, text: str, path: str | None,
           notes: tuple[str, ...]) -> ParseResult | None:
    try:
        obj = orjson.loads(data)
        if obj["key"] != key or obj["format"] != FORMAT:
            return None
        lines = Lines(text)
        relations = obj["relations"]
        columns = obj["facts"]
        numbers = columns["line"]
        if numbers and not 1 <= min(numbers) <= max(numbers) <= len(lines):
            return None
        # One string per name, as a parse makes them (orjson makes one per occurrence).
        names: dict[str, str] = {}
        subjects = [names.setdefault(n, n) for n in columns["subject"]]
        objects = [names.setdefault(n, n) for n in columns["object"]]
        # A fact of a line that held several keeps its piece's text (and serial) itself.
        sources: list = [lines] * len(numbers)
        for index, piece in obj["pieces"]:
            sources[index] = piece
        facts = tuple(map(Fact, columns["serial"], subjects,
                          [relations[i] for i in columns["relation"]], objects,
                          numbers, sources))
        if len(facts) != obj["count"]:
            return None
        unparsed = tuple(UnparsedLine(n, rest[0] if rest else lines[n - 1], reason)
                         for n, reason, *rest in obj["unparsed"])
        several = tuple(obj["several"])
        if several:
            notes += (several_note(several),)
        return ParseResult(facts, unparsed, obj["lines"], obj["has_header"], path,
                           obj["blank_lines"], notes, several)
    except (orjson.JSONDecodeError, KeyError, TypeError, IndexError, ValueError):
        # A truncated or foreign file: parse afresh and overwrite it.
        return None


def _write(file: Path, key: str, result: ParseResult) -> str | None:
    """Write the cache entry; None when written, else a note saying why not."""
    relations = sorted({f.relation for f in result.facts})
    number = {name: i for i, name in enumerate(relations)}
    facts = result.facts
    several = frozenset(result.several)
    obj = {
        "key": key,
        "format": FORMAT,
        "count": len(facts),
        "lines": result.lines,
        "has_header": result.has_header,
        "blank_lines": result.blank_lines,
        "relations": relations,
        "facts": {
            "serial": [f.serial for f in facts],
            "subject": [f.subject for f in facts],
            "relation": [number[f.relation] for f in facts],
            "object": [f.object for f in facts],
            "line": [f.line for f in facts],
        },
        "unparsed": [[u.line, u.reason, u.text] if u.line in several else [u.line, u.reason]
                     for u in result.unparsed],
        "several": list(result.several),
        "pieces": [[i, f.text] for i, f in enumerate(facts) if f.line in several],
    }
    folder = file.parent
    try:
        body = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
        data = hashlib.sha256(body).hexdigest().encode("ascii") + b"\n" + body
    except orjson.JSONEncodeError as exc:
        # (facts.MAX_SERIAL keeps every serial writable; this is the last guard of the promise
        # that a cache that cannot be written costs speed, never the answer)
        return f"parse cache not written ({exc}); parsed without it"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{file.stem[:16]}-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            # Readers see the old file or the whole new one, never half of it.
            os.replace(tmp, file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        return (f"parse cache not written ({folder}: {exc.strerror or exc}); parsed without "
                f"it (set {ENV} to a writable folder to keep parses)")
    return None
