"""Correction lines (grammars/corrections.lark) -> `Correction` records.

A correction frames a fact sentence S, read by the fact grammar itself (facts.lark, S given the
frame of a fact line, "0. S."), or by the location rule of corrections.lark ("{obj} is in
{loc}", P-Mem's ALFWorld-Revision relation). What each form does to a memory is
`resolver.store.corrections`; this module only reads.

Only lines that open with a correction cue (after an optional serial) or hold ", not " are
read here (`resolver.text.cues` finds them): every other line is a fact line, and the fact grammar reads it alone.
A candidate that reads as no correction is reported when it opens with a cue (never stored
as a fact with a wrong subject: "2. The report that Tim Cook is employed by Google was an
error." is no fact about "The report that Tim Cook"); a ", not " line that reads as no
correction is left to the fact grammar (an object may hold ", not ")."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from resolver.errors import InputError
from resolver.text import grammar
from resolver.text.cues import GRAMMAR_FILE, grammar_text
from resolver.text.facts import UnparsedLine, parse_line, read_serial

if TYPE_CHECKING:
    from lark import Lark, Tree

LOCATION = "location"
# The forms, by the alias of their alternative in the grammar.
RETRACT, CONTRADICT, REPORT, CHECK, UPDATE, MOVE, EARLIER = (
    "retract", "contradict", "report", "check", "update", "move", "earlier")
FORMS = (RETRACT, CONTRADICT, REPORT, CHECK, UPDATE, MOVE, EARLIER)
EXPECTED = "a correction in one of the forms of docs/memory.md, framing a fact sentence"
@lru_cache(maxsize=None)
def location_template() -> str:
    """The location relation's template, "[X] is in __", from the grammar's `location` rule."""
    for alias, symbols in grammar.fact_alternatives(grammar_text(), rule=LOCATION):
        if alias == LOCATION:
            words = [value for kind, value in symbols if kind == "literal"]
            return "[X]" + "".join(words).rstrip() + " __"
    raise RuntimeError(f"{GRAMMAR_FILE}: no `location` rule")


@lru_cache(maxsize=None)
def _parser() -> Lark:
    from lark import Lark  # lazily: only a candidate line builds it
    return Lark(grammar_text(), parser="lalr", lexer="contextual", start=["start", LOCATION],
                propagate_positions=False, maybe_placeholders=False)


@dataclass(frozen=True, slots=True)
class Correction:
    """One correction line, read. `subject`, `relation`, `value`: the fact S it frames (for a
    move, the object and its new location; for "S, not X", S). `other`: X of "S, not X", the
    location a move names as the old one ("from {a}"); else None."""
    form: str                  # one of FORMS
    subject: str
    relation: str
    value: str
    line: int
    text: str                  # the line as written
    serial: int | None = None  # its own serial, when it was written with one
    other: str | None = None

    def to_json(self) -> dict:
        return {"form": self.form, "subject": self.subject, "relation": self.relation,
                "value": self.value, "other": self.other, "line": self.line,
                "text": self.text, "serial": self.serial}


def read_sentence(sentence: str) -> tuple[str, str, str] | None:
    """(subject, relation, object) of a fact sentence without serial and final full stop, read
    by the fact grammar, else by the location rule; None when neither reads it."""
    sentence = sentence.strip()
    if not sentence or "\n" in sentence:
        return None
    try:
        fact = parse_line(f"0. {sentence}.")
    except InputError:
        pass
    else:
        return fact.subject, fact.relation, fact.object
    from lark.exceptions import LarkError  # loaded by the parser
    try:
        tree = _parser().parse(sentence + ".", start=LOCATION)
    except LarkError:
        return None
    subject, obj = (str(t) for t in tree.children)
    return subject.strip(), LOCATION, obj[:-1].strip()


def read(raw: str, line: int = 1) -> Correction | UnparsedLine:
    """The correction a line holds, or why a line that looks like one is none."""
    text = raw.strip()
    from lark.exceptions import LarkError
    try:
        tree = _parser().parse(text, start="start")
    except LarkError:
        return UnparsedLine(line, raw, f"looks like a correction but fits no correction form "
                            f"(expected {EXPECTED})")
    serial = None
    if tree.children and not hasattr(tree.children[0], "data"):
        serial = read_serial(str(tree.children[0])[:-2])
    node: Tree = tree.children[-1]
    parts = [str(t) for t in node.children]
    form, other = node.data, None
    if form == "retract_move":
        obj, loc = parts
        form, found = RETRACT, (obj.strip(), LOCATION, loc.strip())
    elif form == MOVE:
        obj, old, new = parts
        found, other = (obj.strip(), LOCATION, new[:-1].strip()), old.strip()
    elif form == EARLIER:
        obj, loc = parts
        found = (obj.strip(), LOCATION, loc[:-1].strip())
    else:
        sentence = parts[0] if form in (RETRACT, CONTRADICT) else parts[0][:-1]
        if form == CONTRADICT:
            other = parts[1][:-1].strip()
        found = read_sentence(sentence)
        if found is None:
            return UnparsedLine(line, raw, f"looks like a correction ({form}) but "
                                f"{sentence.strip()!r} is no fact sentence the grammar reads")
    if not all(found) or other == "":
        return UnparsedLine(line, raw, f"a correction ({form}) with an empty name or value")
    return Correction(form, *found, line, raw, serial, other)
