"""Fact lines -> facts: real lines of every template in the data, the priorities between
templates, and every way a context can be wrong."""
from __future__ import annotations

from functools import lru_cache

import pytest
from conftest import bundled_context

from resolver.errors import InputError
from resolver.text.facts import Fact, parse_context, parse_line

# One real line (bundled data, size and line number in the comment) per template that occurs.
REAL = [
    # 6k line 12
    ("10. The author of A Wizard of Earthsea is Ursula K. Le Guin.",
     "author", "A Wizard of Earthsea", "Ursula K. Le Guin"),
    ("0. Thomas Kyd was born in the city of London.", "born_in", "Thomas Kyd", "London"),
    ("21. The capital of Tang Empire is Chang'an.", "capital", "Tang Empire", "Chang'an"),
    ("13. The chief executive officer of Apple Inc. is Tim Cook.",
     "ceo", "Apple Inc.", "Tim Cook"),
    ("1. The chairperson of Fatah is Mahmoud Abbas.", "chairperson", "Fatah", "Mahmoud Abbas"),
    ("61. Walter Chrysler's child is Walter Percy Chrysler Jr..",
     "child", "Walter Chrysler", "Walter Percy Chrysler Jr."),
    ("22. Robert A. Heinlein is a citizen of United States of America.",
     "citizenship", "Robert A. Heinlein", "United States of America"),
    ("4. Bengaluru is located in the continent of Asia.", "continent", "Bengaluru", "Asia"),
    ("57. cricket was created in the country of England.",
     "country_of_origin", "cricket", "England"),
    ("66. Rand al'Thor was created by Robert Jordan.",
     "created_by", "Rand al'Thor", "Robert Jordan"),
    ("221. Windows Phone was developed by Microsoft.", "developer", "Windows Phone", "Microsoft"),
    ("2. Amy Winehouse died in the city of Camden Town.",
     "died_in", "Amy Winehouse", "Camden Town"),
    ("7. The director of British Broadcasting Corporation is Tony Hall, Baron Hall of "
     "Birkenhead.", "director", "British Broadcasting Corporation",
     "Tony Hall, Baron Hall of Birkenhead"),
    ("15. The univeristy where Galileo Galilei was educated is University of Pisa.",
     "educated_at", "Galileo Galilei", "University of Pisa"),
    ("38. Dave Filoni is employed by Lucasfilm.", "employer", "Dave Filoni", "Lucasfilm"),
    ("45. Friedrich Nietzsche is famous for Thus Spoke Zarathustra.",
     "famous_for", "Friedrich Nietzsche", "Thus Spoke Zarathustra"),
    ("134. Moshe Kahlon works in the field of politician.",
     "field_of_work", "Moshe Kahlon", "politician"),
    ("16. Chanel was founded by Coco Chanel.", "founded_by", "Chanel", "Coco Chanel"),
    ("30. Pakistan International Airlines was founded in the city of Karachi.",
     "founded_in", "Pakistan International Airlines", "Karachi"),
    ("83. The type of music that Dale Evans plays is country music.",
     "genre", "Dale Evans", "country music"),
    # 32k line 186
    ("184. The head coach of Cleveland Indians is Terry Francona.",
     "head_coach", "Cleveland Indians", "Terry Francona"),
    ("140. The name of the current head of the Pittsburgh government is Bill Peduto.",
     "head_of_government", "Pittsburgh", "Bill Peduto"),
    ("79. The name of the current head of state in United Kingdom is Elizabeth II.",
     "head_of_state", "United Kingdom", "Elizabeth II"),
    ("9. The headquarters of University of Minnesota is located in the city of Minneapolis.",
     "headquarters", "University of Minnesota", "Minneapolis"),
    ("199. The Wheel of Time was written in the language of English.",
     "language_of_work", "The Wheel of Time", "English"),
    ("44. Kūkai speaks the language of Japanese.", "languages_spoken", "Kūkai", "Japanese"),
    ("8. Victoria Beckham is married to David Beckham.",
     "married_to", "Victoria Beckham", "David Beckham"),
    ("82. The Prime Minister of Sweden is Stefan Löfven.",
     "officeholder", "Prime Minister of Sweden", "Stefan Löfven"),
    ("89. The official language of Moscow is Russian.", "official_language", "Moscow", "Russian"),
    ("363. The origianl broadcaster of 666 Park Avenue is American Broadcasting Company.",
     "original_broadcaster", "666 Park Avenue", "American Broadcasting Company"),
    # 32k line 35
    ("33. The original language of The Sky at Night is English.",
     "original_language", "The Sky at Night", "English"),
    ("25. Aladdin Sane was performed by David Bowie.", "performed_by", "Aladdin Sane",
     "David Bowie"),
    ("3. Hines Ward plays the position of wide receiver.",
     "position", "Hines Ward", "wide receiver"),
    ("92. The company that produced Il-2 Shturmovik is Ilyushin.",
     "produced_by", "Il-2 Shturmovik", "Ilyushin"),
    ("68. Natalie Portman is affiliated with the religion of Judaism.",
     "religion", "Natalie Portman", "Judaism"),
    ("18. Slovakia national football team is associated with the sport of association "
     "football.", "sport", "Slovakia national football team", "association football"),
    ("5. Pedro Pierluisi worked in the city of Washington, D.C..",
     "work_location", "Pedro Pierluisi", "Washington, D.C."),
    # 262k line 7370: non-ASCII letters on both sides
    ("7368. Nicolae Ceaușescu is married to Elena Ceaușescu.",
     "married_to", "Nicolae Ceaușescu", "Elena Ceaușescu"),
    # 6k line 14: a comma inside a "The ... of [X]" subject
    ("12. The headquarters of University of California, Berkeley is located in the city of "
     "Berkeley.", "headquarters", "University of California, Berkeley", "Berkeley"),
    ("324. The name of the current head of the Council of People's Commissars government is "
     "Vladimir Lenin.", "head_of_government", "Council of People's Commissars", "Vladimir Lenin"),
]


@lru_cache(maxsize=None)
def _all_lines() -> frozenset[str]:
    return frozenset(line for size in ("6k", "32k", "64k", "262k")
                     for line in bundled_context(size).split("\n"))


@pytest.mark.parametrize("line, relation, subject, obj", REAL, ids=[r[1] for r in REAL])
def test_real_line_gets_its_relation(line, relation, subject, obj):
    assert line in _all_lines()
    fact = parse_line(line)
    assert (fact.relation, fact.subject, fact.object) == (relation, subject, obj)
    assert fact.serial == int(line.split(".")[0])


def test_every_relation_in_the_data_has_a_real_line_above():
    in_data = {f.relation for f in _parsed("262k").facts} | {f.relation for f in
                                                             _parsed("6k").facts}
    assert in_data == {r[1] for r in REAL}


@lru_cache(maxsize=None)
def _parsed(size: str):
    return parse_context(bundled_context(size))


@pytest.mark.parametrize("size, count", [("6k", 455), ("32k", 2310), ("64k", 4580),
                                         ("262k", 18332)])
def test_every_bundled_context_parses_completely(size, count):
    result = _parsed(size)
    assert result.unparsed == ()
    assert len(result.facts) == count
    assert result.has_header
    assert [f.serial for f in result.facts] == list(range(count))
    assert result.lines == count + 1


def test_pure_python_lark_and_lark_cython_give_the_same_facts():
    text = bundled_context("32k")
    assert parse_context(text, fast=False).facts == _parsed("32k").facts


# ---- priorities ---------------------------------------------------------------------------
@pytest.mark.parametrize("line, relation, subject", [
    # P364 fits the catch-all "The [X] is __" too; the specific prefix wins.
    ("0. The original language of Doctor Who is English.", "original_language", "Doctor Who"),
    ("0. Doctor Who was written in the language of English.", "language_of_work", "Doctor Who"),
    # A "[X] ..." connector outranks every "The ..." opening.
    ("0. The Undertaker is a citizen of United States of America.", "citizenship",
     "The Undertaker"),
    # A specific "The ... of" prefix outranks the generic "[X] is located in".
    ("0. The headquarters of NPR is located in the city of Washington, D.C..", "headquarters",
     "NPR"),
    ("0. Sorbonne is located in Paris.", "located_in", "Sorbonne"),
    ("0. The Louvre is located in Paris.", "located_in", "The Louvre"),
    ("0. The Governor of Hawaii is David Ige.", "officeholder", "Governor of Hawaii"),
    ("0. The director of the FBI is Christopher Wray.", "director", "the FBI"),
    ("0. The capital of France is Paris.", "capital", "France"),
    ("0. The Bureau is owned by ACME.", "owned_by", "The Bureau"),
])
def test_specific_templates_win_over_generic_ones(line, relation, subject):
    fact = parse_line(line)
    assert (fact.relation, fact.subject) == (relation, subject)


def test_subject_takes_the_last_connector_and_object_runs_to_the_final_stop():
    fact = parse_line("1. Jim is married to Ann is married to Bob, Jr..")
    assert (fact.subject, fact.object) == ("Jim is married to Ann", "Bob, Jr.")


def test_accents_and_other_letters_are_kept_byte_for_byte():
    fact = parse_line("5. Anderson Cooper 360º was created in the country of Côte d’Ivoire.")
    assert fact.subject == "Anderson Cooper 360º"
    assert fact.object.encode("utf-8") == "Côte d’Ivoire".encode("utf-8")


def test_trailing_blanks_are_allowed_and_kept_in_the_text():
    result = parse_context("Here is a list of facts:  \n0. A is owned by B.  \t\n1. C is owned by D. ")
    assert [(f.subject, f.object) for f in result.facts] == [("A", "B"), ("C", "D")]
    assert result.facts[0].text == "0. A is owned by B.  \t"
    assert result.has_header and result.unparsed == ()


# ---- context structure ----------------------------------------------------------------------
def test_header_is_optional_and_blank_lines_are_counted():
    result = parse_context("0. A is owned by B.\n\n1. C is owned by D.\n")
    assert not result.has_header
    assert (result.lines, result.blank_lines) == (2, 1)
    assert [f.line for f in result.facts] == [1, 3]


def test_unparsed_lines_are_reported_with_number_text_and_reason():
    text = ("Here is a list of facts:\n0. A is owned by B.\n1. A likes B.\nno number here.\n"
            "2. C is owned by D\n3. E is owned by F.\n")
    result = parse_context(text)
    assert [(f.serial, f.line) for f in result.facts] == [(0, 2), (3, 6)]
    assert [(u.line, u.text, u.reason) for u in result.unparsed] == [
        (3, "1. A likes B.", "fits no fact template"),
        (4, "no number here.", 'no serial: expected "<number>. " at the start of the line'),
        (5, "2. C is owned by D", "no final full stop"),
    ]


def test_header_anywhere_but_the_first_line_is_reported():
    result = parse_context("0. A is owned by B.\nHere is a list of facts:\n")
    assert [(u.line, u.reason) for u in result.unparsed] == [(2, "header not on the first line")]


def test_duplicate_serial_names_both_lines():
    with pytest.raises(InputError) as err:
        parse_context("0. A is owned by B.\n1. C is owned by D.\n1. E is owned by F.\n",
                      path="ctx.txt")
    assert str(err.value) == ("ctx.txt:3: duplicate serial 1: also on line 2 (expected each "
                              "serial once)\n    1. E is owned by F.")


def test_serial_out_of_order_names_both_lines():
    with pytest.raises(InputError) as err:
        parse_context("5. A is owned by B.\n3. C is owned by D.\n", path="ctx.txt")
    assert str(err.value) == ("ctx.txt:2: serial 3 is out of order: line 1 has serial 5 "
                              "(expected serials in increasing order)\n    3. C is owned by D.")


@pytest.mark.parametrize("text", ["", "\n\n", "  \n", "\ufeff"])
def test_empty_input_is_an_error(text):
    with pytest.raises(InputError, match="empty input: no header and no fact lines"):
        parse_context(text, path="empty.txt")


def test_crlf_and_bom_are_handled_and_noted():
    result = parse_context("\ufeffHere is a list of facts:\r\n0. A is owned by B.\r\n")
    assert result.has_header
    assert result.facts == (Fact(0, "A", "owned_by", "B", 2, "0. A is owned by B."),)
    assert result.notes == ("byte-order mark removed", "CRLF line endings read as LF")


def test_parse_line_explains_a_line_that_fits_nothing():
    with pytest.raises(InputError, match="^line 1: fits no fact template"):
        parse_line("0. A likes B.")


def test_facts_read_their_serial_and_line_from_the_shared_lines():
    # A parse's facts keep their serials and lines in the parse's Lines (4-byte slots): a
    # serial past 32 bits, up to the largest factres takes (2^63 - 1), is kept whole, and a
    # fact equals one made by hand.
    text = ("Here is a list of facts:\n7. The capital of Norland is Brimvik.\n"
            "2147483648. The capital of Norland is Ostby.\n"
            "9223372036854775807. The capital of Norland is Vale.\n")
    facts = parse_context(text).facts
    assert [f.serial for f in facts] == [7, 2 ** 31, 2 ** 63 - 1]
    assert [f.text for f in facts] == text.splitlines()[1:]
    assert facts[2] == Fact(2 ** 63 - 1, "Norland", "capital", "Vale", 4,
                            "9223372036854775807. The capital of Norland is Vale.")
    assert hash(facts[0]) == hash(Fact(7, "Norland", "capital", "Brimvik", 2,
                                       "7. The capital of Norland is Brimvik."))
    with pytest.raises(AttributeError):
        facts[0].serial = 8
