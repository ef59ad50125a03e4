"""A conversation split into its memory part and its question, the memory's key, and the
`Memory` built from the memory part.

The question is the one asked at the end of the last user message: inside the harness's
instruction prompt when the message holds one (`harness.prompt_start`: the text from the
prompt's opening on), else, when the message ends with "?" (a trailing "Answer:" cue left
aside) or its last "?" is followed by text holding no numbered fact ("...? Answer briefly."),
the question sentence up to that "?": on its line (or two lines, when it runs over them), after
the line's last numbered fact, from the last sentence end before which a complete sentence
stands (`_complete`: a name holding ". ", "St. Kitts", "Part 1. What Lies Beneath", stays in
the question), in either case, a "Question:" label left out; a sentence ends at ".", "!" or
"?" and a blank, or at a line break, so a last fact written without its full stop stays memory;
else the whole message. A question longer than `factres run` reads (MAX_QUESTION characters) is
the client's error: the server refuses it before any memory is built. Everything else, in every
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

Building the memory: a message holding no serial ("<digits>. ") holds no facts (a system
prompt, an acknowledgement, an instruction) and is passed over whole, counted by role; the
others are fed to one `Memory` in order, joined by one space, as the harness joins the
sentences of a chunk (its chunks end at sentence ends, and a frame or a line break around a
message's text is the reader's to pass over). So a fact cut across two chunk messages comes
back whole; a message of a chunk that holds no serial at all ("Louis." alone) would be passed
over, which the harness's chunks of 4,096 tokens never are. Inside the fed text, a piece that
fits no template and holds no serial is text too (counted as passed over, "text"); a fact-like
piece that did not parse, a duplicate serial, a serial out of order and a serial above 2^63 - 1
are reported. The memory part is the whole text: once it is fed, the memory is flushed (its
last fact committed for good), and the questions then asked never change it."""
from __future__ import annotations

import bisect
import hashlib
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.memory.stream import PASSED_KINDS, UNPARSED, Report
from resolver.serve.request import Message
from resolver.text.facts import reads_as_fact

TEXT = "text"                       # passed over: a piece that fits no template, no serial in it
# How the question was found in the last user message (`find_question`).
IN_PROMPT, LAST_SENTENCE, WHOLE_MESSAGE = "prompt", "last sentence", "whole message"
REPORTS_SHOWN = 20                  # reports a reply lists (all are counted)
_SERIAL_LIKE = re.compile(r"\d\. ")
_NONBLANK = re.compile(r"\S")
# Where a numbered fact starts on the question's line: a serial at the line's start or after a
# sentence end and blanks (not "Part 1. The Beginning", whose "1. " follows a word).
_SERIAL_AT = re.compile(r"(?m)(?:^[ \t]*|(?<=[.!?])[ \t]+)\d+\.[ \t]+")
_SERIAL_SEARCH = 512                # the first window searched back for it (doubled as needed)
# A sentence end inside the question's text: ".", "!" or "?" and blanks.
_BOUNDARY = re.compile(r"[.!?]\s+")
# Where a question may start inside the last fact's text when no sentence of it ends there: after
# a full stop, "!" or "?" followed by other non-blanks (a control character, a quote) and a blank;
# else at a question word glued to the full stop before it ("... by IBM.Who is ...?",
# verification W07; in lower case, "IBM.who", only when the text before reads as a fact, D03),
# else at the last capitalised question word after a blank.
_LOOSE_END = re.compile(r"[.!?][^\w\s]+\s+")
_QUESTION_WORDS = r"(?:Who|Whom|Whose|What|Which|Where|When|How|Name|Identify|Give|Tell|List|Find)\b"
_GLUED = re.compile(r"(?<=[.!?])(?=" + _QUESTION_WORDS + ")", re.IGNORECASE)
_ASKING = re.compile(r"\s+(?=" + _QUESTION_WORDS + ")")
# A sentence that opens with an interrogative, in either case ("What", "who", "In which", ...).
_INTERROGATIVE = re.compile(r"(?:Who|Whom|Whose|What|Which|Where|When|Why|How|(?:In|On|At|From|"
                            r"To|For|By|Of|With|Under|During|Since|After|Before|Through|Into|"
                            r"Over|Within) (?:which|what|whom|whose))\b", re.IGNORECASE)
# A word that ends no sentence: an abbreviation ("St.", "Mt.", "Inc."), an initial ("L."), a
# dotted one ("D.C.").
_ABBREVIATION = re.compile(r"(?:[A-Z][a-z]?|Mrs|Inc|Ltd|Sgt|Gen|Gov|Sen|Rev|Vol|Ave|Corp|"
                           r"Capt|Prof|Bros|Dept|Univ|Blvd|(?:[A-Za-z]\.)+[A-Za-z])\Z")
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
    question: str                   # what the memory is asked (a prompt, or a bare question)
    part: MemoryPart                # the memory part, in place: the cache's key
    found: str = LAST_SENTENCE      # how the question was found (`find_question`)

    @property
    def asked(self) -> str:
        """The last user message's text from the question on."""
        return self.messages[self.last].text[self.start:]

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
    start, question, found = find_question(messages[last].text)
    pieces = []
    for i, m in enumerate(messages):
        end = start if i == last else len(m.text)
        if _NONBLANK.search(m.text, 0, end):
            pieces.append((m.role, m.text, end))
    return Conversation(messages, last, start, question, MemoryPart(tuple(pieces)), found)


def split_question(text: str) -> tuple[int, str]:
    """(where the question part starts, what to ask) in the last user message: the text
    before `start` is memory."""
    start, question, _ = find_question(text)
    return start, question


def find_question(text: str) -> tuple[int, str, str]:
    """`split_question`, and how the question was found: IN_PROMPT, LAST_SENTENCE or
    WHOLE_MESSAGE (the message asks nothing at its end, so all of it is asked)."""
    start = harness.prompt_start(text)
    if start is not None:
        return start, text[start:], IN_PROMPT
    end = _blank_end(text, len(text))
    cue = harness.ANSWER_CUE.strip()
    if text.endswith(cue, 0, end):
        end = _blank_end(text, end - len(cue))
    if not text.endswith("?", 0, end):
        # text after the question ("...? Answer briefly.", verification D05): the question
        # is the last sentence ending in "?", on the last two lines, after every numbered fact
        end = _last_mark(text, end)
        if end is None:
            return 0, text, WHOLE_MESSAGE
    start, asked = _question_start(text, end)
    question = text[asked:end]
    if "\n" in question:           # a question run over two lines, asked as one
        question = " ".join(question.split())
    return start, question, LAST_SENTENCE


def _last_mark(text: str, end: int) -> int | None:
    """The end of the last "?" followed by blanks on the message's last two lines, when no
    numbered fact follows it; None when there is none."""
    line = text.rfind("\n", 0, end) + 1
    lowest = text.rfind("\n", 0, max(line - 1, 0)) + 1 if line else 0
    at = end
    while True:
        mark = text.rfind("?", lowest, at)
        if mark < 0:
            return None
        if mark + 1 < end and text[mark + 1].isspace():
            return None if _SERIAL_AT.search(text, mark + 1, end) else mark + 1
        at = mark


def _question_start(text: str, end: int) -> tuple[int, int]:
    """(where the question part starts, where the question itself starts) for a question
    ending at `end`: the question's line (with the line before it when the question runs over
    two), from after the line's last numbered fact, its "Question:" label left out, cut at the
    last sentence end before which a complete sentence stands (`_complete`)."""
    line = _question_line(text, end)
    serial = _last_serial(text, line, end)
    if serial is None:
        start = line
        while start < end and text[start].isspace():
            start += 1
        cuts = _cuts(text, start, end)
        start = cuts[-1] if cuts else start
    else:
        # after the line's last numbered fact: at its last complete sentence's end (a sentence
        # between the fact and the question is read as the fact's, the limit docs/server.md
        # states), else where the question is glued to the fact (`_after_fact_like`)
        cuts = _cuts(text, serial.end(), end, fact=True)
        start = cuts[-1] if cuts else _after_fact_like(text, serial, end)
    label = harness.QUESTION_LABEL.match(text, start, end)
    return start, label.end() if label else start


def _question_line(text: str, end: int) -> int:
    """Where the question's line starts: the line holding its end, or the line before when
    the question runs over two ("What is the capital\nof St. Kitts?"): that line opens with
    an interrogative or a "Question:" label, holds no "?" and no numbered fact, and ends
    inside a sentence (no ".", "!", "?" or ":", or at an abbreviation, "... of St.")."""
    line = text.rfind("\n", 0, end) + 1
    if not line:
        return line
    before = text.rfind("\n", 0, line - 1) + 1
    previous = text[before:line - 1].strip()
    if not previous or "?" in previous or _SERIAL_AT.match(previous):
        return line
    label = harness.QUESTION_LABEL.match(previous)
    opening = previous[label.end():] if label else previous
    if not _INTERROGATIVE.match(opening) or _BOUNDARY.search(previous):
        return line
    if previous[-1] in "!:" or (previous[-1] == "." and _complete(opening)):
        return line
    return before


def _last_serial(text: str, line: int, end: int) -> re.Match | None:
    """The last numbered fact's serial on the question's line (from `line`), None when there
    is none. Searched back from the end in windows that double: a harness chunk is one long
    line of facts, and only its end is read."""
    size = _SERIAL_SEARCH
    while True:
        low = max(line, end - size)
        found = None
        for found in _SERIAL_AT.finditer(text, low, end):
            pass
        if found is not None or low == line:
            return found
        size *= 2


def _cuts(text: str, start: int, end: int, fact: bool = False) -> list[int]:
    """Where a sentence may end in text[start:end] (the question's last sentence ends at
    `end`): after each sentence end (".", "!" or "?" and blanks) before which a complete
    sentence stands, the sentence counted from the cut before it (`_complete`). The question
    starts at the last. `fact`: the first sentence is a numbered fact's text, which may open
    with a question word ("1. Who Framed Roger Rabbit is employed by Disney.")."""
    cuts, sentence = [], start
    for boundary in _BOUNDARY.finditer(text, start, end):
        if _complete(text[sentence:boundary.start() + 1], asks=not (fact and not cuts)):
            cuts.append(boundary.end())
            sentence = boundary.end()
    return cuts


def _complete(sentence: str, asks: bool = True) -> bool:
    """Whether `sentence` (ending with ".", "!" or "?") is a sentence of its own, after which
    a question may start (verification D01, D02): not one capitalised word ("Kitts."), not
    ending in an abbreviation or an initial ("St.", "D.C.", "L.") or in a name's number ("Part
    1."), and not a question cut inside a name (opening with an interrogative and ending at a
    capitalised word: "Who is the author of The Great Gatsby.", unless `asks` is false: a
    numbered fact's text). MQuAKE names hold ". "."""
    sentence = sentence.strip()
    if sentence.endswith(("?", "!", "..")):
        return True
    words = sentence[:-1].split()
    if len(words) < 2:
        return False
    last = words[-1]
    if _ABBREVIATION.match(last) or (last.isdigit() and words[-2][:1].isupper()):
        return False
    label = harness.QUESTION_LABEL.match(sentence)
    return not (asks and _INTERROGATIVE.match(sentence, label.end() if label else 0)
                and (last[:1].isupper() or last[:1].isdigit()))


def _after_fact_like(text: str, serial: re.Match, end: int) -> int:
    """Where the question starts after the line's last numbered fact when no complete sentence
    of the fact ends before it ("1. Tim Cook is employed by Google.\x00 Who is Tim Cook
    employed by?": the fact's full stop is not followed by a blank; "... by IBM.Who is ...?":
    the question is glued to it): after the last full stop followed by other non-blanks and a
    blank, else at the first question word glued to a full stop (in lower case only when the
    text before it reads as a fact: the grammar decides), else at the last capitalised question
    word after a blank. The text before it is memory, so a fact that did not parse is reported,
    as on a line of its own. After the serial when no such place is found ("1. Who is Tim Cook
    employed by?" is a numbered question)."""
    start = serial.end()
    cut = None
    for cut in _LOOSE_END.finditer(text, start, end):
        pass
    if cut is not None:
        return cut.end()
    fact = serial.start() + len(serial[0]) - len(serial[0].lstrip())
    for glued in _GLUED.finditer(text, start, end):
        if text[glued.start()].isupper() or reads_as_fact(text[fact:glued.start()]):
            return glued.start()
    for cut in _ASKING.finditer(text, start, end):
        pass
    return start if cut is None else cut.end()


def _blank_end(text: str, end: int) -> int:
    """`end` moved back over blanks (no copy of `text`)."""
    while end and text[end - 1].isspace():
        end -= 1
    return end


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

    def to_json(self) -> dict:
        return {"key": self.key, "facts": self.facts, "passed_over": dict(self.passed_over),
                "messages_passed_over": dict(self.messages_passed_over),
                "reported": dict(self.reported),
                "reports": [r.to_json() for r in self.reports]}


def tally(result, passed: Counter, reports: list[Report]) -> None:
    """Count what an ingest passed over (a piece that fits no template and holds no serial
    counts as TEXT) and keep what it reported."""
    passed.update(result.passed_over)
    for report in result.reports:
        if report.kind == UNPARSED and report.serial is None \
                and not _SERIAL_LIKE.search(report.text):
            passed[TEXT] += 1
        else:
            reports.append(report)


def holds_facts(text: str) -> bool:
    """Whether a message's text may hold facts (a serial, "<digits>. "): the others are
    passed over whole."""
    return _SERIAL_LIKE.search(text) is not None


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

    for message in conversation.memory:
        words += len(message.text.split())
        if not holds_facts(message.text):
            messages[message.role] += 1
            continue
        if fed:
            add(memory.ingest(" "))
        add(memory.ingest(message.text))
        chars += len(message.text)
        fed = True
    add(memory.flush())
    reported = Counter(r.kind for r in reports)
    return Remembered(memory, conversation.key, len(memory.store), chars, words,
                      dict(sorted(passed.items())), dict(sorted(messages.items())),
                      dict(sorted(reported.items())), tuple(reports[:REPORTS_SHOWN]))
