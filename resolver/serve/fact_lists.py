"""Which numbered fact list of a conversation is its memory, when it holds several (verify-e
F03).

A conversation may hold a worked example as well as the context: "Example:\\n0. Tim Cook is
employed by Acme.\\n1. ... Initech." as a few-shot user message answered by the assistant, in a
second system message, or in the same message as the context. Fed with the context, the
example's facts took serials 0 and 1, the context's own were reported only as duplicates, and
the reply was the example's answer at high confidence. A list is a run of serials in the
messages that hold them; a new one begins where the numbering starts again (a serial of 0 or 1
not above the one before it, after a header or followed by the next serial: a duplicated line,
or a name holding "1.", starts none). When there are several, the memory is one list:

1. the list after a header ("Here is a list of facts:", the benchmark's own), the last such;
2. else a list in a user (or assistant) message over one in a system or developer message
   (E11's rule: a system prompt's example is instructions);
3. else the largest list, and of equal ones the last (the context comes after its examples).

The other lists are passed over: whole messages counted by role, a list sharing a message with
the memory's cut off at the line where its own list (or header) starts. A reply says which list
it read in a warning, and when no header decided (rules 2 and 3: a guess), its confidence is
lowered to low, so that an abstaining client abstains."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from resolver.memory.memory import Answer
from resolver.search.confidence import LOW, Confidence, abstention, below, rank
from resolver.serve.request import Message

INSTRUCTING = ("system", "developer")
# A serial that opens a fact: digits and a full stop, before a blank or the end, at a line's
# start or after a sentence end, a colon or a frame ("Part 1. The Beginning" and "Europe 1."
# hold no serial: their "1." follows a word).
_SERIAL = re.compile(r"(?:\A|(?<=\n)|(?<=[.!?:>\]]\s))[ \t]*(\d{1,19})\.(?=\s|\Z)")
_HEADER = re.compile(r"list of facts\s*:", re.IGNORECASE)
LIST_START = 1                  # a list's numbering starts at 0 or 1
GUESSED = "several numbered fact lists, and no header said which is the context"


@dataclass(frozen=True)
class FactList:
    first: tuple[int, int]      # (message, offset) of its first serial
    last: tuple[int, int]       # (message, offset) of its last serial
    facts: int                  # serials in it
    header: bool                # a header stands between the list before it and its first serial
    role: str                   # the role of its first serial's message
    cut: tuple[int, int]        # where its text starts: (message, offset)


@dataclass(frozen=True)
class Choice:
    """The spans of the messages fed (None: not fed), and what the choice says."""
    spans: tuple[tuple[int, int] | None, ...]
    warnings: tuple[str, ...] = ()
    sure: bool = True           # one list, or one chosen by its header


def choose(messages: tuple[Message, ...], read: list[bool]) -> Choice:
    """The spans of `messages` to feed: each message `read` whole when the conversation holds
    one fact list, else the chosen list's (see the module docstring). Messages holding serials
    that `read` passes over (a system prompt's example) count as lists too."""
    whole = tuple((0, len(m.text)) if fed else None for m, fed in zip(messages, read))
    lists = _lists(messages, read)
    if len(lists) < 2:
        return Choice(whole)
    headed = [k for k, fl in enumerate(lists) if fl.header]
    if headed:
        chosen, why = headed[-1], "the list after the header \"Here is a list of facts:\""
    else:
        order = [(fl.role not in INSTRUCTING, fl.facts, k) for k, fl in enumerate(lists)]
        chosen = max(order)[2]
        why = ("the largest list, the last of equal ones" if
               len({o[0] for o in order}) == 1 else
               "the list in a user message (a system message's is read as instructions)")
    fl = lists[chosen]
    start = fl.cut
    stop = lists[chosen + 1].cut if chosen + 1 < len(lists) else (len(messages), 0)
    spans = []
    for i, m in enumerate(messages):
        fed = read[i] or (m.role in INSTRUCTING and fl.first[0] <= i <= fl.last[0])
        if not fed or i < start[0] or i > stop[0] or (i == stop[0] and stop[1] == 0):
            spans.append(None)
            continue
        a = start[1] if i == start[0] else 0
        b = stop[1] if i == stop[0] else len(m.text)
        spans.append((a, b) if m.text[a:b].strip() else None)
    others = ", ".join(f"{o.facts} fact{'s' * (o.facts != 1)} in a {o.role} message"
                       for k, o in enumerate(lists) if k != chosen)
    sure = len(headed) == 1
    warning = (f"the conversation holds {len(lists)} numbered fact lists (the numbering starts "
               f"again): the memory is {why}, {fl.facts} fact{'s' * (fl.facts != 1)} in a "
               f"{fl.role} message; the other{'s' * (len(lists) > 2)} ({others}) "
               f"{'are' if len(lists) > 2 else 'is'} read as "
               f"{'examples' if len(lists) > 2 else 'an example'} and not remembered")
    if not sure:
        warning += "; which list is the context is a guess: the confidence is lowered to low"
    return Choice(tuple(spans), (warning,), sure)


def _lists(messages: tuple[Message, ...], read: list[bool]) -> list[FactList]:
    """The numbered lists of the messages that are read or are system messages holding a
    serial, in order: a new one where the numbering starts again, at a serial of 0 or 1 not
    above the one before it that a header stands before or the next serial continues ("0. ...
    1. ..."): a duplicated line, or a name holding "1." ("7373. 1. FFC Frankfurt is ... 7374.",
    "... employed by Europe 1. 12096."), starts none."""
    serials = [(i, found.start(), int(found[1]))
               for i, m in enumerate(messages) if read[i] or m.role in INSTRUCTING
               for found in _SERIAL.finditer(m.text)]
    lists: list[FactList] = []
    first = last = None
    count = 0
    header = False
    cut = (0, 0)
    for k, (i, offset, value) in enumerate(serials):
        at = (i, offset)
        if first is None:
            new = True
        elif value <= LIST_START and value <= serials[k - 1][2]:
            headed = _HEADER.search(_gap(messages, last, at)) is not None
            follows = k + 1 < len(serials) and serials[k + 1][2] == value + 1
            new = headed or follows
        else:
            new = False
        if new:
            if first is not None:
                lists.append(FactList(first, last, count, header, messages[first[0]].role, cut))
            header = _HEADER.search(_gap(messages, last, at)) is not None
            cut = _cut(messages[i].text, i, last, offset)
            first, count = at, 0
        last = at
        count += 1
    if first is not None:
        lists.append(FactList(first, last, count, header, messages[first[0]].role, cut))
    return lists


def _gap(messages: tuple[Message, ...], last: tuple[int, int] | None, at: tuple[int, int]
         ) -> str:
    """The text of the list's first serial's message before it, after the previous list's last
    serial when that is in the same message (where a header would stand)."""
    i, offset = at
    begin = last[1] if last is not None and last[0] == i else 0
    return messages[i].text[begin:offset]


def _cut(text: str, i: int, last: tuple[int, int] | None, offset: int) -> tuple[int, int]:
    """Where a list starting at `offset` of message `i` starts its text: the message's start
    when no earlier list's serial is in it, else the line holding its header, or its first
    serial's line."""
    if last is None or last[0] != i:
        return (i, 0)
    gap = text[last[1]:offset]
    header = _HEADER.search(gap)
    at = last[1] + header.start() if header is not None else offset
    line = text.rfind("\n", last[1], at)
    return (i, line + 1 if line >= 0 else at)


def lowered(answer: Answer, abstain_below: str | None) -> Answer:
    """The answer with its confidence lowered to low (GUESSED its reason), and emptied when
    that is below `abstain_below`."""
    confidence = answer.confidence
    if rank(confidence.label) <= rank(LOW):
        return answer
    confidence = Confidence(LOW, confidence.reasons + (GUESSED,))
    if answer.text and below(confidence, abstain_below):
        return dataclasses.replace(answer, text="", confidence=confidence,
                                   reason=abstention(confidence, abstain_below))
    return dataclasses.replace(answer, confidence=confidence)
