"""Whether a request's memory part is a whole context or one its client cut before sending it.

A harness whose model config has a smaller window than the context (MemoryAgentBench's
`gpt-4o-mini` and `gpt-4o`, 128K tokens) keeps only the context's last tokens: the 262K
context reaches the server as its last ~124K tokens, and the server answers from the facts it
was sent, with nothing to say that the others are gone. A whole FactConsolidation context opens
with its header ("Here is a list of facts:") or, chunk by chunk, inside the harness's memorize
frame; a cut one opens inside the fact list. `cut_warnings` reads the start of the memory part
for that (docs/server.md, "Which harness model configs keep the whole context"):

- no header and no frame before its first numbered fact ("12042. The ..."), unless that fact
  opens a list (serial 0 or 1: facts written by hand, without the benchmark's header), or
- a first line that is the tail of a fact ("Hubbard." before a frame): a sentence's end with
  no serial of its own, before any header or frame (the cut fell inside a line).

Either gives one warning, which the reply carries in `factres.warnings` and the server logs. A
memory part without a numbered fact (no facts at all) gets none: there is nothing it could
have lost that the server could tell. Only the first fact-bearing message is read, up to its
first numbered fact (at most SCAN characters), so the check costs the same for any context."""
from __future__ import annotations

import re

from resolver.mab import harness

HEADER = re.compile(r"list of facts\s*:", re.IGNORECASE)
FRAMES = (harness.FRAME_OPENING, harness.FRAME_INSTRUCTION)
# A numbered fact: a serial at a line's start, or after a sentence end, a colon or a frame's
# line, then a blank and text ("Part 1. The Beginning" is no fact: its "1." follows a word).
_FIRST_FACT = re.compile(r"(?m)(?:^[ \t]*|(?<=[.!?:])[ \t]+)(\d+)\.[ \t]+(?=\S)")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\Z")
SCAN = 1 << 16              # characters read at most before the first numbered fact
LIST_START = 1              # a first fact numbered 0 or 1 opens a list: nothing before it lost
SHOWN = 60                  # characters of a fact's tail a warning quotes
ADVICE = ("a client cuts a context longer than its model's window (MemoryAgentBench's "
          "gpt-4o-mini and gpt-4o keep the last ~124K tokens of the 262K context); use a model "
          "config whose window holds the whole context, e.g. gpt-4.1-mini (docs/server.md)")


def cut_warnings(pieces) -> list[str]:
    """Warnings that the memory part (`pieces`: (role, text, end) per message, as
    `conversation.MemoryPart` holds them) starts inside the fact list; [] for a whole context.

    The one check the server makes of an ordinary request's memory part; a request that
    names a stored memory has no memory part to check, and skips it."""
    for _, text, end in pieces:
        head = text[:min(end, SCAN)]
        fact = _FIRST_FACT.search(head)
        if fact is None:
            if "\n" not in head and len(head) == SCAN:
                return []       # no line break and no fact in the scanned start: not a list
            continue            # no fact in this message (a system prompt): the next one
        before = head[:fact.start()]
        framed = HEADER.search(before) is not None or any(f in before for f in FRAMES)
        if not framed and int(fact[1]) > LIST_START:
            return [f"the memory part starts inside the fact list: no header (\"Here is a list "
                    f"of facts:\") and no memorize frame before its first numbered fact "
                    f"(serial {fact[1]}); the context was cut before it was sent: {ADVICE}"]
        first = next((line.strip() for line in before.splitlines() if line.strip()), "")
        if _is_tail(first):
            shown = first if len(first) <= SHOWN else "..." + first[-SHOWN:]
            return [f"the memory part's first line is the tail of a cut line ({shown!r}), "
                    f"before any header or frame: the context was cut before it was sent: "
                    f"{ADVICE}"]
        return []
    return []


def _is_tail(line: str) -> bool:
    """A first line that ends a sentence and is neither a header, a frame line nor a
    numbered fact: what is left of a fact whose start was cut off."""
    if not line or HEADER.search(line) or any(line.startswith(f) for f in FRAMES):
        return False
    if line.startswith(harness.FRAME_ACKNOWLEDGEMENT[:12]):
        return False            # the acknowledgement that closes a frame
    return _SENTENCE_END.search(line) is not None and _FIRST_FACT.match(line) is None


__all__ = ["ADVICE", "cut_warnings"]
