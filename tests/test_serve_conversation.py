"""The server's parts without HTTP (resolver/serve): a request body read and checked, a
conversation split into memory and question in every layout, the memory's key, the memory
built from it (what is passed over, what is reported), and the memory cache (least recently
used out past its byte budget, one build per key)."""
from __future__ import annotations

import hashlib
import sys
import threading
import time

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resolver.errors import InputError
from resolver.mab import harness
from resolver.serve.api_errors import ApiError
from resolver.serve.cache import MemoryCache, estimate_bytes
from resolver.serve.config import ServeConfig, is_loopback
from resolver.serve.conversation import (
    SAMPLES,
    TEXT,
    WINDOW,
    MemoryPart,
    remember,
    split,
    split_question,
)
from resolver.serve.request import Message, parse_request

SYSTEM = "You are a helpful assistant that can read the context and memorize it for future " \
         "retrieval."
FACTS = "Here is a list of facts:\n0. Tim Cook is employed by Apple.\n" \
        "1. Tim Cook is employed by Google.\n2. Paris is located in the country of France."
QUESTION = "Who is Tim Cook employed by?"


def harness_messages(context: str, question: str, chunk_tokens: int = 4096) -> tuple:
    frames = [harness.frame_chunk(c, f"2025-01-01 00:00:{i:02d}")
              for i, c in enumerate(harness.chunk_context(context, chunk_tokens))]
    return (Message("system", SYSTEM),
            Message("user", "\n".join(frames) + "\n" + harness.prompt(question)))


# ---- the request body --------------------------------------------------------------------------
def body(**fields) -> bytes:
    return orjson.dumps({"model": "gpt-4o-mini", "messages": [
        {"role": "user", "content": QUESTION}]} | fields)


def test_a_request_keeps_what_factres_uses_and_ignores_the_rest():
    request = parse_request(body(temperature=0.3, max_tokens=10, top_p=1, seed=7, stop=["\n"],
                                 logit_bias={"1": 2}, tools=[], frobnicate={"x": 1}, n=1,
                                 stream=True, stream_options={"include_usage": True}))
    assert (request.model, request.stream, request.include_usage) == ("gpt-4o-mini", True, True)
    assert request.messages == (Message("user", QUESTION),)


def test_content_parts_are_joined_and_a_tool_call_message_is_empty():
    request = parse_request(body(messages=[
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": [{"type": "text", "text": "0. A is B."},
                                     {"type": "text", "text": QUESTION}]}]))
    assert request.messages == (Message("assistant", ""),
                                Message("user", "0. A is B.\n" + QUESTION))


@pytest.mark.parametrize("raw, status, code, param, words", [
    (b"{not json", 400, "invalid_json", None, "could not parse the JSON body"),
    (b"", 400, "invalid_json", None, "could not parse the JSON body"),
    (b"[1, 2]", 400, "invalid_json", None, "a JSON array, not an object"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "\\ud800"}]}', 400,
     "invalid_json", None, "surrogate"),
    (body(model=None), 400, None, "model", "you must provide a model parameter"),
    (body(model=3), 400, "invalid_type", "model", "expected a non-empty string"),
    (body(messages=None), 400, "missing_required_parameter", "messages", "'messages'"),
    (body(messages="hi"), 400, "invalid_type", "messages", "expected an array"),
    (body(messages=[]), 400, "no_user_message", "messages", "hold no user message"),
    (body(messages=[{"role": "system", "content": SYSTEM}]), 400, "no_user_message",
     "messages", "hold no user message"),
    (body(messages=["hi"]), 400, "invalid_type", "messages[0]", "expected an object"),
    (body(messages=[{"role": "boss", "content": "x"}]), 400, "invalid_value",
     "messages[0].role", "'boss'"),
    (body(messages=[{"role": "user", "content": 5}]), 400, "invalid_type",
     "messages[0].content", "expected a string or an array"),
    (body(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]),
     400, "invalid_value", "messages[0].content[0]", "factres reads text only"),
    (body(n=2), 400, "unsupported_value", "n", "n = 2 is not supported"),
    (body(n=0), 400, "invalid_value", "n", "at least 1"),
    (body(n="1"), 400, "invalid_value", "n", "at least 1"),
    (body(stream="yes"), 400, "invalid_type", "stream", "expected a boolean"),
    (body(stream_options=[]), 400, "invalid_type", "stream_options", "expected an object"),
])
def test_bad_requests_are_refused_with_openai_errors(raw, status, code, param, words):
    with pytest.raises(ApiError) as err:
        parse_request(raw)
    error = err.value.body()["error"]
    assert (err.value.status, error["type"], error["code"], error["param"]) == \
        (status, "invalid_request_error", code, param)
    assert words in error["message"]


# ---- splitting -------------------------------------------------------------------------------
def test_the_harness_layout_splits_at_the_prompt_and_keeps_the_key_across_questions():
    one = split(harness_messages(FACTS, QUESTION))
    two = split(harness_messages(FACTS, "Which country is Paris located in?"))
    assert one.key == two.key and one.key.startswith("sha256:")
    assert one.question == harness.prompt(QUESTION) and one.asked == one.question
    assert one.words == len(harness.prompt(QUESTION).split())
    assert harness.question_of(one.question) == QUESTION
    (system, memory) = one.memory
    assert system == Message("system", SYSTEM)
    assert memory.text.endswith("answer the question you ask.\n")
    assert harness.NOW_ANSWER not in memory.text


def parts(text: str) -> tuple[str, str, str]:
    """(memory part, the text from the question on, what is asked)."""
    start, question = split_question(text)
    return text[:start], text[start:], question


@pytest.mark.parametrize("style", sorted(harness.STYLES))
def test_the_prompt_is_found_in_either_style_and_its_example_is_never_the_question(style):
    text = FACTS + "\n" + harness.prompt(QUESTION, style)
    before, asked, question = parts(text)
    assert before == FACTS + "\n" and harness.question_of(question) == QUESTION
    # a prompt without its opening: from "Now Answer the Question:" on, or the last lead-in
    variant = FACTS + "\nNow Answer the Question: " + harness.STYLES[style] + QUESTION
    assert parts(variant)[0] == FACTS + "\n"
    lead_only = FACTS + "\n" + harness.STYLES[style] + QUESTION + " \nAnswer:"
    assert harness.question_of(parts(lead_only)[2]) == QUESTION
    example_only = harness.prompt(QUESTION, style).split(harness.NOW_ANSWER)[0]
    assert harness.question_of(parts(FACTS + "\n" + example_only)[2]) == ""


def test_without_a_prompt_the_last_sentence_is_the_question_when_it_asks():
    assert parts(FACTS + "\n" + QUESTION) == (FACTS + "\n", QUESTION, QUESTION)
    assert parts(FACTS + " " + QUESTION + "\nAnswer: \n") == \
        (FACTS + " ", QUESTION + "\nAnswer: \n", QUESTION)
    assert parts(FACTS + "\n" + QUESTION + "  \n") == (FACTS + "\n", QUESTION + "  \n", QUESTION)
    assert parts(QUESTION) == ("", QUESTION, QUESTION)
    assert parts("  " + QUESTION) == ("  ", QUESTION, QUESTION)
    # not a question: the whole message is asked, and none of it is memory
    assert parts(FACTS) == ("", FACTS, FACTS)
    assert parts("Tell me where Tim Cook works.") == \
        ("", "Tell me where Tim Cook works.", "Tell me where Tim Cook works.")
    assert parts("") == ("", "", "")


def test_the_question_is_in_the_last_user_message_and_every_other_text_is_memory():
    messages = (Message("system", SYSTEM), Message("user", FACTS),
                Message("assistant", "I have learned the facts."),
                Message("user", QUESTION), Message("assistant", "Noted."))
    conversation = split(messages)
    assert conversation.question == QUESTION
    assert conversation.memory == (messages[0], messages[1], messages[2], messages[4])


def test_the_key_is_the_memory_part_and_nothing_else():
    base = split(harness_messages(FACTS, QUESTION))
    other_facts = split(harness_messages(FACTS.replace("Google", "Meta"), QUESTION))
    other_role = split((Message("developer", SYSTEM), harness_messages(FACTS, QUESTION)[1]))
    assert len({base.key, other_facts.key, other_role.key}) == 3
    # message boundaries count: the same text cut into other messages is another memory
    a = split((Message("user", "0. A is B."), Message("user", "1. C is D. " + QUESTION)))
    b = split((Message("user", "0. A is B. 1. C is D."), Message("user", QUESTION)))
    assert a.key != b.key


def sha256_key(messages: tuple[Message, ...]) -> str:
    """The key as a reply shows it: the sha256 of each memory message's role, length and
    UTF-8 text."""
    digest = hashlib.sha256()
    for m in messages:
        data = m.text.encode("utf-8", "surrogatepass")
        digest.update(m.role.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return "sha256:" + digest.hexdigest()


def test_the_key_a_reply_shows_is_the_sha256_of_the_memory_part():
    for messages in (harness_messages(FACTS, QUESTION),
                     (Message("user", "0. A is B. é’"), Message("assistant", "ok"),
                      Message("user", "1. C is D. " + QUESTION))):
        conversation = split(messages)
        assert conversation.key == sha256_key(conversation.memory)


LONG = (FACTS + " é ") * 12                      # about 2,000 characters


def test_parts_that_hash_alike_but_differ_anywhere_are_different_memories():
    base = split(harness_messages(LONG, QUESTION))
    (_, (_, text, end)) = base.part.pieces
    assert end > (SAMPLES + 2) * WINDOW                 # long enough to be hashed by windows

    def changed(at: int):
        swapped = "x" if text[at] != "x" else "y"
        return split((Message("system", SYSTEM),
                      Message("user", text[:at] + swapped + text[at + 1:])))

    # the first character no window of the hash reads: a change there hashes alike
    other = next(c for c in map(changed, range(end)) if hash(c.part) == hash(base.part))
    assert other.part != base.part and other.key != base.key
    cache = MemoryCache(budget=10**6)
    cache.get(base.kept, lambda: "base", lambda v: 1)
    assert cache.lookup(base.part) == "base" and cache.lookup(other.part) is None
    assert cache.get(other.kept, lambda: "other", lambda v: 1) == ("other", False)


def test_the_same_memory_is_found_whatever_the_question_holds():
    # a question with a character outside Latin-1 widens the whole message's string (CPython
    # stores it two bytes a character): the memory part is still the same, and found
    latin = split(harness_messages(FACTS + " café", QUESTION))
    wide = split(harness_messages(FACTS + " café", "Who is Tim Cook’s employer?"))
    assert latin.part == wide.part and hash(latin.part) == hash(wide.part)
    assert latin.key == wide.key
    cache = MemoryCache(budget=10**6)
    cache.get(latin.kept, lambda: "memory", lambda v: 1)
    assert cache.lookup(wide.part) == "memory"


def test_the_kept_part_holds_no_question_and_counts_its_text():
    conversation = split(harness_messages(LONG, QUESTION))
    kept = conversation.kept
    assert kept == conversation.part and hash(kept) == hash(conversation.part)
    assert [text for _, text, _ in kept.pieces] == [m.text for m in conversation.memory]
    assert all(end == len(text) for _, text, end in kept.pieces)
    assert harness.NOW_ANSWER not in kept.pieces[-1][1]
    assert kept.nbytes == sum(sys.getsizeof(m.text) for m in conversation.memory)
    assert conversation.kept is kept                     # copied once


def test_a_cached_memory_answers_without_hashing_or_copying_the_context():
    from resolver.serve.app import Service, _Clock  # the web stack: the serve extra
    service = Service(ServeConfig(port=0))

    def request(question: str):
        return service.prepare(orjson.dumps({"model": "gpt-4o-mini", "messages": [
            {"role": m.role, "content": m.text} for m in harness_messages(LONG, question)]}),
            _Clock({}))

    first = request(QUESTION)[1]
    built, cached = service.remembered(first)
    assert not cached and built.key == first.key
    ask, second = request("Which country is Paris located in?")
    found = service.cache.lookup(second.part)
    assert found is built
    service.answer(ask, second, found, True, _Clock({}))
    assert not {"key", "kept"} & set(vars(second))      # no sha256, no copy of the memory part


TEXTS = st.lists(st.sampled_from(["0. A is B. ", "1. C is D. ", "café ", "’ ",
                                  "中 ", "\n", " ", "?", "x"]), max_size=80).map("".join)
MESSAGES = st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), TEXTS),
                    min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(one=MESSAGES, two=MESSAGES, question=st.sampled_from(["", QUESTION, "Why’s that?"]),
       same=st.booleans())
def test_memory_parts_are_equal_exactly_when_their_sha256_keys_are(one, two, question, same):
    if same:
        two = list(one)
    a = split((*(Message(r, t) for r, t in one), Message("user", "0. E is F. " + question)))
    b = split((*(Message(r, t) for r, t in two), Message("user", "0. E is F. " + QUESTION)))
    assert (a.part == b.part) == (a.key == b.key) == (a.kept == b.kept)
    if a.part == b.part:
        assert hash(a.part) == hash(b.part) == hash(b.kept)
    assert a.part == a.kept and hash(a.part) == hash(a.kept)
    assert a.part != "not a part" and MemoryPart(()) == MemoryPart(())


# ---- the memory built from it -------------------------------------------------------------------
def test_messages_without_facts_are_passed_over_by_role_and_counted():
    messages = (Message("system", SYSTEM), Message("user", "Please memorize these facts."),
                Message("user", "Here is a list of facts:\n0. Tim Cook is employed by Apple."),
                Message("assistant", "I have learned the facts and I will answer the question "
                                     "you ask."),
                Message("user", "1. Tim Cook is employed by Google."),
                Message("user", harness.prompt(QUESTION)))
    remembered = remember(split(messages), ("rules", "lexicon"), "search")
    assert remembered.messages_passed_over == {"assistant": 1, "system": 1, "user": 1}
    assert remembered.facts == 2 and remembered.reported == {}
    answer = remembered.memory.query(split(messages).question)
    assert answer.text == "Google" and [h.line for h in answer.path] == [3]


def test_text_without_a_serial_is_passed_over_and_fact_like_lines_are_reported():
    messages = (Message("user", "Memorize the following.\n" + FACTS + "\n"
                        "3. Something is beyond every template.\n"
                        "1. Tim Cook is employed by Meta.\n"
                        "A line with 7. inside it that fits nothing\n"
                        "4. Rome is located in the country of Italy.\n" + QUESTION),)
    remembered = remember(split(messages), ("rules", "lexicon"), "search")
    assert remembered.passed_over[TEXT] == 1 and remembered.passed_over["header"] == 1
    assert remembered.reported == {"duplicate": 1, "unparsed": 2}
    assert [(r.kind, r.serial) for r in remembered.reports] == [
        ("unparsed", 3), ("duplicate", 1), ("unparsed", None)]
    assert remembered.facts == 4


@pytest.mark.parametrize("end", [".\x00", ".\x07", "", '."'])
def test_a_malformed_last_fact_before_the_question_on_its_line_is_reported(end):
    # N3: the fact's full stop is not followed by a blank (a control character, a quote) or it
    # has none, and the question follows on the same line: the question is still the last
    # sentence, and the fact is memory, reported as it is on a line of its own (S6)
    fact = "1. Tim Cook is employed by Google" + end
    text = "Here is a list of facts:\n0. Tim Cook is employed by Apple.\n" + fact + " " + QUESTION
    conversation = split((Message("user", text),))
    assert conversation.question == QUESTION
    remembered = remember(conversation, ("rules", "lexicon"), "search")
    assert [(r.kind, r.text, r.serial) for r in remembered.reports] == [("unparsed", fact, 1)]
    assert remembered.passed_over[TEXT] == 0 and remembered.facts == 1


def test_a_numbered_question_is_not_split():
    for text in ("1. " + QUESTION, FACTS + "\n3. " + QUESTION):
        conversation = split((Message("user", text),))
        assert conversation.question == QUESTION
        assert remember(conversation, ("rules", "lexicon"), "search").reports == ()


def test_a_fact_cut_across_two_chunk_messages_comes_back_whole():
    messages = (Message("user", "0. Tim Cook is employed by Apple. 1. Joe Biden was born in "
                                "the city of St."),
                Message("assistant", "I have learned the facts."),
                Message("user", "Louis. 2. Paris is located in the country of France."),
                Message("user", "Which city was Joe Biden born in?"))
    remembered = remember(split(messages), ("rules", "lexicon"), "search")
    assert remembered.memory.query("Which city was Joe Biden born in?").text == "St. Louis"
    assert remembered.facts == 3 and remembered.reported == {}


def test_a_memory_part_that_is_not_unicode_text_is_an_input_error():
    conversation = split((Message("user", "0. A \udc80 is employed by B."),
                          Message("user", QUESTION)))
    with pytest.raises(InputError, match="lone surrogate"):
        remember(conversation, ("rules", "lexicon"), "search")


# ---- the cache -------------------------------------------------------------------------------
def test_the_least_recently_used_memory_goes_first_past_the_budget():
    cache = MemoryCache(budget=250)
    sizes = {"a": 100, "b": 100, "c": 100, "huge": 1000}
    for key in ("a", "b"):
        assert cache.get(key, lambda: key.upper(), lambda v: sizes[v.lower()]) == (key.upper(),
                                                                                   False)
    assert cache.get("a", lambda: pytest.fail("rebuilt"), len) == ("A", True)   # a is fresh
    cache.get("c", lambda: "C", lambda v: 100)
    assert cache.keys() == ["a", "c"]                  # b was the least recently used
    assert cache.get("huge", lambda: "H", lambda v: 1000) == ("H", False)
    assert cache.keys() == ["a", "c"] and "huge" not in cache     # answered, never kept
    assert cache.stats() | {} == {"memories": 2, "estimated_bytes": 200, "budget_bytes": 250,
                                  "hits": 1, "misses": 4, "evictions": 1}


def test_concurrent_requests_for_one_new_memory_build_it_once():
    cache = MemoryCache(budget=10**6)
    builds = []

    def build():
        builds.append(1)
        time.sleep(0.05)
        return "memory"

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("k", build,
                                                                        lambda v: 1)))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1
    assert sorted(results) == [("memory", False)] + [("memory", True)] * 5


def test_a_failed_build_is_raised_to_every_waiter_and_nothing_is_kept():
    cache = MemoryCache(budget=10**6)
    gate = threading.Event()

    def build():
        gate.wait(1)
        raise InputError("bad text")

    errors = []

    def ask():
        try:
            cache.get("k", build, lambda v: 1)
        except InputError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    gate.set()
    for t in threads:
        t.join()
    assert errors == ["bad text"] * 3 and cache.keys() == []
    assert cache.get("k", lambda: "fine", lambda v: 1) == ("fine", False)


def test_the_estimate_grows_with_facts_and_text():
    assert estimate_bytes(0, 0) > 0
    assert estimate_bytes(18332, 1127848) > estimate_bytes(455, 26509) * 8


# ---- the configuration ---------------------------------------------------------------------------
@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("::", False), ("192.168.1.5", False),
    ("example.org", False)])
def test_only_loopback_addresses_bind_without_a_key(host, loopback):
    assert is_loopback(host) is loopback
    if loopback:
        ServeConfig(host=host)
    else:
        with pytest.raises(InputError, match="not a loopback address"):
            ServeConfig(host=host)
        assert ServeConfig(host=host, api_key="k").api_key == "k"


def test_the_config_refuses_what_cannot_serve():
    for kwargs, words in [({"api_key": " "}, "the API key is empty"),
                          ({"plan_sets": ("models",)}, "unknown live plan set 'models'"),
                          ({"mode": "magic"}, "unknown mode 'magic'"),
                          ({"models": ("",)}, "an empty model name"),
                          ({"max_body": 0}, "must be positive")]:
        with pytest.raises(InputError, match=words):
            ServeConfig(**kwargs)
    config = ServeConfig(models=("gpt-4o-mini", "factres", "gpt-4o-mini", "gpt-4o"))
    assert config.listed == ("factres", "factres-readout", "gpt-4o-mini", "gpt-4o")
    assert config.accepts("factres") and config.accepts("gpt-4o") and not config.accepts("x")
    assert ServeConfig().accepts("anything")
