"""The question in the last user message: where it stands, what the memory is asked, and how
it was found (`find_question`). The rule in full is in docs/server.md ("Where the question
is"); each function below says the part it decides.

In order: inside the harness's instruction prompt when the message holds one
(`harness.prompt_start`: the text from the prompt's opening on); else the last question sentence
after the message's last numbered fact, ending with "?" (or a fullwidth "？", read as "?"), with
any text after it that holds no numbered fact ("...? Answer briefly.", "Question:\n...?\n\nAnswer
briefly."); else, with no "?", the last line after the facts that asks (a "Question:" label, an
interrogative, an imperative such as "Name" or "Tell me"); else the same two looked for before
the first numbered fact (a question put before the facts); else no question (`NOT_FOUND`: the
whole message is memory, and the reply is empty with the reason "no question found").

The question sentence: on its line (or two lines, when it runs over them, or after a
"Question:" label on the line before), after the line's last numbered fact, from the last
sentence end before which a complete sentence stands (`_complete`: a name holding ". " or
"! ", "St. Kitts", "Part 1. What Lies Beneath", "Oklahoma! play", stays in the question), a
"Question:" label left out; a
sentence ends at ".", "!" or "?" and a blank, or at a line break, so a last fact written without
its full stop stays memory."""
from __future__ import annotations

import re
from dataclasses import dataclass

from resolver.mab import harness
from resolver.text.facts import reads_as_fact

# How the question was found (`Found.how`).
IN_PROMPT, LAST_SENTENCE, QUESTION_LINE = "prompt", "last sentence", "question line"
BEFORE_FACTS, NOT_FOUND = "before the facts", "none"
NO_QUESTION_FOUND = ("no question found: the last user message holds no instruction prompt, no "
                     "sentence ending with \"?\" and no line that asks (\"Question: ...\", "
                     "\"Who ...\", \"Name ...\"), after its facts or before them")
_NONBLANK = re.compile(r"\S")
# A fullwidth question mark ends a question as "?" does: read as one (one character for one, so
# every offset found holds in the text as sent).
_FULLWIDTH = str.maketrans({"\uff1f": "?"})
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
# A sentence that asks without "?" by an imperative ("Name the ...", "Tell me who ...").
_IMPERATIVE = re.compile(r"(?:Name|Identify|Give|Tell|List|Find|State)\b", re.IGNORECASE)
QUESTION_LINES = 8                  # the last non-blank lines searched for a line that asks
# A word that ends no sentence: an abbreviation ("St.", "Mt.", "Inc."), an initial ("L."), a
# dotted one ("D.C.").
ABBREVIATION = re.compile(r"(?:[A-Z][a-z]?|Mrs|Inc|Ltd|Sgt|Gen|Gov|Sen|Rev|Vol|Ave|Corp|"
                           r"Capt|Prof|Bros|Dept|Univ|Blvd|(?:[A-Za-z]\.)+[A-Za-z])\Z")


@dataclass(frozen=True)
class Found:
    """The question in a message's text: text[start:stop] is the question's part (the question,
    its label, any text after it), the rest of the text is memory; `question` is what the
    memory is asked ("" when none was found); `how` says which rule found it."""
    start: int
    stop: int
    question: str
    how: str


def split_question(text: str) -> tuple[int, str]:
    """(where the question part starts, what to ask) in the last user message: the text
    before `start` is memory (and, for a question before the facts, the text after it)."""
    found = find_question(text)
    return found.start, found.question


def find_question(text: str) -> Found:
    """The question in the last user message's text (see the module docstring)."""
    if "\uff1f" in text:
        text = text.translate(_FULLWIDTH)
    start = harness.prompt_start(text)
    if start is not None:
        return Found(start, len(text), text[start:], IN_PROMPT)
    end = _blank_end(text, len(text))
    cue = harness.ANSWER_CUE.strip()
    if text.endswith(cue, 0, end):
        end = _blank_end(text, end - len(cue))
    last = _last_serial(text, 0, end)
    found = _asked(text, 0 if last is None else last.end(), end, before=False, fact=last)
    if found is None and last is not None:
        # a question put before the facts: looked for in the text before the first one
        first = _SERIAL_AT.search(text, 0, end)
        head = text.rfind("\n", 0, first.start()) + 1
        found = _asked(text, 0, _blank_end(text, head), before=True)
    return found or Found(len(text), len(text), "", NOT_FOUND)


def _asked(text: str, low: int, end: int, before: bool, fact: re.Match | None = None
           ) -> Found | None:
    """The question in text[low:end], which holds no numbered fact's serial: the last
    question sentence ending with "?" (any text after it holding none), else the last line
    that asks (`_asking_line`); None when there is neither. `before`: the text is what stands
    before the facts, so the question's part ends with the question (the rest is memory).
    `fact`: the serial of the numbered fact text[low:] starts in, whose own text is no
    question when it reads as a fact (`_fact_holds`, `_asking_line`)."""
    mark = end if text.endswith("?", low, end) else _last_mark(text, low, end)
    if mark is not None and fact is not None and _fact_holds(text, fact, mark):
        mark = None
    if mark is not None:
        start, asked = _question_start(text, mark)
        question = text[asked:mark]
        if "\n" in question:             # a question run over two lines, asked as one
            question = " ".join(question.split())
        return Found(start, mark if before else len(text), question,
                     BEFORE_FACTS if before else LAST_SENTENCE)
    line = _asking_line(text, low, end, fact)
    if line is None:
        return None
    start, asked, stop = line
    return Found(start, stop if before else len(text), " ".join(text[asked:stop].split()),
                 BEFORE_FACTS if before else QUESTION_LINE)


def _last_mark(text: str, low: int, end: int) -> int | None:
    """The end of the last "?" in text[low:end] followed by a blank; None when there is
    none."""
    at = end
    while True:
        mark = text.rfind("?", low, at)
        if mark < 0:
            return None
        if mark + 1 < end and text[mark + 1].isspace():
            return mark + 1
        at = mark


def _fact_holds(text: str, fact: re.Match, mark: int) -> bool:
    """Whether the "?" ending at `mark` is inside the numbered fact's own text, a name's ("0.
    The author of What Is Art? is Leo Tolstoy.", "0. Who Are You? was performed by The Who.",
    verification U06): on the fact's line, a lower-case word follows it, no sentence of the
    fact ends before it, and the line reads as a fact."""
    stop = text.find("\n", mark)
    stop = len(text) if stop < 0 else stop
    goes_on = text[mark:stop].lstrip()
    return (goes_on[:1].islower() and "\n" not in text[fact.end():mark]
            and not _cuts(text, fact.end(), mark, fact=True)
            and reads_as_fact(text[fact.start():stop]))


def _asking_line(text: str, low: int, end: int, fact: re.Match | None = None
                 ) -> tuple[int, int, int] | None:
    """(where the question part starts, where the question starts, where it ends) for the
    last line of text[low:end] that asks without "?" (E08), among its last QUESTION_LINES
    non-blank lines: a line after a "Question:" label (on it, or alone on the line before),
    else a line whose last sentence opens with an interrogative ("Who is Tim Cook employed
    by"), else one that opens with an imperative ("Name the employer of Tim Cook"); None when
    no line asks. The numbered fact `fact` (text[low:] starts in its text) is not a line that
    asks when it reads as a fact ("0. Who Framed Roger Rabbit is employed by Disney.")."""
    lines = []                                   # (start, end) of non-blank lines, last first
    stop = end
    while stop > low and len(lines) < QUESTION_LINES:
        start = max(text.rfind("\n", low, stop) + 1, low)
        if _NONBLANK.search(text, start, stop):
            lines.append((start, stop))
        stop = start - 1
    for k, (start, stop) in enumerate(lines):
        label = harness.QUESTION_LABEL.match(text, _skip_blanks(text, start, stop), stop)
        if label is None:
            continue
        if _NONBLANK.search(text, label.end(), stop):
            return start, label.end(), stop
        if k:                                    # a label alone: the next line is asked
            return start, lines[k - 1][0], lines[k - 1][1]
    for opens in (_INTERROGATIVE, _IMPERATIVE):
        for start, stop in lines:
            begin = _skip_blanks(text, start, stop)
            cuts = _cuts(text, begin, stop)
            for at in (cuts[-1], begin) if cuts else (begin,):
                if opens.match(text, at, stop) and not (
                        at == low and fact is not None
                        and reads_as_fact(text[fact.start():stop])):
                    return start, at, stop
    return None


def _skip_blanks(text: str, start: int, end: int) -> int:
    while start < end and text[start].isspace():
        start += 1
    return start


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
    that line is a "Question:" label alone, or when the question runs over two ("What is the
    capital\nof St. Kitts?"): that line opens with an interrogative or a "Question:" label,
    holds no "?" and no numbered fact, and ends inside a sentence (no ".", "!", "?" or ":", or
    at an abbreviation, "... of St.")."""
    line = text.rfind("\n", 0, end) + 1
    if not line:
        return line
    before = text.rfind("\n", 0, line - 1) + 1
    previous = text[before:line - 1].strip()
    if not previous or "?" in previous or _SERIAL_AT.match(previous):
        return line
    label = harness.QUESTION_LABEL.match(previous)
    if label and label.end() == len(previous):
        return before                           # a "Question:" label on a line of its own
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
        if _complete(text[sentence:boundary.start() + 1], asks=not (fact and not cuts),
                     goes_on=text[boundary.end():boundary.end() + 1].islower()):
            cuts.append(boundary.end())
            sentence = boundary.end()
    return cuts


def _complete(sentence: str, asks: bool = True, goes_on: bool = False) -> bool:
    """Whether `sentence` (ending with ".", "!" or "?") is a sentence of its own, after which
    a question may start (verification D01, D02): not one capitalised word ("Kitts."), not
    ending in an abbreviation or an initial ("St.", "D.C.", "L.") or in a name's number ("Part
    1."), and not a question cut inside a name (opening with an interrogative and ending at a
    capitalised word: "Who is the author of The Great Gatsby.", unless `asks` is false: a
    numbered fact's text). MQuAKE names hold ". " and "! " ("What type of music does Oklahoma!
    play?", "Hey! Say! JUMP", verification U06), so a "!" is read as ".": a question cut there
    is not a sentence. A "?" ends one, unless such a question cut goes on with a lower-case
    word (`goes_on`: "What type of music does Who Are You? play?"), so "Where is Paris? Who
    is ...?" still asks the last."""
    sentence = sentence.strip()
    if sentence.endswith("..") or (sentence.endswith("?") and not goes_on):
        return True
    words = sentence[:-1].split()
    if sentence.endswith(("?", "!")):
        return not (asks and len(words) > 1 and _cut_in_name(sentence, words[-1]))
    if len(words) < 2:
        return False
    last = words[-1]
    if ABBREVIATION.match(last) or (last.isdigit() and words[-2][:1].isupper()):
        return False
    return not (asks and _cut_in_name(sentence, last))


def _cut_in_name(sentence: str, last: str) -> bool:
    """Whether `sentence` is a question cut inside a name: it opens with an interrogative (after
    a "Question:" label) and ends at a capitalised word or a number."""
    label = harness.QUESTION_LABEL.match(sentence)
    return bool(_INTERROGATIVE.match(sentence, label.end() if label else 0)
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
