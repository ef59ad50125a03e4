"""History questions (issue 32, item 5): "previous", "previously", "formerly", "used to",
"before the change", "no longer" read the key's history at the hop they name, "as of serial N"
the memory as it stood at serial N at every hop; the answer says which version it used.
Wording that names a relation ("originally from", "first aired on") keeps its meaning, and a
temporal word the reader cannot place gives at most "low", never a confident current value.

The contexts are invented for these tests; the ledger is driven through its own API where the
correction language of items 1-3 is not needed."""
from __future__ import annotations

import pytest

from resolver import Memory
from resolver.haystack import Question
from resolver.plan.compile_lexicon import compile_question as lexicon_plans
from resolver.plan.compile_rules import compile_question as rule_plans
from resolver.plan.history import AS_OF, PREVIOUS, UNPLACED, history_cues
from resolver.plan.question import read
from resolver.search.resolve import resolve_question, resolve_question_plain
from resolver.store.provenance import Evidence

FACTS = """Here is a list of facts:
0. Tim Cook is employed by Apple.
1. Kari Holm is a citizen of Ostmark.
2. The capital of Ostmark is Ostby.
3. The capital of Vesland is Vesby.
4. Tim Cook is employed by Google.
5. Kari Holm is a citizen of Vesland.
6. The capital of Vesland is Nyby.
7. Tim Cook is employed by Microsoft.
8. The origianl broadcaster of Tidewater is NBC.
9. Tidewater was created in the country of Ostmark.
10. The capital of France is Paris.
"""


@pytest.fixture
def memory():
    m = Memory()
    m.ingest(FACTS)
    m.flush()
    return m


def _path(answer):
    return [(h.subject, h.relation, h.object, h.version, h.serial) for h in answer.path]


@pytest.mark.parametrize("question", [
    "What was Tim Cook's previous employer?",
    "Who was Tim Cook previously employed by?",
    "Who was Tim Cook formerly employed by?",
    "Who did Tim Cook used to be employed by?",
    "Who was Tim Cook employed by before the change?",
    "Who is Tim Cook no longer employed by?",
])
def test_each_cue_reads_the_previous_value(memory, question):
    now = memory.query("Who is Tim Cook employed by?")
    assert (now.text, now.history) == ("Microsoft", None)
    answer = memory.query(question)
    assert answer.text == "Google"
    assert _path(answer) == [("Tim Cook", "employer", "Google", 1, 4)]
    assert answer.history.kind == PREVIOUS and answer.history.hops == (1,)
    assert answer.history.note == ("hop 1 (Tim Cook / employer) read version 1 (serial 4, "
                                   "line 6), not the head (serial 7)")
    # the older version the question asked for costs the label nothing
    assert not any("older version" in r for r in answer.confidence.reasons)
    assert answer.to_json()["history"]["hops"] == [1]


def test_as_of_serial_reads_the_memory_as_it_stood_then(memory):
    for serial, value in ((0, "Apple"), (3, "Apple"), (4, "Google"), (6, "Google"),
                          (7, "Microsoft"), (99, "Microsoft")):
        answer = memory.query(f"Who was Tim Cook employed by as of serial {serial}?")
        assert answer.text == value, serial
        assert answer.history.kind == AS_OF
    early = memory.query("What is the capital of France as of serial 3?")
    assert early.text == "" and early.reason == ("history: France / capital (hop 1) has no "
                                                 "value at or before serial 3")
    assert early.confidence.label == "none"


def test_in_a_multi_hop_question_the_cue_applies_to_the_hop_it_names(memory):
    q = "What is the capital of the country Kari Holm is a citizen of?"
    assert memory.query(q).text == "Nyby"                     # Vesland, its latest capital
    # "previously" names the citizenship: the earlier country, then its capital now
    a = memory.query("What is the capital of the country Kari Holm was previously a citizen of?")
    assert a.text == "Ostby"
    assert [(h.relation, h.object, h.version) for h in a.path] == [
        ("citizenship", "Ostmark", 1), ("capital", "Ostby", 0)]
    assert a.history.hops == (1,)
    # "previous capital" names the capital: the country now, then its earlier capital
    b = memory.query("What was the previous capital of the country Kari Holm is a citizen of?")
    assert b.text == "Vesby"
    assert [(h.relation, h.object, h.version) for h in b.path] == [
        ("citizenship", "Vesland", 0), ("capital", "Vesby", 1)]
    assert b.history.hops == (2,)
    # "as of serial N" applies to every hop
    c = memory.query("What is the capital of the country Kari Holm is a citizen of as of "
                     "serial 5?")
    assert [(h.relation, h.object) for h in c.path] == [("citizenship", "Vesland"),
                                                        ("capital", "Vesby")]
    assert c.history.hops == (1, 2)


def test_retracted_and_rejected_values_are_no_previous_value(memory):
    ledger = memory.ledger
    key = ("tim cook", "employer")
    ledger.revoke(key, Evidence(11, 13, "Correction: Tim Cook is employed by Microsoft was "
                                       "reported in error."))
    assert memory.query("Who is Tim Cook employed by?").text == "Google"
    assert memory.query("What was Tim Cook's previous employer?").text == "Apple"
    ledger.reject(key, "Amazon", Evidence(12, 14, "Tim Cook is employed by Amazon, not Google."))
    # Google was judged wrong: Apple is still the value before the head
    assert memory.query("What was Tim Cook's previous employer?").text == "Apple"


def test_no_earlier_value_is_no_answer_not_the_current_one(memory):
    answer = memory.query("What was the previous capital of France?")
    assert answer.text == "" and answer.confidence.label == "none"
    assert answer.reason == "history: France / capital (hop 1) has no earlier value"


@pytest.mark.parametrize("question, cue", [
    ("Who was Tim Cook employed by in 1999?", "in 1999"),
    ("Who was Tim Cook employed by before?", "before"),
    ("Who was Tim Cook's former employer?", "former"),
    ("Who employed Tim Cook at the time?", "at the time"),
    ("Who was Tim Cook employed by as of last spring?", "as of"),
])
def test_a_temporal_cue_the_reader_cannot_place_is_never_confident(memory, question, cue):
    answer = memory.query(question)
    assert answer.text == "Microsoft"
    assert answer.confidence.label in ("low", "none")
    assert answer.confidence.reasons[-1] == (f"temporal cue {cue!r}: the reader cannot place "
                                             "it in the key's history; the current value is "
                                             "given")
    assert answer.history.placed is False


def test_wording_that_names_a_relation_keeps_its_meaning(memory):
    for question, value in (("Which network first aired Tidewater?", "NBC"),
                            ("Who is the original broadcaster of Tidewater?", "NBC"),
                            ("Where is Tidewater originally from?", "Ostmark"),
                            ("Which language is used to write Tidewater?", None)):
        answer = memory.query(question)
        assert answer.history is None, question
        assert answer.prediction.to_json().keys() >= {"answer"}
        assert "history" not in answer.prediction.to_json(), question
        if value is not None:
            assert answer.text == value, question


def test_cue_words_inside_a_name_are_no_cue():
    m = Memory()
    m.ingest("Here is a list of facts:\n0. The author of Previously Loved is Ann Lee.\n"
             "1. The author of Previously Loved is Bo Ek.\n")
    m.flush()
    answer = m.query("Who is the author of Previously Loved?")
    assert (answer.text, answer.history) == ("Bo Ek", None)
    reading = read("Who is the author of Previously Loved?", m.store)
    assert history_cues(reading) == ()


def test_the_reading_names_the_cue_kind_and_place(memory):
    store = memory.store
    cues = history_cues(read("What was Tim Cook's previous employer as of serial 4?", store))
    assert [(c.kind, c.words, c.serial) for c in cues] == [(PREVIOUS, "previous", None),
                                                           (AS_OF, "as of serial 4", 4)]
    assert cues[0].names[0][0] == "employer"
    assert [c.kind for c in history_cues(read("What language was used to write it?", store))] \
        == []                                 # a passive "used to" names a relation
    assert [c.kind for c in history_cues(read("Where did he used to work?", store))] == \
        [PREVIOUS]
    assert [c.kind for c in history_cues(read("Who ruled in 1850?", store))] == [UNPLACED]


def test_plain_mode_reads_history_too(memory):
    store = memory.store
    text = "What was Tim Cook's previous employer?"
    q = Question("q", "memory", 0, text, "unknown", "unknown", "")
    compiled = [("live:rules", rule_plans(text, store)), ("live:lexicon", lexicon_plans(text, store))]
    for resolve in (resolve_question, resolve_question_plain):
        prediction = resolve(q, store, compiled)
        assert prediction.answer == "Google"
        assert prediction.to_json()["history"]["kind"] == PREVIOUS
        assert prediction.to_json()["winner"]["hops"][0]["version"] == 1


def test_the_guides_examples_print_what_it_shows(capsys):
    """docs/history.md: each Python example followed by "prints" prints exactly the text shown
    (tests/test_docs.py runs every block; this checks their output)."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "history.md").read_text("utf-8")
    pairs = re.findall(r"^```python\n(.*?)^```\n\nprints\n\n```text\n(.*?)^```", page,
                       re.S | re.M)
    assert len(pairs) == 3
    for code, shown in pairs:
        exec(compile(code, "docs/history.md", "exec"), {})
        assert capsys.readouterr().out == shown


def test_a_cue_naming_no_hop_of_a_multi_hop_path_is_unplaced_and_one_hop_takes_it(memory):
    # the cue's nearest relation cue ("author") is not on the path: never a confident value
    answer = memory.query("What is the capital of the country Kari Holm is a citizen of, "
                          "previously the author?")
    assert answer.text == "Nyby" and answer.confidence.label in ("low", "none")
    assert answer.history.placed is False
    assert answer.confidence.reasons[-1] == ("history cue 'previously' names no hop of the "
                                             "path (citizenship > capital); the current value "
                                             "is given")
    # a single-hop path has one key whose history the cue can ask for
    one = memory.query("Who is the employer of Tim Cook, previously the author?")
    assert (one.text, one.history.hops) == ("Google", (1,))
