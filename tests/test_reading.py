"""Reading a question: the asked type (which wh-word asks, and the noun it governs), office
phrasings, and words that only restate a relation already named.

The store is invented; the questions are written for these tests, not taken from any question
set."""
from __future__ import annotations

import pytest

from resolver.plan.asked import asking_word, clause_starts
from resolver.plan.compile_lexicon import compile_question
from resolver.plan.lexicon import restates, template_words
from resolver.plan.question import read
from resolver.search.path_search import search, select
from resolver.store.fact_store import FactStore, name_tokens
from resolver.text.facts import parse_context

TEXT = """Here is a list of facts:
0. Tova Lind is a citizen of Norland.
1. The name of the current head of state in Norland is Pell Arne.
2. Pell Arne is married to Tova Lind.
3. The official language of Norland is Norlandic.
4. Zorblax United is associated with the sport of curling.
5. The company that produced Brimvik Glider is Arne Works.
6. Arne Works was founded by Pell Arne.
7. The headquarters of Arne Works is located in the city of Brimvik.
8. Tova Lind speaks the language of Norlandic.
9. The name of the current head of the Norland government is Ida Berg.
10. The univeristy where Tova Lind was educated is Brimvik College.
11. The headquarters of Brimvik College is located in the city of Ostby.
12. Ostby is located in Norland.
"""


@pytest.fixture(scope="module")
def store():
    parsed = parse_context(TEXT)
    assert parsed.unparsed == ()
    return FactStore(parsed.facts)


@pytest.mark.parametrize("question, asked, word", [
    # The wh-word that opens the sentence asks.
    ("Who is the head of state of Norland?", "person", "head"),
    ("Of which nation is Tova Lind a citizen?", "country", "nation"),
    ("Which religious leader founded Arne Works?", "person", "leader"),
    # A relative wh-word before it never asks; the one left in place does.
    ("The person who founded Arne Works is a citizen of which country?", "country", "country"),
    ("The company that produced Brimvik Glider was founded by whom?", "person", "whom"),
    ("Tova Lind's spouse is the head of state of what country?", "country", "country"),
    # A clause after a comma, or after "and", holds the question.
    ("Of the country where Tova Lind holds citizenship, who is the head of state?", "person",
     "head"),
    ("In the country where Tova Lind is a citizen, which language is official?", "language",
     "language"),
    ("In which country was curling developed, and who is the head of government in that "
     "nation?", "person", "head"),
    # "Which X's Y": the determiner's noun is asked; "what is X's Y": the possessed noun is.
    ("Which country's head of state is married to Tova Lind?", "country", "country"),
    ("What is Tova Lind's spouse's nationality?", "country", "nationality"),
    ("What is the country's capital?", "city", "capital"),
    # Past the subject of an auxiliary, the verb names it.
    ("What does Tova Lind speak?", "language", "speak"),
    # "Who is the N of": the noun says what is asked; without a noun, a person.
    ("Who is the employer of Tova Lind?", "organisation", "employer"),
    ("Who is married to Tova Lind?", "person", "who"),
    ("Who is affiliated with the religion of Tova Lind?", "person", "who"),
    ("Whose spouse is Tova Lind?", "person", "whose"),
    ("Where is Arne Works headquartered?", "place", "where"),
    # No wh-word asks: the imperative's noun, or the noun a relative follows.
    ("Name the city where Arne Works has its headquarters.", "city", "city"),
    ("Tell me the person who founded Arne Works.", "person", "person"),
])
def test_the_asked_type_is_read_from_the_noun_the_asking_word_governs(store, question, asked,
                                                                        word):
    reading = read(question, store)
    assert (reading.answer_type, reading.type_word) == (asked, word)


def test_clause_starts_follow_punctuation_not_words():
    text = "Of the country where X was born, who leads it; and why?"
    tokens = name_tokens(text)
    assert [tokens[i] for i in sorted(clause_starts(text))] == ["who", "and"]
    assert tokens[asking_word(text, tokens)] == "who"
    assert asking_word("Tova Lind is a citizen of Norland.",
                       name_tokens("Tova Lind is a citizen of Norland.")) is None


@pytest.mark.parametrize("phrase, relation", [
    ("Who leads the country Tova Lind is a citizen of?", "head_of_state"),
    ("Who is the leader of the nation Tova Lind belongs to?", "head_of_state"),
    ("Who is the national leader of Tova Lind's country?", "head_of_state"),
    ("Who presides over the country Tova Lind is a citizen of?", "head_of_state"),
    ("Who reigns over the land Tova Lind is a citizen of?", "head_of_state"),
    ("Who holds the highest office in the state Tova Lind is a citizen of?", "head_of_state"),
    ("Who is the emperor of the country Tova Lind is a citizen of?", "head_of_state"),
    ("Who runs the government of the country Tova Lind is a citizen of?",
     "head_of_government"),
    ("Who leads the government of Tova Lind's nation?", "head_of_government"),
    ("Who is the first minister of the country Tova Lind is a citizen of?",
     "head_of_government"),
    ("Who heads the cabinet of the nation Tova Lind belongs to?", "head_of_government"),
    ("Who leads Tova Lind's country?", "head_of_state"),
    ("The country of which Tova Lind is a citizen is led by whom?", "head_of_state"),
])
def test_office_phrasings_cue_the_office(store, phrase, relation):
    reading = read(phrase, store)
    strongest = max((s for s in reading.spans if s.relation in ("head_of_state",
                                                                 "head_of_government")),
                    key=lambda s: (s.weight, s.end - s.start))
    assert strongest.relation == relation
    assert reading.answer_type == "person"


def test_template_words_say_a_relation_again():
    assert "located" in template_words("headquarters")
    assert restates(("located",), "headquarters")
    assert restates(("headquartered",), "headquarters")        # an inflection
    assert not restates(("founder",), "founded_in")            # another noun, not the verb
    assert not restates(("the", "city"), "headquarters")       # no content word left
    assert not restates(("located",), "capital")


def test_a_word_that_restates_the_path_adds_no_hop(store):
    # "located" says where the headquarters are, in the headquarters template's own words;
    # it is not a hop of its own (Ostby is located in Norland, which has no capital here).
    q = "What is the city where the headquarters of Tova Lind's university are located?"
    plans = compile_question(q, store).plans
    assert plans[0].chain == ("educated_at", "headquarters")
    assert not any({"headquarters", "located_in"} <= set(p.chain) for p in plans
                   if p.rule.startswith("typed"))
    # The search agrees: the restating word is neither a hop nor left unexplained.
    _, cands = search(q, store, [("lexicon", p) for p in plans])
    best = select(cands)
    assert [h.relation for h in best.hops] == ["educated_at", "headquarters"]
    assert not any(k.startswith("unexplained:'located'") for k, _ in best.terms)
    # Without the headquarters, "located" is the hop.
    q = "Where is the university Tova Lind attended located?"
    assert compile_question(q, store).plans[0].chain == ("educated_at", "located_in")


def test_where_accepts_an_institution(store):
    # "Where did X study?": at a university; a city reached by an uncued hop does not win.
    _, cands = search("Where did Tova Lind study?", store, [])
    best = select(cands)
    assert best.answer == "Brimvik College"
    assert dict(best.terms)["type:place~organisation"] == 0.5
