"""The model plan compiler, driven through the real `ollama` client against a loopback server:
good replies become plans; every kind of failure falls back to the lexicon and says why."""
from __future__ import annotations

import json

import ollama
import pytest
from ollama_server import MODEL, OllamaServer, Reply, Slow, Status, question_of, refused_url

from resolver.errors import InputError, ModelHostError
from resolver.haystack import Dataset, bundled_path, load
from resolver.models.compile_ollama import (
    compile_plan_set,
    planner_prompt,
    render_relations,
    reply_schema,
)
from resolver.plan.compile_lexicon import compile_question as lexicon
from resolver.text.relations import FAMILIES, inventory

SPEC = f"ollama:{MODEL}"


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr("resolver.models.ollama_client.RETRY_BACKOFF", 0.0)


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    full, _gold = load([bundled_path()])
    picked = [q for q in full.questions if q.index < 3]          # 3 mh + 3 sh questions
    return Dataset(full.paths, full.files_sha256, picked, full.haystacks)


def store_of(dataset):
    return dataset.haystack_of(dataset.questions[0]).store


def lexicon_reply(dataset):
    """A model that answers with the lexicon's own first plan."""
    store = store_of(dataset)

    def respond(request):
        plan = lexicon(question_of(request), store).plans[0]
        return {"entity": plan.entity, "chain": list(plan.chain)}
    return respond


def compile_with(dataset, respond, **kwargs):
    kwargs.setdefault("timeout", 5.0)
    with OllamaServer(respond) as server:
        plan_set = compile_plan_set(dataset, kwargs.pop("spec", SPEC), "t", host=server.url,
                                    **kwargs)
    return plan_set, server


def test_good_replies_become_model_plans(dataset):
    plan_set, server = compile_with(dataset, lexicon_reply(dataset))
    store = store_of(dataset)
    for q in dataset.questions:
        (plan,) = plan_set.plans[q.qid].plans
        first = lexicon(q.text, store).plans[0]
        assert (plan.entity, plan.chain) == (first.entity, first.chain)
        assert plan.compiler == SPEC and plan.note == ""
        assert plan.answer_type == inventory()[plan.chain[-1]].object_type
    m = plan_set.manifest
    assert (m["calls_ok"], m["fallback_count"], m["fallbacks"], m["all_failed"]) == (6, 0, {},
                                                                                   False)
    assert m["model"] == MODEL and m["temperature"] == 0.0 and m["level"] == "relation"
    assert m["model_details"]["digest"] == "sha256:" + "ab" * 32
    assert len(server.chat_requests()) == 6


def test_request_carries_schema_temperature_prompt_and_no_fact(dataset):
    plan_set, server = compile_with(dataset, lexicon_reply(dataset), temperature=0.7)
    request = server.chat_requests()[0]
    assert request["model"] == MODEL and request["stream"] is False
    assert request["format"] == reply_schema("relation")
    assert request["options"]["temperature"] == 0.7
    assert request["options"]["num_predict"] > 0
    system, user = request["messages"]
    assert system == {"role": "system", "content": planner_prompt("relation")}
    assert user["content"] == (f"Question: {dataset.questions[0].text}\n"
                               'Entities named in the question: ["Our Mutual Friend"]\nReply:')
    # the model never sees a fact: no haystack line appears in any request
    facts = [f.text for f in store_of(dataset)]
    sent = json.dumps(server.requests)
    assert not [f for f in facts if f in sent]
    assert plan_set.manifest["temperature"] == 0.7


def test_prompt_is_rendered_from_the_inventory_and_recorded(dataset):
    prompt = planner_prompt("relation")
    assert render_relations() in prompt and "{{" not in prompt
    for rel in inventory().values():
        # the prompts name MQuAKE's relations only (issue 32's `location` is read from text)
        assert (f"- {rel.name}: \"{rel.template}\"" in prompt) == (rel.source == "MQuAKE")
    for q in load([bundled_path()])[0].questions:            # no dev question as an example
        assert q.text not in prompt
    import hashlib
    plan_set, _ = compile_with(dataset, lexicon_reply(dataset))
    assert plan_set.manifest["prompt_sha256"] == hashlib.sha256(prompt.encode()).hexdigest()
    assert plan_set.manifest["prompt_file"] == "planner_relation.txt"


def test_streamed_replies_work_too(dataset):
    plan_set, server = compile_with(dataset, lexicon_reply(dataset), stream=True)
    assert server.chat_requests()[0]["stream"] is True
    assert plan_set.manifest["calls_ok"] == 6


def assert_all_fell_back(dataset, plan_set, kind: str, note_start: str):
    store = store_of(dataset)
    for q in dataset.questions:
        plans = plan_set.plans[q.qid].plans
        expected = lexicon(q.text, store).plans
        assert [(p.entity, p.chain) for p in plans] == [(p.entity, p.chain) for p in expected]
        assert {p.compiler for p in plans} == {"lexicon"}
        assert all(p.note.startswith(f"fallback: {note_start}") for p in plans), plans[0].note
    assert plan_set.manifest["fallbacks"] == {kind: 6}
    assert plan_set.manifest["fallback_count"] == 6
    assert set(plan_set.manifest["fallback_qids"]) == {q.qid for q in dataset.questions}


def test_invalid_json_falls_back(dataset):
    plan_set, _ = compile_with(dataset, lambda r: Reply("Sure! The plan is: author, spouse"))
    assert_all_fell_back(dataset, plan_set, "invalid json", "invalid json: reply is not JSON")
    assert plan_set.manifest["all_failed"] is True


def test_unknown_relation_falls_back(dataset):
    plan_set, _ = compile_with(dataset,
                               lambda r: {"entity": "Steve Sax", "chain": ["sport", "flew_to"]})
    assert_all_fell_back(dataset, plan_set, "invalid plan",
                         "invalid plan: unknown relation 'flew_to'")


def test_entity_missing_from_the_store_falls_back(dataset):
    plan_set, _ = compile_with(dataset, lambda r: {"entity": "Nobody Atall", "chain": ["sport"]})
    assert_all_fell_back(dataset, plan_set, "invalid plan",
                         "invalid plan: entity 'Nobody Atall' is not in the store")


def test_chain_too_long_falls_back(dataset):
    plan_set, _ = compile_with(dataset, lambda r: {"entity": "Steve Sax",
                                                   "chain": ["sport"] * 5})
    assert_all_fell_back(dataset, plan_set, "invalid plan",
                         "invalid plan: chain has 5 steps, not 1 to 4")


def test_unknown_model_stops_before_any_question(dataset):
    with pytest.raises(ModelHostError) as err:
        compile_with(dataset, lexicon_reply(dataset), spec="ollama:no-such-model")
    assert str(err.value).startswith("model 'no-such-model' is not on http://127.0.0.1:")
    assert str(err.value).endswith("(it has 1 model(s)); try `ollama pull no-such-model`")


def test_a_model_missing_mid_run_falls_back_without_retry(dataset, monkeypatch):
    from resolver.models.ollama_client import ModelClient
    check = ModelClient.check_host
    with OllamaServer(lexicon_reply(dataset), models=(MODEL, "gone")) as server:
        def check_then_remove(client):    # listed at the host check, then 404 for every call
            check(client)
            server.models = (MODEL,)
        monkeypatch.setattr(ModelClient, "check_host", check_then_remove)
        plan_set = compile_plan_set(dataset, "ollama:gone", "t", host=server.url, timeout=5)
    assert_all_fell_back(dataset, plan_set, "unknown model", "unknown model: 'gone'")
    assert "ollama pull gone" in plan_set.plans[dataset.questions[0].qid].plans[0].note
    assert len(server.chat_requests()) == 6
    assert plan_set.manifest["all_failed"] is True


def test_server_error_is_retried_twice_then_falls_back(dataset):
    # one question's 500s (retried twice) fall back; the other questions are answered
    bad = dataset.questions[0].text
    good = lexicon_reply(dataset)
    plan_set, server = compile_with(
        dataset, lambda r: Status(500, "out of memory")
        if bad in r["messages"][-1]["content"] else good(r))
    assert plan_set.manifest["fallback_count"] == 1
    assert plan_set.plans[dataset.questions[0].qid].plans[0].note.startswith(
        "fallback: http error: 500 out of memory")
    assert len(server.chat_requests()) == 3 + (len(dataset.questions) - 1)


def test_a_host_that_answers_500_to_every_call_stops_the_planner(dataset):
    with pytest.raises(ModelHostError) as err:
        compile_with(dataset, lambda r: Status(500, "out of memory"))
    assert "stopped answering: 3 calls in a row failed (last: http error: 500 out of memory)" \
        in str(err.value)


def test_a_retry_that_succeeds_is_not_a_fallback(dataset):
    seen = []
    good = lexicon_reply(dataset)

    def respond(request):
        seen.append(1)
        return Status(503, "loading") if len(seen) == 1 else good(request)
    plan_set, server = compile_with(dataset, respond)
    assert plan_set.manifest["fallback_count"] == 0 and plan_set.manifest["calls_ok"] == 6
    assert len(server.chat_requests()) == 7


def test_slow_reply_past_the_timeout_falls_back(dataset):
    good, slow = lexicon_reply(dataset), dataset.questions[0].text
    plan_set, server = compile_with(
        dataset, lambda r: Slow(30, Reply("{}")) if question_of(r) == slow else good(r),
        timeout=0.2)
    assert plan_set.manifest["fallbacks"] == {"timeout": 1}
    assert plan_set.plans[dataset.questions[0].qid].plans[0].note.startswith(
        "fallback: timeout: no reply from")
    assert len(server.chat_requests()) == 6                     # a timeout is not retried


def test_a_host_that_stops_answering_stops_the_compiler(dataset):
    with pytest.raises(ModelHostError) as err:
        compile_with(dataset, lambda r: Slow(30, Reply("{}")), timeout=0.2)
    assert "stopped answering: 3 calls in a row failed (last: timeout: no reply from" \
        in str(err.value)


def test_a_dead_or_hung_host_fails_before_any_question(dataset):
    with pytest.raises(ModelHostError, match="^cannot connect to the Ollama host"):
        compile_plan_set(dataset, SPEC, "t", host=refused_url(), timeout=2)
    with OllamaServer(lexicon_reply(dataset), tags=Slow(30)) as server:
        with pytest.raises(ModelHostError, match=r"did not answer within 0\.2s"):
            compile_plan_set(dataset, SPEC, "t", host=server.url, timeout=0.2)
    assert server.chat_requests() == []
    with OllamaServer(lexicon_reply(dataset), tags=Status(500, "boom")) as server:
        with pytest.raises(ModelHostError, match="answered GET /api/tags with an error"):
            compile_plan_set(dataset, SPEC, "t", host=server.url, timeout=2)


def test_truncated_reply_falls_back(dataset):
    plan_set, _ = compile_with(dataset, lambda r: Reply('{"entity": "Steve S', "length"))
    assert_all_fell_back(dataset, plan_set, "truncated", "truncated: reply cut off at 200")


def test_mixed_outcomes_are_counted_by_reason(dataset):
    good = lexicon_reply(dataset)

    def respond(request):
        text = question_of(request)
        if text == dataset.questions[0].text:
            return Reply("not json")
        if text == dataset.questions[1].text:
            return {"entity": "Steve Sax", "chain": ["teleported_to"]}
        return good(request)
    plan_set, _ = compile_with(dataset, respond)
    m = plan_set.manifest
    assert m["fallbacks"] == {"invalid json": 1, "invalid plan": 1}
    assert (m["calls_ok"], m["fallback_count"], m["all_failed"]) == (4, 2, False)
    assert list(m["fallback_qids"]) == [dataset.questions[0].qid, dataset.questions[1].qid]


def test_family_level_asks_for_families(dataset):
    def respond(request):
        assert request["format"]["properties"]["chain"]["items"]["enum"][:len(FAMILIES)] == \
            list(FAMILIES)
        return {"entity": "Our Mutual Friend", "chain": ["maker", "kin", "religion"]}
    plan_set, server = compile_with(dataset, respond, level="family")
    plan = plan_set.plans[dataset.questions[0].qid].plans[0]
    assert plan.chain == ("family:maker", "family:kin", "religion")
    assert plan.answer_type == "religion"
    system = server.chat_requests()[0]["messages"][0]["content"]
    assert system == planner_prompt("family") and "- kin: " in system
    assert plan_set.manifest["prompt_file"] == "planner_family.txt"


def test_family_level_rejects_a_plain_relation_in_a_family(dataset):
    plan_set, _ = compile_with(dataset, lambda r: {"entity": "Steve Sax", "chain": ["sport"]},
                               level="family")
    assert plan_set.manifest["fallbacks"] == {"invalid plan": 6}


def test_bad_planner_and_level_are_input_errors(dataset):
    with pytest.raises(InputError, match="unknown model spec 'gpt'"):
        compile_plan_set(dataset, "gpt", "t")
    with pytest.raises(InputError, match="unknown level 'word'"):
        compile_plan_set(dataset, SPEC, "t", level="word")
    with pytest.raises(InputError, match="timeout must be a positive number"):
        compile_plan_set(dataset, SPEC, "t", timeout=0)


def test_rules_and_lexicon_planners_need_no_model(dataset):
    plan_set = compile_plan_set(dataset, "lexicon", "lex")
    store = store_of(dataset)
    assert {q: c.plans for q, c in plan_set.plans.items()} == {
        q.qid: lexicon(q.text, store).plans for q in dataset.questions}
    assert plan_set.manifest["model"] is None and plan_set.manifest["count"] == 6
    assert compile_plan_set(dataset, "rules", "r").manifest["planner"] == "rules"


def test_server_speaks_generate_tags_and_show_to_the_real_client():
    with OllamaServer(lambda r: Reply("hello there")) as server:
        client = ollama.Client(host=server.url, timeout=5)
        assert client.generate(model=MODEL, prompt="hi").response == "hello there"
        chunks = list(client.generate(model=MODEL, prompt="hi", stream=True))
        assert "".join(c.response for c in chunks) == "hello there"
        assert chunks[-1].done and chunks[-1].done_reason == "stop" and len(chunks) > 2
        assert [m.model for m in client.list().models] == [MODEL]
        assert client.show(MODEL).details.quantization_level == "Q4_K_M"
        with pytest.raises(ollama.ResponseError) as info:
            client.show("missing")
        assert info.value.status_code == 404
