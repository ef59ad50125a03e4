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
from bisect import bisect_left
from itertools import accumulate, repeat
from operator import add
from array import array
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from resolver.errors import InputError
from resolver.text import grammar, segment
from resolver.text.frozen import Frozen
from resolver.text.segment import MAX_SERIAL

if TYPE_CHECKING:
    from lark import Lark
    from lark.exceptions import UnexpectedInput

HEADER = "Here is a list of facts:"
BOM = "\ufeff"
NOTE_BOM = "byte-order mark removed"
NOTE_CRLF = "CRLF line endings read as LF"
# A line end: LF after any carriage returns. "\r\r\n" is a CRLF file converted a second time
# (verify-e F02): its lines end there, as `factres parse`, the memory and the server read them;
# a carriage return followed by anything else is a line break of its own, reported (E07).
_CRLF = re.compile(r"\r+\n")
# The names of the line breaks other than LF (segment.OTHER_BREAK), for a report.
_BREAK_NAMES = {"\r": "carriage return without a line feed", "\x0b": "vertical tab",
                "\x0c": "form feed", "\x1c": "file separator", "\x1d": "group separator",
                "\x1e": "record separator", "\x85": "next line", "\u2028": "line separator",
                "\u2029": "paragraph separator"}
# MAX_SERIAL (segment.py): a serial above it is refused at parse time, naming the line, rather
# than failing later in the parse cache or the run's output.
# Python refuses to read (or write) an integer of more digits than this
# (`sys.get_int_max_str_digits`); a serial longer than that is never converted.
_MAX_DIGITS = 4300
# A serial longer than this is named by its length in messages, not written out.
_SHOWN_DIGITS = 30


class HugeSerial(int):
    """The serial of a line whose number has too many digits to read (more than Python converts):
    it is above MAX_SERIAL, so it is refused wherever a serial is checked, and it remembers how
    many digits it had, for the message."""
    digits: int

    def __new__(cls, digits: int) -> HugeSerial:
        serial = super().__new__(cls, MAX_SERIAL + 1)
        serial.digits = digits
        return serial

    def __reduce__(self):
        return (HugeSerial, (self.digits,))


def read_serial(digits: str) -> int:
    """A serial's digits as a number; a `HugeSerial` when they are too many to convert (a
    5,000-digit serial is refused as too large, never a ValueError)."""
    if len(digits) > _MAX_DIGITS:
        significant = digits.lstrip("0")
        if len(significant) > _MAX_DIGITS:
            return HugeSerial(len(digits))
        digits = significant or "0"
    return int(digits)


def serial_words(serial: int) -> str:
    """A serial for a message: "serial 12", or "a serial of 5,000 digits" when it is too long
    to show (the line it came from is shown cut to 200 characters anyway)."""
    if isinstance(serial, HugeSerial):
        return f"a serial of {serial.digits:,} digits"
    if serial > 10 ** _SHOWN_DIGITS:
        return f"a serial of {len(str(serial)):,} digits"
    return f"serial {serial}"


def too_large(serial: int) -> str:
    """The words for a serial above MAX_SERIAL (the same in `parse` and the memory)."""
    return f"{serial_words(serial)} is too large"


TOO_LARGE_EXPECTED = f"a serial of at most {MAX_SERIAL} (2^63 - 1)"
# What a line may hold that prints as nothing or acts on a terminal: C0/C1 control characters
# (NUL, BEL, ESC: ANSI sequences) and the bidirectional controls (tab excepted: templates are
# matched on spaces, and a tab is visible as space), and the invisible format characters:
# zero-width space, joiners and word joiner, invisible operators, the soft hyphen, the Mongolian
# vowel separator and a byte-order mark inside the text ("Fr\u200bance" prints as "France" and
# is another name). Such a line is read as written and noted; output escapes it
# (resolver.escape). The line breaks other than LF (CR, VT, FF, FS, GS, RS, NEL, U+2028, U+2029:
# segment.OTHER_BREAK) are not among them: a line holding one is reported (`break_reason`), and
# a carriage return has a note of its own (`cr_note`).
_CR = re.compile("\r")
_HIDDEN = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\u061c\u200e\u200f"
                     "\u202a-\u202e\u2066-\u2069"
                     "\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")
# What the OBJECT terminal carries after the object itself: the final full stop is cut
# separately, after these, so an object's own dots survive ("Apple Inc." in "Apple Inc..").
_LINE_END = " \t\r\n"


class Lines:
    """The lines of one text, cut out when asked for, and the serial of the fact on each line:
    what the facts of one parse share (`Fact.text`, `Fact.serial`), so a fact costs an offset
    and an array slot instead of a string and a number of its own (the context text is kept
    anyway)."""
    __slots__ = ("_text", "_starts", "_serials", "_big", "_shift")

    def __init__(self, text: str, parts: list[str] | None = None, first_line: int = 1) -> None:
        """`parts`: `text.split("\n")`, when the caller has it already. `first_line`: the number
        of the text's first line in a longer text (a stream's pieces, `parse_fact_lines`); the
        facts' `line` counts in that longer text, and index `line - first_line` here."""
        if parts is None:
            parts = text.split("\n")
        # Offsets fit 4 bytes below 4 GB of text. Each line starts one past the previous
        # line's end (its line break); the last entry is one past the text's end.
        starts = array("I" if len(text) < 2 ** 32 - 2 else "q")
        starts.extend(accumulate(map(add, map(len, parts), repeat(1)), initial=0))
        self._text, self._starts = text, starts
        self._serials = array("i", bytes(4 * (len(starts) - 1)))
        self._big: dict[int, int] = {}       # line index -> a serial past 64 bits
        self._shift = first_line - 1

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, index: int) -> str:
        """Line `index + 1` (0-based, as in `text.split("\n")`, counted from line 1 of the longer
        text when `first_line` is given), without its line break."""
        starts = self._starts
        index -= self._shift
        if index < 0:
            index += len(starts) - 1
        if not 0 <= index < len(starts) - 1:
            raise IndexError(index)
        return self._text[starts[index]:starts[index + 1] - 1]

    def _put_serial(self, index: int, serial: int) -> None:
        index -= self._shift
        try:
            self._serials[index] = serial
        except OverflowError:
            self._serials[index] = -1
            self._big[index] = serial

    def _serial(self, index: int) -> int:
        index -= self._shift
        serial = self._serials[index]
        return self._big[index] if serial == -1 and index in self._big else serial


_set = object.__setattr__
_FACT_FIELDS = ("serial", "subject", "relation", "object", "line", "text")


class Fact(Frozen):
    """One fact line, read. Immutable; equal when every field is equal (as a frozen dataclass).

    Fields:
        serial    the number the haystack gives the fact; later serials supersede earlier
        subject   verbatim, as written in the line
        relation  canonical relation name (see relations.py)
        object    verbatim; may hold commas and full stops ("Washington, D.C.")
        line      1-based line number in the context text (the header is line 1)
        text      the line as written, without its line break

    `text` may be given as the `Lines` of the context, which then holds the fact's line and
    its serial (one fact per line): a store of a million facts keeps one text and one array,
    not a million line strings and numbers besides it."""
    __slots__ = ("subject", "relation", "object", "line", "_source")
    __match_args__ = _FIELDS = _FACT_FIELDS

    def __init__(self, serial: int, subject: str, relation: str, object: str, line: int,
                 text: str | Lines) -> None:
        # `object` is a field name (the parameter shadows the builtin): slots are set
        # through `_set`, the builtin's __setattr__ taken at import.
        if text.__class__ is Lines:
            try:
                text._serials[line - 1 - text._shift] = serial
            except OverflowError:
                text._put_serial(line - 1, serial)
            _set(self, "_source", text)
        else:
            _set(self, "_source", (serial, text))
        _set(self, "subject", subject)
        _set(self, "relation", relation)
        _set(self, "object", object)
        _set(self, "line", line)

    @property
    def serial(self) -> int:
        source = self._source
        if source.__class__ is tuple:
            return source[0]
        return source._serial(self.line - 1)

    @property
    def text(self) -> str:
        source = self._source
        if source.__class__ is tuple:
            return source[1]
        return source[self.line - 1]

    def _fields(self) -> tuple:
        return (self.serial, self.subject, self.relation, self.object, self.line, self.text)


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
    # Lines that held more than one fact ("0. ... Apple. 1. ... Google."), read piece by
    # piece (segment.py): their facts and unparsed pieces carry the piece's own text.
    several: tuple[int, ...] = ()
    # The correction lines of the context, each with what it did to the store
    # (`resolver.store.operations.read_context`; never cached: read again on each load).
    corrections: tuple = ()


def several_note(lines: tuple[int, ...]) -> str:
    """The note of a parse whose lines held several facts each (`ParseResult.several`)."""
    return (f"{len(lines)} line(s) hold more than one numbered fact (the first: line "
            f"{lines[0]}): each fact read on its own, numbered with its line")


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
        self.lines: Lines | list[str] = []
        # Names recur (an entity is named by every fact about it): one string per name.
        self.names: dict[str, str] = {}

    def __default__(self, data, children, meta):
        if data in ("start", "line") or data.startswith("_"):
            # Lark's inlined helper rules (the `(fact | _NL)*` loop) expect a Tree back.
            return self._tree(data, children, meta)
        serial, subject, obj = children
        names = self.names
        subject = subject.value
        subject = names.setdefault(subject, subject)
        obj = obj.value.rstrip(_LINE_END)[:-1]
        obj = names.setdefault(obj, obj)
        return Fact(read_serial(serial.value[:-2]), subject, data, obj,
                    serial.line + self.line_offset,
                    self.lines)


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
    """Drop a leading byte-order mark and read CRLF as LF; notes say what was handled, which
    lines hold a carriage return alone (no line end: `cr_note`) and which hold control
    characters (read as written, escaped on output)."""
    found = list(notes)
    if text.startswith(BOM):
        text = text[1:]
        if NOTE_BOM not in found:
            found.append(NOTE_BOM)
    if "\r" in text and "\r\n" in text:        # (a lone "\r" is scanned for much faster)
        text = crlf_as_lf(text)
        if NOTE_CRLF not in found:
            found.append(NOTE_CRLF)
    for note in (cr_note(text), control_note(text)):
        if note and note not in found:
            found.append(note)
    return text, tuple(found)


def crlf_as_lf(text: str) -> str:
    """The text with each line end read as LF: CRLF, or LF after several carriage returns
    (`_CRLF`)."""
    return _CRLF.sub("\n", text) if "\r" in text and "\r\n" in text else text


def _lines_holding(pattern: re.Pattern, text: str) -> tuple[int, int, re.Match] | None:
    """(how many lines hold a match of `pattern`, the first such line, the first match), None
    when none does; counted as it goes, linear in the text."""
    first = pattern.search(text)
    if first is None:
        return None
    lines, line, at = set(), 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", at, match.start())
        at = match.start()
        lines.add(line)
    return len(lines), min(lines), first


def cr_note(text: str) -> str | None:
    """The note for a text (CRLF already read as LF) holding carriage returns without a line
    feed, a CR-only file's line endings among them: they end no line here, so a line holding
    one is reported (`break_reason`); None when there are none."""
    found = _lines_holding(_CR, text) if "\r" in text else None
    if found is None:
        return None
    count, first, _ = found
    return (f"CR line endings (a carriage return without a line feed) on {count} line(s), the "
            f"first line {first}: a CR alone ends no line (lines end at LF or CRLF), so those "
            "lines are reported")


def break_reason(text: str) -> str | None:
    """Why a line (or a piece of one) holding a line break other than LF is no fact line, the
    same words in `factres parse` and the memory; None when it holds none. Such a line is
    reported whatever the grammar would make of it: "... Apple.\\r1. Tim Cook is employed by
    Google." would read as one fact about "Tim Cook is employed by Apple.\\r1. Tim Cook"."""
    found = segment.OTHER_BREAK.search(text)
    if found is None:
        return None
    char = found.group()
    return (f"line break U+{ord(char):04X} ({_BREAK_NAMES[char]}) at column {found.start() + 1}: "
            "lines end at LF or CRLF")


# The ASCII characters `_HIDDEN` does not match. Taken out of a text's UTF-8 bytes, they leave its
# other characters still UTF-8 (no byte of a character of several bytes is below 0x80), few
# in a context: `_HIDDEN` is matched against those instead of against every character (a
# regex over a character class steps through the text a character at a time).
_SHOWN_ASCII = bytes(b for b in range(0x80) if not _HIDDEN.match(chr(b)))
_SCAN = 1 << 20


def _may_hold_hidden(text: str) -> bool:
    """Whether the text holds a character of `_HIDDEN` (exact, and faster than searching the
    text itself), read a MiB at a time."""
    for at in range(0, len(text), _SCAN):
        rest = text[at:at + _SCAN].encode("utf-8", "surrogatepass").translate(None, _SHOWN_ASCII)
        if rest and _HIDDEN.search(rest.decode("utf-8", "surrogatepass")):
            return True
    return False


def control_note(text: str) -> str | None:
    """The note for a text whose lines hold control characters (`_HIDDEN`), naming how many
    lines and the first; None when there are none."""
    found = _lines_holding(_HIDDEN, text) if _may_hold_hidden(text) else None
    if found is None:
        return None
    count, line, first = found
    return (f"{count} line(s) hold control characters (NUL, BEL, ANSI escapes, zero-width "
            f"spaces, ...; the first: line {line}, U+{ord(first[0]):04X}): read as written, "
            "shown escaped")


def parse_context(text: str, path: str | None = None, notes: tuple[str, ...] = (),
                  *, fast: bool = True) -> ParseResult:
    """Parse a haystack context (header optional). Never raises for lines that fit no template:
    they come back in `ParseResult.unparsed`. Raises InputError for empty input and for duplicate
    or out-of-order serials. A BOM and CRLF line endings are handled and noted."""
    text, notes = normalise(text, notes)
    return parse_normalised(text, path, notes, fast=fast)


def parse_normalised(text: str, path: str | None = None, notes: tuple[str, ...] = (),
                     *, fast: bool = True) -> ParseResult:
    """`parse_context` of a text `normalise` has read already, with the notes it gave (the
    parse cache normalises before it looks the text up)."""
    if not text.strip():
        raise InputError("empty input: no header and no fact lines", path=path,
                         expected='"Here is a list of facts:" and numbered fact lines')
    lines = text.split("\n")
    source = Lines(text, lines)
    if lines and lines[-1] == "":
        lines.pop()
    count = len(lines)
    has_header = bool(lines) and lines[0].strip() == HEADER
    blank = sum(1 for s in lines if not s.strip())
    del lines                  # the facts cut their lines from `source`, as they are read
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    with _lock:
        builder.lines, builder.line_offset, builder.names = source, 0, {}
        try:
            facts = _facts_of(parser.parse(text, start="start"))
            unparsed: list[UnparsedLine] = []
        except UnexpectedInput:
            facts, unparsed = _parse_line_by_line(parser, builder, source, count)
        finally:
            builder.lines, builder.line_offset, builder.names = [], 0, {}
    if segment.OTHER_BREAK.search(text):
        facts, unparsed = _broken_lines(source, facts, unparsed, has_header)
    facts, unparsed, several = _split_lines(source, text, facts, unparsed)
    if several:
        notes += (several_note(several),)
    try:
        _check_serials(facts, path)
    except InputError:
        # A correction line with a serial of its own ("5. The report that ... was an
        # error.") reads as a fact too; it is no fact (store/operations.read_context takes it
        # out), so its serial is not one of the facts' (checked again without such lines).
        from resolver.text.cues import candidate_lines, cued
        lines = source
        cues = {i + 1 for i in candidate_lines(text) if cued(lines[i])}
        if not cues:
            raise
        _check_serials([f for f in facts if f.line not in cues], path)
    return ParseResult(tuple(facts), tuple(unparsed), count - blank, has_header, path,
                       blank, notes, several)


def reads_as_fact(text: str) -> bool:
    """Whether `text` (one piece of a line) reads as one fact: what `segment.split_line` asks."""
    text = text.strip(segment.BLANKS)
    return bool(text) and "\n" not in text and parse_fact_block([text]) is not None


def _broken_lines(source: Lines, facts: list[Fact], unparsed: list[UnparsedLine],
                  has_header: bool) -> tuple[list[Fact], list[UnparsedLine]]:
    """The parse with every line that holds a line break other than LF reported
    (`break_reason`), whatever the grammar made of it: lines end at LF or CRLF only, as the
    memory reads them. Blank lines (white space only, a form feed alone) and the header stay
    what they were."""
    broken = {}
    for index in range(len(source)):
        raw = source[index]
        if raw.strip() and not (index == 0 and has_header):
            reason = break_reason(raw)
            if reason is not None:
                broken[index + 1] = UnparsedLine(index + 1, raw, reason)
    if not broken:
        return facts, unparsed
    kept = [u for u in unparsed if u.line not in broken]
    return ([f for f in facts if f.line not in broken],
            sorted(kept + list(broken.values()), key=_line_of))


def _split_lines(source: Lines, text: str, facts: list[Fact], unparsed: list[UnparsedLine]
                 ) -> tuple[list[Fact], list[UnparsedLine], tuple[int, ...]]:
    """The parse with each line that holds several facts read piece by piece, as the memory
    cuts it (`segment.split_line`, given the serial before the line): the line's one reading
    (a fact whose subject runs over the first facts, or an unparsed line) is replaced by its
    pieces' facts and unparsed pieces, each with the line's number and the piece's text.

    Only a line the cheap pre-check finds (a full stop, then a serial: one regex pass over the
    text, about 1% of the 262K context's parse) goes through the segmenter; the official
    contexts have two such hits, "7373. 1. FFC Frankfurt is ...", both at the full stop of the
    line's own serial, which is never a cut: they are passed over at once."""
    numbers, line, at = [], 1, 0
    for m in segment.MAYBE_SEVERAL.finditer(text):
        line += text.count("\n", at, m.start())
        at = m.start()
        begin = text.rfind("\n", 0, m.start()) + 1
        if text[begin:m.start()].isdigit():
            continue         # the full stop of the line's own serial ("7373. 1. FFC ..."): no cut
        if not numbers or numbers[-1] != line:
            numbers.append(line)
    if not numbers:
        return facts, unparsed, ()
    out_facts: list[Fact] = []
    out_unparsed: list[UnparsedLine] = []
    several: list[int] = []
    f = u = 0
    for number in numbers:
        end = bisect_left(facts, number, f, key=_line_of)
        out_facts += facts[f:end]
        f = end
        end = bisect_left(unparsed, number, u, key=_line_of)
        out_unparsed += unparsed[u:end]
        u = end
        previous = out_facts[-1].serial if out_facts else None
        pieces, _, _ = segment.split_line(source[number - 1], True, previous, reads_as_fact)
        if len(pieces) < 2:
            continue
        f = bisect_left(facts, number + 1, f, key=_line_of)
        u = bisect_left(unparsed, number + 1, u, key=_line_of)
        found, bad = parse_fact_lines(pieces)
        # Each fact keeps its own (serial, text): the line's slot in `Lines` holds one serial.
        out_facts += [Fact(x.serial, x.subject, x.relation, x.object, number, x.text)
                      for x in found]
        out_unparsed += [UnparsedLine(number, x.text, x.reason) for x in bad]
        several.append(number)
    out_facts += facts[f:]
    out_unparsed += unparsed[u:]
    return out_facts, out_unparsed, tuple(several)


def _line_of(item: Fact | UnparsedLine) -> int:
    return item.line


def parse_line(raw: str, fast: bool = True) -> Fact:
    """One fact line ("12. Paris is located in the country of France."), as line 1.
    Raises InputError naming why it fits no template."""
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    with _lock:
        builder.lines, builder.line_offset, builder.names = Lines(raw), 0, {}
        try:
            reason = break_reason(raw)
            if reason is not None:
                raise InputError(reason, line=1, context=raw,
                                 expected="a fact line in one of the MQuAKE templates")
            fact = _facts_of(parser.parse(raw, start="line"))[0]
            _check_serials([fact], None)
            return fact
        except UnexpectedInput as exc:
            raise InputError(_reason(raw, exc), line=1, context=raw,
                             expected="a fact line in one of the MQuAKE templates") from None
        finally:
            builder.lines, builder.names = [], {}


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
        builder.lines, builder.names = Lines("\n".join(lines), lines, first_line), {}
        try:
            for number, raw in enumerate(lines, start=first_line):
                builder.line_offset = number - 1
                reason = break_reason(raw)
                if reason is not None:
                    unparsed.append(UnparsedLine(number, raw, reason))
                    continue
                try:
                    facts.extend(_facts_of(parser.parse(raw, start="line")))
                except UnexpectedInput as exc:
                    unparsed.append(UnparsedLine(number, raw, _reason(raw, exc)))
        finally:
            builder.lines, builder.line_offset, builder.names = [], 0, {}
    return facts, unparsed


def parse_fact_block(lines: list[str], first_line: int = 1, *, fast: bool = True
                     ) -> list[Fact] | None:
    """`parse_fact_lines` in one LALR pass only: the facts, one per line, or None when some
    line is no fact (it fits no template, holds a line break other than LF, or is the header:
    the caller then cuts the text otherwise, or asks `parse_fact_lines` why). The facts share
    one `Lines` of the block, as a parse's facts share the context's."""
    if not lines:
        return []
    text = "\n".join(lines)
    if segment.OTHER_BREAK.search(text):
        return None
    parser = fact_parser(fast)
    from lark.exceptions import UnexpectedInput  # loaded by the parser above
    builder: FactBuilder = parser.options.transformer
    with _lock:
        builder.lines, builder.line_offset = Lines(text, lines, first_line), first_line - 1
        builder.names = {}
        try:
            facts = _facts_of(parser.parse(text, start="start"))
        except UnexpectedInput:
            return None
        finally:
            builder.lines, builder.line_offset, builder.names = [], 0, {}
    # A line the grammar takes without a fact (the header, which a stream's pieces may hold
    # when a frame cut it in two) is no fact line: one fact per line, or None.
    return facts if len(facts) == len(lines) else None


def _parse_line_by_line(parser, builder, source: Lines, count: int):
    from lark.exceptions import UnexpectedInput  # loaded with the parser
    facts, unparsed = [], []
    for number in range(1, count + 1):
        raw = source[number - 1]
        if not raw.strip():
            continue
        if number == 1 and raw.strip() == HEADER:
            continue
        builder.line_offset = number - 1
        reason = break_reason(raw)
        if reason is not None:
            unparsed.append(UnparsedLine(number, raw, reason))
            continue
        try:
            tree = parser.parse(raw, start="line")
        except UnexpectedInput as exc:
            unparsed.append(UnparsedLine(number, raw, _reason(raw, exc)))
            continue
        facts.extend(_facts_of(tree))
    builder.line_offset = 0
    return facts, unparsed


def _reason(raw: str, exc: UnexpectedInput) -> str:
    broken = break_reason(raw)
    if broken is not None:
        return broken
    head = raw.split(". ", 1)
    if not head[0].strip().isdigit():
        if raw.strip() == HEADER:
            return "header not on the first line"
        return 'no serial: expected "<number>. " at the start of the line'
    if not raw.rstrip().endswith("."):
        return "no final full stop"
    return "fits no fact template"


def _check_serials(facts: list[Fact], path: str | None) -> None:
    # Serials so far increase strictly, so the first that does not is the first error: a
    # duplicate when an earlier fact has it (found by bisection in the increasing prefix),
    # else out of order. No table of every serial: a million facts would need one.
    previous: Fact | None = None
    last = -1
    for at, fact in enumerate(facts):
        serial = fact.serial
        if serial > MAX_SERIAL:
            raise InputError(too_large(serial), path=path, line=fact.line,
                             context=fact.text, expected=TOO_LARGE_EXPECTED)
        if previous is not None and serial <= last:
            low = bisect_left(facts, serial, 0, at, key=_serial_of)
            if low < at and facts[low].serial == serial:
                first = facts[low]
                raise InputError(f"duplicate serial {serial}: also on line {first.line}",
                                 path=path, line=fact.line, context=fact.text,
                                 expected="each serial once")
            raise InputError(f"serial {serial} is out of order: line {previous.line} has "
                             f"serial {last}", path=path, line=fact.line,
                             context=fact.text, expected="serials in increasing order")
        previous, last = fact, serial


def _serial_of(fact: Fact) -> int:
    return fact.serial
