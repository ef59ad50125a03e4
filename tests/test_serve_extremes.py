"""The server at its inputs' extremes (audit B's server cases), each against a server this
module starts on a loopback port, through the real `openai` client where a client can send the
request, raw HTTP where it cannot, and the command through click's runner; after each case the
server still answers.

S2: a refusal names the field at fault (`messages[0].content[0].text` that is not a string, a
missing `type` or `role`, an empty `model`). S4: a question longer than factres reads is the
client's error, a 400, refused before a memory is built. S5: serials above 2^63 - 1, or of
thousands of digits, are reported and never committed, and the largest serial factres takes
comes back in the reply's JSON (orjson writes integers up to 64 bits). S6: a last fact written
without its full stop is memory, reported, and the question is the last line. S11: a key no
client can send is refused at startup. O2, O3: --max-body and --cache-mb take finite sizes of
at least a byte. O6: a port in use is an error before any banner."""
from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner
from openai import BadRequestError, OpenAI

from oracle.cli import main
from resolver.errors import InputError
from resolver.haystack import MAX_QUESTION
from resolver.mab import harness
from resolver.serve.app import serving
from resolver.serve.config import ServeConfig
from resolver.serve.question import split_question
from resolver.text.facts import MAX_SERIAL

FACTS = ("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
         "1. Tim Cook is employed by Google.\n")
QUESTION = "Who is Tim Cook employed by?"


@pytest.fixture(scope="module")
def server():
    with serving(ServeConfig(port=0)) as url:
        yield url


def client(url: str, key: str = "sk-anything") -> OpenAI:
    return OpenAI(base_url=url, api_key=key, max_retries=0)


def ask(api: OpenAI, messages: list[dict], **kwargs):
    return api.chat.completions.create(model=kwargs.pop("model", "gpt-4o-mini"),
                                       messages=messages, max_tokens=10, **kwargs)


def user(text) -> list[dict]:
    return [{"role": "user", "content": text}]


def still_serving(url: str, key: str = "sk-anything") -> None:
    reply = ask(client(url, key), user(FACTS + QUESTION))
    assert reply.choices[0].message.content == "Google"


def refused(exc: BadRequestError, code: str, param: str, words: str) -> str:
    assert exc.status_code == 400
    assert (exc.body["type"], exc.body["code"], exc.body["param"]) == (
        "invalid_request_error", code, param)
    assert words in exc.body["message"], exc.body["message"]
    return exc.body["message"]


def models(url: str) -> dict:
    return client(url).models.list().model_extra["factres"]


# ---- S2: each refusal names the field at fault ---------------------------------------------
@pytest.mark.parametrize("model, messages, code, param, words", [
    ("m", user([{"type": "text", "text": 5}]), "invalid_type", "messages[0].content[0].text",
     "Invalid type for 'messages[0].content[0].text': expected a string, but got integer."),
    ("m", user([{"type": "text", "text": None}]), "invalid_type",
     "messages[0].content[0].text", "expected a string, but got null"),
    ("m", user([{"type": "text"}]), "missing_required_parameter",
     "messages[0].content[0].text", "Missing required parameter: 'messages[0].content[0].text'"),
    ("m", user([{"text": QUESTION}]), "missing_required_parameter",
     "messages[0].content[0].type", "'messages[0].content[0].type'"),
    ("m", user([{"type": 7, "text": QUESTION}]), "invalid_type",
     "messages[0].content[0].type", "expected a string, but got integer"),
    ("m", user(["Who?"]), "invalid_type", "messages[0].content[0]",
     "expected an object (a content part), but got string"),
    ("m", user([{"type": "image_url", "image_url": {"url": "data:,"}}]), "invalid_value",
     "messages[0].content[0]", "factres reads text only"),
    ("", user(QUESTION), "invalid_value", "model", "Invalid value for 'model': it is empty"),
    ("m", [{"content": QUESTION}], "missing_required_parameter", "messages[0].role",
     "Missing required parameter: 'messages[0].role'"),
    ("m", [{"role": None, "content": QUESTION}], "invalid_type", "messages[0].role",
     "expected a string, but got null"),
])
def test_a_refusal_names_the_field_at_fault(server, model, messages, code, param, words):
    with pytest.raises(BadRequestError) as err:
        ask(client(server), messages, model=model)
    message = refused(err.value, code, param, words)
    assert "got string." not in message or param == "messages[0].content[0]"
    still_serving(server)


def test_a_refusal_quotes_a_long_value_cut_short(server):
    with pytest.raises(BadRequestError) as err:
        ask(client(server), [{"role": "r" * 100_000, "content": QUESTION}])
    message = refused(err.value, "invalid_value", "messages[0].role", "more characters")
    assert len(message) < 400
    still_serving(server)


# ---- S4: a question over MAX_QUESTION characters is a 400 ----------------------------------
LONG = "Who is Tim Cook employed by" + " very" * 300 + "?"


@pytest.mark.parametrize("stream", [False, True])
def test_a_long_question_is_the_clients_error(server, stream):
    before = models(server)["cache"]
    with pytest.raises(BadRequestError) as err:
        ask(client(server), user(FACTS + LONG), stream=stream)
    refused(err.value, "question_too_long", "messages",
            f"The question in the last user message (messages[0]) has {len(LONG):,} "
            f"characters: factres reads questions of at most {MAX_QUESTION:,} characters.")
    # refused before any memory is built for it
    assert models(server)["cache"]["misses"] == before["misses"]
    still_serving(server)


def test_a_long_question_in_a_prompt_or_over_no_facts_is_refused_the_same(server):
    for messages in (user(FACTS + harness.prompt(LONG[:-1] + "?")), user(LONG),
                     [{"role": "system", "content": FACTS}] + user(LONG)):
        with pytest.raises(BadRequestError) as err:
            ask(client(server), messages)
        refused(err.value, "question_too_long", "messages", f"{len(LONG):,} characters")
    still_serving(server)


def test_a_message_that_asks_nothing_has_its_facts_read_and_no_answer(server):
    # once refused as a question of all its characters; since audit E (E08) its facts are
    # read and the answer is empty, saying why
    facts = FACTS + "".join(f"{n}. Tim Cook is employed by Firm{n}.\n" for n in range(2, 40))
    reply = ask(client(server), user(facts))
    extra = reply.model_extra["factres"]
    assert reply.choices[0].message.content == "" and extra["question"] == ""
    assert extra["reason"].startswith("no question found")
    assert extra["memory"]["facts"] == 40
    still_serving(server)


def test_a_question_of_exactly_the_limit_is_answered(server):
    question = "Who is Tim Cook employed by" + " " * (MAX_QUESTION - 28) + "?"
    assert len(question) == MAX_QUESTION
    reply = ask(client(server), user(FACTS + question))
    assert reply.choices[0].message.content == "Google"


def test_a_question_the_memory_refuses_is_a_400_not_a_500(server, monkeypatch):
    def refuses(self, prompt, **kwargs):
        raise InputError("a question it cannot read", expected="another question")
    monkeypatch.setattr("resolver.memory.memory.Memory.query", refuses)
    with pytest.raises(BadRequestError) as err:
        ask(client(server), user(FACTS + QUESTION))
    refused(err.value, "invalid_value", "messages",
            "The question cannot be answered: a question it cannot read")
    monkeypatch.undo()
    still_serving(server)


# ---- S5: serials at and above 2^63 - 1 -------------------------------------------------------
def test_the_largest_serial_comes_back_in_the_reply_and_in_its_reports(server):
    facts = (f"Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
             f"{MAX_SERIAL}. Tim Cook is employed by Google.\n"
             f"{MAX_SERIAL}. Tim Cook is employed by IBM.\n")
    for stream in (False, True, False):
        if stream:
            events = list(ask(client(server), user(facts + QUESTION), stream=True))
            assert "".join(e.choices[0].delta.content or "" for e in events
                           if e.choices) == "Google"
            extra = next(e.model_extra["factres"] for e in events if "factres" in e.model_extra)
        else:
            reply = ask(client(server), user(facts + QUESTION))
            assert reply.choices[0].message.content == "Google"
            extra = reply.model_extra["factres"]
        assert [h["serial"] for h in extra["path"]] == [MAX_SERIAL]
        assert [(r["kind"], r["serial"]) for r in extra["memory"]["reports"]] == [
            ("duplicate", MAX_SERIAL)]


@pytest.mark.parametrize("serial", [str(MAX_SERIAL + 1), str(2 ** 64), "9" * 30, "9" * 4400,
                                    "9" * 5000])
def test_a_serial_too_large_is_reported_and_every_question_is_answered(server, serial):
    facts = ("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
             f"{serial}. Tim Cook is employed by Google.\n")
    api = client(server)
    for stream in (False, True, False):          # the third finds the memory cached
        if stream:
            events = list(ask(api, user(facts + QUESTION), stream=True))
            assert "".join(e.choices[0].delta.content or "" for e in events
                           if e.choices) == "Apple"
            extra = next(e.model_extra["factres"] for e in events if "factres" in e.model_extra)
        else:
            reply = ask(api, user(facts + QUESTION))
            assert reply.choices[0].message.content == "Apple"
            extra = reply.model_extra["factres"]
        (report,) = extra["memory"]["reports"]
        assert report["serial"] is None and report["kind"] == "unparsed"
        assert "too large" in report["reason"]
        assert extra["memory"]["facts"] == 1
    assert extra["memory"]["cached"] is True
    still_serving(server)


# ---- S6: a last fact without its full stop is memory -----------------------------------------
@pytest.mark.parametrize("last", ["1. Tim Cook is employed by Google",
                                  "1. Tim Cook is employed by Google.\x00",
                                  "1. Tim Cook is employed by Google. x"])
def test_a_malformed_last_fact_is_reported_and_the_question_is_the_last_line(server, last):
    text = "Here is a list of facts:\n0. Tim Cook is employed by Apple.\n" + last + "\n"
    assert split_question(text + QUESTION) == (len(text), QUESTION)
    reply = ask(client(server), user(text + QUESTION))
    extra = reply.model_extra["factres"]
    assert extra["question"] == QUESTION
    assert reply.choices[0].message.content == "Apple"
    assert [(r["kind"], r["line"], r["serial"], r["text"]) for r in
            extra["memory"]["reports"]] == [("unparsed", 3, 1, last)]
    assert extra["memory"]["passed_over"]["text"] == 0
    still_serving(server)


# ---- the command: S11, O2, O3, O6 -------------------------------------------------------------
@pytest.fixture
def never_serves(monkeypatch):
    """The command must stop before it serves: if it got that far, fail at once (instead of
    serving until the test is killed)."""
    def serve(*args, **kwargs):
        raise AssertionError("the server was started")
    monkeypatch.setattr("resolver.serve.app.serve", serve)


def invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(main, ["serve", *args], env=env)


@pytest.mark.parametrize("key, words", [
    ("sëcret key", "the API key has U+00EB at position 2, which no client can send"),
    ("s3cr3t\u200b", "the API key has U+200B at position 7"),
    ("s3c\tr3t", "the API key has U+0009 at position 4"),
    (" s3cr3t", "the API key begins or ends with a blank"),
    ("s3cr3t ", "the API key begins or ends with a blank"),
])
def test_a_key_no_client_can_send_is_refused_at_startup(never_serves, key, words):
    with pytest.raises(InputError, match=re.escape(words)):
        ServeConfig(api_key=key)
    for result in (invoke("--port", "0", "--api-key", key),
                   invoke("--port", "0", env={"FACTRES_API_KEY": key})):
        assert result.exit_code == 1 and result.output.startswith("Error: " + words)
        assert "Traceback" not in result.output       # and the key is never shown:
        assert all(part not in result.output for part in ("cret", "s3c", "r3t"))


def test_the_openai_client_cannot_send_a_non_ascii_key_but_sends_inner_spaces():
    """Why such keys are refused: the client fails before sending (and a key with spaces
    inside, printable ASCII, works end to end)."""
    with serving(ServeConfig(port=0, api_key="my secret key")) as url:
        with pytest.raises(UnicodeEncodeError):
            ask(client(url, "sëcret key"), user(QUESTION))
        still_serving(url, "my secret key")


@pytest.mark.parametrize("option, value, words", [
    ("--max-body", "nan", "'nan' is not a finite number of MiB"),
    ("--max-body", "inf", "'inf' is not a finite number of MiB"),
    ("--cache-mb", "nan", "'nan' is not a finite number of MiB"),
    ("--cache-mb", "inf", "'inf' is not a finite number of MiB"),
    ("--cache-mb", "-1", "'-1' is a negative size"),
    ("--max-body", "1e-9", "'1e-9' MiB is below one byte (0 bytes once converted)"),
    ("--max-body", "0", "'0' MiB is below one byte"),
    ("--max-body", "1e308", "'1e308' MiB is above the largest size taken (4,096 MiB)"),
    ("--max-body", "lots", "'lots' is not a number of MiB"),
    # N4: a finite size too large for a reply to write (/v1/models failed with 500)
    ("--cache-mb", "1e300", "'1e300' MiB is above the largest size taken (1,000,000 MiB)"),
    ("--cache-mb", "1000001", "'1000001' MiB is above the largest size taken"),
    ("--max-body", "4097", "'4097' MiB is above the largest size taken (4,096 MiB)"),
])
def test_sizes_are_finite_and_at_least_a_byte(never_serves, option, value, words):
    result = invoke("--port", "0", option, value)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"Invalid value for '{option}': {words}" in result.output


def test_sizes_are_given_in_mib_and_served_in_bytes(monkeypatch):
    seen = {}

    def serve(config, **kwargs):
        seen["config"] = config
        for sock in kwargs["sockets"]:
            sock.close()
    monkeypatch.setattr("resolver.serve.app.serve", serve)
    result = invoke("--port", "0", "--max-body", "0.5", "--cache-mb", "0")
    assert result.exit_code == 0, result.output
    assert (seen["config"].max_body, seen["config"].cache_bytes) == (512 * 1024, 0)
    result = invoke("--port", "0", "--max-body", "4096", "--cache-mb", "1e6")
    assert result.exit_code == 0, result.output
    assert (seen["config"].max_body, seen["config"].cache_bytes) == (4 << 30, 10**6 << 20)


def test_the_config_refuses_sizes_no_reply_can_write():
    for kwargs, words in [({"cache_bytes": 10**300}, "a cache budget of 1,000,000,000"),
                          ({"max_body": 2**63}, "a body limit of 9,223,372,036,854,775,808")]:
        with pytest.raises(InputError, match=words):
            ServeConfig(**kwargs)


def test_a_port_in_use_is_an_error_before_any_banner(server):
    port = urlsplit(server).port
    result = invoke("--port", str(port))
    assert result.exit_code == 1, result.output
    assert result.output == (f"Error: port {port} on 127.0.0.1 is in use (expected another "
                             "port, or --port 0 for any free one)\n")
    still_serving(server)


def test_the_banner_names_the_port_bound(monkeypatch):
    bound = {}

    def serve(config, **kwargs):
        (sock,) = kwargs["sockets"]
        bound["port"] = sock.getsockname()[1]
        assert sock.getsockname()[0] == "127.0.0.1"
        sock.close()
    monkeypatch.setattr("resolver.serve.app.serve", serve)
    result = invoke("--port", "0")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"factres serve: http://127.0.0.1:{bound['port']}/v1: ")
    assert bound["port"] != 0


def test_an_address_that_cannot_be_bound_is_named(never_serves):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke("--port", str(port), "--host", "localhost")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: port {port} on localhost is in use")
    result = invoke("--port", "0", "--host", "not a host", "--api-key", "k")
    assert result.exit_code == 1 and result.output.startswith("Error: cannot bind not a host: ")


def test_text_after_the_last_fact_on_its_line_is_its_object_unless_a_line_break_ends_it(server):
    """The limit docs/server.md states (audit B M13): a sentence after the last fact on its
    line cannot be told from the object; after a line break it is text, passed over."""
    head = "Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
    same_line = ask(client(server), user(head + "1. Tim Cook is employed by Google. Please "
                                         "answer concisely. " + QUESTION))
    assert same_line.choices[0].message.content == "Google. Please answer concisely"
    next_line = ask(client(server), user(head + "1. Tim Cook is employed by Google.\nPlease "
                                         "answer concisely. " + QUESTION))
    extra = next_line.model_extra["factres"]
    assert next_line.choices[0].message.content == "Google" and extra["question"] == QUESTION
    assert extra["memory"]["passed_over"]["text"] == 1 and extra["memory"]["reports"] == []
