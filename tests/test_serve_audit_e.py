"""The server under signals, odd prompts and bounded memory (audit E's server cases), each
against a server this module starts on a loopback port (in a thread, or as the `factres serve`
process where the case is about the process: its signals, its exit, its log), through the real
`openai` client where a client can send the request and raw sockets where it cannot (a body
half sent, a byte that is not UTF-8).

E11: a system prompt's numbered example is instructions when a user message holds the facts.
E31: SIGTERM with a half-sent body exits; a body that stops arriving is given up (408).
E22: the question's reading is memoised within a bound. E20: a harness's chunks of 16 or 32
tokens, one per user message, keep every fact. E19: report texts cut to 200 characters.
E08: the question found in more layouts, or none ("no question found") with the facts read.
E14: a byte that is not UTF-8 named with its offset. E13: model names of at most 256
characters, longer ones echoed cut. E33: --models naming no model refused. E30: Ctrl-C exits
0. E27: keep-alive and concurrency bounds. E25: the cache's counts agree with the replies.
E36: abstentions asked by the server or by a request."""
from __future__ import annotations

import contextlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
from click.testing import CliRunner
from openai import BadRequestError, NotFoundError, OpenAI
# audit B's server cases: the facts, the question, the server (a module-scoped fixture), the
# client and a user message
from test_serve_extremes import FACTS, QUESTION, client, server, user  # noqa: F401

from oracle.cli import main
from resolver.errors import InputError
from resolver.haystack import bundled_path, load
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.serve.app import serving, uvicorn_config
from resolver.serve.config import MAX_MODEL_NAME, SHUTDOWN_TIMEOUT, ServeConfig

ROOT = Path(__file__).resolve().parents[1]


def ask(url: str, messages: list[dict], **kwargs):
    return client(url).chat.completions.create(model=kwargs.pop("model", "gpt-4o-mini"),
                                               messages=messages, max_tokens=10, **kwargs)


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname, parts.port


def post(url: str, body: bytes) -> tuple[int, dict]:
    """A raw POST to /chat/completions: (status, the JSON reply)."""
    import http.client
    host, port = address(url)
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        connection.request("POST", "/v1/chat/completions", body=body,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, orjson.loads(response.read())
    finally:
        connection.close()


HALF_SENT = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + b"{" * 10)


def half_sent(url: str) -> socket.socket:
    """A connection that sent its headers and 10 of the 1,000 bytes it announced."""
    sock = socket.create_connection(address(url), timeout=60)
    sock.sendall(HALF_SENT)
    return sock


def response_of(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@contextlib.contextmanager
def command(*args: str):
    """`factres serve` as a process of its own on a free loopback port: (process, base URL)
    once it answers. Stopped (SIGKILL) at the end if the test left it running."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-c", "from oracle.cli import main; main()",
                                "serve", "--port", str(port), *args], cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                client(url).models.list()
                break
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        yield process, url
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


# ---- E11: a system prompt's worked example is instructions -------------------------------------
EXAMPLE = ("You answer from a list of numbered facts; a later fact replaces an earlier one.\n"
           "Example:\n0. Tim Cook is employed by Acme.\n1. Tim Cook is employed by Initech.\n"
           "Question: Who is Tim Cook employed by?\nAnswer: Initech")


def test_e11_a_system_example_is_not_memory_when_a_user_message_holds_the_facts(server):
    reply = ask(server, [{"role": "system", "content": EXAMPLE}] + user(FACTS + QUESTION))
    memory = reply.model_extra["factres"]["memory"]
    assert reply.choices[0].message.content == "Google"
    assert memory["facts"] == 2 and memory["reported"] == {}
    assert memory["messages_passed_over"] == {"system": 1}
    # a developer message is a system message
    reply = ask(server, [{"role": "developer", "content": EXAMPLE}] + user(FACTS + QUESTION))
    assert reply.choices[0].message.content == "Google"


def test_e11_a_system_message_holding_the_only_facts_is_memory(server):
    reply = ask(server, [{"role": "system", "content": FACTS}] + user(QUESTION))
    assert reply.choices[0].message.content == "Google"
    assert reply.model_extra["factres"]["memory"]["messages_passed_over"] == {}


# ---- E31: a body that stops arriving ---------------------------------------------------------
def test_e31_sigterm_with_a_half_sent_body_exits_and_answers_503():
    with command("--no-access-log") as (process, url):
        sock = half_sent(url)
        time.sleep(0.5)                   # the request is being read
        process.send_signal(signal.SIGTERM)
        # uvicorn's graceful shutdown waits SHUTDOWN_TIMEOUT seconds, then cancels the request:
        # the process ends (30 s is a generous bound on "about 10")
        _, err = process.communicate(timeout=30)
        reply = response_of(sock)
        sock.close()
    assert process.returncode in (0, -signal.SIGTERM)
    assert "Traceback" not in err and "Finished server process" in err
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503")
    error = orjson.loads(body)["error"]
    assert error["code"] == "server_stopping"
    assert f"still in progress {SHUTDOWN_TIMEOUT} s after the stop" in error["message"]


def test_e31_a_body_that_stops_arriving_is_given_up_with_a_408():
    with serving(ServeConfig(port=0, body_timeout=0.5)) as url:
        sock = half_sent(url)
        reply = response_of(sock)          # the server closes it after the 408
        sock.close()
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head.lower()
        error = orjson.loads(body)["error"]
        assert error["code"] == "request_timeout"
        assert error["message"].startswith("The request body stopped arriving: no byte came "
                                           "for 0.5 s after 10 bytes")
        assert ask(url, user(FACTS + QUESTION)).choices[0].message.content == "Google"


# ---- E20: a harness's small chunks, one per user message --------------------------------------
ACK = "I have learned the facts and I will answer the question you ask."
SYSTEM = "You are a helpful assistant that can read the context and memorize it."


def per_chunk(chunks: list[str], question: str) -> list[dict]:
    """The harness's chunks one per user message, an acknowledgement after each, the prompt."""
    messages = [{"role": "system", "content": SYSTEM}]
    for chunk in chunks:
        messages += [{"role": "user", "content": chunk}, {"role": "assistant", "content": ACK}]
    return messages + [{"role": "user", "content": harness.prompt(question)}]


def chunks_of(context: str, tokens: int, framed: bool) -> list[str]:
    chunks = harness.chunk_context(context, tokens)
    return [harness.frame_chunk(c, f"2025-01-01 00:00:{i % 60:02d}") for i, c in
            enumerate(chunks)] if framed else chunks


@pytest.fixture(scope="module")
def dev():
    from resolver.results.result_schema import PREDICTIONS_FILE, TRACES_FILE, loads_lines
    committed = ROOT / "results" / "dev-6k-search-confidence"
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    rows = {r["qid"]: r for r in loads_lines((committed / PREDICTIONS_FILE).read_bytes())}
    traces = {t["qid"]: t for t in loads_lines((committed / TRACES_FILE).read_bytes())}
    return dataset.questions, haystack, rows, traces


@pytest.mark.parametrize("tokens, framed", [(16, False), (16, True), (32, False)],
                         ids=["16-raw", "16-framed", "32-raw"])
def test_e20_small_chunks_one_per_message_keep_every_fact_and_give_the_runs_answers(
        server, dev, tokens, framed):
    questions, haystack, rows, traces = dev
    chunks = chunks_of(haystack.text, tokens, framed)
    # chunks end with the next fact's serial ("... London. 1."), and at 16 tokens some hold no
    # serial at all ("The headquarters of ... Berkeley."): before, 17 of 455 facts were kept at
    # 16 tokens, and 454 at 32 (fact 114 took 115's text)
    raw = harness.chunk_context(haystack.text, tokens)
    assert sum(bool(re.search(r"\d\.\Z", c)) for c in raw) > len(raw) / 2
    assert any(not re.search(r"\d\.(\s|\Z)", c) for c in raw) == (tokens == 16)
    for q in questions:
        reply = ask(server, per_chunk(chunks, q.text))
        extra = reply.model_extra["factres"]
        assert reply.choices[0].message.content == rows[q.qid]["prediction"], q.qid
        winner = traces[q.qid]["winner"]
        assert extra["path"] == (winner["hops"] if winner else []), q.qid
        assert extra["memory"]["facts"] == 455 and extra["memory"]["reported"] == {}
        assert extra["memory"]["messages_passed_over"] == {"assistant": len(chunks),
                                                           "system": 1}
        # a whole context: the first message is the header and serial 0 alone, and no later
        # message's fact list "starts inside the list" (context_cut.py)
        assert extra["warnings"] == []


@pytest.fixture(scope="module")
def synthetic_32k(tmp_path_factory):
    from conftest import bundled_context
    from test_memory import _synthetic, trace_bytes

    from resolver.plan.planning import live_plan_sets
    from resolver.search.resolve import resolve_dataset
    rows = _synthetic().generate(bundled_context("32k"), "32k", seed=0, n_sh=6, n_mh=6)
    path = tmp_path_factory.mktemp("synthetic-32k") / "synthetic_32k.json"
    path.write_bytes(orjson.dumps({"data": rows}))
    dataset, _ = load([path])
    (haystack,) = dataset.haystacks.values()
    predictions = resolve_dataset(dataset, live_plan_sets(dataset))    # what `factres run` does
    return dataset, haystack, {p.qid: p for p in predictions}, trace_bytes


@pytest.mark.parametrize("tokens", [16, 32])
def test_e20_small_chunks_of_the_32k_context_keep_every_fact(server, synthetic_32k, tokens):
    from test_memory import assert_same_store

    from resolver.serve.conversation import remember, split
    from resolver.serve.request import Message
    dataset, haystack, expected, trace_bytes = synthetic_32k
    chunks = chunks_of(haystack.text, tokens, framed=False)
    messages = per_chunk(chunks, dataset.questions[0].text)
    remembered = remember(split(tuple(Message(m["role"], m["content"]) for m in messages)),
                          ("rules", "lexicon"), "search")
    assert_same_store(remembered.memory, haystack.store)          # every fact, as the run's
    for q in dataset.questions:
        got = remembered.memory.query(q.text, qid=q.qid, source=q.source).prediction
        assert trace_bytes(got) == trace_bytes(expected[q.qid]), q.qid
        reply = ask(server, per_chunk(chunks, q.text))
        assert reply.choices[0].message.content == expected[q.qid].answer, q.qid
        assert reply.model_extra["factres"]["memory"]["facts"] == 2310


def test_e20_an_instruction_message_between_fact_messages_is_passed_over(server):
    messages = [{"role": "user", "content": "0. Tim Cook is employed by Google."},
                {"role": "user", "content": "Please remember these too."},
                {"role": "user", "content": "1. Joe Biden was born in the city of St."},
                {"role": "user", "content": "Louis."},
                {"role": "user", "content": "2. Paris is located in the country of France."},
                {"role": "user", "content": "Thanks."},
                {"role": "user", "content": QUESTION}]
    extra = ask(server, messages).model_extra["factres"]
    assert extra["text"] == "Google"            # not "Google. Please remember these too"
    assert extra["memory"]["messages_passed_over"] == {"user": 2}
    assert ask(server, messages[:-1] + user("Which city was Joe Biden born in?")
               ).choices[0].message.content == "St. Louis"


# ---- E19: report texts cut as `factres parse` cuts them ---------------------------------------
def test_e19_report_texts_in_a_reply_are_cut_to_200_characters(server):
    lines = [f"{n}. " + "this line fits no template " * 20_000 for n in (2, 3, 4)]
    text = FACTS + "\n".join(lines) + "\n" + QUESTION
    reply = ask(server, user(text))
    extra = reply.model_extra["factres"]
    assert reply.choices[0].message.content == "Google"
    reports = extra["memory"]["reports"]
    assert extra["memory"]["reported"] == {"unparsed": 3} and len(reports) == 3
    for report, line in zip(reports, lines):
        line = line.rstrip()
        assert report["text"] == line[:200] + f"... ({len(line) - 200} more characters)"
        assert len(report["reason"]) <= 240
    assert len(reply.model_dump_json()) < 10_000


# ---- E08: the question in more layouts, or none ------------------------------------------------
INSTRUCTIONS = ("Use only the facts above.\nA later fact replaces an earlier one.\n"
                "Answer with a name only.\n")


@pytest.mark.parametrize("text, question, how", [
    # after three instruction lines, a label on a line of its own, text after the question
    (FACTS + INSTRUCTIONS + "Question:\nWho is Tim Cook employed by?\n\nAnswer briefly.",
     QUESTION, "last sentence"),
    (FACTS + INSTRUCTIONS + "Question: Who is Tim Cook employed by?\n\nAnswer briefly.\n"
     "Do not explain.", QUESTION, "last sentence"),
    # a question before the facts
    ("Who is Tim Cook employed by?\n" + FACTS, QUESTION, "before the facts"),
    ("Answer the question below from the facts. Who is Tim Cook employed by?\n\n" + FACTS,
     QUESTION, "before the facts"),
    ("Question: Who is Tim Cook employed by\n" + FACTS, "Who is Tim Cook employed by",
     "before the facts"),
    # no "?"
    (FACTS + "Who is Tim Cook employed by", "Who is Tim Cook employed by", "question line"),
    (FACTS + "Question:\nwho is Tim Cook employed by\n\nAnswer briefly.",
     "who is Tim Cook employed by", "question line"),
    (FACTS + "Name the employer of Tim Cook.", "Name the employer of Tim Cook.",
     "question line"),
    (FACTS + "Who is Tim Cook employed by\nTell me the name only.",
     "Who is Tim Cook employed by", "question line"),
    # a fullwidth question mark
    (FACTS + "Who is Tim Cook employed by\uff1f", QUESTION, "last sentence"),
    (FACTS + INSTRUCTIONS + "Who is Tim Cook employed by\uff1f Answer briefly.", QUESTION,
     "last sentence"),
])
def test_e08_the_question_is_found_in_more_layouts_and_the_facts_are_read(server, text, question,
                                                                          how):
    from resolver.serve.question import find_question
    assert (find_question(text).question, find_question(text).how) == (question, how)
    for stream in (False, True):
        if stream:
            events = list(ask(server, user(text), stream=True))
            content = "".join(e.choices[0].delta.content or "" for e in events if e.choices)
            extra = next(e.model_extra["factres"] for e in events if "factres" in e.model_extra)
        else:
            reply = ask(server, user(text))
            content, extra = reply.choices[0].message.content, reply.model_extra["factres"]
        assert content == "Google" and extra["question"] == question
        assert extra["memory"]["facts"] == 2 and extra["memory"]["reported"] == {}


@pytest.mark.parametrize("text, facts", [
    (FACTS, 2), (FACTS + "Thanks.", 2), (FACTS + INSTRUCTIONS, 2), ("Hello.", 0), ("", 0)])
def test_e08_with_no_question_the_facts_are_read_and_the_answer_is_empty(server, text, facts):
    reply = ask(server, user(text))
    extra = reply.model_extra["factres"]
    assert reply.choices[0].message.content == "" and extra["question"] == ""
    assert extra["reason"].startswith("no question found")
    assert extra["memory"]["facts"] == facts and extra["memory"]["reported"] == {}


# ---- E14: a byte that is not UTF-8 ------------------------------------------------------------
def test_e14_a_byte_that_is_not_utf8_is_named_with_its_offset(server):
    body = orjson.dumps({"model": "m", "messages": user(FACTS + QUESTION)})
    bad = body[:117] + b"\xff" + body[118:]
    status, reply = post(server, bad)
    assert status == 400 and reply["error"]["code"] == "invalid_json"
    assert "the body is not UTF-8: byte 0xff at offset 117 of the body (counted from 0): " \
           "invalid start byte" in reply["error"]["message"]
    cut = body[:117] + "é".encode()[:1] + b"x" + body[119:]     # a character cut short
    status, reply = post(server, cut)
    assert "byte 0xc3 at offset 117" in reply["error"]["message"]
    assert "invalid continuation byte" in reply["error"]["message"]
    assert ask(server, user(FACTS + QUESTION)).choices[0].message.content == "Google"


# ---- E13: model names of at most 256 characters ------------------------------------------------
def test_e13_a_model_name_over_256_characters_is_refused_and_echoed_cut(server):
    for name, served in (("m" * MAX_MODEL_NAME, True), ("m" * (MAX_MODEL_NAME + 1), False),
                         ("m" * 1_000_000, False)):
        if served:
            assert ask(server, user(FACTS + QUESTION), model=name).model == name
            assert client(server).models.retrieve(name).id == name
            continue
        with pytest.raises(NotFoundError) as err:
            ask(server, user(FACTS + QUESTION), model=name)
        message = err.value.body["message"]
        assert err.value.body["code"] == "model_not_found" and len(message) < 300
        assert f"model names are at most 256 characters, and this one has {len(name):,}" \
            in message
        with pytest.raises(NotFoundError) as err:
            client(server).models.retrieve(name[:20_000])
        assert len(err.value.body["message"]) < 300
    with pytest.raises(InputError, match="a model name of 257 characters"):
        ServeConfig(models=("m" * 257,))


def test_e13_the_access_log_cuts_a_long_path_and_e30_ctrl_c_exits_0():
    with command() as (process, url):
        with pytest.raises(NotFoundError):
            client(url).models.retrieve("y" * 20_000)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "Aborted!" not in err and "Traceback" not in err
    (logged,) = [line for line in out.splitlines() if "/v1/models/yyy" in line]
    path = "/v1/models/" + "y" * 20_000
    assert len(logged) < 400
    assert logged.endswith(f'"GET {path[:200]}... ({len(path) - 200} more characters) HTTP/1.1" '
                           '404 Not Found')


# ---- E33: --models naming no model -----------------------------------------------------------
@pytest.mark.parametrize("value", ["", ",", " ", " , "])
def test_e33_models_naming_no_model_is_refused(value, monkeypatch):
    def serve(*args, **kwargs):
        raise AssertionError("the server was started")
    monkeypatch.setattr("resolver.serve.app.serve", serve)
    result = CliRunner().invoke(main, ["serve", "--port", "0", "--models", value])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"Invalid value for '--models': {value!r} names no model" in result.output


# ---- E27: what bounds a slow or greedy client ------------------------------------------------
def test_e27_the_bounds_reach_uvicorn_with_their_defaults():
    made = uvicorn_config(ServeConfig(port=0))
    assert (made.timeout_keep_alive, made.limit_concurrency, made.timeout_graceful_shutdown) \
        == (5.0, 100, SHUTDOWN_TIMEOUT)
    made = uvicorn_config(ServeConfig(port=0, keep_alive=2.5, limit_concurrency=8))
    assert (made.timeout_keep_alive, made.limit_concurrency) == (2.5, 8)
    for kwargs, words in [({"keep_alive": 0}, "a keep-alive of 0"),
                          ({"keep_alive": float("nan")}, "a keep-alive of nan"),
                          ({"limit_concurrency": 1}, "a concurrency limit of 1"),
                          ({"body_timeout": float("inf")}, "a body timeout of inf")]:
        with pytest.raises(InputError, match=words):
            ServeConfig(**kwargs)


def test_e27_past_the_concurrency_limit_a_request_gets_503():
    with serving(ServeConfig(port=0, limit_concurrency=2)) as url:
        assert ask(url, user(FACTS + QUESTION)).choices[0].message.content == "Google"
        held = half_sent(url)               # a second connection open: the limit is reached
        time.sleep(0.2)
        with pytest.raises(Exception) as err:
            ask(url, user(FACTS + QUESTION))
        assert getattr(err.value, "status_code", None) == 503
        held.close()
        deadline = time.monotonic() + 30
        while True:                         # served again once the connection is gone
            try:
                assert ask(url, user(FACTS + QUESTION)).choices[0].message.content == "Google"
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def test_e27_an_idle_connection_is_closed_after_the_keep_alive():
    with serving(ServeConfig(port=0, keep_alive=0.5)) as url:
        sock = socket.create_connection(address(url), timeout=60)
        sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reply = response_of(sock)           # the reply, then the close: no hang for ever
        sock.close()
        assert reply.startswith(b"HTTP/1.1 200")


# ---- E25: the cache's counts agree with the replies -------------------------------------------
def test_e25_concurrent_requests_for_a_new_conversation_are_counted_as_the_replies_say(
        dev, monkeypatch):
    from resolver.serve import app, cache
    _, haystack, _, _ = dev
    context = "\n".join(harness.frame_chunk(c) for c in harness.chunk_context(haystack.text))
    messages = user(context + "\n" + harness.prompt(QUESTION))
    # the memory is built only once all 16 requests found it missing from the cache, so 15 of
    # them wait for the one building it (whatever the machine's speed)
    missed, everyone_missed = [], threading.Event()
    lookup, remember = cache.MemoryCache.lookup, app.remember

    def counted_lookup(self, key):
        found = lookup(self, key)
        if found is None:
            missed.append(key)
            if len(missed) == 16:
                everyone_missed.set()
        return found

    def gated_remember(*args, **kwargs):
        everyone_missed.wait(60)
        return remember(*args, **kwargs)

    monkeypatch.setattr(cache.MemoryCache, "lookup", counted_lookup)
    monkeypatch.setattr(app, "remember", gated_remember)
    with serving(ServeConfig(port=0)) as url:
        clients = [client(url) for _ in range(16)]
        flags: list[bool] = []

        def one(api: OpenAI) -> None:
            reply = api.chat.completions.create(model="m", messages=messages, max_tokens=10)
            flags.append(reply.model_extra["factres"]["memory"]["cached"])

        threads = [threading.Thread(target=one, args=(api,)) for api in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        stats = client(url).models.list().model_extra["factres"]["cache"]
    assert everyone_missed.is_set() and len(flags) == 16 and flags.count(False) == 1
    # were: hits 0, misses 1, while 15 replies said cached
    assert (stats["hits"], stats["misses"]) == (15, 1)


# ---- E36: abstentions, asked by the server or by a request --------------------------------------
def test_e36_abstain_below_from_the_server_or_the_request(server, dev):
    questions, haystack, rows, _ = dev
    context = "\n".join(harness.frame_chunk(c) for c in harness.chunk_context(haystack.text))
    memory = Memory()
    memory.ingest(context)
    memory.flush()
    # answered questions of every confidence label
    asked = [q for label in ("low", "medium", "high")
             for q in [q for q in questions if rows[q.qid]["prediction"]
                       and rows[q.qid]["confidence"]["label"] == label][:4]]
    assert len(asked) == 12
    with serving(ServeConfig(port=0, abstain_below="high")) as strict:
        for q in asked:
            messages = user(context + "\n" + harness.prompt(q.text))
            for url, kwargs, level in ((server, {}, None),
                                       (server, {"extra_body": {"abstain_below": "high"}},
                                        "high"),
                                       (strict, {}, "high"),
                                       (strict, {"extra_body": {"abstain_below": "low"}}, "low")):
                reply = ask(url, messages, **kwargs)
                expected = memory.query(q.text, abstain_below=level)
                extra = reply.model_extra["factres"]
                assert (reply.choices[0].message.content, extra["reason"]) == \
                    (expected.text, expected.reason), (q.qid, level)
                assert extra["abstain_below"] == level
    assert any(memory.query(q.text, abstain_below="high").reason.startswith("abstained")
               for q in asked)
    with pytest.raises(BadRequestError) as err:
        ask(server, user(FACTS + QUESTION), extra_body={"abstain_below": "sure"})
    assert err.value.body["param"] == "abstain_below"
    assert "Invalid value for 'abstain_below': 'sure'" in err.value.body["message"]
    result = CliRunner().invoke(main, ["serve", "--abstain-below", "sure"])
    assert result.exit_code == 2 and "Invalid value for '--abstain-below'" in result.output


# ---- E22: what a question leaves behind is bounded ----------------------------------------------
def test_e22_a_memory_keeps_a_bounded_number_of_question_readings():
    memory = Memory()
    memory.ingest(FACTS)
    memory.flush()
    for n in range(300):
        assert memory.query(f"Who is Tim Cook employed by, question number {n}?").text \
            == "Google"
    # a reading per distinct question was kept for ever (audit E: 80 MB over 4,000 questions
    # of 990 characters); benchmarks/serve.py measures the server's resident memory
    assert len(memory.store.name_cache()) == 256


def test_e20_a_named_memory_sent_small_chunks_one_per_request_keeps_every_fact(dev, tmp_path):
    questions, haystack, rows, _ = dev
    chunks = chunks_of(haystack.text, 16, framed=False)
    with serving(ServeConfig(port=0, store=str(tmp_path / "memories"))) as url:
        agent = client(f"{url}/memories/agent")
        for chunk in chunks:                     # facts, no question: nothing is asked
            reply = agent.chat.completions.create(model="m", messages=user(chunk))
            assert reply.choices[0].message.content == ""
        for q in questions[::20]:
            reply = agent.chat.completions.create(model="m", messages=user(q.text))
            assert reply.choices[0].message.content == rows[q.qid]["prediction"], q.qid
        memory = reply.model_extra["factres"]["memory"]
    assert memory["facts"] == 455 and memory["reported"] == {}
