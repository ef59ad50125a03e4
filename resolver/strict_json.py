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

A large document that is a list of items (`[...]`, or `{"data": [...]}`), or JSON Lines, can be
read an item at a time (`loads_list`, `loads_lines`), with one long string value that several
items spell alike decoded once and shared: the same values, the same checks, less held at once.

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


# ---- a list of items read an item at a time --------------------------------------------------
# Rows that repeat one long context ({"data": [row, row]}, each row the 262K context repeated to
# 75 MB), read whole, are held three times over at the peak: the file, orjson's own copy of it
# and every row's decoded string (two bytes a character). Read an item at a time, each item is
# decoded alone, and its string under `shared` once for every item that spells it byte for byte
# alike: one string, made once, shared by the items. The scan below only finds where items and
# that string lie; orjson reads and checks every byte as a whole read does (the items, the
# shared strings, the top-level object without its list). A document of any other layout, or
# not valid, gives None, and the caller reads it whole, which names the error as it always has.
_BLANKS = re.compile(rb"[ \t\n\r]*")         # JSON's whitespace
_ASCII_BLANKS = re.compile(rb"\s*")           # what bytes.strip() strips: a blank line
# a string (quotes, and anything escaped, inside it), or a bracket
_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[{}\[\]]', re.DOTALL)
_SCALAR = re.compile(rb"[^ \t\n\r,\]}]+")
# Nesting far from orjson's limit (1024 levels), which counts from the top of the whole
# document: anything deeper is read whole, and fails or not as it always has.
_DEEP = 256


class _Whole(Exception):
    """Not of the layout read an item at a time, or not valid there: read the document whole."""


def _skip(data: bytes, at: int) -> int:
    return _BLANKS.match(data, at).end()


def _expect(data: bytes, at: int, token: bytes) -> int:
    if not data.startswith(token, at):
        raise _Whole
    return _skip(data, at + len(token))


def _string_end(data: bytes, at: int) -> int:
    """The end of the string whose opening quote is at `at`: the first quote after it that an
    even number of backslashes precedes."""
    end = at
    while True:
        end = data.find(b'"', end + 1)
        if end < 0:
            raise _Whole
        back = end
        while data[back - 1] == 0x5C:
            back -= 1
        if (end - back) % 2 == 0:
            return end + 1


def _value_end(data: bytes, at: int) -> int:
    """The end of the value starting at `at` (its brackets counted, its strings skipped)."""
    if at >= len(data):
        raise _Whole
    if data[at] == 0x22:
        return _string_end(data, at)
    if data[at] not in b"{[":
        found = _SCALAR.match(data, at)
        if found is None:
            raise _Whole
        return found.end()
    depth, at = 1, at + 1
    while depth:
        found = _TOKEN.search(data, at)
        if found is None:
            raise _Whole
        at = found.end()
        if at - found.start() == 1:          # a bracket; a string is skipped whole
            depth += 1 if data[at - 1] in b"{[" else -1
            if depth > _DEEP:
                raise _Whole
    return at


def _members(data: bytes, at: int, value_end=None
             ) -> tuple[list[tuple[int, int, int, int]], int]:
    """The members of the object whose `{` is at `at`, each (key start, key end, value start,
    value end), and the object's end. `value_end(key start, key end, value start)`, when
    given, finds the end of a value (and may read it on the way)."""
    out = []
    at = _skip(data, at + 1)
    if data.startswith(b"}", at):
        return out, at + 1
    while True:
        if not data.startswith(b'"', at):
            raise _Whole
        key_end = _string_end(data, at)
        value = _expect(data, _skip(data, key_end), b":")
        end = value_end(at, key_end, value) if value_end else _value_end(data, value)
        out.append((at, key_end, value, end))
        at = _skip(data, end)
        if data.startswith(b"}", at):
            return out, at + 1
        at = _expect(data, at, b",")


def _part(raw: bytes | memoryview) -> Any:
    """One part of the document, read and checked as `loads` reads a document."""
    try:
        return loads(bytes(raw))
    except (InputError, RecursionError):
        raise _Whole from None


class _Items:
    """Items of one document, their `shared` strings decoded once per spelling."""

    def __init__(self, data: bytes, shared: str) -> None:
        self.data, self.view = data, memoryview(data)
        self.name, self.key = shared, orjson.dumps(shared)
        self.strings: list[tuple[int, int, str]] = []     # (start, end, decoded)

    def item(self, at: int) -> tuple[Any, int]:
        """The item starting at `at`, and its end."""
        data, view = self.data, self.view
        if at >= len(data):
            raise _Whole
        if data[at] != 0x7B:
            end = _value_end(data, at)
            return _part(view[at:end]), end
        members, end = _members(data, at)
        spans = [(v, v_end) for k, k_end, v, v_end in members
                 if k_end - k == len(self.key) and data.startswith(self.key, k)]
        if len(spans) != 1 or data[spans[0][0]] != 0x22:
            return _part(view[at:end]), end
        start, stop = spans[0]
        text = next((t for s, e, t in self.strings
                     if e - s == stop - start and data.startswith(view[s:e], start)), None)
        if text is None:
            try:
                text = orjson.loads(view[start:stop])
            except orjson.JSONDecodeError:
                raise _Whole from None
            self.strings.append((start, stop, text))
        item = _part(b"".join((view[at:start], b'""', view[stop:end])))
        item[self.name] = text
        return item, end

    def list_at(self, at: int) -> tuple[list, int]:
        """The items of the list whose `[` is at `at`, and the list's end."""
        out: list = []
        at = _skip(self.data, at + 1)
        if self.data.startswith(b"]", at):
            return out, at + 1
        while True:
            item, end = self.item(at)
            out.append(item)
            at = _skip(self.data, end)
            if self.data.startswith(b"]", at):
                return out, at + 1
            at = _expect(self.data, at, b",")


def loads_list(data: bytes, *, key: str, shared: str) -> list | None:
    """The items of a document that is a list, or an object whose `key` holds one, read an item
    at a time, each object's string under `shared` decoded once per spelling and shared (the
    values `loads` gives, each item checked as it checks a document); None for a document of
    another layout or one that is not valid, which `loads` then reads whole and names."""
    items = _Items(data, shared)
    try:
        at = _skip(data, 0)
        if data.startswith(b"[", at):
            out, end = items.list_at(at)
        elif data.startswith(b"{", at):
            name, lists = orjson.dumps(key), []

            def value_end(k: int, k_end: int, value: int) -> int:
                # the list under `key` read as the object is scanned, not scanned twice
                if k_end - k == len(name) and data.startswith(name, k) and data[value] == 0x5B:
                    lists.append((value, *items.list_at(value)))
                    return lists[-1][2]
                return _value_end(data, value)

            _, end = _members(data, at, value_end)
            if len(lists) != 1:
                return None
            start, out, stop = lists[0]
            # the rest of the object, read and checked as a whole read would
            rest = _part(b"".join((items.view[at:start], b"[]", items.view[stop:end])))
            if not isinstance(rest, dict) or rest.get(key) != []:
                return None
        else:
            return None
        return out if _skip(data, end) == len(data) else None
    except _Whole:
        return None


def loads_lines(data: bytes, *, shared: str) -> list | None:
    """The items of JSON Lines, one a line (blank lines skipped), each object's string under
    `shared` decoded once per spelling and shared; None when a line is not one valid JSON
    value, for the caller to read line by line and name it."""
    items = _Items(data, shared)
    out = []
    at = 0
    try:
        while at <= len(data):
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            if _ASCII_BLANKS.match(data, at, end).end() != end:
                item, stop = items.item(_skip(data, at))
                if stop > end or _BLANKS.match(data, stop, end).end() != end:
                    return None
                out.append(item)
            at = end + 1
    except _Whole:
        return None
    return out
