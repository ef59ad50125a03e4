"""Every oracle command on synthetic rows of the three test sizes, in one call and each size alone.

    python benchmarks/oracle.py [--repeat N] [--keep DIR]

Writes the synthetic rows of benchmarks/synthetic.py (seed 0, 100 SH + 100 MH per size) for
32K, 64K and 262K, resolves them with `factres run` (one run of all three, one run per size:
`misses` and `nbest` read a run), then times each of `factres oracle paths`, `versions`,
`ceiling`, `signals`, `misses` and `nbest` as a fresh process (start-up and imports included,
as a user pays them; the parse cache warmed by the runs), on all three sizes together and on
each alone, N rounds (median). Peak memory is the largest resident set of the command's
process (os.wait4). Reports each figure, its ratio to the budget, and the ratio of the
together call to the three alone calls added up.

Checks, exit 1 when one fails: on all three sizes in one call, `ceiling` <= 10 s and every
other command <= 30 s, peak memory < 1 GB for every call; every command succeeds; the ceiling
is proven optimal in every call; and the ceiling of each haystack in the together call equals
that size alone (per haystack and per source)."""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import ROOT, TEST_SIZES, factres, private_env

SIZES = TEST_SIZES
COMMANDS = ("paths", "versions", "ceiling", "signals", "misses", "nbest")
BUDGET_S = {"ceiling": 10.0}            # the others: DEFAULT_BUDGET_S
DEFAULT_BUDGET_S = 30.0
MEMORY_LIMIT_MB = 1024.0


def _synthetic():
    spec = importlib.util.spec_from_file_location("factres_bench_synthetic",
                                                  ROOT / "benchmarks" / "synthetic.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod        # dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


def timed(argv: list[str], env: dict) -> tuple[float, float, int, str]:
    """(seconds, peak resident MB, exit status, stderr) of one process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return seconds, usage.ru_maxrss / 1024, proc.returncode, text


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--repeat", type=int, default=3, help="rounds (median taken)")
    args.add_argument("--keep", type=Path, help="work in this folder and keep it (rows, runs, "
                      "oracle folders); default: a temporary folder, removed")
    opts = args.parse_args()
    work = opts.keep or Path(tempfile.mkdtemp(prefix="factres-bench-oracle-"))
    work.mkdir(parents=True, exist_ok=True)
    env = private_env(work / "cache")
    try:
        return _bench(work, env, opts.repeat)
    finally:
        if opts.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def _bench(work: Path, env: dict, repeat: int) -> int:
    syn = _synthetic()
    rows = {size: str(syn.write(size, work / "rows")[0]) for size in SIZES}
    calls = {"all": list(SIZES), **{size: [size] for size in SIZES}}
    failures: list[str] = []
    runs = {}
    for name, sizes in calls.items():
        run = work / "results" / f"synthetic-{name}"
        if not run.exists():
            data = [a for s in sizes for a in ("--data", rows[s])]
            seconds, mb, code, err = timed(factres() + ["run", *data, "--results-dir",
                                                        str(run.parent), "--run-id", run.name,
                                                        "--no-progress"], env)
            print(f"factres run {name}: {seconds:.2f} s, {mb:.0f} MB")
            if code:
                failures.append(f"factres run {name} failed: {err.strip()}")
                continue
        runs[name] = run
    if failures:
        print("\n".join(failures))
        return 1

    times: dict[tuple[str, str], list[float]] = {}
    memory: dict[tuple[str, str], float] = {}
    for round_no in range(repeat):
        # Interleaved, so every command sees the same machine noise.
        for command in COMMANDS:
            for name, sizes in calls.items():
                out = work / "oracle" / f"{command}-{name}-{round_no}"
                if out.exists():
                    shutil.rmtree(out)
                if command in ("misses", "nbest"):
                    target = [str(runs[name])]
                else:
                    target = [a for s in sizes for a in ("--data", rows[s])]
                seconds, mb, code, err = timed(factres() + ["oracle", command, *target,
                                                            "--out", str(out)], env)
                if code:
                    failures.append(f"oracle {command} on {name} failed: {err.strip()}")
                times.setdefault((command, name), []).append(seconds)
                memory[(command, name)] = max(memory.get((command, name), 0.0), mb)

    print(f"\nmedian of {repeat} rounds, each command a fresh process; sizes 32k+64k+262k "
          "(all) and each alone\n")
    print("| command | all (s) | budget (s) | all / budget | 32k (s) | 64k (s) | 262k (s) | "
          "all / sum alone | peak MB (all) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for command in COMMANDS:
        median = {name: statistics.median(times[(command, name)]) for name in calls}
        budget = BUDGET_S.get(command, DEFAULT_BUDGET_S)
        alone = sum(median[s] for s in SIZES)
        print(f"| {command} | {median['all']:.2f} | {budget:.0f} | {median['all'] / budget:.2f} "
              f"| {median['32k']:.2f} | {median['64k']:.2f} | {median['262k']:.2f} | "
              f"{median['all'] / alone:.2f} | {memory[(command, 'all')]:.0f} |")
        if median["all"] > budget:
            failures.append(f"oracle {command} on all sizes: {median['all']:.2f} s > "
                            f"{budget:.0f} s")
        for name in calls:
            if memory[(command, name)] >= MEMORY_LIMIT_MB:
                failures.append(f"oracle {command} on {name}: peak {memory[(command, name)]:.0f}"
                                f" MB >= {MEMORY_LIMIT_MB:.0f} MB")
    failures += _check_ceilings(work / "oracle", calls)
    print()
    print("\n".join(failures) if failures else "every budget met; every ceiling proven "
          "optimal; each haystack's ceiling the same together and alone: ok")
    return 1 if failures else 0


def _check_ceilings(folder: Path, calls: dict) -> list[str]:
    failures = []
    reports = {name: json.loads((folder / f"ceiling-{name}-0" / "ceiling.json").read_text())
               for name in calls if (folder / f"ceiling-{name}-0" / "ceiling.json").exists()}
    if len(reports) < len(calls):
        return ["a ceiling call wrote no ceiling.json"]
    for name, report in reports.items():
        if report["status"] != "OPTIMAL":
            failures.append(f"ceiling on {name}: status {report['status']}")
    together = reports["all"]
    print("\nceiling per haystack (all sizes in one call): size, questions, optimum, "
          "latest wins, status")
    for sha, h in together["per_haystack"].items():
        print(f"  {h['size']} {sha[:12]}: {h['questions']}, {h['optimal']}, {h['latest_wins']}, "
              f"{h['status']}")
    for size in SIZES:
        alone = reports[size]
        for sha, h in alone["per_haystack"].items():
            if together["per_haystack"].get(sha) != h:
                failures.append(f"ceiling of the {size} haystack differs together and alone")
        for source, v in alone["per_source"].items():
            if together["per_source"].get(source) != v:
                failures.append(f"ceiling of {source} differs together and alone")
    return failures


if __name__ == "__main__":
    sys.exit(main())
