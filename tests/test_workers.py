"""A run's worker processes (resolver.run.workers, `factres run --jobs`): the run's files are
byte-identical whatever the number of workers; an error in a worker is raised as itself; the
number of workers is checked and chosen as documented."""
from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from resolver.errors import InputError, WorkerError
from resolver.haystack import bundled_path
from resolver.run import runs, workers
from resolver.run.config import RunConfig
from resolver.run.runs import execute

SMALL = Path(__file__).parent / "data" / "runs_small.json"
# what a run's answers are in: everything but meta.json (times, the run id), the tables and
# metrics.json's run id
SAME = ("predictions.jsonl", "traces.jsonl", "readout.jsonl")

needs_fork = pytest.mark.skipif(not workers.can_fork(), reason="workers are forked on Linux only")


@needs_fork
@pytest.mark.parametrize("mode", ["search", "plain"])
def test_run_files_are_the_same_whatever_the_workers(tmp_path, mode):
    """The bundled dev rows (200 questions) in one process and in 2 and 3 workers."""
    config = RunConfig(mode=mode)
    alone = execute(config, results=tmp_path, run_id="one", jobs=1)
    for jobs in (2, 3):
        spread = execute(config, results=tmp_path, run_id=f"j{jobs}", jobs=jobs)
        for name in SAME:
            assert (spread.path / name).read_bytes() == (alone.path / name).read_bytes(), name
        mine, theirs = (orjson.loads((run.path / "metrics.json").read_bytes())
                        for run in (spread, alone))
        assert {**mine, "run_id": None} == {**theirs, "run_id": None}
        assert spread.meta["plan_sets"] == alone.meta["plan_sets"]
        assert spread.meta["config_sha256"] == alone.meta["config_sha256"]


@needs_fork
def test_an_error_in_a_worker_is_raised_as_itself(tmp_path, monkeypatch):
    def broken(question, store, compiled, mode="search"):
        if question.qid.endswith("7"):
            raise InputError("no answer for this one", path="q.json", line=7)
        return real(question, store, compiled, mode)

    real = runs.resolve_compiled
    monkeypatch.setattr(runs, "resolve_compiled", broken)     # the forked workers inherit it
    with pytest.raises(InputError) as caught:
        execute(RunConfig(), results=tmp_path, run_id="broken", jobs=2)
    assert caught.value.path == "q.json" and caught.value.line == 7
    assert "no answer for this one" in str(caught.value)
    assert not any(tmp_path.iterdir())                   # no run folder, not even a claim


@needs_fork
def test_an_error_that_cannot_be_pickled_comes_back_as_its_text():
    class Odd(Exception):
        def __reduce__(self):
            raise TypeError("not picklable")

    def work(i):
        if i == 60:
            raise Odd("question 60 went wrong")
        return i

    with pytest.raises(RuntimeError, match="question 60 went wrong"):
        workers.spread(work, 100, 2)


@needs_fork
def test_a_worker_that_dies_is_an_error_not_a_hang():
    def work(i):
        if i == 70:
            os._exit(3)            # as if killed: no result, no error sent back
        return i

    with pytest.raises(WorkerError, match="ended without its results"):
        workers.spread(work, 100, 2)


@needs_fork
def test_a_worker_ignores_ctrl_c_its_parent_handles():
    import signal

    def handler(i):
        return signal.getsignal(signal.SIGINT) is signal.SIG_IGN

    assert all(workers.spread(handler, 100, 2))
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN


def test_spread_keeps_the_order_and_calls_meanwhile():
    for jobs in ([1, 2, 3] if workers.can_fork() else [1]):
        advanced, done = [], []
        out = workers.spread(lambda i: i * i, 101, jobs, advance=advanced.append,
                             meanwhile=lambda: done.append(os.getpid()))
        assert out == [i * i for i in range(101)]
        assert sum(advanced) == 101                      # every result counted, once
        assert done == [os.getpid()]                     # in this process, once


@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", True, ""])
def test_jobs_is_checked(bad):
    with pytest.raises(InputError, match="auto or a whole number"):
        workers.check_jobs(bad)
    with pytest.raises(InputError, match="auto or a whole number"):
        execute(RunConfig(data=(str(SMALL),)), results="/nonexistent/never", jobs=bad)


def test_jobs_auto_takes_cores_as_the_run_repays(monkeypatch):
    monkeypatch.setattr(workers, "can_fork", lambda: True)
    monkeypatch.setattr(workers, "available_cores", lambda: 8)
    assert workers.jobs_for(None, 600) == workers.AUTO_JOBS_CAP
    assert workers.jobs_for(None, 3 * workers.MIN_QUESTIONS_PER_JOB) == 3
    assert workers.jobs_for(None, workers.MIN_QUESTIONS_PER_JOB) == 1
    assert workers.jobs_for(5, 600) == 5 and workers.jobs_for(5, 3) == 3
    assert workers.jobs_for(1, 600) == 1
    # stores too large for every worker to copy what it reads: one process, unless asked
    assert workers.jobs_for(None, 600, workers.AUTO_FACTS_CAP) == workers.AUTO_JOBS_CAP
    assert workers.jobs_for(None, 600, workers.AUTO_FACTS_CAP + 1) == 1
    assert workers.jobs_for(2, 600, workers.AUTO_FACTS_CAP + 1) == 2
    monkeypatch.setattr(workers, "available_cores", lambda: 1)
    assert workers.jobs_for(None, 600) == 1
    monkeypatch.setattr(workers, "can_fork", lambda: False)
    assert workers.jobs_for(4, 600) == 1


@pytest.mark.parametrize("bad", ["0", "-2", "x", "1.5", ""])
def test_cli_refuses_bad_jobs(bad):
    from oracle.cli import main
    result = CliRunner().invoke(main, ["run", "--jobs", bad])
    assert result.exit_code == 2
    assert "neither auto nor a whole number of at least 1" in result.output


def test_cli_help_names_jobs():
    from oracle.cli import main
    result = CliRunner().invoke(main, ["run", "--help"])
    assert "--jobs N|auto" in result.output and "[default: auto]" in result.output


def test_bundled_rows_are_what_the_cli_run_takes():
    # the first test's default data is the bundled 6K dev rows, 200 questions: enough that
    # 2 and 3 workers each take several chunks
    assert bundled_path().is_file()
    from resolver.haystack import load
    dataset, _ = load(bundled_path())
    assert len(dataset.questions) >= 3 * workers.MIN_QUESTIONS_PER_JOB
