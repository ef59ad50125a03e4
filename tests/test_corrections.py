"""Issue 32, items 1-3: the correction language (grammars/corrections.lark) read from text by
`Memory.ingest`, `factres parse` and `factres run`; P-Mem's patches through `Memory.apply`; every
version that enters by an operation seen by questions and the search as a fact line's is."""
from __future__ import annotations

import random

import pytest
from conftest import bundled_context

from resolver.errors import InputError, ProvenanceError
from resolver.haystack import load
from resolver.memory.memory import CORRECTION, Memory
from resolver.search.hops import hops_over
from resolver.store.fact_store import FactStore
from resolver.store.operations import read_patch
from resolver.store.provenance import CONTRADICTED, REVOKED, Evidence, Ledger
from resolver.text import corrections, cues
from resolver.text.corrections import Correction
from resolver.text.facts import UnparsedLine, parse_context
from resolver.text.relations import relation

EMPLOYER = relation("employer").question          # "Who is the employer of [X]?"
WHERE = relation("location").question             # "Where is [X] now?"


def ask(memory: Memory, template: str, subject: str) -> str:
    return memory.query(template.replace("[X]", subject)).text


def fed(*lines: str, memory: Memory | None = None) -> Memory:
    memory = memory or Memory()
    memory.ingest("".join(line + "\n" for line in lines))
    return memory


TIM = ("Here is a list of facts:", "0. Tim Cook is employed by Apple.",
       "1. Tim Cook is employed by Google.")


# ---- the grammar ---------------------------------------------------------------------------
@pytest.mark.parametrize("line, form, value, other", [
    ("The report that Tim Cook is employed by Google was an error.", "retract", "Google", None),
    ("2. The report that Tim Cook is employed by Google was an error.", "retract", "Google",
     None),
    ("Correction: Tim Cook is employed by Google was reported in error.", "retract", "Google",
     None),
    ("Correction: Tim Cook is employed by Apple, not Google.", "contradict", "Apple", "Google"),
    ("Tim Cook is employed by Apple, not Google.", "contradict", "Apple", "Google"),
    ("Report: Tim Cook is employed by Apple.", "report", "Apple", None),
    ("Check: Tim Cook is employed by Apple.", "check", "Apple", None),
    ("Update: Tim Cook is employed by Apple.", "update", "Apple", None),
])
def test_every_form_frames_a_fact_sentence_the_fact_grammar_reads(line, form, value, other):
    found = corrections.read(line, 7)
    assert found == Correction(form, "Tim Cook", "employer", value, 7, line,
                               2 if line.startswith("2.") else None, other)


@pytest.mark.parametrize("line, form, subject, value, other", [
    ("Earlier observation: mug 3 was in countertop 1.", "earlier", "mug 3", "countertop 1",
     None),
    ("Update: mug 3 has been moved from countertop 1 to cabinet 2.", "move", "mug 3",
     "cabinet 2", "countertop 1"),
    ("Report: mug 3 is in drawer 4.", "report", "mug 3", "drawer 4", None),
    ("Check: mug 3 is in drawer 4.", "check", "mug 3", "drawer 4", None),
    ("Correction: the move of mug 3 to cabinet 2 was reported in error.", "retract", "mug 3",
     "cabinet 2", None),
])
def test_alfworld_revision_templates_read_the_location_relation(line, form, subject, value,
                                                                 other):
    found = corrections.read(line)
    assert (found.form, found.subject, found.relation, found.value, found.other) == \
        (form, subject, "location", value, other)


def test_the_split_is_at_the_last_not_and_a_value_holding_one_stays_whole():
    found = corrections.read("The capital of France is Paris, not London, not Lyon.")
    assert (found.subject, found.value, found.other) == ("France", "Paris, not London", "Lyon")


def test_a_cued_line_that_reads_as_no_correction_is_reported_with_the_reason():
    found = corrections.read("Report: the weather is nice.")
    assert isinstance(found, UnparsedLine)
    assert "is no fact sentence the grammar reads" in found.reason


def test_fact_lines_never_reach_the_correction_grammar():
    context = bundled_context("262k")
    assert cues.candidate_pattern().search(context) is None
    assert not cues.any_candidate(context) and cues.candidate_lines(context) == []


# ---- the memory: text only ------------------------------------------------------------------
def test_the_report_line_retracts_instead_of_a_fact_about_the_report():
    memory = fed(*TIM, "2. The report that Tim Cook is employed by Google was an error.")
    assert ask(memory, EMPLOYER, "Tim Cook") == "Apple"
    assert not memory.store.is_subject("The report that Tim Cook")


def test_s_not_x_installs_s_and_contradicts_x():
    memory = fed(*TIM, "Tim Cook is employed by Apple, not Google.")
    assert ask(memory, EMPLOYER, "Tim Cook") == "Apple"
    history = memory.store.history("Tim Cook", "employer")["employer"]
    assert [(v.value, v.status) for v in history] == [
        ("Apple", "superseded"), ("Google", CONTRADICTED), ("Apple", "active")]
    # S already holds: a noop, the head's support grows
    fed("Correction: Tim Cook is employed by Apple, not Google.", memory=memory)
    assert memory.store.head("Tim Cook", "employer").support == 2


def test_lines_without_a_serial_take_the_next_one_and_their_line_as_evidence():
    memory = fed(*TIM, "Update: Tim Cook is employed by Microsoft.")
    head = memory.store.head("Tim Cook", "employer")
    assert (head.value, head.serial, head.line, head.text) == (
        "Microsoft", 2, 4, "Update: Tim Cook is employed by Microsoft.")


def test_retracting_again_walks_back_and_stops_with_a_report_at_an_empty_key():
    memory = fed(*TIM)
    retract = "Correction: Tim Cook is employed by {} was reported in error."
    assert memory.ingest(retract.format("Google") + "\n").corrections[0].operations == \
        ("revoke",)
    assert ask(memory, EMPLOYER, "Tim Cook") == "Apple"
    result = memory.ingest(retract.format("Apple") + "\n" + retract.format("Apple") + "\n")
    assert [a.operations for a in result.corrections] == [("revoke",), ()]
    assert [(r.kind, r.line) for r in result.reports] == [(CORRECTION, 6)]
    assert "is empty" in result.reports[0].reason
    assert ask(memory, EMPLOYER, "Tim Cook") == ""


def test_a_correction_of_a_key_never_stored_is_reported_and_changes_nothing():
    memory = fed(*TIM)
    before = memory.store.ledger.dump()
    result = memory.ingest("The report that Tim Cook is employed by Amazon was an error.\n"
                           "The report that Jane Roe is employed by Amazon was an error.\n")
    assert [r.kind for r in result.reports] == [CORRECTION, CORRECTION]
    assert "never stored" in result.reports[0].reason
    assert "never stored" in result.reports[1].reason
    assert memory.store.ledger.dump() == before


def test_a_correction_looking_line_that_does_not_parse_is_reported_never_a_fact():
    memory = fed(*TIM)
    result = memory.ingest("3. Correction: the weather is nice, not rainy.\n")
    assert result.committed == 0 and [r.kind for r in result.reports] == ["unparsed"]
    assert len(memory.store) == 2


def test_retraction_lines_after_a_factconsolidation_context_reinstate_the_predecessor():
    context = bundled_context("6k")
    store = FactStore(parse_context(context).facts)
    revised = [(s, r) for s, r in store.keys() if len(store.versions(s, r)) > 1
               and relation(r).question.count("[X]") == 1][:5]
    assert revised
    memory = fed(context)
    lines = [f"The report that {relation(r).render(s, store.current(s, r).object)[:-1]} was "
             "an error." for s, r in revised]
    result = fed(*lines, memory=memory)
    for s, r in revised:
        assert memory.store.head(s, r).value == store.versions(s, r)[-2].object
        assert ask(result, relation(r).question, s) == store.versions(s, r)[-2].object


def _objects(rng, n):
    things = ["mug", "apple", "knife", "book", "pencil", "tomato", "vase", "towel", "spoon"]
    return [f"{rng.choice(things)} {i}" for i in rng.sample(range(1, 99), n)]


def _places(rng, n):
    kinds = ["countertop", "cabinet", "drawer", "shelf", "fridge", "sinkbasin", "desk"]
    return [f"{rng.choice(kinds)} {rng.randint(1, 9)}" for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 7, 2024])
@pytest.mark.parametrize("revisions", [1, 2, 4, 8])
def test_revision_chains_with_distractors_give_the_current_location(seed, revisions):
    rng = random.Random(seed)
    target, *others = _objects(rng, 5)
    chains = {obj: _places(rng, revisions + 1) for obj in [target, *others]}
    lines = [f"Earlier observation: {obj} was in {path[0]}." for obj, path in chains.items()]
    for step in range(revisions):
        for obj in rng.sample(list(chains), len(chains)):
            path = chains[obj]
            lines.append(f"Update: {obj} has been moved from {path[step]} to {path[step + 1]}.")
    memory = fed(*lines)
    for obj, path in chains.items():
        assert ask(memory, WHERE, obj) == path[-1]


@pytest.mark.parametrize("seed", [3, 11])
@pytest.mark.parametrize("distractors", [0, 32])
def test_a_retracted_move_rolls_back_after_distractors(seed, distractors):
    rng = random.Random(seed)
    target, *others = _objects(rng, 5)
    v1, v2, *places = _places(rng, 2 + distractors)
    lines = [f"Earlier observation: {target} was in {v1}.",
             f"Update: {target} has been moved from {v1} to {v2}."]
    here = {obj: f"table {i}" for i, obj in enumerate(others)}
    for i in range(distractors):
        obj = rng.choice(others)
        lines.append(f"Update: {obj} has been moved from {here[obj]} to {places[i]}.")
        here[obj] = places[i]
    lines.append(f"Correction: the move of {target} to {v2} was reported in error.")
    memory = fed(*lines)
    assert ask(memory, WHERE, target) == v1
    assert [v.status for v in memory.store.history(target, "location")["location"]][:2] == \
        ["active", REVOKED]


@pytest.mark.parametrize("seed", [5, 9])
def test_a_conflict_is_held_open_until_a_check_settles_it(seed):
    rng = random.Random(seed)
    target, *others = _objects(rng, 9)
    a, b, *rest = _places(rng, 10)
    while b == a:
        b = _places(rng, 1)[0]
    lines = [f"Report: {target} is in {a}.", f"Report: {target} is in {b}."]
    lines += [f"Earlier observation: {obj} was in {rest[i]}." for i, obj in enumerate(others)]
    memory = fed(*lines)
    key = (target.casefold(), "location")
    assert memory.store.ledger.head(key).status == "contested"
    assert [v.value for v in memory.store.ledger.alternatives(key)] == [b]
    settled = rng.choice([a, b])
    fed(f"Check: {target} is in {settled}.", memory=memory)
    assert memory.store.ledger.head(key).status == "active"
    assert ask(memory, WHERE, target) == settled


def test_an_earlier_observation_never_becomes_current_and_a_move_mismatch_is_noted():
    memory = fed("Update: mug 1 has been moved from shelf 1 to desk 2.",
                 "Earlier observation: mug 1 was in shelf 1.")
    assert ask(memory, WHERE, "mug 1") == "desk 2"
    assert "shelf 1" in [v.value for v in memory.store.history("mug 1", "location")["location"]]
    result = memory.ingest("Update: mug 1 has been moved from sofa 1 to bed 1.\n")
    assert result.reports[0].kind == CORRECTION and "'desk 2'" in result.reports[0].reason
    assert ask(memory, WHERE, "mug 1") == "bed 1"


def test_names_and_reverse_hops_see_versions_that_entered_by_an_operation():
    memory = fed("0. Ann Lee is married to Bob Ray.", "1. Ann Lee is married to Cal Fox.")
    store = memory.store
    assert [h.object for h in hops_over(store, "Bob Ray", "married_to") if h.reverse] == []
    fed("Correction: Ann Lee is married to Cal Fox was reported in error.",
        "Update: Dee Moss is married to Eve Hart.", memory=memory)
    # the reinstated fact is a reverse hop again; a name only a correction wrote is known
    assert [h.object for h in hops_over(store, "Bob Ray", "married_to") if h.reverse] == \
        ["Ann Lee"]
    assert [m.names for m in store.mentions("Who is Eve Hart married to?")] == [("Eve Hart",)]
    assert ask(memory, relation("married_to").question, "Dee Moss") == "Eve Hart"


# ---- Memory.apply ----------------------------------------------------------------------------
def test_apply_each_operation_with_the_rules():
    memory = fed(*TIM)
    key = {"subject": "Tim Cook", "relation": "employer"}
    assert memory.apply({"op": "contest", "key": key, "new_value": "Amazon",
                         "evidence": "a rumour"}).head.status == "contested"
    with pytest.raises(ProvenanceError, match="neither the head nor an alternative"):
        memory.apply({"op": "resolve", "key": key, "new_value": "Meta"})
    applied = memory.apply({"op": "resolve", "key": key, "new_value": "Amazon"})
    assert applied.head.value == "Amazon" and applied.head.status == "active"
    with pytest.raises(ProvenanceError, match="is not the head's value"):
        memory.apply({"op": "revoke", "key": key, "old_value": "Google"})
    memory.apply({"op": "revoke", "key": key, "old_value": "Amazon"})
    assert ask(memory, EMPLOYER, "Tim Cook") == "Google"
    applied = memory.apply({"op": "accept", "key": "Tim Cook is employed by Netflix.",
                            "evidence": "the press release"})
    # each operation took the next serial: contest 2, resolve 3, revoke 4
    assert (applied.value, applied.serial, applied.text) == ("Netflix", 5, "the press release")
    assert ask(memory, EMPLOYER, "Tim Cook") == "Netflix"


def test_a_hard_commit_applies_a_broken_patch_as_an_accept():
    memory = fed(*TIM)
    patch = {"op": "resolve", "key": {"subject": "Tim Cook", "relation": "employer"},
             "new_value": "IBM", "hard_commit": True}
    applied = memory.apply(patch)
    assert applied.operations == ("accept",) and "not contested" in applied.note
    assert ask(memory, EMPLOYER, "Tim Cook") == "IBM"


@pytest.mark.parametrize("patch, field", [
    ({"op": "delete", "key": "Tim Cook is employed by Apple."}, "'op'"),
    ({"op": "accept"}, "'key'"),
    ({"op": "accept", "key": {"subject": "Tim Cook"}, "new_value": "x"}, "'key.relation'"),
    ({"op": "accept", "key": {"subject": "Tim Cook", "relation": "boss"}, "new_value": "x"},
     "'key.relation'"),
    ({"op": "accept", "key": "Tim Cook likes tea."}, "'key'"),
    ({"op": "accept", "key": "Tim Cook is employed by Apple.", "hard_commit": "yes"},
     "'hard_commit'"),
    ({"op": "accept", "key": "Tim Cook is employed by Apple.", "colour": 1}, "'colour'"),
    ({"op": "contest", "key": {"subject": "Tim Cook", "relation": "employer"}},
     "'new_value'"),
    (["accept"], "JSON object"),
])
def test_a_patch_of_the_wrong_shape_is_refused_naming_the_field(patch, field):
    memory = fed(*TIM)
    before = memory.store.ledger.dump()
    with pytest.raises(InputError, match=field):
        memory.apply(patch)
    assert memory.store.ledger.dump() == before


def test_corrections_and_patches_last_in_the_memory_file(tmp_path):
    path = tmp_path / "m.db"
    with Memory.open(path) as memory:
        fed(*TIM, "Report: Tim Cook is employed by Amazon.", "Update: cup 1 is in sink 2.",
            memory=memory)
        memory.apply({"op": "resolve", "key": "Tim Cook is employed by Amazon."})
        fed("Correction: Tim Cook is employed by Amazon was reported in error.",
            memory=memory)
        dump = memory.store.ledger.dump()
        answers = [ask(memory, EMPLOYER, "Tim Cook"), ask(memory, WHERE, "cup 1")]
        ops = [e.operation.op for e in memory.log()]
    with Memory.open(path, readonly=True) as again:
        assert again.store.ledger.dump() == dump
        assert [ask(again, EMPLOYER, "Tim Cook"), ask(again, WHERE, "cup 1")] == answers == \
            ["Google", "sink 2"]
        assert [e.operation.op for e in again.log()] == ops
        assert ops[-3:] == ["accept", "resolve", "revoke"] and ops.count("contest") == 1


# ---- the ledger ------------------------------------------------------------------------------
def test_revoking_an_older_version_or_an_alternative_keeps_the_head_and_replays():
    ledger = Ledger()
    key = ("k", "r")
    for i, value in enumerate(["a", "b", "c"]):
        ledger.accept(key, value, Evidence(i, i + 1, value))
    ledger.revoke(key, Evidence(3, 4, "x"), "b")
    assert ledger.head(key).value == "c"
    assert [v.value for v in ledger.lineage(key)] == ["c", "a"]
    ledger.contest(key, "d", Evidence(4, 5, "d"))
    ledger.revoke(key, Evidence(5, 6, "y"), "d")
    assert ledger.head(key).status == "active" and not ledger.alternatives(key)
    ledger.revoke(key, Evidence(6, 7, "z"))
    assert ledger.head(key).value == "a"              # "b" stays retracted
    assert Ledger.replay(ledger.operations()).dump() == ledger.dump()
    with pytest.raises(ProvenanceError, match="no version the key holds has it"):
        ledger.revoke(key, Evidence(7, 8, "w"), "zzz")


# ---- parse and run ---------------------------------------------------------------------------
def test_parse_counts_corrections_and_the_run_store_applies_them(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_text("\n".join(TIM) + "\n2. The report that Tim Cook is employed by Google was an "
                    "error.\nCorrection: Tim Cook is employed by Amazon was reported in error."
                    "\nReport: nonsense.\n")
    for _ in range(2):                          # the second load reads the parse cache
        dataset, _ = load([path])
        haystack = next(iter(dataset.haystacks.values()))
        assert len(haystack.parse.facts) == 2 and len(haystack.parse.corrections) == 2
        assert [u.line for u in haystack.parse.unparsed] == [6]
        assert haystack.store.head("Tim Cook", "employer").value == "Apple"
    memory = fed(path.read_text())
    assert memory.store.ledger.dump() == haystack.store.ledger.dump()


def test_patch_reading_gives_new_value_from_a_key_sentence():
    patch = read_patch({"op": "accept", "key": "Where is it? mug 2 is in box 1."})
    assert (patch.subject, patch.relation, patch.new_value) == ("Where is it? mug 2", "location",
                                                                 "box 1")


# ---- the command line ------------------------------------------------------------------------
def test_cli_memory_apply_applies_patches_and_names_a_bad_line(tmp_path):
    from click.testing import CliRunner

    from oracle.cli import main
    db, patches = tmp_path / "m.db", tmp_path / "p.jsonl"
    context = tmp_path / "c.txt"
    context.write_text("\n".join(TIM) + "\nThe report that Tim Cook is employed by Google was an "
                       "error.\n")
    runner = CliRunner()
    made = runner.invoke(main, ["memory", "ingest", str(db), str(context)])
    assert made.exit_code == 0 and "correction lines applied: 1" in made.output
    patches.write_text('{"op": "contest", "key": "Tim Cook is employed by IBM.", '
                       '"evidence": "a rumour"}\n\n{"op": "resolve", "key": {"subject": '
                       '"Tim Cook", "relation": "employer"}, "new_value": "IBM"}\n')
    done = runner.invoke(main, ["memory", "apply", str(db), str(patches)])
    assert done.exit_code == 0, done.output
    assert "2 patch(es) applied" in done.output and "now IBM (active)" in done.output
    with Memory.open(db, readonly=True) as memory:
        assert ask(memory, EMPLOYER, "Tim Cook") == "IBM"
    patches.write_text('{"op": "noop", "key": "Tim Cook is employed by IBM."}\n'
                       '{"op": "accept", "key": {"subject": "Tim Cook", "relation": 3}}\n')
    bad = runner.invoke(main, ["memory", "apply", str(db), str(patches)])
    assert bad.exit_code == 1 and f"{patches}:2" in bad.output and "'key.relation'" in \
        bad.output and "Traceback" not in bad.output
    patches.write_text('{"op": "resolve", "key": "Tim Cook is employed by Apple."}\n')
    refused = runner.invoke(main, ["memory", "apply", str(db), str(patches)])
    assert refused.exit_code == 1 and f"{patches}:1" in refused.output
    assert "not contested" in refused.output


# ---- the server ------------------------------------------------------------------------------
def test_post_operations_on_a_named_memory_with_the_openai_client(tmp_path):
    from openai import BadRequestError, OpenAI, UnprocessableEntityError

    from resolver.serve.app import serving
    from resolver.serve.config import ServeConfig
    with serving(ServeConfig(port=0, store=str(tmp_path))) as url:
        api = OpenAI(base_url=f"{url}/memories/agent-1", api_key="sk-anything")
        say = [{"role": "user", "content": "\n".join(TIM) + "\n"}]
        api.chat.completions.create(model="m", messages=say)
        done = api.post("/operations", cast_to=object, body=[
            {"op": "contest", "key": "Tim Cook is employed by IBM.", "evidence": "a rumour"},
            {"op": "resolve", "key": {"subject": "Tim Cook", "relation": "employer"},
             "new_value": "IBM"}])
        assert [d["operations"] for d in done["data"]] == [["contest"], ["resolve"]]
        assert done["data"][1]["head"]["value"] == "IBM"
        reply = api.chat.completions.create(
            model="m", messages=[{"role": "user", "content": EMPLOYER.replace("[X]",
                                                                              "Tim Cook")}])
        assert reply.choices[0].message.content == "IBM"
        with pytest.raises(BadRequestError) as bad:
            api.post("/operations", cast_to=object,
                     body={"op": "accept", "key": {"subject": "Tim Cook", "relation": "x"}})
        assert bad.value.body["param"] == "key.relation"
        with pytest.raises(UnprocessableEntityError, match="neither the head nor an altern"):
            api.post("/operations", cast_to=object, body=[
                {"op": "contest", "key": "Tim Cook is employed by Apple."},
                {"op": "resolve", "key": "Tim Cook is employed by Meta."}])
    with Memory.open(tmp_path / "agent-1.db", readonly=True) as memory:
        assert [e.operation.op for e in memory.log()][-3:] == ["contest", "resolve", "contest"]


def test_a_value_holding_not_is_written_whole_after_a_cue():
    memory = fed("Update: Tim Cook is employed by Apple, not Google.")
    assert ask(memory, EMPLOYER, "Tim Cook") == "Apple, not Google"


def test_factres_run_over_a_context_holding_corrections_answers_as_a_memory_fed_it(tmp_path):
    import json

    from click.testing import CliRunner

    from oracle.cli import main
    from resolver.results.result_schema import PREDICTIONS_FILE, loads_lines
    context = "\n".join(TIM) + ("\nThe report that Tim Cook is employed by Google was an error."
                                "\nReport: cup 2 is in sink 1.\nReport: cup 2 is in desk 3.\n")
    questions = [EMPLOYER.replace("[X]", "Tim Cook"), WHERE.replace("[X]", "cup 2")]
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"context": context, "questions": questions,
                                 "answers": [["Apple"], ["sink 1"]]}]))
    result = CliRunner().invoke(main, ["run", "--data", str(rows), "--results-dir",
                                       str(tmp_path / "r"), "--run-id", "c", "--no-progress"])
    assert result.exit_code == 0, result.output
    predictions = loads_lines((tmp_path / "r" / "c" / PREDICTIONS_FILE).read_bytes())
    memory = fed(context)
    assert [p["prediction"] for p in predictions] == [memory.query(q).text for q in questions]
    assert [p["prediction"] for p in predictions] == ["Apple", "sink 1"]


def test_a_correction_with_a_serial_out_of_order_is_no_fact_in_parse_or_memory(tmp_path):
    path = tmp_path / "ctx.txt"
    text = "\n".join(TIM) + "\n0. Correction: Tim Cook is employed by Google was reported in " \
        "error.\n2. Tim Cook is employed by IBM.\n"
    path.write_text(text)
    dataset, _ = load([path])
    haystack = next(iter(dataset.haystacks.values()))
    assert [f.serial for f in haystack.parse.facts] == [0, 1, 2]
    assert haystack.store.head("Tim Cook", "employer").value == "IBM"
    memory = fed(text)
    assert memory.store.ledger.dump() == haystack.store.ledger.dump()
