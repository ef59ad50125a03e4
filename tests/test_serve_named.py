"""Named memories in `factres serve --store DIR` (issue 31), with the real `openai` client whose
base URL is the memory (`.../v1/memories/NAME`): facts sent one framed chunk per request answer
bare questions later, exactly as the committed run, and again after a restart; a resent growing
conversation ingests only its new text; a fact cut across two requests joins; listing, deleting,
names, the key, the open-file pool against --max-open and --cache-mb, a second server on the same
folder."""
from __future__ import annotations

import httpx
import pytest
from openai import AuthenticationError, BadRequestError, NotFoundError, OpenAI
from test_serve import COMMITTED, KEY, frames

from resolver.haystack import bundled_path, load
from resolver.memory.memory import Memory
from resolver.results.result_schema import PREDICTIONS_FILE, loads_lines
from resolver.serve.app import serving
from resolver.serve.config import ServeConfig
from resolver.serve.named import NO_QUESTION

HEAD = "Here is a list of facts:\n"
ASK = "Who is Tim Cook employed by?"


def named(url: str, name: str, key: str = "sk-anything") -> OpenAI:
    return OpenAI(base_url=f"{url}/memories/{name}", api_key=key)


def say(api: OpenAI, *contents: str, **kwargs):
    messages = [{"role": "user", "content": c} for c in contents]
    return api.chat.completions.create(model="gpt-4o-mini", messages=messages, **kwargs)


@pytest.fixture(scope="module")
def dev():
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    rows = {r["qid"]: r for r in loads_lines((COMMITTED / PREDICTIONS_FILE).read_bytes())}
    return dataset.questions, haystack, rows


def test_facts_in_earlier_requests_answer_bare_questions_and_again_after_a_restart(dev,
                                                                                    tmp_path):
    questions, haystack, rows = dev
    chunks = frames(haystack.text, 300)
    assert len(chunks) > 5
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        api = named(url, "agent-7")
        for chunk in chunks:                                  # one framed chunk per request
            reply = say(api, chunk)
            extra = reply.model_extra["factres"]
            assert reply.choices[0].message.content == ""
            assert extra["reason"] == NO_QUESTION
            assert extra["memory"]["name"] == "agent-7"
            assert extra["memory"]["ingested"] == len(chunk) + (chunk is not chunks[0])
        for q in questions:
            reply = say(api, q.text)
            assert reply.choices[0].message.content == rows[q.qid]["prediction"], q.qid
            assert reply.model_extra["factres"]["memory"]["ingested"] == 0
        listed = httpx.get(f"{url}/memories").json()
        assert [(m["id"], m["open"]) for m in listed["data"]] == [("agent-7", True)]
        assert listed["data"][0]["bytes"] > 0
        assert [m.id for m in api.models.list().data] == ["factres", "factres-readout"]
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:     # a restart
        api = named(url, "agent-7")
        for q in questions[:40]:
            assert say(api, q.text).choices[0].message.content == rows[q.qid]["prediction"]
    with Memory.open(tmp_path / "agent-7.db", readonly=True) as memory:
        assert len(memory.store) == len(haystack.store)


def test_a_resent_growing_conversation_ingests_only_its_new_text(tmp_path):
    one = HEAD + "0. Tim Cook is employed by Apple.\n"
    two = "1. Tim Cook is employed by Google.\n"
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        api = named(url, "grow")
        first = say(api, one, ASK).model_extra["factres"]
        assert (first["text"], first["memory"]["ingested"]) == ("Apple", len(one))
        again = say(api, one, ASK).model_extra["factres"]             # an equal part
        assert (again["text"], again["memory"]["ingested"]) == ("Apple", 0)
        grown = say(api, one, two, ASK).model_extra["factres"]        # the part grew
        assert (grown["text"], grown["memory"]["ingested"]) == ("Google", 1 + len(two))
        assert grown["memory"]["facts"] == 2
        with Memory.open(tmp_path / "grow.db", readonly=True) as memory:
            assert memory.text() == one + " " + two


def test_a_fact_cut_across_two_requests_joins_and_a_question_reads_the_tail(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        api = named(url, "cut")
        assert say(api, HEAD + "0. Joe Biden was born in the city of St.").choices[0] \
            .message.content == ""
        asked = say(api, "Which city was Joe Biden born in?")
        assert asked.choices[0].message.content == "St"                   # provisionally
        say(api, "Louis. 1. Tim Cook is employed by Apple.")
        assert say(api, "Which city was Joe Biden born in?").choices[0].message.content \
            == "St. Louis"
        assert say(api, ASK).choices[0].message.content == "Apple"


def test_names_delete_and_the_routes_without_a_store(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        for bad in (".hidden", "x" * 65, "sp ace", "é"):
            with pytest.raises(BadRequestError) as refused:
                say(named(url, bad), HEAD + "0. Tim Cook is employed by Apple.\n")
            assert refused.value.body["code"] == "invalid_memory_name"
        say(named(url, "a.b_c-9"), HEAD + "0. Tim Cook is employed by Apple.\n")
        assert (tmp_path / "a.b_c-9.db").exists()
        gone = httpx.delete(f"{url}/memories/a.b_c-9")
        assert gone.json() == {"id": "a.b_c-9", "object": "memory.deleted", "deleted": True}
        assert sorted(p.name for p in tmp_path.iterdir()) == []
        missing = httpx.delete(f"{url}/memories/a.b_c-9")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == \
            "memory_not_found"
        # deleted means new: asked again, it knows nothing
        reply = say(named(url, "a.b_c-9"), ASK)
        assert reply.model_extra["factres"]["reason"].startswith("nothing ingested")
    with serving(ServeConfig(port=0)) as url:                 # no --store: as before
        with pytest.raises(NotFoundError, match="Unknown request URL"):
            say(named(url, "agent"), ASK)
        assert httpx.get(f"{url}/memories").status_code == 404


def test_the_api_key_guards_the_named_routes(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path), api_key=KEY)) as url:
        with pytest.raises(AuthenticationError):
            say(named(url, "agent", key="wrong"), ASK)
        assert httpx.get(f"{url}/memories").status_code == 401
        assert httpx.delete(f"{url}/memories/agent").status_code == 401
        assert say(named(url, "agent", key=KEY), HEAD + "0. Tim Cook is employed by Apple.\n",
                   ASK).choices[0].message.content == "Apple"
        listed = httpx.get(f"{url}/memories", headers={"Authorization": f"Bearer {KEY}"})
        assert [m["id"] for m in listed.json()["data"]] == ["agent"]


def test_the_pool_closes_what_max_open_and_the_budget_evict(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path), max_open=1)) as url:
        for name, value in (("one", "Apple"), ("two", "Google")):
            say(named(url, name), HEAD + f"0. Tim Cook is employed by {value}.\n")
        listed = httpx.get(f"{url}/memories").json()["data"]
        assert [(m["id"], m["open"]) for m in listed] == [("one", False), ("two", True)]
        with Memory.open(tmp_path / "one.db", timeout=0) as memory:   # its lock was released
            assert memory.query(ASK).text == "Apple"
        for name, value in (("one", "Apple"), ("two", "Google"), ("one", "Apple")):
            assert say(named(url, name), ASK).choices[0].message.content == value
    with serving(ServeConfig(port=0, store=str(tmp_path), cache_bytes=0)) as url:
        assert say(named(url, "two"), ASK).choices[0].message.content == "Google"
        assert httpx.get(f"{url}/memories").json()["data"][1]["open"] is False
        with Memory.open(tmp_path / "two.db", timeout=0):           # not kept: closed
            pass


def test_a_second_server_on_the_same_folder_is_refused_the_memory_the_first_holds(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path))) as first:
        say(named(first, "agent"), HEAD + "0. Tim Cook is employed by Apple.\n")
        with serving(ServeConfig(port=0, store=str(tmp_path))) as second:
            refused = httpx.post(f"{second}/memories/agent/chat/completions",
                                 json={"model": "m", "messages": [{"role": "user",
                                                                   "content": ASK}]})
            assert refused.status_code == 409
            assert refused.json()["error"]["code"] == "memory_locked"
            assert "is open for writing by process" in refused.json()["error"]["message"]
        assert say(named(first, "agent"), ASK).choices[0].message.content == "Apple"


def test_the_guides_example_prints_what_it_shows(tmp_path, monkeypatch, capsys):
    from test_memory_file import _shown_example

    code, shown = _shown_example("server.md", "## Named memories")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/server.md (named memories)", "exec"), {})
    assert capsys.readouterr().out == shown


def test_the_readout_model_reads_a_named_memory_out(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        api = named(url, "agent")
        say(api, HEAD + "0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by Google.\n")
        reply = api.chat.completions.create(model="factres-readout", messages=[
            {"role": "user", "content": ASK}])
        with Memory.open(tmp_path / "agent.db", readonly=True) as memory:
            assert reply.choices[0].message.content == memory.readout(ASK)
        assert "Google" in reply.choices[0].message.content
