"""Whole `factres` processes against the reference floor, timed in one run.

    python benchmarks/commands.py [--rounds 7]

Every figure is a fresh process timed from outside, start to exit (wall clock, output
discarded), as a user waits for it. The commands run one after the other, in alternating order
from round to round, so each sees the same machine noise; the minimum over the rounds is the
least disturbed run and the ratios are of minimums measured in this run (medians are shown
beside them). The parse cache is a private temporary folder.

| measure                                  | reference                             | target   |
|------------------------------------------|---------------------------------------|----------|
| factres --help                           | python -c "import click"              | <= 3x    |
| factres parse 262K --no-cache (cold)     | python benchmarks/regex_parse.py 262K | <= 2x    |
| factres parse 262K, cache hit (warm)     | the same regex script                 | <= 0.75x |
| factres run, 600 questions (cache warm)  | the same regex script                 | <= 3x    |

The run resolves and scores 600 synthetic questions (benchmarks/synthetic.py, seed 0: 100
single-hop and 100 multi-hop questions on each of the 32K, 64K and 262K contexts) with the
default plan sets, and writes its run folder (into a temporary folder). It runs as a user runs
it: `--jobs auto`, which compiles and searches in one forked worker per core (up to 4; on a
machine of one core, in one process). The same run with `--jobs 1` is shown beside it (no
target), and every row gives its CPU time (user + system, the workers' included) and the ratio
of CPU times too, so the cost in work stays in view. Its per-question latency is in
benchmarks/resolve.py. Exits 1 if a target is missed."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timing import (
    CONTEXT_262K,
    empty_folder,
    factres,
    private_env,
    reference_command,
    synthetic_rows,
    time_processes,
)

from resolver.run.workers import available_cores, jobs_for

# Issue 35's targets: the warm parse 0.75x (was 0.8x) and the run 3x (issue 23's 4x, which
# lowered it from 6x).
TARGETS = {"help": 3.0, "parse_cold": 2.0, "parse_warm": 0.75, "run": 3.0}


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--rounds", type=int, default=7, help="runs of each command (min taken)")
    opts = args.parse_args()
    cli = factres()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        env = private_env(scratch / "cache")
        rows = synthetic_rows(scratch / "rows")
        results = scratch / "results"
        run = cli + ["run", "--no-progress", "--results-dir", str(results)]
        for path in rows:
            run += ["--data", str(path)]
        # Fill the parse cache: the warm figures read it.
        time_processes({"fill": cli + ["parse", str(CONTEXT_262K)]}, 1, env)
        time_processes({"fill": run}, 1, env, before={"fill": empty_folder(results)})
        timed = time_processes({
            "click": [sys.executable, "-c", "import click"],
            "help": cli + ["--help"],
            "regex": reference_command(),
            "parse_cold": cli + ["parse", str(CONTEXT_262K), "--no-cache"],
            "parse_warm": cli + ["parse", str(CONTEXT_262K)],
            "run": run,
            "run_1": run + ["--jobs", "1"],
        }, opts.rounds, env, before={"run": empty_folder(results),
                                     "run_1": empty_folder(results)})

    rows_out = [
        ("python -c 'import click'", "click", None, None),
        ("factres --help", "help", "click", "help"),
        ("regex parse script, 262K (the floor)", "regex", None, None),
        ("factres parse 262K --no-cache (cold)", "parse_cold", "regex", "parse_cold"),
        ("factres parse 262K, cache hit (warm)", "parse_warm", "regex", "parse_warm"),
        ("factres run, 600 questions, cache warm", "run", "regex", "run"),
        ("  the same, --jobs 1 (one process)", "run_1", "regex", None),
    ]
    print(f"whole processes, {opts.rounds} alternating rounds; ratio = min / min of the "
          "reference in this run; CPU: user + system seconds, a run's workers included")
    print(f"this machine: {available_cores()} cores; `factres run` (--jobs auto) takes "
          f"{jobs_for(None, 600)} worker(s) for 600 questions")
    print(f"| {'process':<40} | {'min s':>6} | {'median s':>8} | {'ratio':>6} | "
          f"{'min CPU s':>9} | {'CPU ratio':>9} | target")
    print(f"|{'-' * 42}|{'-' * 8}|{'-' * 10}|{'-' * 8}|{'-' * 11}|{'-' * 11}|--------")
    missed = []
    for label, name, reference, target in rows_out:
        t = timed[name]
        ratio = t.best / timed[reference].best if reference else None
        shown = f"{ratio:6.2f}" if ratio is not None else f"{'':6}"
        cpu = f"{t.best_cpu / timed[reference].best_cpu:9.2f}" if reference else f"{'':9}"
        verdict = ""
        if target:
            ok = ratio <= TARGETS[target]
            verdict = f"<= {TARGETS[target]}x {'ok' if ok else 'MISSED'}"
            if not ok:
                missed.append(label)
        print(f"| {label:<40} | {t.best:6.3f} | {t.median:8.3f} | {shown} | "
              f"{t.best_cpu:9.3f} | {cpu} | {verdict}")
    if missed:
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
