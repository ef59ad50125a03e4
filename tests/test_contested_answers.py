"""Contested values surface (issue 32, item 4): an answer whose path reads a contested head is
flagged (`contested`, `alternatives`), its confidence is at most "low" with the reason, the
same in traces, in the server's `factres` field and in `factres explain`; once resolved it is
no longer contested. The ledger is driven through its own API (`Ledger.contest`, `resolve`),
as the correction language of items 1-3 will drive it from text."""
from __future__ import annotations

import json

import orjson
from openai import OpenAI

from resolver import Memory
from resolver.search.contested import Contest
from resolver.serve.app import serving
from resolver.serve.config import ServeConfig
from resolver.store.provenance import Evidence

FACTS = """Here is a list of facts:
0. Tova Lind is a citizen of Norland.
1. The capital of Norland is Brimvik.
2. The capital of Ostmark is Ostby.
3. Tim Cook is employed by Apple.
4. Tim Cook is employed by Google.
"""
EMPLOYER = ("tim cook", "employer")
CITIZENSHIP = ("tova lind", "citizenship")


def _memory() -> Memory:
    m = Memory()
    m.ingest(FACTS)
    m.flush()
    return m


def _report(serial: int, text: str) -> Evidence:
    return Evidence(serial, serial + 2, text)


def test_a_contested_head_flags_the_answer_until_it_is_resolved():
    m = _memory()
    before = m.query("Who is Tim Cook employed by?")
    assert (before.text, before.contested, before.alternatives) == ("Google", False, ())
    assert before.confidence.label == "high"
    m.ledger.contest(EMPLOYER, "Microsoft", _report(5, "Report: Tim Cook is employed by "
                                                       "Microsoft."))
    m.ledger.contest(EMPLOYER, "Amazon", _report(6, "Report: Tim Cook is employed by Amazon."))
    answer = m.query("Who is Tim Cook employed by?")
    assert answer.text == "Google" and answer.contested
    assert answer.alternatives == ("Microsoft", "Amazon")
    assert answer.contests == (Contest(1, "Tim Cook", "employer", "Google", "Google",
                                       ("Microsoft", "Amazon")),)
    assert answer.confidence.label == "low"
    assert answer.confidence.reasons == ("contested at hop 1: Tim Cook / employer is 'Google', "
                                         "against 'Microsoft', 'Amazon'",)
    out = answer.to_json()
    assert (out["contested"], out["alternatives"]) == (True, ["Microsoft", "Amazon"])
    assert answer.prediction.to_json()["contests"] == [out["contests"][0]]
    # abstaining below "medium" empties a contested answer
    assert m.query("Who is Tim Cook employed by?", abstain_below="medium").text == ""
    m.ledger.resolve(EMPLOYER, "Amazon", _report(7, "Check: Tim Cook is employed by Amazon."))
    settled = m.query("Who is Tim Cook employed by?")
    assert (settled.text, settled.contested, settled.alternatives) == ("Amazon", False, ())
    assert settled.confidence.label == "high"
    assert "contests" not in settled.prediction.to_json()


def test_a_contested_cell_in_the_middle_of_a_path_is_named_with_its_hop():
    m = _memory()
    m.ledger.contest(CITIZENSHIP, "Ostmark", _report(5, "Report: Tova Lind is a citizen of "
                                                        "Ostmark."))
    for mode in ("search", "plain"):
        answer = m.query("Which city is the capital of the country Tova Lind is a citizen of?",
                         mode=mode)
        assert answer.text == "Brimvik" and answer.contested, mode
        assert [(c.hop, c.relation, c.taken, c.alternatives) for c in answer.contests] == [
            (1, "citizenship", "Norland", ("Ostmark",))]
        assert answer.confidence.label == "low"


def test_an_accept_that_outranks_the_contest_ends_it():
    m = _memory()
    m.ledger.contest(EMPLOYER, "Microsoft", _report(5, "Report: Tim Cook is employed by "
                                                       "Microsoft."))
    m.ingest("6. Tim Cook is employed by IBM.\n")
    m.flush()
    answer = m.query("Who is Tim Cook employed by?")
    assert (answer.text, answer.contested) == ("IBM", False)


def _ask_server(folder):
    """(answer, factres field) of the named memory `agent` in `folder`, asked through a server
    started for the question, with the `openai` client."""
    with serving(ServeConfig(port=0, store=str(folder))) as url:
        api = OpenAI(base_url=f"{url}/memories/agent", api_key="sk-anything")
        reply = api.chat.completions.create(
            model="factres", messages=[{"role": "user", "content": "Who is Tim Cook employed "
                                                                  "by?"}])
    return reply.choices[0].message.content, reply.model_extra["factres"]


def test_the_servers_factres_field_carries_the_flag(tmp_path):
    with Memory.open(tmp_path / "agent.db") as m:
        m.ingest(FACTS)
        m.flush()
        m.ledger.contest(EMPLOYER, "Microsoft", _report(5, "Report: Tim Cook is employed by "
                                                           "Microsoft."))
    text, extra = _ask_server(tmp_path)
    assert text == "Google"
    assert (extra["contested"], extra["alternatives"]) == (True, ["Microsoft"])
    assert extra["confidence"]["label"] == "low"
    assert extra["confidence"]["reasons"][-1].startswith("contested at hop 1: Tim Cook / "
                                                          "employer")
    with Memory.open(tmp_path / "agent.db") as m:
        m.ledger.resolve(EMPLOYER, "Google")
    text, extra = _ask_server(tmp_path)
    assert text == "Google" and (extra["contested"], extra["alternatives"], extra["confidence"]["label"]) == (
        False, [], "high")


def test_explain_shows_the_contest_and_the_history_a_trace_records(tmp_path):
    from click.testing import CliRunner

    from oracle.cli import main
    from oracle.explain import explain, render
    from resolver.run.config import RunConfig
    from resolver.run.runs import execute

    questions = [("h1", "What was Tim Cook's previous employer?", "Apple"),
                 ("c1", "Who is Tim Cook employed by?", "Google")]
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{
        "context": FACTS.rstrip("\n"), "questions": [q for _, q, _ in questions],
        "answers": [[g] for _, _, g in questions],
        "metadata": {"source": "factconsolidation_sh_6k",
                     "qa_pair_ids": [qid for qid, _, _ in questions]}}]), "utf-8")
    run = execute(RunConfig(data=(str(rows),)), results=tmp_path / "results", run_id="hist")
    (h1,) = explain(run.path, ["h1"])
    assert h1["prediction"] == "Apple" and h1["em"] == 1
    assert h1["history"]["note"] == ("hop 1 (Tim Cook / employer) read version 1 (serial 3, "
                                     "line 5), not the head (serial 4)")
    assert "history cue 'previous' (previous): hop 1 (Tim Cook / employer) read version 1" \
        in render([h1])
    # a run's store only accepts until the correction language lands: the contest a memory
    # would record is written into the trace here, as resolve writes it
    traces = run.path / "traces.jsonl"
    lines = traces.read_bytes().splitlines()
    edited = []
    for line in lines:
        row = orjson.loads(line)
        if row["qid"] == "c1":
            row["contests"] = [Contest(1, "Tim Cook", "employer", "Google", "Google",
                                       ("Microsoft",)).to_json()]
        edited.append(orjson.dumps(row))
    traces.write_bytes(b"\n".join(edited) + b"\n")
    result = CliRunner().invoke(main, ["explain", str(run.path), "c1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert ("contested: hop 1 reads Tim Cook / employer, 'Google' taken against 'Microsoft' "
            "(the ledger holds them open until a check or a resolve)") in " ".join(
                result.output.split())          # wrapped at the terminal's width


def test_factres_memory_ask_says_contested_and_which_version_a_history_cue_read(tmp_path):
    from click.testing import CliRunner

    from resolver.cli import main

    db = tmp_path / "agent.db"
    with Memory.open(db) as m:
        m.ingest(FACTS)
        m.flush()
        m.ledger.contest(EMPLOYER, "Microsoft", _report(5, "Report: Tim Cook is employed by "
                                                           "Microsoft."))
    ask = CliRunner().invoke(main, ["memory", "ask", str(db), "Who is Tim Cook employed by?"],
                             catch_exceptions=False)
    assert ask.exit_code == 0, ask.output
    assert ask.output.splitlines()[:3] == [
        "Google",
        "confidence: low (contested at hop 1: Tim Cook / employer is 'Google', against "
        "'Microsoft')",
        "contested, against: Microsoft"]
    ask = CliRunner().invoke(main, ["memory", "ask", str(db), "Who was Tim Cook employed by "
                                    "as of serial 3?"], catch_exceptions=False)
    assert ask.output.splitlines()[0] == "Apple"
    assert ask.output.splitlines()[2] == ("history (as of serial 3): hop 1 (Tim Cook / employer) "
                                          "read version 2 (serial 3, line 5), not the head "
                                          "(serial 4)")
