"""Round trip: a parsed fact re-rendered through its template is its line again, on all the
bundled data, and parse(render(fact)) == fact for generated names in every template.

Convention of the generator (the grammar's rule: a subject runs to the LAST occurrence of its
template's connector, an object runs to the line's final full stop). Names are built from a
word alphabet holding "of", "is", "the", commas, dots ("D.C."), apostrophes and non-ASCII words
but no other word of any template, so no name can contain another template's connector. An
object must not contain its own template's connector (for "The capital of [X] is __" that is
" is "): such a line is genuinely ambiguous and the grammar gives the subject the longer part.
Subjects may contain their connector's words freely ("The capital of A is B is C." has
subject "A is B")."""
from __future__ import annotations

import re

import pytest
from conftest import bundled_context
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from resolver.text import grammar
from resolver.text.facts import parse_context, parse_line
from resolver.text.relations import inventory

TEMPLATE_WORDS = frozenset(
    word for template in grammar.templates().values()
    for word in re.findall(r"[A-Za-z]+", template.replace("[X]", " ").replace("__", " "))
) - {"of", "is", "the", "The"}

FIXED_WORDS = ["of", "is", "the", "The", "Zürich", "São", "Ceaușescu", "Washington,", "D.C.",
               "Jr.", "O'Neill", "Chang'an", "4th", "Earl", "Bedford", "Francis", "Russell,",
               "Łódź", "İstanbul", "Ærø", "北京", "360º", "Löfven", "al-Qaeda", "St."]
_random_word = st.text(alphabet=st.characters(categories=("Lu", "Ll", "Lo", "Nd")), min_size=1,
                       max_size=8).filter(lambda w: w not in TEMPLATE_WORDS)
WORDS = st.one_of(st.sampled_from(FIXED_WORDS), _random_word)
NAMES = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)


# The relations of the fact templates (the ALFWorld-Revision `location` is read from correction
# lines only: tests/test_corrections.py).
FACT_RELATIONS = sorted(name for name, rel in inventory().items() if rel.source == "MQuAKE")


def _connector(template: str) -> str:
    return template.split("[X]", 1)[1].removesuffix(" __") + " "


@pytest.mark.parametrize("size", ["6k", "32k", "64k", "262k"])
def test_every_bundled_fact_renders_back_to_its_line(size):
    relations = inventory()
    for fact in parse_context(bundled_context(size)).facts:
        rendered = f"{fact.serial}. " + relations[fact.relation].render(fact.subject, fact.object)
        assert rendered == fact.text


def test_generator_excludes_every_template_word_but_of_is_the():
    assert {"married", "located", "univeristy", "origianl", "government", "child"} <= \
        TEMPLATE_WORDS
    assert not {"of", "is", "the"} & TEMPLATE_WORDS


@settings(max_examples=60, deadline=None)
@given(serial=st.integers(min_value=0, max_value=10**7), subject=NAMES, obj=NAMES,
       data=st.data())
def test_parse_of_render_is_the_fact_for_every_template(serial, subject, obj, data):
    relation = data.draw(st.sampled_from(FACT_RELATIONS), label="relation")
    rel = inventory()[relation]
    assume(_connector(rel.template) not in f" {obj} ")
    line = f"{serial}. " + rel.render(subject, obj)
    fact = parse_line(line)
    assert (fact.serial, fact.relation, fact.subject, fact.object, fact.text) == \
        (serial, relation, subject, obj, line)


@pytest.mark.parametrize("relation", FACT_RELATIONS)
def test_each_template_with_of_is_commas_dots_and_accents(relation):
    rel = inventory()[relation]
    subject = "Francis Russell, 4th Earl of Bedford is São Zürich"
    obj = "Washington, D.C." if _connector(rel.template) != " is " else "Ceaușescu of D.C."
    fact = parse_line("7. " + rel.render(subject, obj))
    assert (fact.relation, fact.subject, fact.object) == (relation, subject, obj)
