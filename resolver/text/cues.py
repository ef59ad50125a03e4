"""Which lines may be corrections (grammars/corrections.lark), found fast: the cues that open
a correction, read from the grammar, and the lines of a text that hold one (or ", not "). Pure
text, below the parser: `facts` asks it (a correction with a serial of its own is no fact) and
`corrections` reads the lines it finds."""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from resolver.text import grammar

GRAMMAR_FILE = "corrections.lark"
# The terminals that open a correction (its cues), named in the grammar.
_CUE_TERMINALS = ("_THE_REPORT", "_CORRECTION", "_REPORT", "_CHECK", "_UPDATE", "_EARLIER")
NOT = ", not "


def grammar_text() -> str:
    return resources.files("resolver").joinpath("grammars", GRAMMAR_FILE).read_text("utf-8")


@lru_cache(maxsize=None)
def cues() -> tuple[str, ...]:
    """The words that open a correction ("Correction: ", "Report: ", ...), from the grammar."""
    strings = grammar.string_terminals(grammar_text())
    return tuple(strings[name] for name in _CUE_TERMINALS)


@lru_cache(maxsize=None)
def candidate_pattern() -> re.Pattern:
    """A line (multi-line mode) that may be a correction: a cue after an optional serial, or
    ", not " anywhere. One pass of it over a context finds every candidate."""
    opening = "|".join(re.escape(c) for c in cues())
    return re.compile(rf"^[ \t]*(?:[0-9]+\. )?(?:{opening})|{re.escape(NOT)}", re.MULTILINE)


@lru_cache(maxsize=None)
def _quick_words() -> tuple[str, ...]:
    """What every candidate line holds: ": " for the cues that end with it, the other cues
    whole, ", not ". A text of fact lines holds almost none (the 262K context: two ": "), and
    only the lines holding one are matched against the full pattern: a multi-line `^`
    pattern over the 262K context costs 15% of its parse, one regex for the three words 5%,
    `str.find` of each about 2%."""
    return tuple(sorted({": " if cue.endswith(": ") else cue for cue in cues()} | {NOT}))


def _hits(text: str) -> list[int]:
    """Where the words of `_quick_words` start in `text`, in order."""
    out = []
    for word in _quick_words():
        at = text.find(word)
        while at >= 0:
            out.append(at)
            at = text.find(word, at + 1)
    out.sort()
    return out


def candidate(raw: str) -> bool:
    """Whether one line may be a correction (`candidate_pattern`)."""
    return candidate_pattern().search(raw) is not None


def candidate_lines(text: str) -> list[int]:
    """The 0-based numbers of the lines of `text` (split at LF) that may be corrections, in
    order; fast on a text that holds none."""
    out: list[int] = []
    line, at, done_to = 0, 0, -1
    for hit in _hits(text):
        start = text.rfind("\n", 0, hit) + 1
        if start <= done_to:
            continue                       # a line already looked at
        end = text.find("\n", hit)
        end = len(text) if end < 0 else end
        line += text.count("\n", at, start)
        at = start
        done_to = end
        if candidate(text[start:end]):
            out.append(line)
    return out


def any_candidate(text: str) -> bool:
    """Whether some line of `text` may be a correction (`candidate_lines`), stopping at the
    first."""
    for word in _quick_words():
        at = text.find(word)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            if candidate(text[start:end]):
                return True
            at = text.find(word, end)
    return False


def cued(raw: str) -> bool:
    """Whether the line opens with a correction cue (after an optional serial)."""
    found = candidate_pattern().search(raw)
    return found is not None and found.group() != NOT


