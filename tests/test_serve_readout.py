"""The server's model name `factres-readout` (issue 33): accepted and listed whatever `--models`
lists, its reply's message is the memory's readout for the question (`Memory.readout`, 600
characters, no disclosure), streamed or not; asked with the real `openai` client on loopback."""
from __future__ import annotations

import pytest
from openai import NotFoundError
from test_serve import KEY, ask, client, frames, harness_messages

from resolver.haystack import bundled_path, load
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.serve.app import serving
from resolver.serve.config import ServeConfig

QUESTIONS = ("What is the country of citizenship of the spouse of the author of Our Mutual "
             "Friend?", "What is Ferdowsi famous for?")


@pytest.fixture(scope="module")
def server():
    """A key and one model name: `factres-readout` is accepted all the same."""
    with serving(ServeConfig(port=0, api_key=KEY, models=("gpt-4o-mini",))) as url:
        yield url


@pytest.fixture(scope="module")
def context():
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    memory = Memory()
    for chunk in frames(haystack.text):
        memory.ingest(chunk)
    memory.flush()
    return haystack.text, memory


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_readout_model_answers_with_the_memorys_readout(server, context, question):
    text, memory = context
    api = client(server, KEY)
    reply = ask(api, harness_messages(text, question), model="factres-readout")
    expected = memory.readout(question)
    assert expected.startswith("[#") and len(expected) <= 600
    assert reply.choices[0].message.content == expected
    assert reply.model == "factres-readout" and reply.choices[0].finish_reason == "stop"
    assert reply.usage.completion_tokens == len(expected.split())
    # the same conversation under the harness's model name is answered as ever
    answer = ask(api, harness_messages(text, question)).choices[0].message.content
    assert answer == memory.query(question).text and answer in expected


def test_the_readout_streams_too(server, context):
    text, memory = context
    events = list(client(server, KEY).chat.completions.create(
        model="factres-readout", messages=harness_messages(text, QUESTIONS[0]), stream=True))
    assert "".join(e.choices[0].delta.content or "" for e in events if e.choices) == \
        memory.readout(QUESTIONS[0])


def test_the_readout_model_is_listed_and_another_name_still_refused(server):
    api = client(server, KEY)
    assert [m.id for m in api.models.list().data] == ["factres", "factres-readout",
                                                      "gpt-4o-mini"]
    assert api.models.retrieve("factres-readout").id == "factres-readout"
    with pytest.raises(NotFoundError):
        ask(api, [{"role": "user", "content": "0. Tim Cook is employed by Apple.\n"
                   + harness.prompt("Who is Tim Cook employed by?")}], model="gpt-5")


def test_a_conversation_with_nothing_to_read_gets_an_empty_message(server):
    reply = ask(client(server, KEY), [{"role": "user", "content": harness.prompt("")}],
                model="factres-readout")
    assert reply.choices[0].message.content == ""
