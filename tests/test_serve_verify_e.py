"""The server's cases of verify-e that did not hold, each against a server this module starts on
a loopback port and stops, through the real `openai` client (raw sockets where a client cannot
send the request).

F03: a worked example's fact list before the context's (a few-shot user/assistant pair, a second
system message, the same message) never takes the context's serials: the memory is the list
after the header, else a user message's, else the largest or last, the others passed over with a
warning, and a guess lowers the confidence.
F02: lines ending "\\r\\r\\n" are read as `factres parse` reads them.
F07: a connection whose request headers do not all come within --header-timeout is closed (408
when some came), so idle and half-sent sockets cannot hold --limit-concurrency's places.
Minor: `--keep-alive nan` (and the other timeouts) exit 2 with click's message, as -1 does; a
compressed body's 400 says compression is not supported."""
from __future__ import annotations

import gzip
import socket
import time

import orjson
import pytest
from click.testing import CliRunner
from openai import OpenAI
from test_serve_audit_e import address, post, response_of
from test_serve_extremes import FACTS, QUESTION, client, server, user  # noqa: F401

from oracle.cli import main
from resolver.serve.app import serving
from resolver.serve.config import ServeConfig

EXAMPLE = ("Example:\n0. Tim Cook is employed by Acme.\n1. Tim Cook is employed by Initech.\n"
           "Question: Who is Tim Cook employed by?")
BARE = FACTS.replace("Here is a list of facts:\n", "")       # the context without its header

LAYOUTS = {
    "few-shot pair": lambda facts: [
        {"role": "user", "content": EXAMPLE}, {"role": "assistant", "content": "Initech"},
        {"role": "user", "content": facts + QUESTION}],
    "two system messages": lambda facts: [
        {"role": "system", "content": EXAMPLE}, {"role": "system", "content": facts},
        {"role": "user", "content": QUESTION}],
    "one system message": lambda facts: [
        {"role": "system", "content": EXAMPLE + "\nAnswer: Initech\n" + facts},
        {"role": "user", "content": QUESTION}],
    "context in the system message, example in a few-shot pair": lambda facts: [
        {"role": "system", "content": facts},
        {"role": "user", "content": EXAMPLE}, {"role": "assistant", "content": "Initech"},
        {"role": "user", "content": QUESTION}],
}


def ask(url: str, messages: list[dict], **kwargs):
    return client(url).chat.completions.create(model="gpt-4o-mini", messages=messages,
                                               max_tokens=10, **kwargs)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_f03_the_list_after_the_header_is_the_memory_not_an_example(server, layout):
    reply = ask(server, LAYOUTS[layout](FACTS))
    extra = reply.model_extra["factres"]
    assert reply.choices[0].message.content == "Google"
    assert extra["confidence"]["label"] == "high"
    assert extra["memory"]["facts"] == 2 and extra["memory"]["reported"] == {}
    (warning,) = extra["warnings"]
    assert warning.startswith("the conversation holds 2 numbered fact lists (the numbering "
                              "starts again): the memory is the list after the header")
    assert "read as an example and not remembered" in warning


@pytest.mark.parametrize("layout", list(LAYOUTS)[:3])
def test_f03_without_a_header_the_last_list_is_read_and_the_confidence_lowered(server, layout):
    reply = ask(server, LAYOUTS[layout](BARE))
    extra = reply.model_extra["factres"]
    assert reply.choices[0].message.content == "Google"
    assert extra["memory"]["facts"] == 2 and extra["memory"]["reported"] == {}
    assert extra["confidence"] == {"label": "low", "reasons": [
        "several numbered fact lists, and no header said which is the context"]}
    assert extra["warnings"][0].endswith("which list is the context is a guess: the "
                                         "confidence is lowered to low")
    # a client that abstains below medium abstains from the guess
    reply = ask(server, LAYOUTS[layout](BARE), extra_body={"abstain_below": "medium"})
    assert reply.choices[0].message.content == ""
    assert reply.model_extra["factres"]["reason"].startswith("abstained: confidence low")


def test_f03_a_system_example_beside_an_unheaded_user_context_is_instructions(server):
    # E11's rule decides when no header does: the user message's list is the memory
    messages = [{"role": "system", "content": EXAMPLE}] + user(BARE + QUESTION)
    reply = ask(server, messages)
    assert reply.choices[0].message.content == "Google"
    assert reply.model_extra["factres"]["memory"]["messages_passed_over"] == {"system": 1}


def test_f03_a_context_over_several_system_messages_is_read_whole(server):
    head, second = FACTS.split("1. ")
    messages = [{"role": "system", "content": head}, {"role": "system", "content": "1. " + second},
                {"role": "user", "content": EXAMPLE}, {"role": "assistant", "content": "Initech"},
                {"role": "user", "content": QUESTION}]
    reply = ask(server, messages)
    assert reply.choices[0].message.content == "Google"
    assert reply.model_extra["factres"]["memory"]["facts"] == 2


def test_f03_one_list_gives_no_warning(server):
    reply = ask(server, user(FACTS + QUESTION))
    assert reply.model_extra["factres"]["warnings"] == []
    assert reply.model_extra["factres"]["confidence"]["label"] == "high"


def test_f03_a_duplicated_line_or_a_name_holding_1_starts_no_list(server):
    # the 262K context has both on its lines: "7373. 1. FFC Frankfurt is associated with ...
    # 7374." and "12095. Ronald Reagan is employed by Europe 1. 12096."
    facts = (FACTS + "2. Ronald Reagan is employed by Europe 1. 3. The capital of France is "
             "Paris.\n4. 1. FFC Frankfurt is associated with the sport of association football."
             "\n5. Rome is located in the country of Italy.\n1. Tim Cook is employed by Meta.\n")
    reply = ask(server, user(facts + QUESTION))
    extra = reply.model_extra["factres"]
    assert extra["warnings"] == [] and extra["memory"]["facts"] == 6
    assert extra["memory"]["reported"] == {"duplicate": 1}
    assert reply.choices[0].message.content == "Google"


def test_f03_named_memory_reads_the_context_not_the_example(tmp_path):
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        named = OpenAI(base_url=f"{url}/memories/agent", api_key="sk-anything", max_retries=0)
        reply = named.chat.completions.create(model="gpt-4o-mini", max_tokens=10,
                                              messages=LAYOUTS["few-shot pair"](FACTS))
        extra = reply.model_extra["factres"]
        assert reply.choices[0].message.content == "Google"
        assert extra["memory"]["facts"] == 2 and extra["memory"]["reported"] == {}
        assert extra["warnings"][0].startswith("the conversation holds 2 numbered fact lists")
        reply = named.chat.completions.create(model="gpt-4o-mini", max_tokens=10,
                                              messages=LAYOUTS["few-shot pair"](BARE))
        assert reply.choices[0].message.content == "Google"


# ---- F02: "\r\r\n" line ends, as `factres parse` reads them ---------------------------------------
def test_f02_cr_cr_lf_line_ends_are_read_as_parse_reads_them(server):
    reply = ask(server, user(FACTS.replace("\n", "\r\r\n") + QUESTION))
    extra = reply.model_extra["factres"]
    assert reply.choices[0].message.content == "Google"
    assert extra["memory"]["facts"] == 2 and extra["memory"]["reported"] == {}


# ---- F07: request headers that never finish ----------------------------------------------------
HALF_HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le"


def test_f07_idle_and_half_sent_headers_are_closed_and_free_their_places():
    config = ServeConfig(port=0, limit_concurrency=3, keep_alive=2, body_timeout=3,
                         header_timeout=0.5)
    with serving(config) as url:
        silent = socket.create_connection(address(url), timeout=60)
        halves = [socket.create_connection(address(url), timeout=60) for _ in range(2)]
        for sock in halves:
            sock.sendall(HALF_HEAD)
        assert response_of(silent) == b""                  # closed, nothing said
        for sock in halves:
            head, _, body = response_of(sock).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head
            error = orjson.loads(body)["error"]
            assert error["code"] == "request_timeout"
            assert error["message"] == ("The request headers did not all arrive within 0.5 s "
                                        "(factres serve --header-timeout SECONDS sets the wait).")
        for sock in [silent, *halves]:
            sock.close()
        # the places are free: a real client is answered, not 503
        assert ask(url, user(FACTS + QUESTION)).choices[0].message.content == "Google"


def test_f07_the_deadline_ends_with_the_headers_and_starts_again_after_a_reply():
    body = orjson.dumps({"model": "m", "messages": user(FACTS + QUESTION)})
    head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
    with serving(ServeConfig(port=0, header_timeout=0.5, keep_alive=30)) as url:
        sock = socket.create_connection(address(url), timeout=60)
        sock.sendall(head)
        time.sleep(1.5)                     # past the header deadline: the body is read anyway
        sock.sendall(body)
        reply = b""
        while b'"finish_reason"' not in reply or not reply.rstrip().endswith(b"}"):
            reply += sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200") and b'"content":"Google"' in reply
        # a kept-alive connection that starts another request and stops is closed in time
        sock.sendall(HALF_HEAD)
        assert response_of(sock).startswith(b"HTTP/1.1 408")
        sock.close()


# ---- minor: nan timeouts, compressed bodies ----------------------------------------------------
@pytest.mark.parametrize("option", ["--keep-alive", "--body-timeout", "--header-timeout"])
@pytest.mark.parametrize("value", ["nan", "-1"])
def test_a_nan_timeout_is_refused_as_click_refuses_the_others(option, value):
    result = CliRunner().invoke(main, ["serve", option, value])
    assert result.exit_code == 2
    shown = "nan" if value == "nan" else "-1.0"
    assert result.output.endswith(f"Error: Invalid value for '{option}': {shown} is not in the "
                                  "range 0<x<=3600.0.\n")


def test_a_gzip_body_is_refused_saying_compression_is_not_supported(server):
    body = gzip.compress(orjson.dumps({"model": "m", "messages": user(FACTS + QUESTION)}))
    status, reply = post(server, body)
    assert status == 400
    assert reply["error"]["message"].startswith(
        "We could not parse the JSON body of your request: the body is gzip-compressed (it starts with 0x1f 0x8b): compressed "
        "bodies are not supported; send the JSON uncompressed, with no Content-Encoding")
