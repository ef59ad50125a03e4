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
    # the harness cut inside a fact: the first whole fact's serial, and the cut fact's tail
    assert warning.startswith("the memory part starts inside the fact list: no header (\"Here "
                              "is a list of facts:\") and no memorize frame before its first "
                              "numbered fact (serial 8322), which follows 'is a citizen of Qing "
                              "dynasty.'; the context was cut before it was sent: ")
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
    # a cut on a frame's boundary, or inside its opening lines (verification U38): a whole
    # context's first frame holds the header
    (harness.frame_chunk("12042. The capital of France is Paris."), True),
    (harness.frame_chunk("12042. The capital of France is Paris.")[20:], True),
    (harness.frame_chunk("12042. The capital of France is Paris.")[60:], True),
    ("\n" + harness.frame_chunk("12042. The capital of France is Paris.", "2025-01-01"), True),
    (harness.frame_chunk("0. The capital of France is Paris."), False),
    ("0. Tim Cook is employed by Apple. 1. Tim Cook is employed by Google.", False),
    ("1. Tim Cook is employed by Apple.", False),
    # lines of instruction, or a question, before a header or a list from 0 or 1: whole
    # (verification F09: they were read as the tail of a cut line)
    ("You are a helpful assistant.\nRead the facts below.\nA later fact replaces an earlier "
     "one.\nHere is a list of facts:\n0. The capital of France is Paris.", False),
    ("Who is Tim Cook employed by?\nAnswer with a name only.\nHere is a list of facts:\n0. "
     "Tim Cook is employed by Apple.", False),
    ("Answer the question below from the facts. Who is Tim Cook employed by?\n\n"
     "Here is a list of facts:\n0. Tim Cook is employed by Apple.", False),
    ("Use only the facts below.\n0. Tim Cook is employed by Apple.", False),
    ("Who is Tim Cook employed by?\nAnswer briefly.\n1. Tim Cook is employed by Apple.", False),
    # ... and before a cut list, still a cut
    ("You are a helpful assistant.\nRead the facts below.\n12042. The capital of France is "
     "Paris.", True),
    ("Who is Tim Cook employed by?\nAnswer briefly.\n"
     + harness.frame_chunk("12042. The capital of France is Paris."), True),
    # no numbered fact at all: nothing to say
    ("Paris is nice.", False),
])
def test_the_rule_case_by_case(start, warned):
    messages = [{"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": start + "\n" + harness.prompt(QUESTION)}]
    assert bool(_warnings(messages)) is warned


def frames_of(messages: list[dict]) -> tuple[str, list[int]]:
    """The user message of the whole context and where each of its memorize frames starts."""
    user = messages[-1]["content"]
    return user, [m.start() for m in re.finditer(re.escape(harness.FRAME_OPENING), user)]


def test_a_cut_on_a_frame_boundary_or_in_its_opening_lines_is_caught(whole):
    """Verification U38: the harness's cut at 115,409 tokens fell on a frame's opening line
    ("Dialogue between User and Assistant \n<User> The following context..."), and a cut on
    frames 27 or 30: no warning (9,334 and 8,329 facts). Every frame but the first, cut on its
    boundary or inside its opening lines, is caught now; the whole context is not."""
    user, starts = frames_of(whole)
    assert len(starts) > 50
    opening = len(harness.FRAME_OPENING) + 1
    for start in starts[1:]:
        for at in (start, start - 1, start + 12, start + opening + 5):
            cut = whole[:-1] + [{"role": "user", "content": user[at:]}]
            (warning,) = _warnings(cut)
            assert warning.startswith("the memory part starts inside the fact list"), at
    assert _warnings(whole) == []
    # the harness's own cut lengths from 100K to 128K tokens: every one caught
    for kept in range(100_000, 128_001, 1_000):
        assert len(_warnings(cut_as_the_harness_cuts(whole, kept))) == 1, kept


INSTRUCTION_LAYOUTS = (
    # (before the context, after it) in the user message, as verification F09 sent them
    ("You are a helpful assistant.\nRead the facts below.\nA later fact replaces an earlier "
     "one.\n", ""),
    (QUESTION + "\nAnswer with a name only.\n", ""),
    ("Answer the question below from the facts. " + QUESTION + "\n\n", ""),
)


@pytest.mark.parametrize("before, after", INSTRUCTION_LAYOUTS)
def test_instruction_lines_before_a_whole_context_are_no_cut(whole, cut, before, after):
    """Verification F09: lines of instruction or a question before the whole 262K context (its
    header) were read as the tail of a cut line, and the whole context was warned as cut. They
    are no cut now; the cut context after the same lines is still warned."""
    def laid_out(messages):
        return messages[:-1] + [{"role": "user",
                                 "content": before + messages[-1]["content"] + after}]
    raw = CONTEXT_262K.read_text("utf-8")
    assert raw.startswith("Here is a list of facts:")
    assert _warnings([{"role": "user", "content": before + raw + "\n" + QUESTION}]) == []
    assert _warnings(laid_out(whole)) == []
    (warning,) = _warnings(laid_out(cut))
    assert warning.startswith("the memory part starts inside the fact list: ")
    half = raw[len(raw) // 2:]
    half = half[half.index("\n") + 1:]              # a cut on a fact's line start
    (warning,) = _warnings([{"role": "user", "content": before + half + "\n" + QUESTION}])
    assert "no header (\"Here is a list of facts:\") and no memorize frame" in warning
    assert f"which follows '{before.strip().splitlines()[0][:40]}" in warning


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


def test_instruction_lines_through_the_server(open_server):
    """Verification F09 as a user sees it: the layouts of E08 (instruction lines, a question and
    an instruction, before the header) answer with no warning; the same lines before a list
    that opens at serial 12042 are warned."""
    api = client(open_server)
    facts = ("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
             "1. Tim Cook is employed by Google.\n")
    for text in ("You are a helpful assistant.\nRead the facts below.\nA later fact replaces an "
                 "earlier one.\n" + facts + "Who is Tim Cook employed by?",
                 "Who is Tim Cook employed by?\nAnswer with a name only.\n" + facts):
        reply = ask(api, [{"role": "user", "content": text}])
        assert reply.choices[0].message.content == "Google"
        assert reply.model_extra["factres"]["warnings"] == []
    cut = ("You are a helpful assistant.\nRead the facts below.\n12042. Tim Cook is employed by "
           "Apple.\n12043. Tim Cook is employed by Google.\nWho is Tim Cook employed by?")
    reply = ask(api, [{"role": "user", "content": cut}])
    assert reply.choices[0].message.content == "Google"
    (warning,) = reply.model_extra["factres"]["warnings"]
    assert warning.startswith("the memory part starts inside the fact list: no header "
                              "(\"Here is a list of facts:\") and no memorize frame before its "
                              "first numbered fact (serial 12042), which follows 'You are a "
                              "helpful assistant.'")


def test_small_framed_chunks_one_per_message():
    """One message per 16-token chunk, each in its memorize frame (audit E's E20): the first
    frame holds only the header and "0.", and no later frame's serial is read before "8.".
    Whole: no warning; without the first frames (a cut): warned."""
    from conftest import bundled_context
    context = bundled_context("6k")
    frames = [harness.frame_chunk(c) for c in harness.chunk_context(context, 16)]
    assert frames[0] == harness.frame_chunk("Here is a list of facts:\n0.")

    def messages(chunks):
        out = [{"role": "system", "content": "You are a helpful assistant."}]
        for chunk in chunks:
            out += [{"role": "user", "content": chunk},
                    {"role": "assistant", "content": "I have learned the facts."}]
        return out + [{"role": "user", "content": harness.prompt(QUESTION)}]

    assert _warnings(messages(frames)) == []
    (warning,) = _warnings(messages(frames[20:]))
    assert warning.startswith("the memory part starts inside the fact list: its first memorize "
                              "frame opens at serial ")
