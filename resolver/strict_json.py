"""JSON read strictly: a key given twice in one object is an error, never "the last one wins".

orjson (and the standard library's `json` by default) keep the last value of a repeated key
without a word, so a record with two `em` fields, or a row with two `answers`, would be read as
whichever came last. Every reader of a JSON file whose content decides a result (run and
oracle folders, data rows, other systems' prediction files) goes through `loads`: the values
are orjson's (its strict UTF-8 and number rules), and the standard library's parser, with an
`object_pairs_hook` that only counts keys, checks every object for a repeated key. When one is
found, the object is located by its path ("data[3]") for the message.

Harness files are written by Python's `json`, which puts NaN where a mean has no records:
`allow_nan` reads NaN and the infinities as floats (orjson refuses them), through the standard
library alone.

Nothing here knows about runs or rows, so every stage may import it."""
from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

from resolver.errors import InputError

EXPECTED_ONCE = "each key of a JSON object once"


class _Twice(dict):
    """An object that had a key more than once (`repeated` names it)."""
    repeated = ""


def _count_only(pairs: list[tuple[str, Any]]) -> None:
    if len({k for k, _ in pairs}) != len(pairs):
        raise _Repeated()
    return None


class _Repeated(Exception):
    pass


def _mark(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    twice = _Twice(obj)
    twice.repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
    return twice


def _find(value: Any, path: str = "") -> tuple[str, str] | None:
    """(path, key) of the first object, in document order, that had a key twice."""
    if isinstance(value, _Twice):
        return path, value.repeated
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find(item, f"{path}.{key}" if path else key)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _find(item, f"{path}[{i}]")
            if found:
                return found
    return None


def repeated_key(text: str | bytes) -> tuple[str, str] | None:
    """(where, key) of the first object of a valid JSON document that has a key twice ("" for
    the top level), else None."""
    try:
        json.loads(text, object_pairs_hook=_count_only)
        return None
    except _Repeated:
        pass
    return _find(json.loads(text, object_pairs_hook=_mark)) or ("", "?")


# The end of a key: its closing quote, blanks, the colon. Every key of a document ends so; text
# inside a string can too (an escaped quote before a colon), the same in the file and in
# orjson's writing of the value, unless the file spelled a quote as a \\u escape.
_KEY_END = re.compile(rb'"[ \t\r\n]*:')


def _refuse_repeated(text: str | bytes, value: Any, path: str | None,
                     line: int | None) -> None:
    # Fast path, since every command reads run and oracle folders whole: orjson keeps one
    # value per key, so a key written twice leaves fewer key ends in orjson's writing of the
    # value than in the file (and no more text in strings). Equal counts mean no key was
    # written twice; only otherwise (or with \u escapes, which may spell a quote) does the
    # standard library's parser look for the repeat.
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if b"\\u" not in raw:
        if len(raw) > _LARGE:
            written = _key_ends_written(value)
        else:
            try:
                written = len(_KEY_END.findall(orjson.dumps(value)))
            except orjson.JSONEncodeError:  # nested deeper than orjson writes: the slow path
                written = -1
        if len(_KEY_END.findall(raw)) == written:
            return
    _refuse_found(repeated_key(text), path, line)


# A document larger than this has its key ends in orjson's writing counted from the value
# (`_key_ends_written`) rather than from the writing itself: rows whose context is repeated to
# 70 MB would be written out again whole only to be counted.
_LARGE = 1 << 20
_QUOTE_COLON = re.compile(r'" *:')
_COLON_FIRST = re.compile(r' *:')


def _key_ends_written(value: Any) -> int:
    """How many `_KEY_END` matches orjson's writing of `value` holds, without writing it.
    orjson writes no blank between tokens and writes a tab, CR or LF inside a string as an
    escape (a quote as \\"), so the matches are: one after each key; in each string (key or
    value), one per quote followed by spaces and a colon; and one at the opening quote of a
    string that starts with spaces and a colon."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            count += _in_string(item)
        elif kind is dict:
            count += len(item)
            for key, inner in item.items():
                count += _in_string(key)
                stack.append(inner)
        elif kind is list:
            stack.extend(item)
    return count


def _in_string(text: str) -> int:
    found = 1 if _COLON_FIRST.match(text) else 0
    if '"' in text:
        found += len(_QUOTE_COLON.findall(text))
    return found


def _refuse_found(found: tuple[str, str] | None, path: str | None, line: int | None) -> None:
    """Refuse a key given twice (`found`: where, key), naming the object that holds it."""
    if found is not None:
        where, key = found
        inside = f"in {where}" if where else "in the top-level object"
        raise InputError(f"key {key!r} given twice {inside}", path=path, line=line,
                         expected=EXPECTED_ONCE)


_SURROGATE = re.compile(rb"\\u[dD][89abAB]|\\u[dD][c-fC-F]")


def _no_lone_surrogates(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_no_lone_surrogates(k) and _no_lone_surrogates(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_no_lone_surrogates(v) for v in value)
    return True


def loads(data: str | bytes, *, path: str | None = None, line: int | None = None,
          allow_nan: bool = False, what: str = "JSON") -> Any:
    """The value of one JSON document; InputError naming `path` (and `line`, for one line of a
    JSONL file) when it is not valid JSON or an object has a key twice. `what` says what the
    document should have been, for the message."""
    if allow_nan:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        try:
            value = json.loads(text, object_pairs_hook=_mark)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=path,
                             line=line if line is not None else exc.lineno,
                             expected=what) from None
        _refuse_found(_find(value), path, line)
        raw = text.encode("utf-8", "surrogatepass")
        if _SURROGATE.search(raw) and not _no_lone_surrogates(value):
            raise InputError("a string holds a lone UTF-16 surrogate escape", path=path,
                             line=line, expected="text that is valid Unicode")
        return value
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", path=path, line=line,
                         expected=what) from None
    _refuse_repeated(data, value, path, line)
    return value


def is_finite_number(value: Any) -> bool:
    """A JSON number that is neither a boolean, NaN nor an infinity."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))
