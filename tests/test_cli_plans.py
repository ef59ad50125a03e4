"""`factres plans ...` end to end, with a loopback Ollama server for the model planner, and the
archived sets it writes fed back to the resolver."""
from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner
from ollama_server import MODEL, OllamaServer, question_of, refused_url, write_small_data

from resolver.cli import main
from resolver.haystack import load, sha256_bytes
from resolver.plan.archive import load_plan_set
from resolver.plan.compile_lexicon import compile_question as lexicon
from resolver.plan.planning import live_plan_sets
from resolver.search.resolve import resolve_dataset

SPEC = f"ollama:{MODEL}"


@pytest.fixture(autouse=True)
def plans_dir(tmp_path, monkeypatch):
    root = tmp_path / "plans"
    monkeypatch.setenv("FACTRES_PLANS", str(root))
    monkeypatch.setattr("resolver.models.ollama_client.RETRY_BACKOFF", 0.0)
    return root


@pytest.fixture
def data(tmp_path):
    return str(write_small_data(tmp_path / "small.json", per_source=4))


def invoke(*args, code=0):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def lexicon_server(data):
    dataset, _ = load([data])
    store = next(iter(dataset.haystacks.values())).store

    def respond(request):
        plan = lexicon(question_of(request), store).plans[0]
        return {"entity": plan.entity, "chain": list(plan.chain)}
    return OllamaServer(respond)


def test_compile_lexicon_and_rules(plans_dir, data):
    assert invoke("plans", "compile", "--planner", "lexicon", "--set-id", "lex",
                  "--data", data) == (f"wrote {plans_dir / 'lex'}: 8 questions, 8 with plans "
                                      "(planner lexicon, level relation)\n")
    out = invoke("plans", "compile", "--planner", "rules", "--set-id", "rules", "--data", data)
    assert out == (f"wrote {plans_dir / 'rules'}: 8 questions, 4 with plans "
                   "(planner rules, level relation)\n")
    assert invoke("plans", "verify") == "ok lex\nok rules\n"


def test_compile_with_the_model_writes_a_complete_verifiable_set(plans_dir, data):
    with lexicon_server(data) as server:
        out = invoke("plans", "compile", "--planner", SPEC, "--set-id", "m1", "--data", data,
                     "--host", server.url, "--timeout", "5")
    assert out == (f"wrote {plans_dir / 'm1'}: 8 questions, 8 with plans (planner {SPEC}, "
                   "level relation)\nmodel calls ok: 8; fallbacks to lexicon: 0 (none)\n")
    assert invoke("plans", "verify", "m1") == "ok m1\n"
    manifest = orjson.loads((plans_dir / "m1" / "manifest.json").read_bytes())
    assert manifest["planner"] == SPEC and manifest["all_failed"] is False
    assert manifest["count"] == 8 and manifest["host"] == server.url
    assert len((plans_dir / "m1" / "plans.jsonl").read_bytes().splitlines()) == 8


def test_model_set_resolves_like_the_lexicon_when_it_returns_the_lexicon_plans(data):
    with lexicon_server(data) as server:
        invoke("plans", "compile", "--planner", SPEC, "--set-id", "same", "--data", data,
               "--host", server.url)
    dataset, _ = load([data])
    archived = resolve_dataset(dataset, [load_plan_set("same")])
    live = resolve_dataset(dataset, live_plan_sets(dataset, ("lexicon",)))
    assert [p.answer for p in archived] == [p.answer for p in live]
    assert all(p.answer for p in archived)
    assert {c.plan.compiler for p in archived for c in p.candidates} >= {SPEC}


def test_model_set_resolves_differently_when_it_returns_other_valid_plans(data):
    # a valid plan, but not the question's: every question gets the same one-hop plan
    with OllamaServer(lambda r: {"entity": "Irving Fryar", "chain": ["position"]}) as server:
        out = invoke("plans", "compile", "--planner", SPEC, "--set-id", "other", "--data", data,
                     "--host", server.url)
    assert "fallbacks to lexicon: 0 (none)" in out
    dataset, _ = load([data])
    # plain execution: the scored search also enumerates paths from the question itself and
    # may outvote a wrong plan, so plan execution is where the plans alone decide
    archived = resolve_dataset(dataset, [load_plan_set("other")], mode="plain")
    live = resolve_dataset(dataset, live_plan_sets(dataset, ("lexicon",)), mode="plain")
    store = next(iter(dataset.haystacks.values())).store
    fryar = store.current("Irving Fryar", "position").object
    assert [p.answer for p in archived] == [fryar] * 8
    assert all(a.answer != b.answer for a, b in zip(archived, live))


def test_all_calls_failing_archives_nothing(plans_dir, data):
    with OllamaServer(lambda r: "not json") as server:
        result = CliRunner().invoke(main, ["plans", "compile", "--planner", SPEC, "--set-id",
                                           "dead", "--data", data, "--host", server.url])
    assert result.exit_code == 1
    assert result.output == (
        "Error: EVERY MODEL CALL FAILED (8 of 8): nothing archived, since the set would hold "
        f"only lexicon fallback plans under {SPEC}'s name. First failure: invalid json: reply "
        "is not JSON: 'not json'\n")
    assert not (plans_dir / "dead").exists()
    assert invoke("plans", "list") == f"no plan sets in {plans_dir}\n"


def test_a_dead_host_fails_before_the_first_question(plans_dir, data):
    result = CliRunner().invoke(main, ["plans", "compile", "--planner", SPEC, "--set-id", "dead",
                                       "--data", data, "--host", refused_url(),
                                       "--timeout", "2"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot connect to the Ollama host http://127.0.0.1:")
    assert result.output.endswith("; start it (`ollama serve`) or pass --host\n")
    assert not (plans_dir / "dead").exists()


def test_a_legacy_all_failed_set_fails_verification_and_run_refuses_it(plans_dir, data,
                                                                        tmp_path):
    # written as an older factres archived sets whose every model call failed
    from resolver.plan import archive
    from resolver.plan.plans import PlanSet
    lexicon_set = load_plan_set_after_compile(data)
    manifest = dict(lexicon_set.manifest, planner=SPEC, all_failed=True, set_id="old")
    manifest.pop("plans_sha256")
    legacy = PlanSet("old", {}, lexicon_set.plans, lexicon_set.question_sha256)
    folder = archive.write_plan_set(legacy)
    body = orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"
    (folder / "manifest.json").write_bytes(body)
    (folder / "SHA256SUMS").write_text(
        "".join(f"{sha256_bytes((folder / n).read_bytes())}  {n}\n" for n in archive.SUMMED))
    problem = (f"{folder / 'manifest.json'}: all_failed: every model call failed, so the set "
               "holds only lexicon fallback plans; compile it again")
    assert invoke("plans", "verify", "old", code=1).splitlines()[0] == f"FAILED old: {problem}"
    out = invoke("run", "--plans", "old", "--data", data, "--results-dir",
                 str(tmp_path / "results"), code=1)
    assert out == f"Error: plan set 'old' failed verification: {problem}\n"
    assert not (tmp_path / "results").exists()


def load_plan_set_after_compile(data):
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "lex", "--data", data)
    return load_plan_set("lex")


def test_compile_refuses_an_archive_it_cannot_write_before_any_model_call(tmp_path, data,
                                                                          monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("FACTRES_PLANS", str(blocker / "plans"))
    with OllamaServer() as server:
        out = invoke("plans", "compile", "--planner", SPEC, "--set-id", "m", "--data", data,
                     "--host", server.url, code=1)
    assert out.startswith(f"Error: cannot write plan sets in {blocker / 'plans'}: ")
    assert server.requests == []


def test_existing_set_id_is_refused_before_any_model_call(plans_dir, data):
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "lex", "--data", data)
    with OllamaServer() as server:
        out = invoke("plans", "compile", "--planner", SPEC, "--set-id", "lex", "--data", data,
                     "--host", server.url, code=1)
    assert out == (f"Error: plan set 'lex' already exists at {plans_dir / 'lex'}; plan sets "
                   "are immutable, choose another --set-id\n")
    assert server.requests == []


def test_bad_set_id_and_bad_planner(data):
    assert invoke("plans", "compile", "--planner", "lexicon", "--set-id", "Bad Id", code=1) == (
        "Error: bad plan set id 'Bad Id': use lower-case letters, digits, '.', '_' and '-', "
        "starting with a letter or digit\n")
    assert invoke("plans", "compile", "--planner", "gpt4", "--set-id", "x", "--data", data,
                  code=1) == ("Error: unknown model spec 'gpt4' (expected ollama:MODEL, "
                              "e.g. ollama:qwen2.5:7b-instruct)\n")


def test_derive_list_and_show(plans_dir, data):
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "lex", "--data", data)
    out = invoke("plans", "derive", "lex", "--order", "all", "--set-id", "lex-orders")
    derived = load_plan_set("lex-orders")
    total = sum(len(c.plans) for c in derived.plans.values())
    assert out == (f"wrote {plans_dir / 'lex-orders'}: 8 questions, {total} plans "
                   "(every order of lex)\n")
    assert total > sum(len(c.plans) for c in load_plan_set("lex").plans.values())
    assert invoke("plans", "list").splitlines() == [
        "set         planner                 level     temp  questions  fallbacks  status",
        "lex         lexicon                 relation  -     8          0          ok",
        "lex-orders  derived:order(lexicon)  relation  -     8          0          ok"]
    listed = orjson.loads(invoke("plans", "list", "--json"))
    assert [s["set_id"] for s in listed] == ["lex", "lex-orders"]
    qid = "factconsolidation_sh_6k_no3"
    plan = load_plan_set("lex").plans[qid].plans[0]
    assert invoke("plans", "show", "lex", "--qid", qid).splitlines()[0] == (
        f"{qid}: {plan.describe()}  (lexicon)")
    assert invoke("plans", "show", "lex", "--qid", "nope", code=1) == (
        "Error: no question 'nope' in plan set 'lex'\n")


def test_list_with_no_sets(plans_dir):
    assert invoke("plans", "list") == f"no plan sets in {plans_dir}\n"


def test_fallback_notes_show_up(data):
    good = lexicon_server(data).respond
    asked = []

    def respond(request):       # the first question's reply is not JSON, the others are good
        asked.append(1)
        return "not json" if len(asked) == 1 else good(request)
    with OllamaServer(respond) as server:
        out = invoke("plans", "compile", "--planner", SPEC, "--set-id", "fb", "--data", data,
                     "--host", server.url)
    assert out.endswith("model calls ok: 7; fallbacks to lexicon: 1 (invalid json 1)\n")
    line = invoke("plans", "show", "fb", "--qid", "factconsolidation_mh_6k_no0")
    assert line.endswith("(lexicon)  [fallback: invalid json: reply is not JSON: "
                         "'not json']\n")


@pytest.mark.parametrize("damage, problem", [
    (lambda d: (d / "plans.jsonl").write_bytes((d / "plans.jsonl").read_bytes()[:-40] + b"\n"),
     "plans.jsonl: sha256 mismatch"),
    (lambda d: (d / "plans.jsonl").unlink(), "plans.jsonl: missing"),
    (lambda d: (d / "manifest.json").write_text(
        (d / "manifest.json").read_text().replace('"lexicon"', '"rules"')),
     "manifest.json: sha256 mismatch"),
])
def test_damaged_set_fails_verify_and_run_refuses_it(plans_dir, data, tmp_path, damage, problem):
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "good", "--data", data)
    invoke("plans", "compile", "--planner", "lexicon", "--set-id", "hurt", "--data", data)
    damage(plans_dir / "hurt")
    out = invoke("plans", "verify", code=1)
    assert out.splitlines()[0] == "ok good"
    assert out.splitlines()[1].startswith(f"FAILED hurt: {plans_dir / 'hurt' / problem}")
    assert out.splitlines()[-1] == "Error: 1 of 2 plan set(s) failed verification"
    assert invoke("plans", "verify", "good") == "ok good\n"
    out = invoke("plans", "show", "hurt", code=1)
    assert out.startswith(f"Error: plan set 'hurt' failed verification: "
                          f"{plans_dir / 'hurt' / problem}")
    out = invoke("run", "--plans", "hurt", "--data", data, "--results-dir",
                 str(tmp_path / "results"), code=1)
    assert f"{plans_dir / 'hurt' / problem}" in out


def test_every_plans_command_has_help_ending_in_an_example():
    for command in ("compile", "derive", "list", "verify", "show"):
        out = invoke("plans", command, "-h")
        assert f"Example: factres plans {command}" in out.replace("\n  ", " ")
    assert "Example: factres plans list" in invoke("plans", "-h")


def test_a_closed_pipe_ends_plans_show_quietly(monkeypatch):
    """`factres plans show SET | head`: the reader goes away; no "Error: Broken pipe", no
    traceback, just the exit."""
    import subprocess
    import sys
    monkeypatch.delenv("FACTRES_PLANS")       # the committed sets
    proc = subprocess.Popen([sys.executable, "-c", "from oracle.cli import main; main()",
                             "plans", "show", "lexicon-6k"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()                   # as head does after its lines
    stderr = proc.stderr.read()
    proc.wait(timeout=60)
    assert first.startswith(b"factconsolidation_mh_6k_no0: ")
    assert stderr == b""
    assert proc.returncode == 1           # click's exit for a broken pipe, silenced
