"""`Memory` (resolver/memory): fed a context whole, in harness-style framed chunks, or cut at
random characters, it holds the store `factres run` builds from that context (same facts,
serials, lines, ledger) and gives byte-identical predictions on the same questions: the 6K dev
rows (against the committed run's own files) and synthetic questions over the 32K, 64K and 262K
contexts. Plus what it passes over, what it reports, and the edges: bad chunks, an empty memory,
unanswerable questions, the tail."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import orjson
import pytest
from conftest import bundled_context
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resolver.errors import InputError
from resolver.haystack import bundled_path, load
from resolver.mab import harness
from resolver.memory.memory import NO_QUESTION, NOTHING_INGESTED, Memory
from resolver.plan.planning import live_plan_sets
from resolver.results.result_schema import PREDICTIONS_FILE, TRACES_FILE, loads_lines
from resolver.search.resolve import resolve_dataset
from resolver.text.facts import parse_context

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "results" / "dev-6k-search-confidence"
CUTS = settings(max_examples=8, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _synthetic():
    name = "factres_bench_synthetic"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "synthetic.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def framed(context: str, tokens: int = harness.CHUNK_TOKENS) -> list[str]:
    return [harness.frame_chunk(c, f"2025-01-01 00:00:{i:02d}")
            for i, c in enumerate(harness.chunk_context(context, tokens))]


def fed(pieces) -> Memory:
    memory = Memory()
    for piece in pieces:
        memory.ingest(piece)
    memory.flush()
    return memory


def cut(text: str, positions) -> list[str]:
    bounds = sorted(set(p % (len(text) + 1) for p in positions))
    return [text[a:b] for a, b in zip([0] + bounds, bounds + [len(text)])]


def trace_bytes(prediction) -> bytes:
    """A traces.jsonl line as a run writes it (no reader, no repair)."""
    row = prediction.to_json() | {"reader": None, "repair": None}
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS)


def assert_same_store(memory: Memory, store) -> None:
    assert list(memory.store) == list(store)              # facts: serial, line, text, ...
    assert memory.store.keys() == store.keys()
    assert memory.ledger.dump() == store.ledger.dump()    # versions, statuses, evidence


# ---- the 6K dev rows, against the committed run ---------------------------------------------
@pytest.fixture(scope="module")
def dev():
    dataset, _ = load([bundled_path()])
    (haystack,) = dataset.haystacks.values()
    traces = {t["qid"]: orjson.dumps(t, option=orjson.OPT_SORT_KEYS)
              for t in loads_lines((COMMITTED / TRACES_FILE).read_bytes())}
    rows = {r["qid"]: r for r in loads_lines((COMMITTED / PREDICTIONS_FILE).read_bytes())}
    return dataset, haystack, traces, rows


def assert_answers_as_the_run(memory: Memory, dataset, traces, rows, style=None) -> None:
    for q in dataset.questions:
        text = q.text if style is None else harness.prompt(q.text, style)
        answer = memory.query(text, qid=q.qid, source=q.source)
        assert trace_bytes(answer.prediction) == traces[q.qid], q.qid
        assert answer.text == rows[q.qid]["prediction"], q.qid
        assert answer.confidence.to_json() == rows[q.qid]["confidence"], q.qid


def test_dev_context_whole_gives_the_runs_store_and_traces(dev):
    dataset, haystack, traces, rows = dev
    memory = Memory()
    result = memory.ingest(haystack.text)
    assert result.reports == () and result.passed_over["header"] == 1
    # the context ends with a line break: outside a frame it ends the last fact at once
    assert haystack.text.endswith("\n")
    assert result.committed == len(haystack.store) and result.pending == 0
    assert memory.flush().committed == 0
    without_break = Memory().ingest(haystack.text.rstrip("\n"))
    assert without_break.committed == len(haystack.store) - 1     # the last fact may go on
    assert_same_store(memory, haystack.store)
    assert_answers_as_the_run(memory, dataset, traces, rows)


def test_dev_context_in_framed_harness_chunks(dev):
    dataset, haystack, traces, rows = dev
    chunks = framed(haystack.text, 300)           # small chunks: facts cut across many of them
    assert len(chunks) > 5
    memory = fed(chunks)
    assert_same_store(memory, haystack.store)
    assert_answers_as_the_run(memory, dataset, traces, rows)


@pytest.mark.parametrize("style", sorted(harness.STYLES))
def test_harness_prompt_around_each_dev_question_answers_as_the_bare_question(dev, style):
    dataset, haystack, traces, rows = dev
    memory = Memory()
    memory.ingest(haystack.text)
    assert_answers_as_the_run(memory, dataset, traces, rows, style)


@CUTS
@given(positions=st.lists(st.integers(min_value=0, max_value=10**7), max_size=60))
def test_dev_context_cut_at_random_characters(dev, positions):
    dataset, haystack, _, _ = dev
    assert_same_store(fed(cut(haystack.text, positions)), haystack.store)


@CUTS
@given(positions=st.lists(st.integers(min_value=0, max_value=10**7), max_size=60))
def test_framed_stream_cut_at_random_characters(dev, positions):
    dataset, haystack, _, _ = dev
    stream = "".join(framed(haystack.text, 200))
    assert_same_store(fed(cut(stream, positions)), haystack.store)


def fed_asking(pieces, asks, question: str = "Who is the chairperson of Fatah?"):
    """Fed piece by piece with a query after the pieces `asks` names (an index each, modulo
    the count), as a harness or another thread may ask mid-stream. Returns the memory and the
    facts each call committed for good, in order."""
    memory = Memory()
    asked = {a % len(pieces) for a in asks} if pieces else set()
    committed = []
    for i, piece in enumerate(pieces):
        committed.extend(memory.ingest(piece).facts)
        if i in asked:
            memory.query(question)
            # what a query sees: every fact committed for good, then the tail provisionally
            seen = list(memory.store)
            assert seen[:len(committed)] == committed
    committed.extend(memory.flush().facts)
    assert list(memory.store) == committed
    return memory, committed


@CUTS
@given(positions=st.lists(st.integers(min_value=0, max_value=10**7), max_size=60),
       asks=st.lists(st.integers(min_value=0, max_value=10**4), max_size=30))
def test_queries_between_random_cuts_change_nothing(dev, positions, asks):
    # A query between chunks reads the tail provisionally and never commits it: "... Apple. 1"
    # was committed as "Apple. 1" and every later fact was lost (audit B, M8).
    dataset, haystack, _, _ = dev
    pieces = cut(haystack.text, positions)
    memory, _ = fed_asking(pieces, asks)
    assert_same_store(memory, haystack.store)
    # framed, the same
    stream = "".join(framed(haystack.text, 200))
    memory, _ = fed_asking(cut(stream, positions), asks)
    assert_same_store(memory, haystack.store)


@CUTS
@given(tokens=st.integers(min_value=5, max_value=400),
       asks=st.lists(st.integers(min_value=0, max_value=10**4), max_size=30),
       frame=st.booleans())
def test_harness_chunks_of_any_size_with_queries_between(dev, tokens, asks, frame):
    # `harness.chunk_context` at small sizes cuts between "2." and "1. FK Pribram ..." (a
    # subject that begins with a serial-like "1. "): audit B, M10. Unframed chunks are re-joined
    # with the space the harness dropped between them.
    dataset, haystack, _, _ = dev
    chunks = harness.chunk_context(haystack.text, tokens)
    pieces = framed(haystack.text, tokens) if frame else \
        [c + " " for c in chunks[:-1]] + chunks[-1:]
    memory, _ = fed_asking(pieces, asks)
    assert_same_store(memory, haystack.store)


def test_262k_context_in_37_token_harness_chunks_with_queries_between():
    # The audit's case (M10): "Rick Perry. 13857", and "1. FK Příbram" and "1. FFC Frankfurt"
    # lost as duplicates.
    context = bundled_context("262k")
    store = parse_context(context).facts
    chunks = framed(context, 37)
    assert len(chunks) > 6000
    memory, _ = fed_asking(chunks, range(0, len(chunks), 97),
                           "Who is the chairperson of Scottish National Party?")
    assert list(memory.store) == list(store)


def test_a_query_in_another_thread_while_one_ingests_changes_nothing(dev):
    # audit B, M9: 4 threads asking while one ingests left 1,171 of 1,473 keys.
    import threading
    dataset, haystack, _, _ = dev
    memory = Memory()
    done = threading.Event()
    errors = []

    def ask():
        questions = [q.text for q in dataset.questions[:20]]
        i = 0
        while not done.is_set():
            try:
                memory.query(questions[i % len(questions)])
            except Exception as exc:          # pragma: no cover - reported below
                errors.append(exc)
            i += 1

    askers = [threading.Thread(target=ask) for _ in range(3)]
    for t in askers:
        t.start()
    try:
        for chunk in framed(haystack.text, 64):
            memory.ingest(chunk)
    finally:
        done.set()
        for t in askers:
            t.join()
    memory.flush()
    assert errors == []
    assert_same_store(memory, haystack.store)


# ---- 32K, 64K, 262K with synthetic questions ---------------------------------------------------
@pytest.fixture(scope="module", params=["32k", "64k", "262k"])
def sized(request, tmp_path_factory):
    size = request.param
    rows = _synthetic().generate(bundled_context(size), size, seed=0, n_sh=6, n_mh=6)
    path = tmp_path_factory.mktemp(f"synthetic-{size}") / f"synthetic_{size}.json"
    path.write_bytes(orjson.dumps({"data": rows}))
    dataset, _ = load([path])
    (haystack,) = dataset.haystacks.values()
    predictions = resolve_dataset(dataset, live_plan_sets(dataset))    # what `factres run` does
    return size, dataset, haystack, {p.qid: trace_bytes(p) for p in predictions}


def assert_predictions(memory, dataset, expected) -> None:
    for q in dataset.questions:
        got = memory.query(q.text, qid=q.qid, source=q.source).prediction
        assert trace_bytes(got) == expected[q.qid], q.qid


def test_test_size_context_whole_and_framed(sized):
    _, dataset, haystack, expected = sized
    for memory in (fed([haystack.text]), fed(framed(haystack.text))):
        assert_same_store(memory, haystack.store)
        assert_predictions(memory, dataset, expected)


@settings(max_examples=2, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(positions=st.lists(st.integers(min_value=0, max_value=10**8), min_size=1, max_size=80))
def test_test_size_context_cut_at_random_characters(sized, positions):
    _, dataset, haystack, expected = sized
    memory = fed(cut(haystack.text, positions))
    assert_same_store(memory, haystack.store)
    assert_predictions(memory, dataset, expected)


# ---- the stream: what is committed, passed over, reported ------------------------------------
FACTS = ["0. Thomas Kyd was born in the city of London.",
         "1. The chairperson of Fatah is Mahmoud Abbas.",
         "2. Paris is located in the country of France."]


def test_framing_header_and_acknowledgements_are_passed_over_and_counted():
    memory = Memory()
    result = memory.ingest(harness.frame_chunk("Here is a list of facts:\n" + " ".join(FACTS),
                                               "t1"))
    assert result.committed == 2 and memory.tail.startswith("2. Paris")   # the tail waits
    assert result.passed_over == {"framing": 1, "instruction": 1, "acknowledgement": 1,
                                  "header": 1, "repeat": 0}
    again = memory.ingest(harness.frame_chunk("3. Tim Cook is employed by Apple."))
    assert again.committed == 1 and again.passed_over["acknowledgement"] == 1
    assert [f.serial for f in again.facts] == [2] and memory.tail.startswith("3. Tim Cook")
    assert [f.serial for f in memory.store] == [0, 1, 2, 3]   # the tail, provisionally
    assert memory.flush().committed == 1
    assert [f.line for f in memory.store] == [2, 3, 4, 5]
    assert all(not r for r in (result.reports, again.reports))


def test_a_fact_cut_across_chunks_by_an_abbreviation_comes_back_whole():
    # The harness's splitter cuts at blanks: "St." | "Louis." across two chunks; the frame
    # between them stands for the one space the harness dropped.
    memory = Memory()
    memory.ingest(harness.frame_chunk("0. Tim Cook is employed by Apple. 1. Stripe was "
                                      "founded in the city of Washington, D.C.."))
    assert memory.tail == "1. Stripe was founded in the city of Washington, D.C.."
    memory.ingest(harness.frame_chunk("2. Joe Biden was born in the city of St."))
    memory.ingest(harness.frame_chunk("Louis."))
    assert memory.tail == "2. Joe Biden was born in the city of St. Louis."
    memory.flush()
    assert [f.object for f in memory.store] == ["Apple", "Washington, D.C.", "St. Louis"]
    assert memory.store.current("Joe Biden", "born_in").text == \
        "2. Joe Biden was born in the city of St. Louis."


def test_the_tail_is_committed_at_the_next_serial_or_flush_and_seen_by_a_query():
    memory = Memory()
    assert memory.ingest("5. Stripe was founded in the city of Washington, D.C..").committed == 0
    assert memory.ingest(" 6. ").committed == 1               # the next serial completes it
    memory = Memory()
    memory.ingest("5. Stripe was founded in the city of Washington, D.C..")
    assert memory.query("Which city was Stripe founded in?").text == "Washington, D.C."
    # seen, not committed: the text may still go on
    assert len(memory.store) == 1 and memory.tail.startswith("5. Stripe")
    assert memory.ingest(" United.").committed == 0
    assert memory.query("Which city was Stripe founded in?").text == "Washington, D.C.. United"
    assert memory.flush().committed == 1
    assert [f.object for f in memory.store] == ["Washington, D.C.. United"]


def test_names_holding_number_dot_are_not_cut():
    text = ("4852. Genoa is located in the country of Italy. 4853. Czech 2. Liga is associated "
            "with the sport of association football. 4854. 1. FFC Frankfurt is associated with "
            "the sport of association football. 4855. Rome is located in the country of Italy.")
    for pieces in ([text], [text[:60], text[60:121], text[121:]], list(text)):
        memory = fed(pieces)
        assert [f.subject for f in memory.store] == ["Genoa", "Czech 2. Liga",
                                                     "1. FFC Frankfurt", "Rome"]


def test_what_fits_no_template_and_bad_serials_are_reported_in_parse_words():
    memory = Memory()
    result = memory.ingest("Here is a list of facts:\n" + "\n".join(FACTS) + "\n"
                           "3. Something is beyond every template.\n"
                           "1. The chairperson of Fatah is Mahmoud Abbas.\n"
                           "2. Paris is located in the country of Spain.\n"
                           "4. Tim Cook is employed by Apple.\n"
                           "3. Tim Cook is employed by Google.\n"
                           "this line has no serial at all\n"
                           "5. Rome is located in the country of Italy.\n")
    memory.flush()
    assert [f.serial for f in memory.store] == [0, 1, 2, 4, 5]
    assert result.passed_over["repeat"] == 1
    reports = [(r.kind, r.line, r.reason) for r in result.reports]
    assert reports == [
        ("unparsed", 5, "fits no fact template"),
        ("duplicate", 7, "duplicate serial 2: also on line 4"),
        ("out-of-order", 9, "serial 3 is out of order: line 8 has serial 4"),
        ("unparsed", 10, 'no serial: expected "<number>. " at the start of the line')]
    # the same words `factres parse` uses for the same lines
    with pytest.raises(InputError, match="duplicate serial 2: also on line 4"):
        parse_context("Here is a list of facts:\n" + "\n".join(FACTS) + "\n"
                      "2. Paris is located in the country of Spain.\n")


def test_a_line_without_its_full_stop_does_not_swallow_the_next_fact():
    memory = fed(["0. Paris is located in the country of France\n1. Tim Cook is employed by "
                  "Apple.\n"])
    assert [f.serial for f in memory.store] == [1]


# ---- bad input and empty answers -------------------------------------------------------------
@pytest.mark.parametrize("chunk, words", [
    (42, "a chunk must be text, not int"),
    (None, "a chunk must be text, not NoneType"),
    (b"0. Paris is \xff", "a chunk is not UTF-8: byte 0xff at offset 12"),
    ("0. Paris \udc80", "lone surrogate"),
])
def test_bad_chunks_are_refused_and_change_nothing(chunk, words):
    memory = Memory()
    memory.ingest("0. Tim Cook is employed by Apple.\n1. Paris is located in")
    before = (list(memory.store), memory.tail, memory.ledger.dump())
    with pytest.raises(InputError, match=words):
        memory.ingest(chunk)
    assert (list(memory.store), memory.tail, memory.ledger.dump()) == before


def test_utf8_bytes_may_be_cut_inside_a_character():
    data = "0. Kūkai speaks the language of Japanese.\n".encode("utf-8")
    memory = Memory()
    for i in range(len(data)):
        memory.ingest(data[i:i + 1])
    memory.flush()
    assert [f.subject for f in memory.store] == ["Kūkai"]


def test_query_before_any_ingest_answers_empty_with_the_reason():
    answer = Memory().query(harness.prompt("Who is the CEO of Apple?"))
    assert (answer.text, answer.reason, answer.confidence.label) == ("", NOTHING_INGESTED, "none")
    assert answer.question == "Who is the CEO of Apple?"


def test_unanswerable_and_empty_questions_answer_empty_with_the_reason():
    memory = Memory()
    memory.ingest("\n".join(FACTS))
    for text in ("Who is the mayor of Atlantis?", "", "???", "What is the capital of Atlantis?"):
        answer = memory.query(text)
        assert answer.text == "" and answer.reason and answer.path == (), text
    only_example = harness.prompt("X").split("Now Answer")[0]
    assert memory.query(only_example).reason == NO_QUESTION


def test_answer_carries_the_path_with_serial_line_status_and_terms():
    memory = Memory()
    memory.ingest("Here is a list of facts:\n0. Tim Cook is employed by Apple.\n"
                  "1. Tim Cook is employed by Google.\n")
    answer = memory.query(harness.prompt("Who is Tim Cook employed by?", "archival-memory"))
    assert answer.text == "Google" and answer.question == "Who is Tim Cook employed by?"
    (hop,) = answer.path
    assert (hop.serial, hop.line, hop.status, hop.passed_over) == (1, 3, "active", ((0, 2),))
    assert answer.terms and answer.score is not None
    assert [v.status for v in memory.history("Tim Cook")["employer"]] == ["superseded", "active"]
    assert [(s, v.value) for s, v in memory.frontier()] == [("Tim Cook", "Google")]
    memory.reset()
    assert len(memory.store) == 0 and memory.query("Who is Tim Cook employed by?").reason == \
        NOTHING_INGESTED


def test_abstain_below_empties_a_lower_answer_with_the_reason(dev):
    dataset, haystack, _, rows = dev
    memory = Memory()
    memory.ingest(haystack.text)
    low = next(q for q in dataset.questions if rows[q.qid]["confidence"]["label"] == "low")
    kept = memory.query(low.text, abstain_below="low")
    gone = memory.query(low.text, abstain_below="medium")
    assert kept.text == rows[low.qid]["prediction"] and kept.text
    assert gone.text == "" and gone.reason.startswith("abstained: confidence low, below medium")
    assert gone.path == kept.path                          # the path is still shown
    with pytest.raises(InputError, match="unknown confidence level 'sure'"):
        memory.query(low.text, abstain_below="sure")


def test_plain_mode_and_named_plan_sets_are_the_runs(dev):
    dataset, haystack, _, _ = dev
    plain = {r["qid"]: r for r in loads_lines(
        (ROOT / "results" / "dev-6k-plain-confidence" / PREDICTIONS_FILE).read_bytes())}
    memory = Memory(mode="plain")
    memory.ingest(haystack.text)
    for q in dataset.questions[:40]:
        assert memory.query(q.text).text == plain[q.qid]["prediction"], q.qid
    with pytest.raises(InputError, match="unknown live plan set 'models'"):
        Memory(plan_sets=("models",))


@pytest.mark.parametrize("between", ["\n", " ", "\n" + harness.FRAME_ACKNOWLEDGEMENT + "\n"])
def test_text_before_the_header_is_no_part_of_the_first_fact(between):
    # The header begins a context: an instruction before it stands on a line of its own (it was
    # joined to fact 0 with a space, and fact 0 was lost inside an unparsed line).
    memory = Memory()
    result = memory.ingest("Memorize the following." + between + "Here is a list of facts:"
                           + between + "0. Tim Cook is employed by Apple.\n"
                           "1. Paris is located in the country of France.\n")
    memory.flush()
    assert [f.serial for f in memory.store] == [0, 1]
    assert [(r.line, r.text) for r in result.reports] == [(2, "Memorize the following.")]


def test_a_dropped_memory_is_freed_at_once_without_the_cyclic_collector():
    # A server drops the memories it evicts: a reference cycle (memory -> reader -> bound
    # method -> memory) kept each one, store and all, until a full collection came round.
    import gc
    import weakref
    was_on = gc.isenabled()
    gc.disable()
    try:
        memory = Memory()
        memory.ingest("\n".join(FACTS))
        memory.query("Who is the chairperson of Fatah?")
        refs = [weakref.ref(memory), weakref.ref(memory.store), weakref.ref(memory.ledger)]
        del memory
        assert [r() for r in refs] == [None, None, None]
    finally:
        if was_on:
            gc.enable()
