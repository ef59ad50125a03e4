"""`factres serve` over HTTP, with the real `openai` client configured only through
OPENAI_BASE_URL and OPENAI_API_KEY (`OpenAI()` with no arguments, as MemoryAgentBench's
long-context agent makes it), against servers this module starts on loopback ports.

The 6K dev rows replayed the harness's way (a system message and one user message: every
memorize frame joined by line breaks, a line break, the instruction prompt; gpt-4o-mini,
max_tokens 10) and one message per chunk give the committed run's predictions, confidences and
winning paths; streaming agrees with non-streaming; every refusal is OpenAI's error JSON with
its status, the server keeps serving after it, and no bad request changes what another
conversation's memory holds. Requests the client cannot make (malformed JSON, no
Authorization header, a chunked body) go through http.client."""
from __future__ import annotations

import http.client
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
from click.testing import CliRunner
from openai import APIStatusError, AuthenticationError, BadRequestError, NotFoundError, OpenAI

from resolver.haystack import bundled_path, load
from resolver.mab import harness
from resolver.results.result_schema import PREDICTIONS_FILE, TRACES_FILE, loads_lines
from resolver.serve.app import NEEDS_EXTRA, serving
from resolver.serve.config import ServeConfig

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "results" / "dev-6k-search-confidence"
SYSTEM = ("You are a helpful assistant that can read the context and memorize it for future "
          "retrieval.")
ACK = "I have learned the facts and I will answer the question you ask."
KEY = "sk-factres-test"
LIMIT = 256 * 1024                  # the restricted server's body limit


def client(url: str, key: str = "sk-anything") -> OpenAI:
    """The harness's client: `OpenAI()` with no arguments, configured by the environment."""
    saved = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    os.environ.update(OPENAI_BASE_URL=url, OPENAI_API_KEY=key)
    try:
        return OpenAI()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(scope="module")
def open_server():
    with serving(ServeConfig(port=0)) as url:
        yield url


@pytest.fixture(scope="module")
def guarded_server():
    """A key, two model names, a small body limit."""
    with serving(ServeConfig(port=0, api_key=KEY, models=("gpt-4o-mini", "gpt-4o"),
                             max_body=LIMIT)) as url:
        yield url


@pytest.fixture(scope="module")
def dev():
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    rows = {r["qid"]: r for r in loads_lines((COMMITTED / PREDICTIONS_FILE).read_bytes())}
    traces = {t["qid"]: t for t in loads_lines((COMMITTED / TRACES_FILE).read_bytes())}
    return dataset.questions, haystack, rows, traces


def frames(context: str, tokens: int = harness.CHUNK_TOKENS) -> list[str]:
    return [harness.frame_chunk(c, f"2025-01-01 00:00:{i:02d}")
            for i, c in enumerate(harness.chunk_context(context, tokens))]


def harness_messages(context: str, question: str) -> list[dict]:
    """Exactly what the harness sends: the system message, then one user message."""
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n".join(frames(context)) + "\n"
             + harness.prompt(question)}]


def per_chunk_messages(chunks: list[str], question: str) -> list[dict]:
    """One user message per chunk, an assistant acknowledgement after each, the prompt last."""
    messages = [{"role": "system", "content": SYSTEM}]
    for chunk in chunks:
        messages += [{"role": "user", "content": chunk}, {"role": "assistant", "content": ACK}]
    return messages + [{"role": "user", "content": harness.prompt(question)}]


def ask(api: OpenAI, messages: list[dict], **kwargs):
    return api.chat.completions.create(model=kwargs.pop("model", "gpt-4o-mini"),
                                       messages=messages, max_tokens=10, temperature=0,
                                       **kwargs)


def assert_the_runs_answers(api: OpenAI, layout, dev) -> str:
    """Every dev question asked in `layout`; returns the memory's key."""
    questions, _, rows, traces = dev
    keys, cached = set(), []
    for q in questions:
        reply = ask(api, layout(q.text))
        extra = reply.model_extra["factres"]
        assert reply.choices[0].message.content == rows[q.qid]["prediction"], q.qid
        assert reply.model == "gpt-4o-mini" and reply.choices[0].finish_reason == "stop"
        assert extra["confidence"] == rows[q.qid]["confidence"], q.qid
        assert extra["question"] == q.text
        winner = traces[q.qid]["winner"]
        assert extra["path"] == (winner["hops"] if winner else []), q.qid
        assert extra["terms"] == (winner["terms"] if winner else []), q.qid
        assert extra["memory"]["facts"] == 455 and extra["memory"]["reported"] == {}
        keys.add(extra["memory"]["key"])
        cached.append(extra["memory"]["cached"])
    assert len(keys) == 1 and cached[1:] == [True] * (len(cached) - 1)
    return keys.pop()


# ---- the same answers as factres run -------------------------------------------------------------
def test_dev_rows_replayed_the_harness_way_give_the_runs_predictions(open_server, dev):
    _, haystack, _, _ = dev
    api = client(open_server)
    assert_the_runs_answers(api, lambda q: harness_messages(haystack.text, q), dev)
    reply = ask(api, harness_messages(haystack.text, dev[0][0].text))
    memory = reply.model_extra["factres"]["memory"]
    assert memory["messages_passed_over"] == {"system": 1}
    assert memory["passed_over"] == {"acknowledgement": 2, "framing": 2, "header": 1,
                                     "instruction": 2, "repeat": 0, "text": 0}
    words = sum(len(m["content"].split()) for m in harness_messages(haystack.text,
                                                                    dev[0][0].text))
    assert reply.usage.prompt_tokens == words
    assert reply.usage.completion_tokens == len(reply.choices[0].message.content.split())
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


@pytest.mark.parametrize("framed", [False, True], ids=["raw-chunks", "framed-chunks"])
def test_one_message_per_chunk_gives_the_runs_predictions(open_server, dev, framed):
    _, haystack, _, _ = dev
    # small chunks: facts and serials are cut across messages ("... 343." | "Thomas Kyd ...")
    chunks = frames(haystack.text, 300) if framed else harness.chunk_context(haystack.text, 300)
    assert len(chunks) > 15
    assert_the_runs_answers(client(open_server), lambda q: per_chunk_messages(chunks, q), dev)


# ---- streaming -----------------------------------------------------------------------------
def test_streaming_and_non_streaming_agree(open_server, dev):
    questions, haystack, rows, _ = dev
    api = client(open_server)
    for q in questions[::10]:
        messages = harness_messages(haystack.text, q.text)
        whole = ask(api, messages)
        events = list(ask(api, messages, stream=True, stream_options={"include_usage": True}))
        content = "".join(e.choices[0].delta.content or "" for e in events if e.choices)
        assert content == whole.choices[0].message.content == rows[q.qid]["prediction"]
        assert events[0].choices[0].delta.role == "assistant"
        (finish,) = [e for e in events if e.choices and e.choices[0].finish_reason]
        assert finish.choices[0].finish_reason == "stop"
        assert events[-1].choices == [] and events[-1].usage == whole.usage
        streamed = finish.model_extra["factres"]
        assert streamed == whole.model_extra["factres"]       # both found the memory cached
        assert all(e.object == "chat.completion.chunk" and e.model == "gpt-4o-mini"
                   for e in events)
    plain = list(ask(api, harness_messages(haystack.text, questions[0].text), stream=True))
    assert all(e.usage is None for e in plain) and plain[-1].choices[0].finish_reason == "stop"


def test_the_stream_ends_with_done(open_server, dev):
    questions, haystack, _, _ = dev
    body = {"model": "gpt-4o-mini", "stream": True,
            "messages": harness_messages(haystack.text, questions[0].text)}
    status, headers, raw = raw_request(open_server, "POST", "/chat/completions",
                                       orjson.dumps(body))
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = raw.decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    assert all(e.startswith("data: {") for e in events[:-2])


# ---- parameters --------------------------------------------------------------------------------
def test_unknown_and_unused_parameters_are_ignored(open_server, dev):
    questions, haystack, rows, _ = dev
    api = client(open_server)
    q = questions[3]
    reply = ask(api, harness_messages(haystack.text, q.text), top_p=0.5, seed=3, n=1,
                presence_penalty=1.0, stop=["\n"], logit_bias={"50256": -100}, user="me",
                extra_body={"frobnicate": {"deep": [1, 2]}, "top_k": 40})
    assert reply.choices[0].message.content == rows[q.qid]["prediction"]


def test_n_above_one_is_refused(open_server, dev):
    questions, haystack, _, _ = dev
    api = client(open_server)
    with pytest.raises(BadRequestError) as err:
        ask(api, harness_messages(haystack.text, questions[0].text), n=3)
    assert_error(err.value, 400, "unsupported_value", "n = 3 is not supported", param="n")
    assert_still_serving(open_server, dev)


def test_a_long_answer_is_not_cut_at_max_tokens(open_server):
    long_name = " ".join(["Saint"] * 14) + " Louis"
    messages = [{"role": "user", "content": f"0. Tim Cook was born in the city of {long_name}."},
                {"role": "user", "content": harness.prompt("Which city was Tim Cook born in?")}]
    reply = ask(client(open_server), messages)
    assert reply.choices[0].message.content == long_name and reply.usage.completion_tokens == 15


# ---- models --------------------------------------------------------------------------------
def test_models_lists_factres_and_the_accepted_names(open_server, guarded_server):
    listed = client(guarded_server, KEY).models.list()
    assert [m.id for m in listed.data] == ["factres", "factres-readout", "gpt-4o-mini", "gpt-4o"]
    about = listed.model_extra["factres"]
    assert about["version"] and about["plan_sets"] == ["live:rules", "live:lexicon"]
    assert about["mode"] == "search" and about["accepts"] == ["gpt-4o-mini", "gpt-4o"]
    assert {"memories", "estimated_bytes", "budget_bytes"} <= set(about["cache"])
    assert client(guarded_server, KEY).models.retrieve("gpt-4o").id == "gpt-4o"
    with pytest.raises(NotFoundError) as err:
        client(guarded_server, KEY).models.retrieve("gpt-5")
    assert_error(err.value, 404, "model_not_found", "`gpt-5` does not exist", param="model")
    everyone = client(open_server).models.list()
    assert [m.id for m in everyone.data] == ["factres", "factres-readout"]
    assert everyone.model_extra["factres"]["accepts"] == "any model name"
    assert client(open_server).models.retrieve("llama-3").id == "llama-3"


def test_a_model_outside_models_is_not_found_and_the_named_ones_answer(guarded_server, dev):
    questions, haystack, rows, _ = dev
    api = client(guarded_server, KEY)
    messages = harness_messages(haystack.text, questions[1].text)
    with pytest.raises(NotFoundError) as err:
        ask(api, messages, model="gpt-3.5-turbo")
    assert_error(err.value, 404, "model_not_found",
                 "The model `gpt-3.5-turbo` does not exist", param="model")
    for model in ("gpt-4o-mini", "gpt-4o", "factres"):
        reply = ask(api, messages, model=model)
        assert reply.model == model
        assert reply.choices[0].message.content == rows[questions[1].qid]["prediction"]


# ---- errors --------------------------------------------------------------------------------
def assert_error(exc: APIStatusError, status: int, code: str | None, words: str,
                 param: str | None = None, type: str = "invalid_request_error") -> None:
    assert exc.status_code == status
    assert set(exc.body) == {"message", "type", "param", "code"}      # the client unwraps it
    assert (exc.body["type"], exc.body["code"], exc.body["param"]) == (type, code, param)
    assert words in exc.body["message"] and "Traceback" not in exc.body["message"]


def raw_request(url: str, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, dict, bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request(method, parts.path + path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, \
            response.read()
    finally:
        connection.close()


def assert_raw_error(answer, status: int, code: str | None, words: str) -> None:
    got, headers, raw = answer
    error = orjson.loads(raw)["error"]
    assert (got, headers["content-type"], error["code"]) == (status, "application/json", code)
    assert set(error) == {"message", "type", "param", "code"} and words in error["message"]


def assert_still_serving(url: str, dev, key: str = "sk-anything") -> None:
    questions, haystack, rows, _ = dev
    q = questions[7]
    reply = ask(client(url, key), harness_messages(haystack.text, q.text))
    assert reply.choices[0].message.content == rows[q.qid]["prediction"]


@pytest.mark.parametrize("body, words", [
    (b'{"model": "gpt-4o-mini", "messages": [', "could not parse the JSON body"),
    (b"\xff\xfe not utf-8", "could not parse the JSON body"),
    (b'"just a string"', "a JSON string, not an object"),
])
def test_malformed_json_is_a_400(open_server, dev, body, words):
    answer = raw_request(open_server, "POST", "/chat/completions", body,
                         {"Content-Type": "application/json"})
    assert_raw_error(answer, 400, "invalid_json", words)
    assert_still_serving(open_server, dev)


def test_no_user_message_is_a_400(open_server, dev):
    api = client(open_server)
    for messages in ([{"role": "system", "content": SYSTEM}],
                     [{"role": "assistant", "content": ACK}], []):
        with pytest.raises(BadRequestError) as err:
            ask(api, messages)
        assert_error(err.value, 400, "no_user_message", "hold no user message",
                     param="messages")
    with pytest.raises(BadRequestError) as err:
        ask(api, [{"role": "user", "content": [{"type": "image_url",
                                               "image_url": {"url": "data:,"}}]}])
    assert_error(err.value, 400, "invalid_value", "factres reads text only",
                 param="messages[0].content[0]")
    assert_still_serving(open_server, dev)


def test_a_body_over_the_limit_is_a_413(guarded_server, dev):
    api = client(guarded_server, KEY)
    far_over = [{"role": "user", "content": "x" * (5 * LIMIT)}]      # not read at all
    with pytest.raises(APIStatusError) as err:
        ask(api, far_over)
    assert_error(err.value, 413, "request_too_large", f"limit of {LIMIT} bytes")
    huge = [{"role": "user", "content": "0. Tim Cook is employed by Apple. " * 10_000}]
    with pytest.raises(APIStatusError) as err:
        ask(api, huge)
    assert_error(err.value, 413, "request_too_large", f"limit of {LIMIT} bytes")
    # without a Content-Length (http.client sends an iterator chunked), the limit is checked as
    # the body arrives
    chunked = iter([b'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "'] +
                   [b"x" * 65536] * 6 + [b'"}]}'])
    answer = raw_request(guarded_server, "POST", "/chat/completions", chunked,
                         {"Authorization": f"Bearer {KEY}"})
    assert_raw_error(answer, 413, "request_too_large", "larger than this server's limit")
    assert_still_serving(guarded_server, dev, KEY)


def test_the_default_body_limit_fits_the_262k_haystack_as_the_harness_sends_it():
    context = (ROOT / "resolver" / "data" / "fc" / "factconsolidation_262k_context.txt"
               ).read_text("utf-8")
    body = orjson.dumps({"model": "gpt-4o-mini", "messages": harness_messages(context, "Q?")})
    assert len(body) * 8 < ServeConfig().max_body


def test_a_wrong_or_missing_key_is_a_401(guarded_server, dev):
    questions, haystack, _, _ = dev
    messages = harness_messages(haystack.text, questions[0].text)
    with pytest.raises(AuthenticationError) as err:
        ask(client(guarded_server, "sk-wrong"), messages)
    assert_error(err.value, 401, "invalid_api_key", "Incorrect API key provided")
    with pytest.raises(AuthenticationError):
        client(guarded_server, "sk-wrong").models.list()
    # no key at all (the client refuses to send none): no Authorization header, or not Bearer
    for path, method in (("/models", "GET"), ("/chat/completions", "POST"), ("/nowhere", "GET")):
        assert_raw_error(raw_request(guarded_server, method, path, b"{}"), 401, None,
                         "You didn't provide an API key")
    assert_raw_error(raw_request(guarded_server, "GET", "/models",
                                 headers={"Authorization": "Basic " + KEY}), 401, None,
                     "You didn't provide an API key")
    assert_still_serving(guarded_server, dev, KEY)


def test_unknown_urls_and_methods_are_openai_errors(open_server, dev):
    assert_raw_error(raw_request(open_server, "GET", "/completions"), 404, "unknown_url",
                     "Unknown request URL: GET /v1/completions")
    assert_raw_error(raw_request(open_server, "GET", "/chat/completions"), 405,
                     "method_not_allowed", "Method GET is not allowed")
    assert_still_serving(open_server, dev)


def test_a_fault_of_the_server_is_a_500_and_it_keeps_serving(open_server, dev, monkeypatch):
    def broken(self, prompt, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr("resolver.memory.memory.Memory.query", broken)
    questions, haystack, _, _ = dev
    body = orjson.dumps({"model": "m", "messages": harness_messages(haystack.text, "Why?")})
    status, _, raw = raw_request(open_server, "POST", "/chat/completions", body)
    error = orjson.loads(raw)["error"]
    assert (status, error["type"], error["code"]) == (500, "server_error", "internal_error")
    assert "RuntimeError" in error["message"] and "a bug" not in error["message"]
    monkeypatch.undo()
    assert_still_serving(open_server, dev)


def test_bad_input_never_changes_another_conversations_memory(open_server, dev):
    questions, haystack, rows, _ = dev
    api = client(open_server)
    chunks = harness.chunk_context(haystack.text, 1000)
    ask(api, per_chunk_messages(chunks, questions[0].text))         # warm
    before = ask(api, per_chunk_messages(chunks, questions[5].text)).model_extra["factres"]
    assert before["memory"]["cached"] is True
    bad_requests = [
        (b"{", 400), (b"[]", 400), (b'{"model": "m"}', 400),
        (b'{"model": "m", "messages": [{"role": "user"}]}', 200),     # asks "", empty answer
        (orjson.dumps({"model": "m", "n": 2, "messages": per_chunk_messages(chunks, "Q?")}),
         400),
        # the same chunks with a bad line and a serial repeated with another fact appended:
        # another memory part, so another memory
        (orjson.dumps({"model": "m", "messages": per_chunk_messages(
            chunks + ["455. this fits no template. 12. Ann is employed by Nobody."],
            questions[5].text)}), 200),
        # the same chunks with a lone surrogate: refused before any memory is touched
        (orjson.dumps({"model": "m", "messages": per_chunk_messages(chunks, "Q?")}).replace(
            b"Here is a list", b"Here \\udc80 is a list"), 400),
    ]
    for body, status in bad_requests:
        assert raw_request(open_server, "POST", "/chat/completions", body)[0] == status
    for q in questions[:40]:
        after = ask(api, per_chunk_messages(chunks, q.text)).model_extra["factres"]
        assert after["text"] == rows[q.qid]["prediction"], q.qid
        assert after["memory"] | {"cached": True} == before["memory"]
    again = ask(api, per_chunk_messages(chunks, questions[5].text)).model_extra["factres"]
    assert again == before


# ---- the command ---------------------------------------------------------------------------
def test_the_command_refuses_a_non_loopback_address_without_a_key():
    from oracle.cli import main
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: binding 0.0.0.0 (not a loopback address) needs "
                                    "an API key")
    result = CliRunner().invoke(main, ["serve", "--plans", "live:oracle"])
    assert result.exit_code == 1 and "unknown live plan set 'live:oracle'" in result.output


def test_without_the_extra_the_command_says_what_to_install():
    code = ("import sys\nsys.modules['starlette'] = None\nfrom oracle.cli import main\n"
            "main(['serve', '--port', '0'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"Error: {NEEDS_EXTRA}"
    assert "pip install 'factres[serve]'" in NEEDS_EXTRA


def test_the_command_runs_the_server(tmp_path):
    """`factres serve` as a process: it binds, answers, and stops on SIGTERM (uvicorn shuts
    down gracefully, then lets the signal end the process, as it would have ended it)."""
    import signal
    import socket
    import time
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-c", "from oracle.cli import main; main()",
                                "serve", "--port", str(port), "--models", "gpt-4o-mini,gpt-4o",
                                "--no-access-log"], cwd=ROOT, stderr=subprocess.PIPE,
                               text=True)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 60
        while True:
            try:
                listed = client(url).models.list()
                break
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        assert [m.id for m in listed.data] == ["factres", "factres-readout", "gpt-4o-mini",
                                               "gpt-4o"]
        messages = [{"role": "user", "content": "0. Tim Cook is employed by Apple."},
                    {"role": "user", "content": harness.prompt("Who is Tim Cook employed by?")}]
        assert ask(client(url), messages).choices[0].message.content == "Apple"
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
    assert process.returncode in (0, -signal.SIGTERM) and "Finished server process" in err
    assert "Traceback" not in err
    assert f"factres serve: http://127.0.0.1:{port}/v1" in err
