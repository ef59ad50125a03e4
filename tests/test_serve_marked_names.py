"""Names holding "!", "?" or ". " inside a bare question (verification U06): the server asks the
whole question, on plain /v1 with the facts before it and on a named memory fed the facts
earlier. Before, "What type of music does Oklahoma! play?" was read as its last words
('play?', answer ''). Every subject of the bundled contexts whose name holds "!" or "?" is asked
its own question (the MQuAKE template of its relation) and answers the last fact's object; the
question rule keeps it whole in every template, with text before and after it."""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache

import pytest
from openai import OpenAI

from resolver.haystack import bundled_path
from resolver.memory.memory import Memory
from resolver.serve.app import serving
from resolver.serve.config import ServeConfig
from resolver.serve.question import find_question
from resolver.text.facts import parse_line
from resolver.text.relations import inventory, relation

HEAD = "Here is a list of facts:\n"
CONTEXTS = ("32k", "64k", "262k")


@lru_cache(maxsize=None)
def marked() -> dict[str, list[str]]:
    """Each subject of the bundled contexts whose name holds "!" or "?", with its fact lines
    (in the 262K context, which holds every other context's)."""
    lines: dict[str, list[str]] = {}
    for size in CONTEXTS:
        for line in bundled_path(f"factconsolidation_{size}_context.txt").read_text(
                "utf-8").splitlines():
            if re.match(r"\d+\. ", line) and re.search(r"[!?]", line):
                fact = parse_line(line)
                if re.search(r"[!?]", fact.subject) and line not in lines.get(fact.subject, ()):
                    lines.setdefault(fact.subject, []).append(line)
    return lines


def own_questions() -> list[tuple[str, str, str]]:
    """(facts, question, the answer) for each marked subject and relation: the answer is the
    object of the key's last fact."""
    out = []
    for subject, lines in sorted(marked().items()):
        facts = [parse_line(line) for line in lines]
        for rel in sorted({f.relation for f in facts}):
            last = [f for f in facts if f.relation == rel][-1]
            out.append((HEAD + "\n".join(lines) + "\n",
                        relation(rel).question.replace("[X]", subject), last.object))
    return out


# Names holding "?" or ". " (none of the bundled subjects holds "?"), and the verifier's
# multi-hop question, each with its facts.
MADE = [
    (HEAD + "0. The type of music that Who Are You? plays is hard rock.\n"
     "1. The type of music that Who Are You? plays is punk rock.\n",
     "What type of music does Who Are You? play?", "punk rock"),
    (HEAD + "0. Are You Experienced? was performed by Jimi Hendrix.\n",
     "Who performed Are You Experienced?", "Jimi Hendrix"),
    (HEAD + "0. Dr. No was created in the country of United Kingdom.\n",
     "Which country was Dr. No created in?", "United Kingdom"),
    (HEAD + "0. St. Kitts is located in the continent of North America.\n",
     "Which continent is St. Kitts located in?", "North America"),
    (HEAD + "0. Mr. T is a citizen of United States of America.\n",
     "What is the country of citizenship of Mr. T?", "United States of America"),
    (HEAD + "0. The author of Horton Hears a Who! is Dr. Seuss.\n"
     "1. The univeristy where Dr. Seuss was educated is Dartmouth College.\n",
     "Which university was the author of Horton Hears a Who! educated at?", "Dartmouth College"),
]


def test_the_bundled_contexts_hold_the_marked_names():
    assert {"Oklahoma!", "Horton Hears a Who!", "Hey! Say! JUMP", "P!nk",
            "What's Happening!!"} <= set(marked())
    assert len(own_questions()) >= 16


@pytest.mark.parametrize("template", sorted({r.question for r in inventory().values()}))
def test_a_marked_name_stays_in_the_question_in_every_template(template):
    names = sorted(marked()) + ["Who Are You?", "Dr. No", "St. Kitts"]
    for name in names:
        question = template.replace("[X]", name)
        for before, after in (("", ""), (HEAD + "0. P!nk is married to Carey Hart.\n", ""),
                              ("Please answer. ", " Answer briefly."),
                              ("Hey! ", "\nAnswer:")):
            found = find_question(before + question + after)
            assert found.question == question, (before, question, after)
            assert found.start == len(before)


def test_two_questions_still_ask_the_last():
    for text, asked in (("Where is Paris? Who is Tim Cook employed by?",
                         "Who is Tim Cook employed by?"),
                        ("Hello! Who performed Help!?", "Who performed Help!?"),
                        ("What a day! Who performed Help!?", "Who performed Help!?")):
        assert find_question(HEAD + "0. A is located in the continent of B.\n" + text
                             ).question == asked


@pytest.mark.parametrize("fact", [
    "0. The author of What Is Art? is Leo Tolstoy.", "0. Who Are You? was performed by The Who.",
    "0. Who Framed Roger Rabbit is employed by Disney."])
def test_a_last_fact_holding_a_mark_or_opening_with_a_question_word_is_memory(fact):
    for text in (HEAD + fact, HEAD + fact + "\n"):
        assert (find_question(text).question, find_question(text).start) == ("", len(text))


def chat(api: OpenAI, *contents: str):
    reply = api.chat.completions.create(
        model="factres", messages=[{"role": "user", "content": c} for c in contents])
    return reply.choices[0].message.content, reply.model_extra["factres"]


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    with serving(ServeConfig(port=0, store=str(tmp_path_factory.mktemp("store")))) as url:
        yield url


@pytest.mark.parametrize("facts, question, answer", own_questions() + MADE,
                         ids=lambda v: v if isinstance(v, str) and v.endswith("?") else "")
def test_the_server_asks_the_whole_question(url, facts, question, answer):
    memory = Memory()
    memory.ingest(facts)
    assert memory.query(question).text == answer                  # the library, for reference
    api = OpenAI(base_url=url, api_key="sk-anything", max_retries=0)
    for contents in ((facts + question,), (facts, question)):    # one message, or two
        text, extra = chat(api, *contents)
        assert (text, extra["question"]) == (answer, question)
    name = "m-" + hashlib.sha256(question.encode()).hexdigest()[:12]
    named = OpenAI(base_url=f"{url}/memories/{name}", api_key="sk-anything", max_retries=0)
    assert chat(named, facts)[0] == ""                            # facts, no question
    text, extra = chat(named, question)                           # later, bare
    assert (text, extra["question"], extra["memory"]["ingested"]) == (answer, question, 0)
