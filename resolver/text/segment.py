"""Where the facts of one line begin: a line may hold several numbered facts ("0. Tim Cook is
employed by Apple. 1. Tim Cook is employed by Google.", the layout of a harness's chunk). The
file reader (`facts.parse_context`) and the streaming reader (`resolver.memory.stream`) both cut
such a line here, so `factres parse`/`run` and `Memory` read it alike.

A fact ends before "<serial>. " when a full stop and blanks come first and the serial is the
next one (the current piece's serial + 1). Any other such "N. " ("7373. 1. FFC Frankfurt is
...", a serial out of order) is a boundary only when the grammar reads both sides as facts, or
when the text before it has no serial of its own ("junk text. 2. ..." is no fact whatever
follows: it is a piece alone). "Czech 2. Liga" is no candidate at all (no full stop before it).

Two glued forms, what consecutive unframed harness chunks give (the chunker drops the blank
between two chunks), are boundaries under stricter terms, since they may also be part of a name:
- a full stop glued to the serial ("... by Google.2. Tim Cook is ..."): when the serial is above
  the current one (serials only grow) and the text from it reads as a fact (and the text before
  it does, or has no serial);
- a serial glued to its fact ("... Morrison. 340.Stojko Vranković plays ..."): only when the
  serial is exactly the next one and the text from it reads as a fact once the blank is put
  back; the piece then holds that blank ("340. Stojko Vranković plays ...").
A decimal ("3.14. ", "v2.0.1") is no candidate: a candidate has a blank on one side at least.

Line breaks other than LF (`OTHER_BREAK`) are no boundary of any kind, and a piece is stripped of
blanks (space, tab) only: a piece holding such a break stays whole, and the grammar's callers
report it (`facts.break_reason`), so no fact is ever read across one.

Pure text: whether a piece reads as a fact is asked of the caller (`fits`), so this module
imports nothing of the parser (which imports it)."""
from __future__ import annotations

import re
from typing import Callable

# The largest serial factres takes: the largest signed 64-bit integer, which every writer of its
# results (orjson, numpy, CP-SAT) holds exactly (facts.MAX_SERIAL; kept here, below the parser).
MAX_SERIAL = 2**63 - 1
# A number past this many digits is above MAX_SERIAL however it goes on: it is not converted.
_SERIAL_DIGITS = len(str(MAX_SERIAL))

# Line breaks other than LF: a carriage return alone (CRLF is read as LF before anything is cut),
# VT, FF, the file, group and record separators, NEL, LS and PS, every break `str.splitlines`
# knows but LF. Lines end at LF (or CRLF) only: a line holding one of these is no fact line.
OTHER_BREAK = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# What a piece is stripped of at its edges: blanks, never a break (`str.strip` would take both).
BLANKS = " \t"

# A piece's own serial, at its start.
SERIAL = re.compile(r"(\d+)\. ")
# After a full stop: blanks (group 1), a serial (group 2), its full stop and a blank (group 3)
# or a non-blank (no group 3). Zero-width, so a candidate never hides the next one ("Apple. 1.
# 2. X" has two).
_CANDIDATE = re.compile(r"(?<=\.)(?=([ \t]*)(\d+)\.(?:( )|(?=\S)))")
# The cheap test of a whole text: may some line hold a second fact? (a full stop, then a serial
# with a blank on one side at least). Lines it does not find are one piece each.
MAYBE_SEVERAL = re.compile(r"\.(?:[ \t]*\d+\. |[ \t]+\d+\.\S)")
# The glued forms alone: a text holding none of them and no "N. " after a full stop is cut by
# the spaced rule only (the memory's fast path).
GLUED = re.compile(r"\.(?:\d+\. |[ \t]+\d+\.\S)")


def number(digits: str) -> int:
    """A serial's digits as a number for the reader's decisions; any number above MAX_SERIAL
    reads as MAX_SERIAL + 1 (never the next serial, and never a ValueError for a 5,000-digit
    one)."""
    digits = digits.lstrip("0") or "0"
    if len(digits) > _SERIAL_DIGITS:
        return MAX_SERIAL + 1
    return min(int(digits), MAX_SERIAL + 1)


def split_line(line: str, terminated: bool, previous: int | None,
               fits: Callable[[str], bool]) -> tuple[list[str], str, int | None]:
    """The pieces of one line (no line break in it), each stripped of blanks, in order (a piece
    of white space only, a form feed alone, is none: a blank line); the text left
    undecided (an unterminated line's last piece, or the text from a candidate whose sides
    cannot be read yet: "" when `terminated`); and the last serial seen. `previous`: the serial
    before the line. `fits(text)`: whether the grammar reads `text` as one fact."""
    pieces: list[str] = []
    start, fix = 0, None              # the current piece's start; where its blank goes back
    own = SERIAL.match(line.lstrip(BLANKS))
    current = number(own.group(1)) if own else None
    candidates = [m for m in _CANDIDATE.finditer(line)
                  if m.group(1) or m.group(3) is not None]

    def piece(begin: int, blank: int | None, end: int | None = None) -> str:
        if blank is None:
            return line[begin:end]
        return line[begin:blank] + " " + line[blank:end]

    for j, m in enumerate(candidates):
        serial = number(m.group(2))
        anchor = current if current is not None else previous
        glued_stop, glued_serial = not m.group(1), m.group(3) is None
        if glued_serial and (anchor is None or serial != anchor + 1):
            continue
        if glued_stop and anchor is not None and serial <= anchor:
            continue
        blank = m.end(2) + 1 if glued_serial else None
        if glued_stop or glued_serial or anchor is None or serial != anchor + 1:
            # Text with no serial of its own ("junk text. 2. The capital ...") is no fact
            # whatever follows: only the text after the serial must read as one.
            if current is not None and not fits(piece(start, fix, m.start())):
                continue
            following = next((c for c in candidates[j + 1:]
                              if number(c.group(2)) == serial + 1), None)
            if following is None and not terminated:
                return pieces, piece(start, fix), previous     # undecided until more arrives
            if not fits(piece(m.start(2), blank, following.start() if following else None)):
                continue
        text = piece(start, fix, m.start()).strip(BLANKS)
        if text and not text.isspace():
            pieces.append(text)
        if current is not None:
            previous = current
        start, fix, current = m.start(2), blank, serial
    if not terminated:
        return pieces, piece(start, fix), previous
    text = piece(start, fix).strip(BLANKS)
    if text and not text.isspace():
        pieces.append(text)
        if current is not None:
            previous = current
    return pieces, "", previous
