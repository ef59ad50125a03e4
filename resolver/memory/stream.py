"""The streaming fact reader: text that arrives in any chunks -> facts, each committed as soon as
it is known to be complete, in serial order.

Two layers, both resumable at any character:

1. The harness's shapes are recognised and passed over, counted: the memorize frame's opening
   line ("Dialogue between User and Assistant <time>"), its instruction ("<User> The following
   context is the facts I have learned:"), its acknowledgement ("<Assistant> I have learned the
   facts ..."), and the header ("Here is a list of facts:"). A frame's shape stands between two
   sentences of the context, so the text on its two sides is joined with one space: a fact the
   harness cut across two chunks ("... born in the city of St." | "Louis.") comes back whole.
   The header begins a context, so text before it (an instruction) is no part of the first
   fact: a line break joins the two sides. A shape cut across two `feed` calls is held until
   it can be told.
2. The text between them is cut into facts. A line feed always ends a fact (the canonical
   layout: one fact per line); no other line break does (segment.OTHER_BREAK: its text is
   reported, as `factres parse` reports its line). Inside a line (a harness chunk is one long
   line), the facts are found by `resolver.text.segment.split_line`, the rule `factres parse`
   reads a line of several facts by: a fact ends before "<serial>. " when a full stop and blanks
   come first and the serial is the next one (the current fact's serial + 1). Any other "N. "
   after a full stop ("7373. 1. FFC Frankfurt is ...", a serial out of order) is a boundary only
   when the grammar reads both sides as facts, or when the text before it has no serial of its
   own ("junk text. 2. ..." is no fact whatever follows: it is reported alone); "Czech 2. Liga"
   is no candidate at all (no full stop before it). A blank the chunker dropped between two
   unframed chunks ("... by Google.2. Tim Cook ...", "... Morrison. 340.Stojko ...") is a
   boundary under the stricter terms segment.py gives.

Which tails are complete. The text after the last piece start may still grow, so it stays
pending until it is known complete:
- the next fact starts after it ("... Apple. 1. "): complete;
- a line break follows it outside a memorize frame: complete at once; inside a frame the break
  may be the frame's (its acknowledgement follows), and the fact may go on in the next frame
  ("St." | "Louis."), so it waits;
- it ends in a full stop: it may still go on ("... Washington, D.C." + " United."), so it waits;
- it ends in a fragment that can become the next fact's serial ("... Apple. 1", "... Apple.
  1."): it waits, and that fragment is never read as part of the object before it except at
  the end of the text;
- `flush` is the end of the text: everything held is read as written, as `factres parse` reads
  it.
`provisional` gives what a query may see meanwhile: the tail read as if the text ended there,
less such a serial fragment, without reading it for good.

Text known to hold no piece start is not searched again when more arrives, so a long stretch
with no serial costs its length once.
Each complete piece then goes through the grammar (`resolver.text.facts.parse_fact_lines`, one
LALR pass per feed) and the serial rules: a serial above the last committed one is committed (as
`factres parse` reads the same text); the same serial with the same fact again is passed over as
a repeat; a serial repeated with another fact, a serial below the last, a serial above 2^63 - 1
(`factres parse` refuses it; a report then has no `serial`) and text that fits no template are
reported, in the words `factres parse` uses, and never committed.

`line` is the line the piece has in the canonical layout of what arrived: the header on line 1,
then one line per piece (committed, repeated or reported) in arrival order, blank lines not
counted. For a standard context, fed whole or in any chunks, that is the line `factres parse`
gives the fact, and a piece's `text` is its line as written (without surrounding blanks)."""
from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from resolver.mab.harness import FRAME_ACKNOWLEDGEMENT, FRAME_INSTRUCTION, FRAME_OPENING
from resolver.text import corrections, cues, segment
from resolver.text.corrections import Correction
from resolver.text.facts import (
    BOM,
    HEADER,
    MAX_SERIAL,
    TOO_LARGE_EXPECTED,
    Fact,
    parse_fact_block,
    parse_fact_lines,
    reads_as_fact,
    too_large,
)
from resolver.text.segment import SERIAL as _SERIAL
from resolver.text.segment import number as _number

# What is passed over, by kind (IngestResult.passed_over counts them under these names).
FRAMING, INSTRUCTION, ACKNOWLEDGEMENT, HEADER_KIND, REPEAT = (
    "framing", "instruction", "acknowledgement", "header", "repeat")
PASSED_KINDS = (FRAMING, INSTRUCTION, ACKNOWLEDGEMENT, HEADER_KIND, REPEAT)
# What is reported, by kind.
UNPARSED, DUPLICATE, OUT_OF_ORDER = "unparsed", "duplicate", "out-of-order"


def _after_tag(literal: str) -> str:
    """A frame line's pattern: its "<Tag>" may be followed by any blanks."""
    tag, _, rest = literal.partition(" ")
    return re.escape(tag) + r"[ \t]*" + re.escape(rest)


# The opening line runs to its line break, or to the "<User>" tag when the break is missing.
# No named groups: with them the engine loses its first-character scan and the search costs
# ten times as much (`_kind` tells the shapes apart by their first characters).
_MARKERS = re.compile(
    rf"{re.escape(FRAME_OPENING)}[^\n<]*|{_after_tag(FRAME_INSTRUCTION)}"
    rf"|{_after_tag(FRAME_ACKNOWLEDGEMENT)}|{re.escape(HEADER)}")
_KINDS = {FRAME_OPENING[:2]: FRAMING, FRAME_INSTRUCTION[:2]: INSTRUCTION,
          FRAME_ACKNOWLEDGEMENT[:2]: ACKNOWLEDGEMENT, HEADER[:2]: HEADER_KIND}
_LITERALS = (FRAME_OPENING, FRAME_INSTRUCTION, FRAME_ACKNOWLEDGEMENT, HEADER)
_SHAPE_START = re.compile("[" + re.escape("".join(sorted({lit[0] for lit in _LITERALS}))) + "]")
_LONGEST = max(len(lit) for lit in _LITERALS)

# The fast cut: every such place becomes a line break.
_CUT = re.compile(r"\.[ \t]+(?=\d+\. )")
# Where a piece may start: after a line break, or at a serial after a full stop and blanks.
_STARTS = re.compile(r"\n|(?<=\.)[ \t]+(?=\d+\. )")
_TAIL_WINDOW = 1024
# What the reader strips around pieces and shapes: blanks and LF, never another line break (a
# piece holding one is reported, as `factres parse` reports its line: segment.OTHER_BREAK).
_SPACE = segment.BLANKS + "\n"
# What a start may span back over when more text arrives: its blanks, and the digits, full
# stop and blank of the serial its lookahead reads.
_START_CHARS = frozenset(" \t0123456789.")
# The end of a tail that may be the next fact's serial arriving: a full stop, blanks, then its
# digits (or the first of them), with or without its full stop and blank ("Apple. 1", "Apple.
# 1.", "Apple. 12." on the way to "Apple. 123. ").
_SERIAL_FRAGMENT = re.compile(r"(?<=\.)[ \t]+(\d+)(?:\.[ \t]*)?\Z")


@dataclass(frozen=True, slots=True)
class Report:
    """Text the reader did not commit, and why (the words `factres parse` uses)."""
    kind: str                  # UNPARSED, DUPLICATE or OUT_OF_ORDER
    line: int                  # its line in the canonical layout of what arrived
    text: str
    reason: str
    serial: int | None = None  # the piece's serial, when it has one

    def to_json(self) -> dict:
        return {"kind": self.kind, "line": self.line, "text": self.text,
                "reason": self.reason, "serial": self.serial}


@dataclass
class Batch:
    """What one feed (or flush) produced: the facts to commit, in serial order, what was passed
    over and what was reported."""
    facts: list[Fact] = field(default_factory=list)
    passed: Counter = field(default_factory=Counter)
    reports: list[Report] = field(default_factory=list)
    # correction lines (resolver.text.corrections), in arrival order: the caller applies each
    # after the facts of the lines before it
    corrections: list[Correction] = field(default_factory=list)


class FactReader:
    """Cuts a stream into facts (see the module docstring). Not thread-safe: `Memory` holds a
    lock around it."""

    def __init__(self, earlier: Callable[[int], Fact | None] | None = None) -> None:
        self._raw = ""               # received text not yet told apart (a shape cut short)
        self._pending = ""           # text told apart, not yet cut into complete facts
        self._join: str | None = None   # after a shape: what joins the text that follows
        self._started = False
        self._framed = False         # inside a memorize frame (its acknowledgement not yet read)
        self._bare = 0               # how much of `_pending` is known to hold no piece start
        self._line = 1               # lines used in the canonical layout (the header's is 1)
        self._last: Fact | None = None
        self._batch = Batch()
        # serial -> a fact committed by an earlier feed (the caller's store knows them)
        self._earlier = earlier

    @property
    def tail(self) -> str:
        """Text held until the next feed or a flush: an incomplete fact or shape."""
        return self._pending + self._raw

    @property
    def last_serial(self) -> int | None:
        return None if self._last is None else self._last.serial

    @property
    def lines(self) -> int:
        """Lines used so far in the canonical layout (the header's included)."""
        return self._line

    # What `state` leaves out: the batch of the feed being read (empty between feeds) and the
    # caller's lookup (given again to a new reader).
    _TRANSIENT = frozenset({"_batch", "_earlier"})

    def state(self) -> dict:
        """The reader between two feeds as JSON values (the last committed fact by its fields):
        every attribute but the transient ones, so that `restore` on a new reader reads on
        exactly where this one stopped (a memory file keeps it after each ingest)."""
        out = {}
        for name, value in vars(self).items():
            if name not in self._TRANSIENT:
                out[name] = {"fact": list(value._fields())} if isinstance(value, Fact) else value
        return out

    def restore(self, state: dict) -> None:
        """Take the state `state()` gave (on a new reader). ValueError for a name this reader
        does not have."""
        for name, value in state.items():
            if name in self._TRANSIENT or not hasattr(self, name):
                raise ValueError(f"the reader has no state {name!r}")
            setattr(self, name, Fact(*value["fact"]) if isinstance(value, dict) else value)

    def rebind(self, earlier: Callable[[int], Fact | None]) -> None:
        """Look committed facts up through `earlier` from now on (the caller's new store)."""
        self._earlier = earlier

    def feed(self, text: str) -> Batch:
        """Read a chunk; returns the facts it completed (not yet committed anywhere: the
        caller commits them), the shapes passed over and the pieces reported."""
        return self._read(text, final=False)

    def flush(self) -> Batch:
        """The end of the stream for now: the held tail is read as complete."""
        return self._read("", final=True)

    def provisional(self) -> list[Fact]:
        """The facts the held tail would give if the stream ended here, without reading it for
        good (the reader is left as it is): what a query sees of the tail. A trailing fragment
        that can still become the next fact's serial ("... Apple. 1" or "... Apple. 1.", the
        digits being the next serial or its beginning) is left out, so it is never glued to
        the object before it. Reports are left out too: the tail is not complete yet, and it is
        reported when it is read for good."""
        if not self.tail:
            return []
        reader = copy.copy(self)
        if not reader._raw:
            reader._pending = self._without_serial_fragment(reader._pending)
        return reader.flush().facts

    def _without_serial_fragment(self, text: str) -> str:
        fragment = _SERIAL_FRAGMENT.search(text)
        if fragment is None:
            return text
        own = _SERIAL.match(text[self._last_start(text[:fragment.start()]):].lstrip(_SPACE))
        anchor = _number(own.group(1)) if own else self.last_serial
        if anchor is not None and not str(anchor + 1).startswith(fragment.group(1)):
            return text                # not the next serial: "... Op. 7" may be an object
        return text[:fragment.start()]

    # ---- layer 1: the harness's shapes -------------------------------------------------------
    def _read(self, text: str, final: bool) -> Batch:
        """`_read_all`, all or nothing: a read that fails leaves the reader as it was, so one
        bad chunk never leaves a memory that fails on every later call."""
        saved = self.__dict__.copy()       # every field is replaced, never changed in place
        try:
            return self._read_all(text, final)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    def _read_all(self, text: str, final: bool) -> Batch:
        self._batch = batch = Batch()
        if not self._started and text:
            self._started = True
            text = text.removeprefix(BOM)
        raw = self._raw + text
        if "\r" in raw:
            raw = raw.replace("\r\n", "\n")
        end = len(raw) if final else self._safe_end(raw)
        parts = [self._pending]
        pos = 0
        for m in _MARKERS.finditer(raw, 0, end):
            kind = _KINDS[m.group()[:2]]
            if kind == FRAMING and m.end() == end and not final:
                end = m.start()          # its time stamp may go on in the next feed
                break
            self._add(parts, raw[pos:m.start()])
            self._mark(parts, "\n" if kind == HEADER_KIND else " ")
            if kind in (FRAMING, INSTRUCTION):
                self._framed = True
            elif kind == ACKNOWLEDGEMENT:
                self._framed = False
            batch.passed[kind] += 1
            pos = m.end()
        self._add(parts, raw[pos:end])
        self._raw = raw[end:]
        self._pending = "".join(parts)
        self._cut(final)
        return batch

    @staticmethod
    def _safe_end(raw: str) -> int:
        """Where a shape that may be cut short starts (its beginning ends the text), or the
        end; a final carriage return waits for its line feed too."""
        start = max(0, len(raw) - _LONGEST)
        for m in _SHAPE_START.finditer(raw, start):
            rest = raw[m.start():]
            if any(lit.startswith(rest) and len(rest) < len(lit) for lit in _LITERALS):
                return m.start()
        return len(raw) - 1 if raw.endswith("\r") else len(raw)

    def _add(self, parts: list[str], text: str) -> None:
        if not text:
            return
        if self._join is not None:
            body = text.lstrip(_SPACE)
            if not body:
                return
            text = self._join + body
            self._join = None
        parts.append(text)
        self._header_across(parts)

    def _header_across(self, parts: list[str]) -> None:
        """The header cut in two by a frame boundary ("Here is a" | " list of facts:"), made
        whole by the join, or completed since: passed over as a header the harness's text
        shows whole is (`_mark`), and the text after it added again. Only a header that spans
        the last part's start is looked for: one inside a part was a shape already."""
        added = parts[-1]
        before = ""
        for part in reversed(parts[:-1]):
            before = part[-(len(HEADER) - 1 - len(before)):] + before
            if len(before) >= len(HEADER) - 1:
                break
        if "H" not in before:
            return
        at = (before + added[:len(HEADER)]).find(HEADER)
        if at < 0 or at >= len(before):
            return
        parts.pop()
        cut = len(before) - at          # the header's characters before the added part
        while cut:
            last = parts[-1]
            if len(last) <= cut:
                self._pop(parts)
                cut -= len(last)
            else:
                self._set_last(parts, last[:-cut])
                cut = 0
        self._batch.passed[HEADER_KIND] += 1
        self._mark(parts, "\n")
        self._add(parts, added[len(HEADER) - (len(before) - at):])

    def _pop(self, parts: list[str]) -> None:
        if len(parts) == 1:
            self._bare = 0               # the held text is cut: none of it is known bare
        parts.pop()

    def _set_last(self, parts: list[str], text: str) -> None:
        if len(parts) == 1:
            self._bare = min(self._bare, len(text))
        parts[-1] = text

    def _mark(self, parts: list[str], join: str) -> None:
        """A shape was passed over: the blanks around it are its own (the frame puts line
        breaks around the chunk), and the text on its two sides is joined with `join`: one
        space after a frame's shape, as the harness joins the sentences of a chunk; a line
        break after the header, which begins a context (and stays, when another shape follows
        the header with no text between)."""
        while parts and not parts[-1].strip():
            self._pop(parts)
        if parts:
            self._set_last(parts, parts[-1].rstrip(_SPACE))
            self._join = "\n" if self._join == "\n" else join
        else:
            self._join = ""                  # nothing before it: nothing to join to

    # ---- layer 2: facts ----------------------------------------------------------------------
    def _cut(self, final: bool) -> None:
        text = self._pending
        # Inside a frame, a line break at the end says nothing yet: the frame's acknowledgement
        # may follow it (the break is then the frame's, and the fact may go on in the next
        # frame, "St." | "Louis."). Outside a frame a line break ends the fact at once.
        body = text
        if not final and self._framed:
            stripped = text.rstrip(_SPACE)
            if "\n" in text[len(stripped):]:
                body = stripped
        if final:
            cut = len(body)
        else:
            # Text known to hold no piece start is not searched again: a long stretch with
            # no serial, fed in small chunks, costs its length once, not once per chunk.
            cut = self._last_start(body, min(self._bare, len(body)))
        if cut == 0 and not final:
            self._bare = len(body)
            return
        self._bare = 0
        if self._fast(body, cut):
            self._pending = text[cut:]
            return
        self._pending = self._careful(body, final) + text[len(body):]

    @staticmethod
    def _last_start(text: str, bare: int = 0) -> int:
        """Where the last piece starts: the text from there may not be complete yet. `text[:bare]`
        is known to hold no start (one may still span back into it from the new text)."""
        if bare:
            since = bare
            while since > 0 and text[since - 1] in _START_CHARS:
                since -= 1
            last = None
            for last in _STARTS.finditer(text, max(0, since - 1)):
                pass
            return 0 if last is None else last.end()
        window = max(0, len(text) - _TAIL_WINDOW)
        while True:
            last = None
            for last in _STARTS.finditer(text, window):
                pass
            if last is not None:
                return last.end()
            if window == 0:
                return 0
            window = max(0, window - 8 * _TAIL_WINDOW)

    def _fast(self, body: str, cut: int) -> bool:
        """The common case in one pass: the pieces of `body[:cut]` are consecutive serials, each
        one fact. False (nothing done) when anything else may be the case. The cuts are found
        in the whole body: a serial just before `cut` ("... Rick Perry. 2." before "1. FK
        Pribram") is cut off by the lookahead that reads on past `cut`, not glued to the object
        before it."""
        region = body[:cut]
        if not region.strip():
            return True
        if segment.GLUED.search(region) or segment.OTHER_BREAK.search(region):
            return False             # a blank the chunker dropped, or a break: piece by piece
        parts, at = [], 0
        for m in _CUT.finditer(body):
            if m.end() > cut:
                break
            parts.append(region[at:m.start()])
            at = m.end()
        parts.append(region[at:])
        canon = ".\n".join(parts).strip(_SPACE)
        if "\n\n" in canon or " \n" in canon or "\n " in canon or "\t" in canon:
            return False
        if cues.any_candidate(canon):
            return False             # a correction line may read as a fact: piece by piece
        lines = canon.split("\n")
        facts = parse_fact_block(lines, self._line + 1)
        if facts is None or len(facts) != len(lines):
            return False
        first = facts[0].serial
        if self._last is not None and first != self._last.serial + 1:
            return False
        if [f.serial for f in facts] != list(range(first, first + len(facts))):
            return False
        if facts[-1].serial > MAX_SERIAL:
            return False
        self._commit_all(facts)
        self._line = facts[-1].line
        return True

    def _careful(self, text: str, final: bool) -> str:
        """Piece by piece, line by line; returns the text to keep pending."""
        pieces: list[str] = []
        lines = text.split("\n")
        rest = ""
        previous = self.last_serial
        for i, line in enumerate(lines):
            terminated = final or i < len(lines) - 1
            done, rest, previous = segment.split_line(line, terminated, previous,
                                                      reads_as_fact)
            pieces.extend(done)
        self._classify(pieces)
        return rest

    def _classify(self, pieces: list[str]) -> None:
        """Parse the pieces (one pass) and apply the serial rules in arrival order."""
        if not pieces:
            return
        first = self._line + 1
        facts, unparsed = parse_fact_lines(pieces, first)
        self._line += len(pieces)
        batch = self._batch
        by_line: dict[int, Fact | Report | Correction] = {f.line: f for f in facts}
        for u in unparsed:
            own = _SERIAL.match(u.text)
            by_line[u.line] = Report(UNPARSED, u.line, u.text, u.reason, _shown(own))
        if any(map(cues.any_candidate, pieces)):
            by_line.update(read_corrections(pieces, first))
        for number in range(first, first + len(pieces)):
            item = by_line[number]
            if isinstance(item, Report):
                batch.reports.append(item)
                continue
            if isinstance(item, Correction):
                batch.corrections.append(item)
                continue
            if item.serial > MAX_SERIAL:
                # Refused as `factres parse` refuses it; never committed (no writer of the
                # results holds it), and never a number in a report (`serial` is None).
                batch.reports.append(Report(UNPARSED, item.line, item.text,
                                            f"{too_large(item.serial)} (expected "
                                            f"{TOO_LARGE_EXPECTED})"))
                continue
            last = self._last
            if last is None or item.serial > last.serial:
                self._commit_all([item])
                continue
            seen = self._committed(item.serial)
            if seen is not None and _same_fact(seen, item):
                batch.passed[REPEAT] += 1
            elif seen is not None:
                batch.reports.append(Report(
                    DUPLICATE, item.line, item.text,
                    f"duplicate serial {item.serial}: also on line {seen.line}", item.serial))
            else:
                batch.reports.append(Report(
                    OUT_OF_ORDER, item.line, item.text,
                    f"serial {item.serial} is out of order: line {last.line} has serial "
                    f"{last.serial}", item.serial))

    def _committed(self, serial: int) -> Fact | None:
        """The committed fact with this serial: looked up only for a serial that does not
        grow (rare), so the reader keeps no index of its own."""
        for batch_fact in reversed(self._batch.facts):
            if batch_fact.serial == serial:
                return batch_fact
        return self._earlier(serial) if self._earlier is not None else None

    def _commit_all(self, facts: list[Fact]) -> None:
        self._batch.facts.extend(facts)
        self._last = facts[-1]


def read_corrections(pieces: list[str], first: int) -> dict[int, Correction | Report]:
    """line -> the correction a piece holds, or the report of a piece that opens with a
    correction cue and reads as none (never a fact with a wrong subject); a ", not " piece
    that reads as no correction is left as the fact grammar read it."""
    out: dict[int, Correction | Report] = {}
    for number, piece in enumerate(pieces, first):
        if not cues.candidate(piece):
            continue
        found = corrections.read(piece, number)
        if isinstance(found, Correction):
            out[number] = found
        elif cues.cued(piece):
            out[number] = Report(UNPARSED, number, piece, found.reason,
                                 _shown(_SERIAL.match(piece)))
    return out


def _shown(own: re.Match | None) -> int | None:
    """A report's serial: None when there is none, or when it is above MAX_SERIAL."""
    if own is None:
        return None
    number = _number(own.group(1))
    return number if number <= MAX_SERIAL else None


def _same_fact(a: Fact, b: Fact) -> bool:
    return (a.subject, a.relation, a.object) == (b.subject, b.relation, b.object)
