"""The readout (issue 33): `Memory.readout` and the renderer behind it (resolver/memory/readout.py).
The line format, the ranking (the winning path's cells, the rivals', then the disclosures on the
same cells), history with where the path leads from an older value, the ledger's alternatives
(a contest reaches the ledger only through its API), support, the budget's rules, the frontier,
the question no path answers, the escaping, and every readout of the dev rows within its
budget with the right answers in the 600-character one."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from resolver.errors import InputError
from resolver.haystack import bundled_path, load
from resolver.mab import harness
from resolver.mab.exact_match import score_answer, substring_exact_match
from resolver.memory.memory import Memory
from resolver.memory.readout import CUT, DISCLOSURES, render
from resolver.plan.planning import live_plan_sets
from resolver.search.resolve import resolve_dataset
from resolver.store.fact_store import FactStore
from resolver.store.provenance import Evidence
from resolver.text.facts import Fact

FACTS = ("0. Tim Cook is employed by Apple.\n"
         "1. Tim Cook is employed by Google.\n"
         "2. The chief executive officer of Apple is Steve Jobs.\n"
         "3. Steve Jobs is a citizen of United States of America.\n"
         "4. Google is located in the country of United States of America.\n"
         "5. The chief executive officer of Google is Sundar Pichai.\n"
         "6. The chief executive officer of Google is Lakshmi Mittal.\n"
         "7. Lakshmi Mittal is a citizen of India.\n")
CEO = "Who is the CEO of the company Tim Cook works for?"
CITIZEN = "What is the country of citizenship of the CEO of Tim Cook's employer?"


def memory(text: str = FACTS) -> Memory:
    m = Memory()
    m.ingest(text)
    m.flush()
    return m


def test_the_winning_path_first_one_line_per_cell():
    m = memory()
    assert m.query(CEO).text == "Lakshmi Mittal"
    assert m.readout(CEO) == ("[#1] Tim Cook | employer = Google\n"
                              "[#6] Google | ceo = Lakshmi Mittal")
    # a whole harness prompt reads as its question
    assert m.readout(harness.prompt(CEO)) == m.readout(CEO)


def test_history_gives_older_versions_newest_first_and_where_the_path_leads_from_each():
    m = memory()
    assert m.readout(CITIZEN, disclose="history") == (
        "[#1] Tim Cook | employer = Google\n"
        "[#6] Google | ceo = Lakshmi Mittal\n"
        "[#7] Lakshmi Mittal | citizenship = India\n"
        # Tim Cook's older employer, then the rest of the path (ceo, citizenship) from it
        "[#0 history] Tim Cook | employer = Apple\n"
        "[#2 via #0] Apple | ceo = Steve Jobs\n"
        "[#3 via #2] Steve Jobs | citizenship = United States of America\n"
        "[#5 history] Google | ceo = Sundar Pichai")


def test_a_value_the_path_took_that_is_not_current_is_marked():
    # Google has no CEO here: the search steps back to Tim Cook's older employer
    m = memory("0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by Google.\n"
               "2. The chief executive officer of Apple is Steve Jobs.\n")
    assert m.query(CEO).text == "Steve Jobs"
    assert m.readout(CEO).splitlines()[:2] == [
        "[#0 superseded; current #1] Tim Cook | employer = Apple",
        "[#2] Apple | ceo = Steve Jobs"]


def test_the_rivals_cells_follow_in_rank_order():
    m = memory()
    question = "What is the citizenship of the CEO of Google or of Apple?"
    prediction = m.query(question).prediction
    assert len({c.hops for c in prediction.candidates}) == 4       # rivals on other paths
    assert m.readout(question) == (
        "[#6] Google | ceo = Lakshmi Mittal\n"            # the winning path
        "[#7] Lakshmi Mittal | citizenship = India\n"
        "[#2] Apple | ceo = Steve Jobs\n"                  # the rivals, in rank order
        "[#3] Steve Jobs | citizenship = United States of America\n"
        "[#4] Google | located_in_country = United States of America")


def test_alternatives_read_the_ledgers_contest():
    m = memory()
    m.ledger.contest(("tim cook", "employer"), "IBM", Evidence(9, 9, "9. Tim Cook is employed by IBM."))
    text = m.readout(CEO, disclose="alternatives")
    assert "[#1 contested] Tim Cook | employer = Google" in text.splitlines()
    assert text.splitlines()[-1] == "[#9 alternative] Tim Cook | employer = IBM"
    # without the mode, the contest is only marked
    assert "IBM" not in m.readout(CEO)


def test_support_gives_the_evidence_lines_and_the_observations():
    m = memory()
    m.ledger.noop(("google", "ceo"), "Lakshmi Mittal",
                  Evidence(8, 12, "8. The chief executive officer of Google is Lakshmi Mittal."))
    lines = m.readout(CEO, disclose="support", budget=10_000).splitlines()
    assert "[#1 support, line 3] 1. Tim Cook is employed by Google." in lines
    assert "[#6 support, line 8] 6. The chief executive officer of Google is Lakshmi Mittal." \
        in lines
    assert "[#6 support, line 12] 8. The chief executive officer of Google is Lakshmi Mittal." \
        in lines


def test_disclosures_come_in_the_order_asked_each_after_the_cells():
    m = memory()
    lines = m.readout(CITIZEN, disclose=("support", "history"), budget=10_000).splitlines()
    kinds = [("support" if "support" in line else "history" if "history" in line or "via" in
              line else "cell") for line in lines]
    assert kinds == sorted(kinds, key=["cell", "support", "history"].index)
    assert set(kinds) == {"cell", "support", "history"}


# ---- the budget -----------------------------------------------------------------------------
def test_a_budget_is_never_exceeded_and_a_cut_keeps_a_prefix():
    m = memory()
    full = m.readout(CITIZEN, disclose=DISCLOSURES, budget=10_000)
    for budget in range(1, len(full) + 2):
        text = m.readout(CITIZEN, disclose=DISCLOSURES, budget=budget)
        assert len(text) <= budget
        if budget >= len(full.splitlines()[0]):
            assert full.startswith(text) and (text == full or full[len(text)] == "\n")


def test_a_budget_shorter_than_one_line_gives_the_first_line_cut_with_a_marker():
    m = memory()
    first = m.readout(CEO).splitlines()[0]
    assert m.readout(CEO, budget=12) == first[:11] + CUT == "[#1] Tim Co…"
    assert m.readout(CEO, budget=1) == CUT


def test_the_question_budget_is_600_by_default():
    m = Memory()
    m.ingest("".join(f"{i}. Tim Cook is employed by Company {i}.\n" for i in range(300)))
    m.ingest("300. The chief executive officer of Company 299 is Sundar Pichai.\n")
    m.flush()
    text = m.readout(CEO, disclose="history")
    assert 550 < len(text) <= 600
    assert len(m.readout(CEO, disclose="history", budget=2400)) > 2300


@pytest.mark.parametrize("budget,words", [
    (0, "a budget of 0 characters (expected at least 1)"),
    (-5, "a budget of -5 characters (expected at least 1)"),
    (1.5, "a budget must be a whole number of characters, not float"),
    (True, "a budget must be a whole number of characters, not bool"),
    ("600", "a budget must be a whole number of characters, not str")])
def test_a_budget_below_1_or_not_a_number_is_refused(budget, words):
    with pytest.raises(InputError) as err:
        memory().readout(CEO, budget=budget)
    assert str(err.value).startswith(words)


def test_an_unknown_disclosure_mode_is_refused_naming_the_three():
    with pytest.raises(InputError) as err:
        memory().readout(CEO, disclose=("history", "provenance"))
    assert str(err.value) == ("unknown disclosure mode 'provenance' (expected some of history, "
                              "alternatives, support)")
    with pytest.raises(InputError, match="unknown mode 'magic'"):
        memory().readout(CEO, mode="magic")
    with pytest.raises(InputError, match="a query must be text"):
        memory().readout(b"Who?")


# ---- no question, a question no path answers, nothing to read --------------------------------
def test_no_question_reads_out_the_whole_frontier_cut_only_by_a_budget():
    m = memory()
    frontier = m.readout()
    assert frontier.splitlines() == [
        "[#2] Apple | ceo = Steve Jobs",
        "[#6] Google | ceo = Lakshmi Mittal",
        "[#4] Google | located_in_country = United States of America",
        "[#7] Lakshmi Mittal | citizenship = India",
        "[#3] Steve Jobs | citizenship = United States of America",
        "[#1] Tim Cook | employer = Google"]
    assert m.readout(budget=70) == "[#2] Apple | ceo = Steve Jobs\n[#6] Google | ceo = Lakshmi Mittal"
    assert "[#0 history] Tim Cook | employer = Apple" in m.readout(disclose="history")


def test_a_question_no_path_answers_gives_the_frontier_lines_sharing_its_words_marked():
    m = memory()
    question = "Which river flows through the town where Mittal and Jobs met?"
    assert m.query(question).text == ""
    lines = m.readout(question).splitlines()
    assert lines and all(" shares words] " in line for line in lines)
    assert {line.split("] ")[1] for line in lines} == {
        "Steve Jobs | citizenship = United States of America",
        "Apple | ceo = Steve Jobs", "Lakshmi Mittal | citizenship = India",
        "Google | ceo = Lakshmi Mittal"}
    assert m.readout("Quelle est la rivière?") == ""           # no word shared: nothing


def test_nothing_to_read_is_empty_never_an_exception():
    assert Memory().readout(CEO) == "" and Memory().readout() == ""
    # a harness prompt whose question is only the instruction's example
    assert memory().readout(harness.prompt("")) == ""


def test_mode_plain_reads_out_the_plain_path():
    m = memory("0. Tim Cook is employed by Apple.\n1. Tim Cook is employed by Google.\n"
               "2. The chief executive officer of Apple is Steve Jobs.\n")
    plain = m.query(CEO, mode="plain").prediction
    assert m.readout(CEO, mode="plain") == render(m.store, plain)
    assert m.readout(CEO, mode="plain") != m.readout(CEO)
    assert Memory(mode="plain").readout(CEO) == ""


# ---- the format -----------------------------------------------------------------------------
def test_fields_are_escaped_so_a_line_is_one_line_and_splits_one_way():
    store = FactStore([Fact(0, "Tab\there", "employer", "a = b | c\nd \\n", 1, "0. x")])
    assert render(store) == "[#0] Tab\\there | employer = a \\= b \\| c\\nd \\\\n"


def test_the_docs_example_prints_what_the_page_shows():
    page = (Path(__file__).resolve().parents[1] / "docs" / "readout.md").read_text("utf-8")
    code = re.search(r"^```python\n(.*?)^```", page, re.S | re.M)[1]
    shown = re.search(r"^prints\n\n```text\n(.*?)^```", page, re.S | re.M)[1]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/readout.md", "exec"), {})
    assert printed.getvalue() == shown


def test_readouts_are_deterministic():
    assert memory().readout(CITIZEN, disclose=DISCLOSURES) == \
        memory().readout(CITIZEN, disclose=DISCLOSURES)


# ---- the dev rows ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dev():
    dataset, gold = load([bundled_path()])
    return dataset, gold, resolve_dataset(dataset, live_plan_sets(dataset))


def test_every_dev_readout_is_within_its_budget(dev):
    dataset, _gold, predictions = dev
    for question, prediction in zip(dataset.questions, predictions):
        store = dataset.haystack_of(question).store
        for budget in (50, 300, 600, 2400):
            for modes in ((), ("history", "alternatives"), DISCLOSURES):
                assert len(render(store, prediction, disclose=modes, budget=budget)) <= budget


def test_the_600_character_readout_holds_every_right_answer(dev):
    # the test's own check on the dev rows; benchmarks/readout.py measures the figures
    dataset, gold, predictions = dev
    right = [(q, p) for q, p in zip(dataset.questions, predictions)
             if score_answer(p.answer, gold[q.qid])]
    assert len(right) > 150
    for question, prediction in right:
        text = render(dataset.haystack_of(question).store, prediction)
        assert substring_exact_match(text, gold[question.qid]), question.qid
