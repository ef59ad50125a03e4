"""Whether a request's memory part is a whole context or one its client cut before sending it.

A harness whose model config has a smaller window than the context (MemoryAgentBench's
`gpt-4o-mini` and `gpt-4o`, 128K tokens) keeps only the context's last tokens: the 262K
context reaches the server as its last ~124K tokens, and the server answers from the facts it
was sent, with nothing to say that the others are gone. A whole FactConsolidation context opens
with its header ("Here is a list of facts:") or, chunk by chunk, inside the harness's memorize
frame, whose first one holds the header; a cut one opens inside the fact list. `cut_warnings`
reads the start of the memory part for that (docs/server.md, "Which harness model configs keep
the whole context"):

- its first numbered fact ("12042. The ...") has no header before it, unless that fact opens a
  list (serial 0 or 1: facts written by hand, without the benchmark's header). Whatever else
  comes before it does not decide: a memorize frame (a whole context's first frame holds the
  header, so a cut on a later frame's boundary or inside its opening lines is a cut,
  verification U38), the tail of a cut line ("Hubbard."), or lines of instruction or a
  question before a header (a whole context, verification F09).

It gives one warning, which the reply carries in `factres.warnings` and the server logs. A
memory part without a numbered fact (no facts at all) gets none: there is nothing it could
have lost that the server could tell. Only the first fact-bearing message is read, up to its
first numbered fact (at most SCAN characters), so the check costs the same for any context."""
from __future__ import annotations

import re

from resolver.mab import harness

HEADER = re.compile(r"list of facts\s*:", re.IGNORECASE)
# A message that ends with the header and maybe the first serial, the facts in the next ones.
_OPENING = re.compile(r"list of facts\s*:\s*(?:\d+\.)?\s*\Z", re.IGNORECASE)
FRAMES = (harness.FRAME_OPENING, harness.FRAME_INSTRUCTION)
# A numbered fact: a serial at a line's start, or after a sentence end, a colon or a frame's
# line, then a blank and text ("Part 1. The Beginning" is no fact: its "1." follows a word).
_FIRST_FACT = re.compile(r"(?m)(?:^[ \t]*|(?<=[.!?:])[ \t]+)(\d+)\.[ \t]+(?=\S)")
SCAN = 1 << 16              # characters read at most before the first numbered fact
LIST_START = 1              # a first fact numbered 0 or 1 opens a list: nothing before it lost
SHOWN = 60                  # characters of the first line a warning quotes
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
            if _OPENING.search(_unframed(head)):
                return []       # a small chunk that opens the list: "Here is a list of facts:
                                # 0." (one message per 16-token chunk, audit E's E20), framed
                                # or not
            continue            # no fact in this message (a system prompt): the next one
        before = head[:fact.start()]
        if HEADER.search(before) is not None or int(fact[1]) <= LIST_START:
            return []           # the list opens here: nothing of it was lost
        return [_warning(before, fact[1])]
    return []


def _unframed(text: str) -> str:
    """`text` without the acknowledgement that closes a memorize frame, if it ends with one."""
    text = text.rstrip()
    ack = harness.FRAME_ACKNOWLEDGEMENT
    return text[:-len(ack)] if text.endswith(ack) else text


def _warning(before: str, serial: str) -> str:
    """The warning for a memory part whose first numbered fact, `serial`, has no header
    before it (`before`: the text before that fact), quoting what the memory part opens with
    (the tail of a cut fact, "is a citizen of Qing dynasty.", or a line of instruction)."""
    if any(f in before for f in FRAMES):
        where = (f"its first memorize frame opens at serial {serial}, with no header (\"Here "
                 f"is a list of facts:\") before it, where a whole context's first frame holds "
                 f"the header")
    else:
        where = (f"no header (\"Here is a list of facts:\") and no memorize frame before its "
                 f"first numbered fact (serial {serial})")
        first = next((line.strip() for line in before.splitlines() if line.strip()), "")
        if first:
            shown = first if len(first) <= SHOWN else first[:SHOWN] + "..."
            where += f", which follows {shown!r}"
    return (f"the memory part starts inside the fact list: {where}; the context was cut before "
            f"it was sent: {ADVICE}")


__all__ = ["ADVICE", "cut_warnings"]
