"""The grammar is the single source of the templates: what it encodes must be exactly MQuAKE's
44 cloze templates, and its hand-written lookahead must list exactly its own connectors."""
from __future__ import annotations

import re

from lark import Lark

from resolver.text import grammar
from resolver.text.relations import mquake_cloze_templates


def _terminals() -> dict[str, object]:
    return {t.name: t for t in grammar.fact_parser().terminals}


def test_templates_are_exactly_the_mquake_cloze_templates():
    derived = sorted(grammar.templates().values())
    # P131 and P276 share one template, so 44 P-ids give 43 distinct templates.
    assert sorted(set(mquake_cloze_templates().values())) == derived
    assert len(mquake_cloze_templates()) == 44
    assert len(derived) == 43


def test_typos_are_kept_as_mquake_has_them():
    templates = grammar.templates()
    assert templates["educated_at"] == "The univeristy where [X] was educated is __"
    assert templates["original_broadcaster"] == "The origianl broadcaster of [X] is __"


def test_both_forms_of_the_language_of_a_work():
    templates = grammar.templates()
    assert templates["original_language"] == "The original language of [X] is __"
    assert templates["language_of_work"] == "[X] was written in the language of __"


def test_subject_lookahead_lists_exactly_the_x_first_connectors():
    pattern = _terminals()["S_X"].pattern.value
    # Lark keeps the pattern with "\n" already turned into a newline.
    inside = re.fullmatch(r"\[\^\n\]\+\(\?=\(\?:(.*)\)\)", pattern)
    assert inside, pattern
    listed = inside[1].split("|")
    assert sorted(listed) == sorted(grammar.x_first_connectors())
    assert len(listed) == len(set(listed)) == 25


def test_longer_connectors_come_first_in_the_lookahead():
    # Python's regex alternation is ordered; a connector that is the tail of another must not
    # shadow it at the same position. Listing longest first makes that impossible.
    listed = _terminals()["S_X"].pattern.value.split("(?:", 1)[1].rstrip(")").split("|")
    assert [len(c) for c in listed] == sorted((len(c) for c in listed), reverse=True)


def test_priorities_rank_specific_over_generic():
    terminals = _terminals()
    priority = {name: t.priority for name, t in terminals.items()}
    prefixes = [n for n in priority if n.startswith("_P_")]
    assert len(prefixes) == 16
    assert priority["S_X"] == 5
    assert {priority[n] for n in prefixes} == {4}
    assert priority["S_LOCATED_IN"] == 3
    assert priority["_THE"] == 1
    assert priority["S_X"] > priority["_P_CAPITAL"] > priority["S_LOCATED_IN"] > priority["_THE"]


def test_every_priority_is_explained_in_a_comment():
    text = grammar.grammar_text()
    for level, example in [("5", "is a citizen of"), ("4", "The <words> of [X]"),
                           ("3", '"[X] is located in __"'), ("1", "The [X] is __")]:
        block = re.search(rf"//\s+{level}\s+(.*?)(?=//\s+\d\s|// Subjects take)", text, re.S)
        assert block and example in block[1], level


def test_one_alternative_per_relation_and_aliases_are_unique():
    aliases = [r.alias for r in grammar.fact_parser().rules if r.origin.name == "fact"]
    assert len(aliases) == 43 == len(set(aliases))


def test_grammar_loads_as_a_standalone_lalr_grammar():
    parser = Lark(grammar.grammar_text(), parser="lalr", start=["start", "line"])
    assert parser.parse("0. A is owned by B.", start="line").children[0].data == "owned_by"


def test_grammar_hash_is_of_the_file():
    import hashlib
    assert grammar.grammar_sha256() == hashlib.sha256(
        grammar.grammar_text().encode("utf-8")).hexdigest()


def _templates_of_the_parser(parser: Lark) -> dict[str, str]:
    """The templates rebuilt from a built parser's rules and terminals (how they were read
    before `grammar.templates()` read the grammar text)."""
    terminals = {t.name: t.pattern for t in parser.terminals}
    out = {}
    for rule in parser.rules:
        if rule.origin.name != "fact" or rule.alias is None:
            continue
        parts = []
        for sym in rule.expansion:
            if sym.name == "SERIAL":
                continue
            if sym.name.startswith("S_"):
                parts.append("[X]")
            elif sym.name == "OBJECT":
                parts.append(" __")
            else:
                parts.append(terminals[sym.name].value)
        out[rule.alias] = "".join(parts).replace("  __", " __")
    return out


def test_templates_read_from_the_text_equal_those_of_the_built_parser():
    assert grammar.templates() == _templates_of_the_parser(grammar.fact_parser())
    assert list(grammar.templates()) == list(_templates_of_the_parser(grammar.fact_parser()))


def test_x_first_connectors_read_from_the_text_equal_those_of_the_built_parser():
    parser = grammar.fact_parser()
    terminals = {t.name: t.pattern for t in parser.terminals}
    expected = [terminals[rule.expansion[2].name].value for rule in parser.rules
                if rule.origin.name == "fact" and len(rule.expansion) > 2
                and rule.expansion[1].name == "S_X"]
    assert list(grammar.x_first_connectors()) == expected


def test_the_text_reading_follows_an_edited_grammar():
    """A changed template, comment lines inside the rule, a trailing comment and a string
    terminal used in an alternative: the text reading and the parser still agree."""
    text = grammar.grammar_text()
    edited = text.replace('" is owned by "', '" is owned // by "')
    edited = edited.replace("    | SERIAL S_X \" was created by \" OBJECT",
                            "    // a comment line inside the rule\n"
                            "    | SERIAL S_X \" was created by \" OBJECT")
    edited = edited.replace("-> founded_by", "-> founded_by   // trailing comment")
    assert edited.count("//") == text.count("//") + 3
    read = grammar.templates_of(edited)
    expected = _templates_of_the_parser(
        Lark(edited, parser="lalr", lexer="contextual", start=["start", "line"]))
    assert read == expected
    assert read["owned_by"] == "[X] is owned // by __"
