"""A conversation split into its memory part and its question, the memory's key, and the
`Memory` built from the memory part.

The question is found in the last user message (question.py: inside the harness's instruction
prompt, else the last question sentence or line that asks after the facts, else one before
them, else none). A question longer than `factres run` reads (MAX_QUESTION characters) is the
client's error: the server refuses it before any memory is built. Everything else, in every
message and in any layout, is the memory part: the harness's single user message (memorize
frames joined by line breaks, then the prompt), or one message per chunk with assistant
acknowledgements between, or a system message holding the context.

A harness resends the same context with each of its 100 questions, so the memory built for
the first one is kept, found again by the memory part (each message's role and text, in order:
`MemoryPart`). The question, the model name and every other parameter stay out of it. Finding
it compares the memory part in place with the one kept, character for character, so two
conversations share a memory exactly when their memory parts are equal. The comparison is one
memcmp against the kept copy, where encoding the text to UTF-8 (a copy) and hashing it with
sha256 took two passes: in the server, splitting the 262K context's request and finding its
memory took 1.1 ms hashed, 0.37 ms compared (benchmarks/serve.py, Server-Timing's split and
memory). The key a reply shows (`Conversation.key`, "sha256:<hex>" of the memory part) is
computed once, when the memory is built.

Building the memory: which messages are fed is `memory_messages`' rule (a message holding a
serial; a system message only when no other does; a user message between two holding serials,
or continuing a fact left open); the others (a system prompt, an acknowledgement, an
instruction) are passed over whole, counted by role. The fed messages go to one `Memory` in
order, joined by one space, as the harness joins the sentences of a chunk (its chunks end at
sentence ends, and a frame or a line break around a message's text is the reader's to pass
over), so a fact cut across chunk messages comes back whole, however small the chunks. Inside
the fed text, a piece that fits no template and holds no serial is text too (counted as passed
over, "text"); a fact-like piece that did not parse, a duplicate serial, a serial out of order
and a serial above 2^63 - 1 are reported (the first REPORTS_SHOWN, their texts cut to 200
characters as `factres parse` cuts them). The memory part is the whole text: once it is fed,
the memory is flushed (its last fact committed for good), and the questions then asked never
change it."""
from __future__ import annotations

import bisect
import dataclasses
import hashlib
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from resolver.errors import clip
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.memory.stream import PASSED_KINDS, UNPARSED, Report
# INSTRUCTING: roles whose messages instruct, memory only when no other message holds facts (E11)
from resolver.serve.fact_lists import INSTRUCTING, choose
from resolver.serve.question import ABBREVIATION, LAST_SENTENCE, find_question
from resolver.serve.request import Message
from resolver.text.facts import reads_as_fact

TEXT = "text"                       # passed over: a piece that fits no template, no serial in it
REPORTS_SHOWN = 20                  # reports a reply lists (all are counted)
_SERIAL_LIKE = re.compile(r"\d\. ")
# A message holding facts: a serial followed by a blank or the message's end ("... London. 1.",
# a harness's small chunk, ends with the next fact's serial).
_HOLDS_SERIAL = re.compile(r"\d\.(?:\s|\Z)")
# A serial in a message's text, as the reader takes one: digits and a full stop, after a blank
# (or at the start) and before one (or at the end).
_SERIAL_END = re.compile(r"(?:\A|(?<=\s))\d+\.(?=\s|\Z)")
MAX_FACT = 2000                     # characters of a fact's text a serial-less message may end
_NONBLANK = re.compile(r"\S")
# A memory part's hash reads its shape (each message's role and length) and SAMPLES + 2 short
# windows of its text spread over the whole part, at places set by the lengths alone (so equal
# parts hash alike): cheap whatever the number of messages, and enough to tell contexts apart;
# equality then compares the whole text.
SAMPLES = 16
WINDOW = 32


class MemoryPart:
    """A conversation's memory part as the memory cache's key: each non-blank message's role
    and text up to `end` (the last user message's memory part ends where its question starts),
    held in place, without copying the text. Two parts are equal exactly when every role and
    text is; the comparison is a memcmp of the text (no encoding, no copy), and the hash reads
    a few windows of it. `kept()` is the part with its own text, for the cache to keep."""

    __slots__ = ("pieces", "_hash")

    def __init__(self, pieces: tuple[tuple[str, str, int], ...]) -> None:
        self.pieces = pieces                    # (role, text, end): the message's text[:end]
        self._hash = hash((tuple((role, end) for role, _, end in pieces), _windows(pieces)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryPart):
            return NotImplemented
        if self is other:
            return True
        if self._hash != other._hash or len(self.pieces) != len(other.pieces):
            return False
        return all(r1 == r2 and e1 == e2 and _same_start(t1, t2, e1)
                   for (r1, t1, e1), (r2, t2, e2) in zip(self.pieces, other.pieces))

    def kept(self) -> "MemoryPart":
        """The same part holding only its own text: a message's text cut at `end` is copied
        (so the cache keeps no question, and compares a kept part with a memcmp)."""
        return MemoryPart(tuple((role, text if end == len(text) else text[:end], end)
                                for role, text, end in self.pieces))

    def messages(self) -> tuple[Message, ...]:
        return tuple(Message(role, text if end == len(text) else text[:end])
                     for role, text, end in self.pieces)

    @property
    def nbytes(self) -> int:
        """Bytes of the text strings this part holds (kept in the cache with its memory)."""
        return sum(sys.getsizeof(text) for _, text, _ in self.pieces)

    def digest(self) -> str:
        """"sha256:<hex>" of each message's role, length and UTF-8 text, in order."""
        digest = hashlib.sha256()
        for role, text, end in self.pieces:
            data = (text if end == len(text) else text[:end]).encode("utf-8", "surrogatepass")
            digest.update(b"%s\0%d\0" % (role.encode(), len(data)))
            digest.update(data)
        return "sha256:" + digest.hexdigest()


def _windows(pieces: tuple[tuple[str, str, int], ...]) -> tuple[str, ...]:
    """Short windows of the part's text (each message's text[:end], end to end), at places that
    depend on the ends only: the whole text when it is short."""
    starts, total = [], 0
    for _, _, end in pieces:
        starts.append(total)
        total += end
    if total <= (SAMPLES + 2) * WINDOW:
        return tuple(text[:end] for _, text, end in pieces)
    out = []
    for i in range(SAMPLES + 1):                    # from the start, evenly spaced
        at = i * total // (SAMPLES + 1)
        k = bisect.bisect_right(starts, at) - 1
        _, text, end = pieces[k]
        out.append(text[at - starts[k]:min(at - starts[k] + WINDOW, end)])
    _, text, end = pieces[-1]
    out.append(text[max(0, end - WINDOW):end])      # and the very end
    return tuple(out)


def _same_start(one: str, two: str, end: int) -> bool:
    """one[:end] == two[:end] (both at least `end` long), without a copy when either is
    exactly `end` long (a kept part always is)."""
    if len(one) == end:
        return two.startswith(one)
    if len(two) == end:
        return one.startswith(two)
    return one[:end] == two[:end]


@dataclass(frozen=True)
class Conversation:
    messages: tuple[Message, ...]
    last: int                       # the last user message
    start: int                      # where its question part starts
    question: str                   # what the memory is asked (a prompt, a bare question, "")
    part: MemoryPart                # the memory part, in place: the cache's key
    found: str = LAST_SENTENCE      # how the question was found (`question.find_question`)
    stop: int | None = None         # where its question part ends (None: at the message's end)

    @property
    def asked(self) -> str:
        """The last user message's question part: from the question on (to the question's end
        when it stands before the facts)."""
        return self.messages[self.last].text[self.start:self.stop]

    @cached_property
    def bare_question(self) -> str:
        """The question itself, as the memory reads it from `question` (the text after "Now
        Answer the Question:" in a prompt, `harness.question_of`): what MAX_QUESTION bounds."""
        return harness.question_of(self.question)

    @cached_property
    def key(self) -> str:
        """"sha256:<hex>" of the memory part, as a reply shows it. Computed when asked (a
        memory is built): finding a cached memory needs no hash of the text."""
        return self.part.digest()

    @cached_property
    def kept(self) -> MemoryPart:
        """The memory part with its own text (what the cache keeps); made when a memory is
        built, since it copies the last message's memory part."""
        return self.part.kept()

    @property
    def memory(self) -> tuple[Message, ...]:
        """The memory part: every message's text but the question's, blank ones left out."""
        return self.kept.messages()

    @property
    def words(self) -> int:
        """Whitespace-separated words of the question's part (`Remembered.words` counts the
        memory part's): how a reply counts prompt tokens."""
        return len(self.asked.split())


def split(messages: tuple[Message, ...]) -> Conversation:
    """The conversation's memory part and its question (see the module docstring).
    `messages` holds at least one user message (`request.parse_request` checks it).

    Runs on every request, over a whole context: nothing of the size of the context is
    copied, encoded or hashed (the memory part refers to the messages' text in place)."""
    last = max(i for i, m in enumerate(messages) if m.role == "user")
    found = find_question(messages[last].text)
    pieces = []
    for i, m in enumerate(messages):
        end = found.start if i == last else len(m.text)
        if _NONBLANK.search(m.text, 0, end):
            pieces.append((m.role, m.text, end))
        if i == last and found.stop < len(m.text) and _NONBLANK.search(m.text, found.stop):
            # a question before the facts: the facts after it are a piece of their own, a
            # copy (the only layout whose split copies the context)
            rest = m.text[found.stop:]
            pieces.append((m.role, rest, len(rest)))
    stop = None if found.stop == len(messages[last].text) else found.stop
    return Conversation(messages, last, found.start, found.question,
                        MemoryPart(tuple(pieces)), found.how, stop)


@dataclass(frozen=True)
class Remembered:
    """A memory built from a conversation's memory part, with what building it did."""
    memory: Memory
    key: str
    facts: int                                  # facts committed
    chars: int                                  # characters fed to the memory
    words: int                                  # whitespace words of the memory part
    passed_over: dict[str, int]                 # the reader's kinds and TEXT -> count
    messages_passed_over: dict[str, int]        # role -> messages without facts
    reported: dict[str, int]                    # report kind -> count
    reports: tuple[Report, ...] = field(default=())     # the first REPORTS_SHOWN
    # several fact lists: which one is the memory (fact_lists.choose), and whether a header
    # decided it (when not, answers are lowered to low confidence)
    warnings: tuple[str, ...] = field(default=())
    sure: bool = True

    def to_json(self) -> dict:
        return {"key": self.key, "facts": self.facts, "passed_over": dict(self.passed_over),
                "messages_passed_over": dict(self.messages_passed_over),
                "reported": dict(self.reported),
                "reports": [r.to_json() for r in self.reports]}


def tally(result, passed: Counter, reports: list[Report]) -> None:
    """Count what an ingest passed over (a piece that fits no template and holds no serial
    counts as TEXT) and keep what it reported, its text and reason cut as `factres parse` cuts
    a line (E19: 20 lines of 500,000 characters made every reply 10 MB, and the cache kept
    them)."""
    passed.update(result.passed_over)
    for report in result.reports:
        if report.kind == UNPARSED and report.serial is None \
                and not _SERIAL_LIKE.search(report.text):
            passed[TEXT] += 1
        else:
            reports.append(dataclasses.replace(report, text=clip(report.text),
                                               reason=clip(report.reason)))


def remember(conversation: Conversation, plan_sets: tuple[str, ...], mode: str) -> Remembered:
    """A new `Memory` holding the conversation's memory part (see the module docstring).
    InputError when a message is not text UTF-8 can encode (a lone surrogate)."""
    memory = Memory(plan_sets, mode)
    passed: Counter = Counter({kind: 0 for kind in (*PASSED_KINDS, TEXT)})
    messages: Counter = Counter()
    reports: list[Report] = []
    chars = words = 0
    fed = False

    def add(result) -> None:
        tally(result, passed, reports)

    parts = conversation.memory
    choice = choose(parts, memory_messages(parts))
    for message, span in zip(parts, choice.spans):
        words += len(message.text.split())
        if span is None:
            messages[message.role] += 1
            continue
        text = message.text if span == (0, len(message.text)) else message.text[span[0]:span[1]]
        if fed:
            add(memory.ingest(" "))
        add(memory.ingest(text))
        chars += len(text)
        fed = True
    add(memory.flush())
    reported = Counter(r.kind for r in reports)
    return Remembered(memory, conversation.key, len(memory.store), chars, words,
                      dict(sorted(passed.items())), dict(sorted(messages.items())),
                      dict(sorted(reported.items())), tuple(reports[:REPORTS_SHOWN]),
                      choice.warnings, choice.sure)


def memory_messages(messages: tuple[Message, ...], before: str | None = None) -> list[bool]:
    """Which messages of the memory part are fed to the memory (see the module docstring).
    `before`: the text the memory already holds, when the messages are appended to it (a
    named memory), so that a message may continue a fact it left open.

    A message holding a serial ("12. ", or "12." at its end) is fed; a system (or developer)
    message only when no other message holds one (E11: a system prompt's worked example,
    "0. Tim Cook is employed by Acme.", took the context's serials 0 and 1). A user message
    holding none is fed when the text fed before it ends inside a fact: after a serial whose
    fact is still to come, or in a fact's text that does not read as a fact yet: a harness's
    small chunks ("... London. 1." | "The chairperson of Fatah is Mahmoud Abbas." | ...) are
    one text (E20). Every other message (an acknowledgement, an instruction, between facts or
    not) is passed over whole."""
    holds = [bool(_HOLDS_SERIAL.search(m.text)) for m in messages]
    tail = None if not before else _tail(_chunk(before[-4 * MAX_FACT:]), None)
    if tail is None and not any(h and m.role not in INSTRUCTING
                                for h, m in zip(holds, messages)):
        return holds                  # only a system message holds facts: it is the memory
    read = []                         # `tail`: the fed text since its last serial (None: none)
    for held, m in zip(holds, messages):
        fed = m.role not in INSTRUCTING and (
            held or (m.role == "user" and tail is not None and _inside_fact(tail)))
        read.append(fed)
        if fed:
            tail = _tail(_chunk(m.text), tail)
    return read


def _tail(chunk: str, tail: str | None) -> str | None:
    """The fed text since its last serial once `chunk` is fed after `tail`."""
    serial = None
    for serial in _SERIAL_END.finditer(chunk):
        pass
    if serial is not None:
        return chunk[serial.end():]
    return None if tail is None else tail + " " + chunk


def _inside_fact(tail: str) -> bool:
    """Whether text fed after the last serial ends inside that serial's fact: nothing yet,
    text that does not read as a fact, or a fact ending at an initial or an abbreviation
    ("... is married to S." | "W. R. D. Bandaranaike.": the harness cuts a sentence there). A
    fact longer than MAX_FACT is not waited for."""
    tail = tail.strip()
    if not tail:
        return True
    if len(tail) > MAX_FACT:
        return False
    last = tail.split()[-1]
    return (last.endswith(".") and bool(ABBREVIATION.match(last[:-1]))) \
        or not reads_as_fact("0. " + tail)


def _chunk(text: str) -> str:
    """A message's text without a memorize frame around it."""
    text = text.strip()
    if text.endswith(harness.FRAME_ACKNOWLEDGEMENT):
        text = text[:-len(harness.FRAME_ACKNOWLEDGEMENT)]
    at = text.rfind(harness.FRAME_INSTRUCTION)           # the last frame's, in a memory's text
    return text[at + len(harness.FRAME_INSTRUCTION):] if at >= 0 else text
