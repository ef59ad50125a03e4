"""Fact lines -> `Fact` records, through the Lark grammar.

`parse_context` parses a whole haystack in one LALR pass (fast path). If any line fits no
template it parses line by line instead, so every bad line is reported with its number and
text; nothing is dropped silently.

The optional `lark-cython` plugin, when installed, makes the same parser about twice as fast
(per-token overhead is most of the parse time); without it the pure-Python Lark is used and the
results are identical (tests/test_facts.py checks both paths give the same facts).

Lark is imported only when a parser is built (`fact_parser`): a haystack read from the parse
cache needs these records, not the parser, and importing Lark is a sizeable part of such a
command's start-up."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from resolver.errors import InputError
from resolver.text import grammar

if TYPE_CHECKING:
    from lark import Lark
    from lark.exceptions import UnexpectedInput

HEADER = "Here is a list of facts:"
BOM = "\ufeff"
NOTE_BOM = "byte-order mark removed"
NOTE_CRLF = "CRLF line endings read as LF"
# The largest serial factres takes: the largest signed 64-bit integer, which every writer of its
# results (orjson, numpy, CP-SAT) holds exactly. A serial above it is refused at parse time,
# naming the line, rather than failing later in the parse cache or the run's output.
MAX_SERIAL = 2**63 - 1
# What a line may hold that prints as nothing or acts on a terminal: C0/C1 control characters
# (NUL, BEL, ESC: ANSI sequences), U+2028/U+2029 and the bidirectional controls (tab excepted:
# templates are matched on spaces, and a tab is visible as space). Such a line is read as
# written and noted; output escapes it (resolver.escape).
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069]")
# What the OBJECT terminal carries after the object itself: the final full stop is cut
# separately, after these, so an object's own dots survive ("Apple Inc." in "Apple Inc..").
_LINE_END = " \t\r\n"


@dataclass(frozen=True, slots=True)
class Fact:
    serial: int      # the number the haystack gives the fact; later serials supersede earlier
    subject: str     # verbatim, as written in the line
    relation: str    # canonical relation name (see relations.py)
    object: str      # verbatim; may hold commas and full stops ("Washington, D.C.")
    line: int        # 1-based line number in the context text (the header is line 1)
    text: str        # the line as written, without its line break


@dataclass(frozen=True, slots=True)
class UnparsedLine:
    line: int
    text: str
    reason: str


@dataclass(frozen=True)
class ParseResult:
    facts: tuple[Fact, ...]
    unparsed: tuple[UnparsedLine, ...]
    lines: int                    # non-empty lines seen, header included
    has_header: bool
    path: str | None = None
    blank_lines: int = 0
    notes: tuple[str, ...] = field(default=())   # input quirks handled (BOM, CRLF)


class FactBuilder:
    """Turns each `fact` alternative (aliased by relation name) into a `Fact` while parsing.

    Lark's embedded transformer: Lark looks a callback up by rule name and, failing that, calls
    `__default__`, so the class needs nothing of lark's `Transformer` (and this module no lark
    import until a parser is built). Not re-entrant: `parse_context` sets `lines` under a lock
    for each parse. Tokens are read through `.value` and `.line` only, which both Lark's and
    lark-cython's tokens have."""

    line_offset = 0

    def __init__(self) -> None:
        from lark import Tree  # lazily, with the parser (see the module docstring)
        self._tree = Tree
        self.lines: list[str] = []

    def __default__(self, data, children, meta):
        if data in ("start", "line") or data.startswith("_"):
            # Lark's inlined helper rules (the `(fact | _NL)*` loop) expect a Tree back.
            return self._tree(data, children, meta)
        serial, subject, obj = children
        line = serial.line + self.line_offset
        return Fact(int(serial.value[:-2]), subject.value, data,
                    obj.value.rstrip(_LINE_END)[:-1], line, self.lines[line - 1])


def _plugins() -> dict:
    try:
        import lark_cython
    except ImportError:
        return {}
    return lark_cython.plugins


@lru_cache(maxsize=None)
def fact_parser(fast: bool = True) -> Lark:
    """The grammar's LALR parser with a `FactBuilder` attached (facts built while parsing, no
    tree in between); `fast` uses lark-cython when it is installed."""
    from lark import Lark  # lazily: only a parse builds a parser (see the module docstring)
    return Lark(grammar.grammar_text(), parser="lalr", lexer="contextual",
                start=["start", "line"], transformer=FactBuilder(),
                propagate_positions=False, maybe_placeholders=False,
                _plugins=_plugins() if fast else {})


def accelerated() -> bool:
    """True when parsing goes through lark-cython."""
    return bool(_plugins())


_lock = threading.Lock()


def _facts_of(tree) -> list[Fact]:
    return [c for c in tree.children if isinstance(c, Fact)]


def normalise(text: str, notes: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    """Drop a leading byte-order mark and read CRLF as LF; notes say what was handled, and
    which lines hold control characters (read as written, escaped on output)."""
    found = list(notes)
    if text.startswith(BOM):
        text = text[1:]
        if NOTE_BOM not in found:
            found.append(NOTE_BOM)
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
        if NOTE_CRLF not in found:
            found.append(NOTE_CRLF)
    hidden = control_note(text)
    if hidden and hidden not in found:
        found.append(hidden)
    return text, tuple(found)


def control_note(text: str) -> str | None:
    """The note for a text whose lines hold control characters (`_HIDDEN`), naming how many
    lines and the first; None when there are none."""
    first = _HIDDEN.search(text)
    if first is None:
        return None
    lines, line, at = set(), 1, 0
    for match in _HIDDEN.finditer(text):           # counted as it goes: linear in the text
        line += text.count("\n", at, match.start())
        at = match.start()
        lines.add(line)
    return (f"{len(lines)} line(s) hold control characters (NUL, BEL, ANSI escapes, U+2028, "
            f"...; the first: line {min(lines)}, U+{ord(first[0]):04X}): read as written, "
            "shown escaped")


def parse_context(text: str, path: str | None = None, notes: tuple[str, ...] = (),
                  *, fast: bool = True) -> ParseResult:
    """Parse a haystack context (header optional). Never raises for lines that fit no template:
    they come back in `ParseResult.unparsed`. Raises InputError for empty input and for duplicate
    or out-of-order serials. A BOM and CRLF line endings are handled and noted."""
    text, notes = normalise(text, notes)
    if not text.strip():
        raise InputError("empty input: no header and no fact lines", path=path,
                         expected='"Here is a list of facts:" and numbered fact lines')
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    with _lock:
        builder.lines, builder.line_offset = lines, 0
        try:
            facts = _facts_of(parser.parse(text, start="start"))
            unparsed: list[UnparsedLine] = []
        except UnexpectedInput:
            facts, unparsed = _parse_line_by_line(parser, builder, lines)
        finally:
            builder.lines, builder.line_offset = [], 0
    has_header = bool(lines) and lines[0].strip() == HEADER
    blank = sum(1 for s in lines if not s.strip())
    _check_serials(facts, path)
    return ParseResult(tuple(facts), tuple(unparsed), len(lines) - blank, has_header, path,
                       blank, notes)


def parse_line(raw: str, fast: bool = True) -> Fact:
    """One fact line ("12. Paris is located in the country of France."), as line 1.
    Raises InputError naming why it fits no template."""
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    with _lock:
        builder.lines, builder.line_offset = [raw], 0
        try:
            fact = _facts_of(parser.parse(raw, start="line"))[0]
            _check_serials([fact], None)
            return fact
        except UnexpectedInput as exc:
            raise InputError(_reason(raw, exc), line=1, context=raw,
                             expected="a fact line in one of the MQuAKE templates") from None
        finally:
            builder.lines = []


class _Numbered:
    """Lines seen through their 1-based numbers in a longer text: `FactBuilder` reads a fact's
    text as `lines[number - 1]`, and the pieces a stream parses start at `first_line`."""

    __slots__ = ("lines", "shift")

    def __init__(self, lines: list[str], first_line: int) -> None:
        self.lines, self.shift = lines, first_line - 1

    def __getitem__(self, index: int) -> str:
        return self.lines[index - self.shift]


def parse_fact_lines(lines: list[str], first_line: int = 1, *, fast: bool = True
                     ) -> tuple[list[Fact], list[UnparsedLine]]:
    """Fact lines without a header or blank lines (each one fact as written, no line break),
    numbered from `first_line`: the streaming entry point (`resolver.memory` cuts a stream
    into such pieces). One LALR pass over them all; if one fits no template, line by line, so
    every bad line comes back with its reason, in the words `parse_context` uses. Serials are
    not checked here: a stream decides what a repeated or out-of-order serial means."""
    if not lines:
        return [], []
    found = parse_fact_block(lines, first_line, fast=fast)
    if found is not None:
        return found, []
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    facts, unparsed = [], []
    with _lock:
        builder.lines = _Numbered(lines, first_line)
        try:
            for number, raw in enumerate(lines, start=first_line):
                builder.line_offset = number - 1
                try:
                    facts.extend(_facts_of(parser.parse(raw, start="line")))
                except UnexpectedInput as exc:
                    unparsed.append(UnparsedLine(number, raw, _reason(raw, exc)))
        finally:
            builder.lines, builder.line_offset = [], 0
    return facts, unparsed


def parse_fact_block(lines: list[str], first_line: int = 1, *, fast: bool = True
                     ) -> list[Fact] | None:
    """`parse_fact_lines` in one LALR pass only: the facts, or None when some line fits no
    template (the caller then cuts the text otherwise, or asks `parse_fact_lines` why)."""
    if not lines:
        return []
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    with _lock:
        builder.lines, builder.line_offset = _Numbered(lines, first_line), first_line - 1
        try:
            return _facts_of(parser.parse("\n".join(lines), start="start"))
        except UnexpectedInput:
            return None
        finally:
            builder.lines, builder.line_offset = [], 0


def _parse_line_by_line(parser, builder, lines):
    from lark.exceptions import UnexpectedInput  # loaded with the parser
    facts, unparsed = [], []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        if number == 1 and raw.strip() == HEADER:
            continue
        builder.line_offset = number - 1
        try:
            tree = parser.parse(raw, start="line")
        except UnexpectedInput as exc:
            unparsed.append(UnparsedLine(number, raw, _reason(raw, exc)))
            continue
        facts.extend(_facts_of(tree))
    builder.line_offset = 0
    return facts, unparsed


def _reason(raw: str, exc: UnexpectedInput) -> str:
    head = raw.split(". ", 1)
    if not head[0].strip().isdigit():
        if raw.strip() == HEADER:
            return "header not on the first line"
        return 'no serial: expected "<number>. " at the start of the line'
    if not raw.rstrip().endswith("."):
        return "no final full stop"
    return "fits no fact template"


def _check_serials(facts: list[Fact], path: str | None) -> None:
    seen: dict[int, Fact] = {}
    previous: Fact | None = None
    for fact in facts:
        if fact.serial > MAX_SERIAL:
            raise InputError(f"serial {fact.serial} is too large", path=path, line=fact.line,
                             context=fact.text, expected=f"a serial of at most {MAX_SERIAL} "
                             "(2^63 - 1)")
        if fact.serial in seen:
            first = seen[fact.serial]
            raise InputError(f"duplicate serial {fact.serial}: also on line {first.line}",
                             path=path, line=fact.line, context=fact.text,
                             expected="each serial once")
        if previous is not None and fact.serial < previous.serial:
            raise InputError(f"serial {fact.serial} is out of order: line {previous.line} has "
                             f"serial {previous.serial}", path=path, line=fact.line,
                             context=fact.text, expected="serials in increasing order")
        seen[fact.serial] = fact
        previous = fact
