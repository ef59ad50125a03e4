"""The fact-line grammar (grammars/facts.lark), loaded once, and the templates derived from it.

The grammar is the single source of the fact templates: `templates()` rebuilds every MQuAKE cloze
("[X] died in the city of __") from the grammar's own rules and terminals."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources

from lark import Lark

GRAMMAR_FILE = "facts.lark"
# Terminals that stand for the two slots of a template.
_SUBJECT_TERMINALS = ("S_X", "S_LOCATED_IN", "S_IS", "S_WAS_EDUCATED", "S_PLAYS", "S_HQ",
                      "S_GOVERNMENT")
_FRAME_TERMINALS = ("SERIAL",)


def grammar_text() -> str:
    return resources.files("resolver").joinpath("grammars", GRAMMAR_FILE).read_text("utf-8")


def grammar_sha256() -> str:
    return hashlib.sha256(grammar_text().encode("utf-8")).hexdigest()


@lru_cache(maxsize=None)
def fact_parser(transformer_factory=None) -> Lark:
    """The LALR parser; with a transformer it builds facts while parsing (no tree in between)."""
    path = resources.files("resolver").joinpath("grammars", GRAMMAR_FILE)
    with resources.as_file(path) as real_path:
        return Lark.open(str(real_path), parser="lalr", lexer="contextual",
                         start=["start", "line"],
                         transformer=transformer_factory() if transformer_factory else None,
                         propagate_positions=False, maybe_placeholders=False)


@lru_cache(maxsize=None)
def templates() -> dict[str, str]:
    """Relation name -> cloze template, rebuilt from the grammar's `fact` alternatives."""
    parser = fact_parser()
    terminals = {t.name: t.pattern for t in parser.terminals}
    out: dict[str, str] = {}
    for rule in parser.rules:
        if rule.origin.name != "fact" or rule.alias is None:
            continue
        parts = []
        for sym in rule.expansion:
            if sym.name in _FRAME_TERMINALS:
                continue
            if sym.name in _SUBJECT_TERMINALS:
                parts.append("[X]")
            elif sym.name == "OBJECT":
                parts.append(" __")
            else:
                parts.append(terminals[sym.name].value)
        text = "".join(parts)
        # The object slot is written " __" in MQuAKE; the connector already ends with a space.
        out[rule.alias] = text.replace("  __", " __")
    return out


@lru_cache(maxsize=None)
def x_first_connectors() -> tuple[str, ...]:
    """Connectors of the "[X] <connector> __" templates that share the S_X subject terminal."""
    parser = fact_parser()
    terminals = {t.name: t.pattern for t in parser.terminals}
    found = []
    for rule in parser.rules:
        names = [s.name for s in rule.expansion]
        if rule.origin.name == "fact" and len(names) > 2 and names[1] == "S_X":
            found.append(terminals[names[2]].value)
    return tuple(found)
