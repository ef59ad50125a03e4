"""A run's model lanes against a dead, hung or silent host (the loopback server): the run stops
before the first question, or after a few calls in a row, whatever the number of questions,
and records nothing; a lane whose every call failed records nothing either."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from ollama_server import MODEL, OllamaServer, Reply, Slow, Status, refused_url

from resolver.cli import main

SPEC = f"ollama:{MODEL}"
SMALL = Path(__file__).parent / "data" / "runs_small.json"


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr("resolver.models.ollama_client.RETRY_BACKOFF", 0.0)


def run(tmp_path, *args):
    results = tmp_path / "results"
    result = CliRunner().invoke(main, ["run", "--results-dir", str(results), "--no-progress",
                                       *args], catch_exceptions=False)
    return result, results


def assert_nothing_recorded(results: Path) -> None:
    assert not results.exists() or list(results.iterdir()) == []


@pytest.mark.parametrize("lane", ["--reader", "--repair"])
def test_a_refused_host_fails_before_the_first_question(tmp_path, lane):
    result, results = run(tmp_path, lane, SPEC, "--host", refused_url(), "--timeout", "0.2")
    assert result.exit_code == 1
    assert result.output.startswith("Error: cannot connect to the Ollama host http://127.0.0.1:")
    assert_nothing_recorded(results)


def test_a_hung_host_fails_at_the_host_check_within_the_timeout(tmp_path):
    # 200 questions: none is sent, the host check (GET /api/tags) times out first
    with OllamaServer(lambda r: {"answer": "x"}, tags=Slow(30)) as server:
        result, results = run(tmp_path, "--reader", SPEC, "--host", server.url,
                              "--timeout", "0.2")
    assert result.exit_code == 1
    assert result.output == (f"Error: Ollama host {server.url} did not answer within 0.2s "
                             "(GET /api/tags); is it running?\n")
    assert server.chat_requests() == []
    assert_nothing_recorded(results)


def test_a_missing_model_fails_before_the_first_question(tmp_path):
    with OllamaServer(lambda r: {"answer": "x"}) as server:
        result, results = run(tmp_path, "--data", str(SMALL), "--reader", "ollama:absent",
                              "--host", server.url)
    assert result.exit_code == 1
    assert result.output == (f"Error: model 'absent' is not on {server.url} (it has 1 "
                             "model(s)); try `ollama pull absent`\n")
    assert server.chat_requests() == []


def test_a_host_that_stops_answering_stops_the_run_after_three_calls(tmp_path):
    # the bundled 200 questions: the reader stops after 3 timeouts in a row, not 200
    with OllamaServer(lambda r: Slow(30, Reply("{}"))) as server:
        result, results = run(tmp_path, "--reader", SPEC, "--host", server.url,
                              "--timeout", "0.2")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: Ollama host {server.url} stopped answering: 3 "
                                    "calls in a row failed (last: timeout: no reply from")
    assert len(server.chat_requests()) == 3
    assert_nothing_recorded(results)


def test_a_host_that_answers_every_call_with_500_stops_after_three_calls(tmp_path):
    # the bundled 200 questions: each call is retried twice, then counted; three in a row stop
    with OllamaServer(lambda r: Status(500)) as server:
        result, results = run(tmp_path, "--reader", SPEC, "--host", server.url,
                              "--timeout", "0.2")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: Ollama host {server.url} stopped answering: 3 "
                                    "calls in a row failed (last: http error: 500")
    assert len(server.chat_requests()) == 3 * 3
    assert_nothing_recorded(results)


def test_a_reader_whose_every_call_fails_records_no_run(tmp_path):
    with OllamaServer(lambda r: Reply("not json")) as server:
        result, results = run(tmp_path, "--data", str(SMALL), "--reader", SPEC,
                              "--host", server.url)
    assert result.exit_code == 1
    assert result.output == ("Error: every reader call failed (7 of 7; first: invalid json: "
                             "reply is not JSON: 'not json'); the run was not recorded\n")
    assert_nothing_recorded(results)


def test_a_repairer_whose_every_call_fails_records_no_run(tmp_path):
    rows = orjson.loads(SMALL.read_bytes())
    rows[0]["questions"].append("Who is the head coach of Zanzibar Dynamo?")   # suspicious
    rows[0]["answers"].append(["Jane Austen"])
    rows[0]["metadata"]["qa_pair_ids"].append("sh6_extra")
    data = tmp_path / "rows.json"
    data.write_bytes(orjson.dumps(rows))
    with OllamaServer(lambda r: Reply("not json")) as server:
        result, results = run(tmp_path, "--data", str(data), "--repair", SPEC,
                              "--host", server.url)
    assert result.exit_code == 1
    assert result.output.startswith("Error: every repair call failed (")
    assert result.output.endswith("first: invalid json: reply is not JSON: 'not json'); the "
                                  "run was not recorded\n")
    assert_nothing_recorded(results)


def test_a_live_reader_records_its_run(tmp_path):
    with OllamaServer(lambda r: {"answer": "France"}) as server:
        result, results = run(tmp_path, "--data", str(SMALL), "--reader", SPEC,
                              "--host", server.url, "--run-id", "read")
    assert result.exit_code == 0, result.output
    assert (results / "read" / "metrics.json").is_file()
    assert len(server.chat_requests()) == 7
