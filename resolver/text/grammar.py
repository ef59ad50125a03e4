"""The fact-line grammar (grammars/facts.lark), loaded once, and the templates derived from it.

The grammar is the single source of the fact templates: `templates()` rebuilds every MQuAKE cloze
("[X] died in the city of __") from the grammar's own `fact` alternatives and string terminals.
It reads them from the grammar text, without building the parser: the relation inventory needs
the templates in every command, a parser only a parse that misses the cache (building one costs
tens of ms). tests/test_grammar.py checks the text reading against the rules and terminals of
the built Lark parser."""
from __future__ import annotations

import ast
import hashlib
import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lark import Lark

GRAMMAR_FILE = "facts.lark"
# Terminals that stand for the two slots of a template.
_SUBJECT_TERMINALS = ("S_X", "S_LOCATED_IN", "S_IS", "S_WAS_EDUCATED", "S_PLAYS", "S_HQ",
                      "S_GOVERNMENT")
_FRAME_TERMINALS = ("SERIAL",)

# The pieces of the grammar text templates() reads: a string literal, a name, `|` and `->`.
_LITERAL = r'"(?:[^"\\\n]|\\.)*"'
_SYMBOL = re.compile(rf"(?P<literal>{_LITERAL})|(?P<comment>//.*)|(?P<name>\w+)|(?P<bar>\|)"
                     r"|(?P<arrow>->)|\S")
_RULE_START = re.compile(r"^fact\s*:", re.MULTILINE)
_STRING_TERMINAL = re.compile(rf"^(?P<name>[A-Z_][A-Z_0-9]*)(?:\.-?\d+)?\s*:\s*(?P<literal>"
                              rf"{_LITERAL})\s*(?://.*)?$", re.MULTILINE)


def grammar_text() -> str:
    return resources.files("resolver").joinpath("grammars", GRAMMAR_FILE).read_text("utf-8")


def grammar_sha256() -> str:
    return hashlib.sha256(grammar_text().encode("utf-8")).hexdigest()


@lru_cache(maxsize=None)
def fact_parser(transformer_factory=None) -> Lark:
    """The LALR parser; with a transformer it builds facts while parsing (no tree in between)."""
    from lark import Lark  # lazily: listing templates does not need a parser (see above)
    path = resources.files("resolver").joinpath("grammars", GRAMMAR_FILE)
    with resources.as_file(path) as real_path:
        return Lark.open(str(real_path), parser="lalr", lexer="contextual",
                         start=["start", "line"],
                         transformer=transformer_factory() if transformer_factory else None,
                         propagate_positions=False, maybe_placeholders=False)


def _unquote(literal: str) -> str:
    # A grammar literal is a double-quoted string with Python's escapes (an "i" flag would
    # follow the closing quote; the fact templates have none).
    return ast.literal_eval(literal)


def fact_alternatives(text: str, rule: str = "fact"
                      ) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """(alias, symbols) of each alternative of the `fact` rule (or another `rule`), in grammar
    order, read from the grammar text. A symbol is ("name", TERMINAL) or ("literal", its text).
    The rule runs from `fact:` through the lines that continue it with `|` (comment lines
    skipped)."""
    start = (_RULE_START if rule == "fact" else
             re.compile(rf"^{re.escape(rule)}\s*:", re.MULTILINE)).search(text)
    if start is None:
        raise RuntimeError(f"{GRAMMAR_FILE}: no `{rule}` rule")
    lines = text[start.end():].split("\n")
    body = [lines[0]]
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        if not stripped.startswith("|"):
            break
        body.append(line)
    out: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    symbols: list[tuple[str, str]] = []
    alias = None
    tokens = [m for line in body for m in _SYMBOL.finditer(line) if not m["comment"]]
    tokens.append(None)                      # closes the last alternative
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token is None or token["bar"]:
            if symbols:
                if alias is None:
                    raise RuntimeError(f"{GRAMMAR_FILE}: a `fact` alternative has no alias: "
                                       f"{symbols}")
                out.append((alias, tuple(symbols)))
            symbols, alias = [], None
        elif token["arrow"]:
            i += 1
            alias = tokens[i]["name"] if tokens[i] is not None else None
        elif token["literal"]:
            symbols.append(("literal", _unquote(token["literal"])))
        elif token["name"]:
            symbols.append(("name", token["name"]))
        else:
            raise RuntimeError(f"{GRAMMAR_FILE}: unexpected {token.group()!r} in the `fact` "
                               "rule")
        i += 1
    return out


def string_terminals(text: str) -> dict[str, str]:
    """Terminal name -> its text, for every terminal the grammar defines as a string."""
    return {m["name"]: _unquote(m["literal"]) for m in _STRING_TERMINAL.finditer(text)}


@lru_cache(maxsize=None)
def templates() -> dict[str, str]:
    """Relation name -> cloze template, rebuilt from the grammar's `fact` alternatives."""
    return templates_of(grammar_text())


def templates_of(text: str) -> dict[str, str]:
    """`templates()` of a grammar text."""
    strings = string_terminals(text)
    out: dict[str, str] = {}
    for alias, symbols in fact_alternatives(text):
        parts = []
        for kind, value in symbols:
            if kind == "literal":
                parts.append(value)
            elif value in _FRAME_TERMINALS:
                continue
            elif value in _SUBJECT_TERMINALS:
                parts.append("[X]")
            elif value == "OBJECT":
                parts.append(" __")
            elif value in strings:
                parts.append(strings[value])
            else:
                raise RuntimeError(f"{GRAMMAR_FILE}: terminal {value} of `{alias}` is not a "
                                   "string, so it cannot be part of a template")
        # The object slot is written " __" in MQuAKE; the connector already ends with a space.
        out[alias] = "".join(parts).replace("  __", " __")
    return out


@lru_cache(maxsize=None)
def x_first_connectors() -> tuple[str, ...]:
    """Connectors of the "[X] <connector> __" templates that share the S_X subject terminal."""
    text = grammar_text()
    strings = string_terminals(text)
    found = []
    for _, symbols in fact_alternatives(text):
        if len(symbols) > 2 and symbols[1] == ("name", "S_X"):
            kind, value = symbols[2]
            found.append(value if kind == "literal" else strings[value])
    return tuple(found)
