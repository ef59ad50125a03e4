"""`factres history` and `factres frontier`: exact output on a small fixture, --json, errors."""
from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from resolver.cli import main

TEXT = """Here is a list of facts:
0. Paris is located in the country of France.
1. The capital of France is Paris.
2. Anne  Hidalgo is a citizen of France.
3. paris is located in the country of Italy.
4. The capital of France is Lyon.
5. PARIS is located in the country of Spain.
"""


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "ctx.txt"
    path.write_text(TEXT, encoding="utf-8")
    return str(path)


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_history_of_one_key(data):
    result = invoke("history", "PARIS", "--relation", "located_in_country", "--data", data)
    assert result.exit_code == 0
    assert result.output == """\
Paris / located_in_country: 3 version(s), head: Spain (active)
  serial  line  status      value   evidence
  0       2     superseded  France  0. Paris is located in the country of France.
  3       5     superseded  Italy   3. paris is located in the country of Italy.
  5       7     active      Spain   5. PARIS is located in the country of Spain.
"""


def test_history_of_every_relation_of_an_entity(data):
    result = invoke("history", "anne hidalgo", "--data", data)
    assert result.exit_code == 0
    assert result.output == """\
Anne  Hidalgo / citizenship: 1 version(s), head: France (active)
  serial  line  status  value   evidence
  2       4     active  France  2. Anne  Hidalgo is a citizen of France.
"""
    both = invoke("history", "France", "--data", data)
    assert both.output.startswith("France / capital: 2 version(s), head: Lyon (active)\n")


def test_history_json_has_versions_and_edges(data):
    result = invoke("history", "france", "--json", "--data", data)
    assert result.exit_code == 0
    assert orjson.loads(result.output) == {"entity": "France", "keys": [{
        "subject": "France", "relation": "capital",
        "versions": [
            {"id": 1, "key": ["france", "capital"], "value": "Paris", "status": "superseded",
             "serial": 1, "line": 3, "text": "1. The capital of France is Paris.",
             "support": 1},
            {"id": 4, "key": ["france", "capital"], "value": "Lyon", "status": "active",
             "serial": 4, "line": 6, "text": "4. The capital of France is Lyon.",
             "support": 1}],
        "edges": [{"kind": "supersedes", "src": 4, "dst": 1}]}]}


@pytest.mark.parametrize("args, message", [
    (["Pariss"], "no entity 'Pariss' in the store (did you mean: Paris?)"),
    (["Spain"], "'Spain' is never the subject of a fact (it appears only as an object)"),
    (["Paris", "--relation", "capitol"], "unknown relation 'capitol' (did you mean: capital?)"),
    (["Paris", "--relation", "capital"],
     "'Paris' has no capital facts (its relations: located_in_country)"),
])
def test_history_errors_name_what_is_unknown(data, args, message):
    result = invoke("history", *args, "--data", data)
    assert result.exit_code == 1
    assert result.output == f"Error: {message}\n"


def test_frontier(data):
    result = invoke("frontier", "--data", data)
    assert result.exit_code == 0
    assert result.output == (
        "subject\trelation\tvalue\tstatus\tserial\tline\n"
        "Anne  Hidalgo\tcitizenship\tFrance\tactive\t2\t4\n"
        "France\tcapital\tLyon\tactive\t4\t6\n"
        "Paris\tlocated_in_country\tSpain\tactive\t5\t7\n")
    only = invoke("frontier", "--relation", "capital", "--data", data)
    assert only.output == ("subject\trelation\tvalue\tstatus\tserial\tline\n"
                           "France\tcapital\tLyon\tactive\t4\t6\n")


def test_frontier_json(data):
    result = invoke("frontier", "--json", "--relation", "capital", "--data", data)
    assert result.exit_code == 0
    assert orjson.loads(result.output) == [
        {"subject": "France", "relation": "capital", "value": "Lyon", "status": "active",
         "serial": 4, "line": 6, "text": "4. The capital of France is Lyon.", "support": 1,
         "alternatives": []}]


def test_frontier_of_an_unknown_relation_is_an_error(data):
    result = invoke("frontier", "--relation", "capitol", "--data", data)
    assert result.exit_code == 1
    assert result.output == "Error: unknown relation 'capitol' (did you mean: capital?)\n"


def test_default_data_is_the_bundled_6k_rows():
    result = invoke("history", "australia", "--relation", "capital")
    assert result.exit_code == 0
    assert result.output == """\
Australia / capital: 2 version(s), head: Oderzo (active)
  serial  line  status      value     evidence
  284     286   superseded  Canberra  284. The capital of Australia is Canberra.
  388     390   active      Oderzo    388. The capital of Australia is Oderzo.
"""
    frontier = invoke("frontier").output.splitlines()
    assert len(frontier) == 1 + 294 and "Australia\tcapital\tOderzo\tactive\t388\t390" in frontier


def test_a_file_with_several_contexts_is_an_error(tmp_path):
    rows = [{"context": TEXT, "questions": [], "answers": []},
            {"context": TEXT + "6. The capital of Italy is Rome.\n", "questions": [],
             "answers": []}]
    path = tmp_path / "rows.json"
    path.write_bytes(orjson.dumps(rows))
    result = invoke("frontier", "--data", str(path))
    assert result.exit_code == 1
    assert result.output == (f"Error: {path}: 2 distinct contexts; history and frontier read "
                             "one (expected a file whose rows share one context)\n")


@pytest.mark.parametrize("command", ["history", "frontier"])
def test_help_ends_with_an_example(command):
    for flag in ("-h", "--help"):
        result = invoke(command, flag)
        assert result.exit_code == 0
        assert "Example: factres " + command in result.output
