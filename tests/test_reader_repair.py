"""Reader and repair lanes through the real `ollama` client against the loopback server: they
answer when the model does, and on any failure give "" or [] and say why, never raising."""
from __future__ import annotations

import pytest
from ollama_server import MODEL, OllamaServer, Reply, Slow, Status, refused_url

from resolver.errors import InputError
from resolver.haystack import bundled_path, load
from resolver.models.compile_ollama import prompt_text
from resolver.models.reader import make_reader
from resolver.models.repair import make_repairer, repair_prompt
from resolver.plan.plans import Plan

SPEC = f"ollama:{MODEL}"
QUESTION = "What position does Irving Fryar play?"
FACTS = ["12. Irving Fryar plays the position of wide receiver.",
         "40. Irving Fryar plays the position of tight end."]


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr("resolver.models.ollama_client.RETRY_BACKOFF", 0.0)


@pytest.fixture(scope="module")
def store():
    dataset, _gold = load([bundled_path()])
    return dataset.haystack_of(dataset.questions[0]).store


# ---- reader ------------------------------------------------------------------------------
def test_reader_answers_from_question_and_facts_only():
    with OllamaServer(lambda r: {"answer": " \"tight end.\" "}) as server:
        reader = make_reader(SPEC, host=server.url, timeout=5)
        assert reader.name == SPEC
        assert reader.answer(QUESTION, FACTS) == "tight end"
        assert reader.last_error == ""
    (request,) = server.chat_requests()
    assert request["options"] == {"temperature": 0.0, "num_predict": 48}
    assert request["format"]["required"] == ["answer"]
    system, user = request["messages"]
    assert system["content"] == prompt_text("reader.txt")
    assert user["content"] == ("Facts:\n" + "\n".join(FACTS) + f"\n\nQuestion: {QUESTION}"
                               "\nReply:")
    assert reader.describe()["prompt_file"] == "reader.txt"


def test_one_reader_prompt_for_every_row():
    with OllamaServer(lambda r: {"answer": "x"}) as server:
        reader = make_reader(SPEC, host=server.url, timeout=5)
        reader.answer(QUESTION, FACTS)
        reader.answer("Who is Walter Chrysler's child?", ["3. Walter Chrysler's child is Ann."])
    systems = {r["messages"][0]["content"] for r in server.chat_requests()}
    assert len(systems) == 1


@pytest.mark.parametrize("respond, error", [
    (lambda r: Reply("tight end"), "invalid json: reply is not JSON: 'tight end'"),
    (lambda r: {"reply": "tight end"}, "invalid json: no string 'answer' in"),
    (lambda r: Reply('{"answer": "tight en', "length"), "truncated: reply cut off at 48"),
    (lambda r: Status(500, "boom"), "http error: 500 boom"),
    (lambda r: Slow(30, Reply("{}")), "timeout: no reply from"),
])
def test_reader_failure_answers_empty_and_says_why(respond, error):
    slow = isinstance(respond({}), Slow)
    with OllamaServer(respond) as server:
        reader = make_reader(SPEC, host=server.url, timeout=0.3 if slow else 5)
        assert reader.answer(QUESTION, FACTS) == ""
    assert reader.last_error.startswith(error), reader.last_error
    assert (reader.calls, reader.failures) == (1, 1)


def test_reader_unknown_model_and_refused_connection():
    with OllamaServer() as server:
        reader = make_reader("ollama:absent", host=server.url, timeout=5)
        assert reader.answer(QUESTION, FACTS) == ""
        assert reader.last_error.startswith("unknown model: 'absent'")
    reader = make_reader(SPEC, host=refused_url(), timeout=5)
    assert reader.answer(QUESTION, FACTS) == ""
    assert reader.last_error.startswith("connection refused: cannot connect")


def test_reader_error_clears_on_the_next_good_answer():
    replies = iter([Reply("nope"), {"answer": "tight end"}])
    with OllamaServer(lambda r: next(replies)) as server:
        reader = make_reader(SPEC, host=server.url, timeout=5)
        assert reader.answer(QUESTION, FACTS) == "" and reader.last_error
        assert reader.answer(QUESTION, FACTS) == "tight end" and reader.last_error == ""


def test_reader_spec_must_name_an_ollama_model():
    with pytest.raises(InputError, match="unknown model spec 'none'"):
        make_reader("none")


# ---- repair ------------------------------------------------------------------------------
BROKEN = Plan("Igor of Kiev", ("died_in", "married_to"), "person", "lexicon", "cue")
QUESTION_MH = "In which location did the spouse of Igor of Kiev pass away?"


def test_repair_returns_a_validated_plan(store):
    reply = {"entity": "Igor of Kiev", "chain": ["married_to", "died_in"]}
    with OllamaServer(lambda r: reply) as server:
        repairer = make_repairer(SPEC, host=server.url, timeout=5)
        (plan,) = repairer.repair(QUESTION_MH, BROKEN, store)
    assert plan == Plan("Igor of Kiev", ("married_to", "died_in"), "city", SPEC, plan.rule,
                        "repair of: Igor of Kiev -> died_in -> married_to : person")
    assert plan.rule.startswith("repair.txt sha256:")
    system, user = server.chat_requests()[0]["messages"]
    assert system["content"] == repair_prompt() and "{{" not in system["content"]
    assert user["content"] == (f"Question: {QUESTION_MH}\n"
                               'Entities named in the question: ["Igor of Kiev"]\n'
                               'Plan to repair: {"entity":"Igor of Kiev","chain":'
                               '["died_in","married_to"]}\nReply:')
    assert repairer.name == SPEC and repairer.last_error == ""


@pytest.mark.parametrize("respond, error", [
    (lambda r: {"entity": "Igor of Kiev", "chain": ["wed"]}, "invalid plan: unknown relation"),
    (lambda r: {"entity": "Igor of Kiev", "chain": ["died_in", "married_to"]},
     "the model returned the same plan"),
    (lambda r: Reply("{", "length"), "truncated"),
    (lambda r: Status(502, "bad gateway"), "http error: 502 bad gateway"),
])
def test_repair_failure_gives_no_plan_and_says_why(store, respond, error):
    with OllamaServer(respond) as server:
        repairer = make_repairer(SPEC, host=server.url, timeout=5)
        assert repairer.repair(QUESTION_MH, BROKEN, store) == []
    assert repairer.last_error.startswith(error), repairer.last_error


def test_repair_with_refused_connection(store):
    repairer = make_repairer(SPEC, host=refused_url(), timeout=5)
    assert repairer.repair(QUESTION_MH, BROKEN, store) == []
    assert repairer.last_error.startswith("connection refused")
