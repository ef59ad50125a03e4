"""A context pruned of superseded facts (`factres prune`, P-Mem's graph-guided pruning): each
fact is dropped when the same context holds a fact of its key (normalised subject, relation)
with a higher serial; everything else is kept as written, text that does not parse included.

Facts are found as `factres parse` and the memory find them: line by line, a line of several
facts (a harness chunk: "0. ... 1. ...") cut by `text.segment`, each piece read by the grammar.
A dropped fact takes the blanks after it with it (before it, when it ends its line), and a line
left blank by the drops goes with its line break, so a context of one fact per line keeps one
fact per line."""
from __future__ import annotations

import re
from dataclasses import dataclass

from resolver.store.fact_store import norm
from resolver.text import segment
from resolver.text.facts import BOM, HEADER, parse_fact_lines, reads_as_fact

_SPACED_SERIAL = re.compile(r"(\d+)\. ")


@dataclass(frozen=True)
class Pruned:
    """The pruned text and what was done: facts kept, facts dropped (superseded), and pieces of
    text that fit no template (kept as they are)."""
    text: str
    kept: int
    dropped: int
    unparsed: int

    def to_json(self) -> dict:
        return {"kept": self.kept, "dropped": self.dropped, "unparsed": self.unparsed}


def prune(text: str) -> Pruned:
    """`text` without the facts a higher serial of the same key supersedes in it."""
    if not isinstance(text, str):
        from resolver.errors import InputError
        raise InputError(f"a context must be text, not {type(text).__name__}",
                         expected="a str of numbered facts")
    body = text[len(BOM):] if text.startswith(BOM) else text
    # CRLF ends a line as LF does (as `factres parse` reads it): the CR is kept for the output
    lines = [(line[:-1], "\r") if line.endswith("\r") else (line, "")
             for line in body.split("\n")]
    pieces: list[tuple[int, str]] = []            # (line index, piece text)
    previous = None
    for at, (line, _) in enumerate(lines):
        if not line.strip(segment.BLANKS) or line.strip(segment.BLANKS) == HEADER:
            continue                               # blank, or the header: kept, not a fact
        if segment.MAYBE_SEVERAL.search(line):
            found, _, previous = segment.split_line(line, True, previous, reads_as_fact)
        else:
            found = [line.strip(segment.BLANKS)]
            own = segment.SERIAL.match(found[0])
            previous = segment.number(own.group(1)) if own else previous
        pieces += [(at, piece) for piece in found]
    facts, unparsed = parse_fact_lines([p for _, p in pieces])
    newest: dict[tuple[str, str], int] = {}
    for fact in facts:
        key = (norm(fact.subject), fact.relation)
        if fact.serial > newest.get(key, -1):
            newest[key] = fact.serial
    # a fact's line is its piece's position, counted from 1
    dropped = {fact.line - 1 for fact in facts
               if fact.serial < newest[(norm(fact.subject), fact.relation)]}
    by_line: dict[int, list[tuple[str, bool]]] = {}
    for number, (at, piece) in enumerate(pieces):
        by_line.setdefault(at, []).append((piece, number in dropped))
    out = []
    for at, (line, end) in enumerate(lines):
        cut = _without(line, by_line.get(at, ()))
        if cut is not None:
            out.append(cut + end)
    pruned = "\n".join(out)
    return Pruned((BOM if text.startswith(BOM) else "") + pruned,
                  len(facts) - len(dropped), len(dropped), len(unparsed))


def _without(line: str, pieces) -> str | None:
    """`line` without its dropped pieces; None when dropping left it blank (the line goes)."""
    if not any(drop for _, drop in pieces):
        return line
    spans, at = [], 0
    for piece, drop in pieces:
        start = line.find(piece, at)
        size = len(piece)
        if start < 0:
            # a serial glued to its fact ("340.Stojko ..."): the piece holds the blank put back
            glued = _SPACED_SERIAL.sub(lambda m: m[1] + ".", piece, count=1)
            start, size = line.find(glued, at), len(glued)
        if start < 0:           # not found as written: kept, never dropped blind
            continue
        at = start + size
        spans.append((start, at, drop))
    kept, end = "", 0
    for start, stop, drop in spans:
        if not drop:
            continue
        kept += line[end:start]
        end = stop
        # the blanks after a dropped fact go with it
        while end < len(line) and line[end] in segment.BLANKS:
            end += 1
    if spans and spans[-1][2]:
        # the line's last piece dropped: the blanks before it go too, its line end stays
        kept = kept.rstrip(segment.BLANKS)
    kept += line[end:]
    return kept if kept.strip(segment.BLANKS) else None
