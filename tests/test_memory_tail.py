"""The memory's streaming reader at its edges (audit B, M3-M18): which tails are complete and
which may still grow, what a query between chunks sees, serials factres refuses, frame
boundaries, text after the last fact, and pending text that holds no serial."""
from __future__ import annotations

import pytest

from resolver.errors import InputError
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.memory.stream import FactReader
from resolver.store.fact_store import FactStore
from resolver.store.provenance import Evidence, Ledger
from resolver.text.facts import MAX_SERIAL, parse_context

HEAD = "Here is a list of facts:\n"
ASK = "Who is Tim Cook employed by?"


def objects(memory: Memory) -> list[tuple[int, str]]:
    return [(f.serial, f.object) for f in memory.store]


# ---- M8: a query between chunks ---------------------------------------------------------------
@pytest.mark.parametrize("fragment", ["1", "1.", "1. ", " 1", "1"])
def test_a_serial_fragment_at_the_end_is_never_glued_to_the_object_before_it(fragment):
    memory = Memory()
    memory.ingest(HEAD + "0. Tim Cook is employed by Apple. " + fragment.strip()
                  + (" " if fragment.endswith(" ") else ""))
    assert memory.query(ASK).text == "Apple"
    memory.ingest(("" if fragment.endswith(" ") else " " if fragment.endswith(".") else ". ")
                  + "Tim Cook is employed by Google. 2. Tim Cook is employed by IBM. "
                  "3. The capital of France is Paris.")
    assert memory.query(ASK).text == "IBM"
    assert memory.query("What is the capital of France?").text == "Paris"
    assert memory.flush().reports == ()
    assert objects(memory) == [(0, "Apple"), (1, "Google"), (2, "IBM"), (3, "Paris")]


def test_a_number_that_cannot_be_the_next_serial_stays_in_the_object():
    memory = Memory()
    memory.ingest("0. Tim Cook is employed by Op. 7")
    memory.ingest(".")                    # "Op. 7." is no start of fact 1
    assert memory.query(ASK).text == "Op. 7"


def test_a_provisional_fact_the_text_goes_on_to_change_is_taken_back():
    memory = Memory()
    memory.ingest(harness.frame_chunk(HEAD + "0. Joe Biden was born in the city of St."))
    assert memory.query("Which city was Joe Biden born in?").text == "St"
    memory.ingest(harness.frame_chunk("Louis. 1. Tim Cook is employed by Apple."))
    assert memory.query("Which city was Joe Biden born in?").text == "St. Louis"
    memory.flush()
    assert objects(memory) == [(0, "St. Louis"), (1, "Apple")]
    whole = FactStore(parse_context(HEAD + "0. Joe Biden was born in the city of St. Louis.\n"
                                    "1. Tim Cook is employed by Apple.").facts)
    assert memory.ledger.dump() == whole.ledger.dump()


# ---- issue 31: a take-back keeps every other operation of the ledger ----------------------------
CAPITAL = "What is the capital of France?"
FRANCE = ("france", "capital")


def test_a_take_back_keeps_a_revoke_made_while_the_tail_was_provisional():
    memory = Memory()
    memory.ingest(HEAD + "0. The capital of France is Paris.\n1. The capital of France is Lyon.\n"
                  "2. Joe Biden was born in the city of St.")
    assert memory.query("Which city was Joe Biden born in?").text == "St"     # provisional
    memory.ledger.revoke(FRANCE, Evidence(3, 5, "3. Lyon was reported in error."))
    assert memory.query(CAPITAL).text == "Paris"
    memory.ingest(" Louis.\n")                  # the provisional "St" is taken back
    assert memory.query("Which city was Joe Biden born in?").text == "St. Louis"
    assert memory.query(CAPITAL).text == "Paris"          # the revoke was lost before the fix
    assert [o.op for o in memory.ledger.operations()] == ["accept", "accept", "revoke", "accept"]
    # the ledger is its operations replayed, the revoke in its place
    assert Ledger.replay(memory.ledger.operations()).dump() == memory.ledger.dump()


def test_an_operation_that_read_a_taken_back_fact_is_reported_not_dropped_silently():
    memory = Memory()
    memory.ingest(HEAD + "0. Joe Biden was born in the city of St.")
    memory.query("Which city was Joe Biden born in?")
    key = memory.ledger.keys()[0]
    memory.ledger.revoke(key, Evidence(1, 3, "1. retracted."))      # revokes the provisional St
    result = memory.ingest(" Louis.\n")
    assert [(r.kind, r.serial, r.text) for r in result.reports] == [
        ("not reapplied", 1, "1. retracted.")]
    assert result.reports[0].reason == (
        "revoke on (joe biden, born_in) read a provisional fact the text then changed, and no "
        "longer applies without it: cannot revoke (joe biden, born_in): the key is empty")
    assert objects(memory) == [(0, "St. Louis")]


# ---- M7: a line break ends a fact at once outside a frame; inside one it may be the frame's ----
def test_a_line_break_commits_the_fact_at_once_and_its_report_comes_back_at_once():
    memory = Memory()
    first = memory.ingest(HEAD + "0. A is employed by B.\n")
    assert (first.committed, first.pending) == (1, 0)
    again = memory.ingest("1. A is employed by C.\n1. A is employed by D.\n")
    assert again.committed == 1 and [r.kind for r in again.reports] == ["duplicate"]


def test_inside_a_frame_a_line_break_may_be_the_frames():
    memory = Memory()
    framed = harness.frame_chunk(HEAD + "0. Joe Biden was born in the city of St.")
    cut = framed.index("<Assistant>")
    assert memory.ingest(framed[:cut]).committed == 0     # "\n<Assistant>" may follow
    memory.ingest(framed[cut:])
    memory.ingest(harness.frame_chunk("Louis."))
    memory.flush()
    assert objects(memory) == [(0, "St. Louis")]


# ---- M11: a frame boundary -------------------------------------------------------------------
def test_a_frame_boundary_is_a_sentence_boundary_a_raw_cut_is_anywhere():
    facts = HEAD + "0. Tim Cook is employed by Apple. 1. Tim Cook is employed by Google."
    cut = facts.index("gle.")
    raw = Memory()
    raw.ingest(facts[:cut])
    raw.ingest(facts[cut:])
    assert raw.query(ASK).text == "Google"
    # Between frames the harness dropped one space (it cuts between sentences): the two sides
    # are re-joined with it, so a cut inside a word comes back with a space (docs/memory.md).
    framed = Memory()
    framed.ingest(harness.frame_chunk(facts[:cut]))
    framed.ingest(harness.frame_chunk(facts[cut:]))
    assert framed.query(ASK).text == "Goo gle"


# ---- M12: a non-fact sentence before a fact on one line ---------------------------------------
def test_text_with_no_serial_before_a_fact_on_its_line_is_reported_alone():
    memory = Memory()
    result = memory.ingest("junk text. 2. The capital of France is Paris.\n"
                           "3. Tim Cook is employed by Apple.\n")
    assert [(r.kind, r.text) for r in result.reports] == [("unparsed", "junk text.")]
    assert objects(memory) == [(2, "Paris"), (3, "Apple")]


# ---- M13: text after the last fact on its line ------------------------------------------------
def test_a_sentence_after_the_last_fact_on_its_line_is_read_as_its_object_a_limit():
    # An object may hold full stops ("Washington, D.C.", "St. Louis"): a sentence after the last
    # fact on the same line cannot be told from one. The documented limit and its workaround:
    # end the facts with a line break (or a memorize frame) before any other text.
    text = HEAD + "0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by Google."
    limit = Memory()
    limit.ingest(text + " Please answer concisely.")
    assert limit.query(ASK).text == "Google. Please answer concisely"
    workaround = Memory()
    result = workaround.ingest(text + "\nPlease answer concisely.")
    workaround.flush()
    assert workaround.query(ASK).text == "Google"
    assert [r.text for r in result.reports] == [] and \
        [r.text for r in Memory().ingest(text + "\nPlease answer concisely.\n").reports] == \
        ["Please answer concisely."]


# ---- M4, M5 (and the memory half of S5): serials factres refuses -------------------------------
@pytest.mark.parametrize("digits", ["99999999999999999999999", str(MAX_SERIAL + 1), "9" * 4400])
def test_a_serial_too_large_is_reported_never_committed_and_nothing_wedges(digits):
    memory = Memory()
    memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
    result = memory.ingest(digits + ". Tim Cook is employed by Huge.\n")
    (report,) = result.reports
    assert report.kind == "unparsed" and report.serial is None
    assert "is too large (expected a serial of at most 9223372036854775807" in report.reason
    if len(digits) > 30:
        assert report.reason.startswith("a serial of 4,400 digits is too large")
    assert memory.query(ASK).text == "Apple"
    assert memory.ingest("1. Tim Cook is employed by Google.\n").committed == 1
    assert memory.query(ASK).text == "Google"
    import orjson
    orjson.dumps([r.to_json() for r in result.reports])     # a server can always send it


def test_the_largest_serial_is_taken():
    memory = Memory()
    memory.ingest(f"{MAX_SERIAL}. Tim Cook is employed by Apple.\n")
    assert objects(memory) == [(MAX_SERIAL, "Apple")]


# ---- M3: bytes that end inside a character ---------------------------------------------------
def test_a_str_chunk_after_a_dangling_byte_is_refused_and_nothing_wedges():
    memory = Memory()
    memory.ingest((HEAD + "0. Tim Cook is employed by Caf").encode() + b"\xc3")
    with pytest.raises(InputError, match="ended inside a character"):
        memory.ingest("\xa9.\n")
    assert memory.query(ASK).text == ""            # the tail has no full stop yet: no fact
    memory.ingest(b"\xa9.\n1. Tim Cook is employed by Google.\n")
    assert objects(memory) == [(0, "Café"), (1, "Google")]


def test_a_dangling_byte_at_flush_is_reported_and_dropped():
    memory = Memory()
    memory.ingest((HEAD + "0. Tim Cook is employed by Apple.\n").encode() + b"\xc3")
    assert memory.query(ASK).text == "Apple"
    result = memory.flush()
    assert [(r.kind, r.text) for r in result.reports] == [("unparsed", "0xc3")]
    assert "ends inside a UTF-8 character" in result.reports[0].reason
    memory.ingest("1. Tim Cook is employed by Google.\n")        # not wedged
    assert memory.query(ASK).text == "Google"


# ---- M16 ---------------------------------------------------------------------------------------
def test_a_single_plan_set_name_is_taken_as_one_name():
    assert Memory(plan_sets="rules").plan_sets == ("rules",)
    assert Memory(plan_sets="live:lexicon").plan_sets == ("live:lexicon",)
    memory = Memory()
    memory.ingest(HEAD + "0. Tim Cook is employed by Apple.\n")
    assert memory.query(ASK, plan_sets="rules").text == "Apple"
    with pytest.raises(InputError, match="plan_sets must be names"):
        Memory(plan_sets=5)


# ---- M18: text with no serial is not re-scanned ------------------------------------------------
def test_pending_text_with_no_piece_start_is_scanned_once():
    # The tail's text known to hold no start is not searched again: the search of each feed
    # starts at most a few characters before the new text (cost linear in the text; the time
    # is measured by benchmarks/memory.py --junk).
    reader = FactReader()
    searched = []
    real = FactReader._last_start

    def spy(text, bare=0):
        searched.append(len(text) - bare)
        return real(text, bare)

    FactReader._last_start = staticmethod(spy)
    try:
        junk = "lorem ipsum dolor sit amet " * 2000
        for i in range(0, len(junk), 500):
            reader.feed(junk[i:i + 500])
    finally:
        FactReader._last_start = staticmethod(real)
    assert max(searched[1:]) <= 500 + 1
    batch = reader.flush()
    assert [r.kind for r in batch.reports] == ["unparsed"] and batch.reports[0].text == junk.strip()
