"""A context its client cut before sending it is caught (issue 34, item 8): the 262K context as
MemoryAgentBench's harness sends it with a model config whose window is smaller (gpt-4o-mini,
128K tokens: it keeps the context's last ~124K tokens) gets a warning in `factres.warnings`
and in the server's log; the whole context gets none. Both are asked through the `openai`
client, as the harness asks."""
from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from test_serve import ask, client, harness_messages

from resolver.mab import harness
from resolver.serve.context_cut import cut_warnings
from resolver.serve.conversation import split
from resolver.serve.request import Message

ROOT = Path(__file__).resolve().parents[1]
CONTEXT_262K = ROOT / "resolver" / "data" / "fc" / "factconsolidation_262k_context.txt"
KEPT_TOKENS = 124_000          # what the harness keeps of a prompt for gpt-4o-mini's window
QUESTION = "Who is the author of Dianetics?"
_TOKEN = re.compile(r"\w+|[^\w\s]")   # as harness.count_tokens counts


def cut_as_the_harness_cuts(messages: list[dict], kept: int = KEPT_TOKENS) -> list[dict]:
    """The user message's last `kept` tokens (the prompt at its end stays whole); the system
    message as it is."""
    user = messages[-1]["content"]
    starts = [m.start() for m in _TOKEN.finditer(user)]
    return messages[:-1] + [{"role": "user", "content": user[starts[-kept]:]}]


@pytest.fixture(scope="module")
def whole():
    return harness_messages(CONTEXT_262K.read_text("utf-8"), QUESTION)


@pytest.fixture(scope="module")
def cut(whole):
    return cut_as_the_harness_cuts(whole)


def _warnings(messages: list[dict]) -> list[str]:
    conversation = split(tuple(Message(m["role"], m["content"]) for m in messages))
    return cut_warnings(conversation.part.pieces)


def test_the_rule_on_the_262k_context_whole_and_cut(whole, cut):
    assert _warnings(whole) == []
    (warning,) = _warnings(cut)
    assert warning.startswith("the memory part starts inside the fact list: no header "
                              "(\"Here is a list of facts:\") and no memorize frame before its "
                              "first numbered fact (serial ")
    assert "gpt-4.1-mini" in warning
    # the cut keeps the end: the prompt whole
    assert cut[-1]["content"].endswith(harness.prompt(QUESTION))
    assert harness.count_tokens(cut[-1]["content"]) == KEPT_TOKENS


@pytest.mark.parametrize("start, warned", [
    # a cut inside a fact: its tail, then the next fact
    ("Ron Hubbard. 12042. The capital of France is Paris.", True),
    # a cut that lands on a fact's start
    ("12042. The capital of France is Paris.", True),
    # a cut inside a line before a frame: the frame is there, the first line is a tail
    ("of Germany.\n" + harness.frame_chunk("12042. The capital of France is Paris."), True),
    # whole: the header, a frame, or facts written by hand from 0 or 1
    ("Here is a list of facts:\n0. The capital of France is Paris.", False),
    (harness.frame_chunk("Here is a list of facts: 0. The capital of France is Paris."), False),
    (harness.frame_chunk("12042. The capital of France is Paris."), False),
    ("0. Tim Cook is employed by Apple. 1. Tim Cook is employed by Google.", False),
    ("1. Tim Cook is employed by Apple.", False),
    # no numbered fact at all: nothing to say
    ("Paris is nice.", False),
])
def test_the_rule_case_by_case(start, warned):
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": start + "\n" + harness.prompt(QUESTION)}]
    assert bool(_warnings(messages)) is warned


def test_the_server_says_so_in_factres_warnings_and_in_its_log(open_server, whole, cut,
                                                               caplog):
    api = client(open_server)
    with caplog.at_level(logging.WARNING, logger="factres.serve"):
        reply = ask(api, cut)
    extra = reply.model_extra["factres"]
    assert len(extra["warnings"]) == 1
    assert extra["warnings"][0].startswith("the memory part starts inside the fact list")
    # the facts it was sent: the list's last ones (the harness's BPE tokens are longer than
    # these, so it kept fewer: 7,817)
    assert 0 < extra["memory"]["facts"] < 18_332
    logged = [r.getMessage() for r in caplog.records if r.name == "factres.serve"]
    assert logged == [f"memory {extra['memory']['key']}: {extra['warnings'][0]}"]
    # asked again (the memory is cached): the reply says it again, the log does not
    with caplog.at_level(logging.WARNING, logger="factres.serve"):
        again = ask(api, cut[:-1] + [{"role": "user", "content": cut[-1]["content"].replace(
            QUESTION, "Who is a citizen of United States of America?")}])
    assert again.model_extra["factres"]["warnings"] == extra["warnings"]
    assert again.model_extra["factres"]["memory"]["cached"] is True
    assert [r.getMessage() for r in caplog.records if r.name == "factres.serve"] == logged
    # the whole context: no warning, and every fact
    whole_reply = ask(api, whole)
    assert whole_reply.model_extra["factres"]["warnings"] == []
    assert whole_reply.model_extra["factres"]["memory"]["facts"] == 18_332


@pytest.fixture(scope="module")
def open_server():
    from resolver.serve.app import serving
    from resolver.serve.config import ServeConfig
    with serving(ServeConfig(port=0)) as url:
        yield url
