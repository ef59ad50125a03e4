"""What a whole `factres run` pays for its imports: this tree against another, in one sitting.

    python benchmarks/imports.py --before TREE [--rounds 21] [--instructions]

TREE is a checkout of the code to compare with (`git archive <rev> | tar -x -C TREE`, or a
clone). Each tree is put first on the path (`PYTHONPATH`, and `python -P` so that the working
folder does not come before it). The run is benchmarks/commands.py's: the 600 synthetic
questions over the 32K, 64K and 262K contexts, cache warm, a private parse cache and compiled
bytecode (timing.private_env). The modules a tree's run imports are read from one run under
`python -X importtime` (the modules it imports at the top of the import tree, the
interpreter's own start left out); then, in alternating rounds, fresh processes are timed:
`python -c pass` (the floor), a process importing that tree's modules in that order, and the
run itself. Wall clock and CPU time (user + system, from the children's resource usage: less
disturbed by other processes on a shared machine) are shown, least and median over the
rounds. `--instructions` counts, besides, each process's machine instructions once (valgrind's
cachegrind, with one hash seed for all: the same count however loaded the machine is). The two trees' predictions.jsonl
and traces.jsonl are compared too (they must be the same). Not a target: the run's target is
commands.py's."""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import ROOT, factres, instructions, private_env, synthetic_rows

_RUN = ("import sys; from oracle.cli import main; sys.argv = ['factres'] + sys.argv[1:]; "
        "main()")


def top_imports(env: dict, args: list[str]) -> list[str]:
    """The modules a run imports at the top of its import tree, in order, less those a bare
    interpreter imports."""
    def tops(code: str, extra: list[str]) -> list[str]:
        err = subprocess.run([sys.executable, "-P", "-X", "importtime", "-c", code, *extra],
                             env=env, capture_output=True, text=True, check=True).stderr
        names = [line.split("|")[2] for line in err.splitlines()
                 if line.startswith("import time:") and "self [us]" not in line]
        return [n.strip() for n in names if not n.startswith("  ")]
    bare = set(tops("pass", []))
    return [m for m in tops(_RUN, args) if m not in bare]


def main() -> int:
    opts = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    opts.add_argument("--before", required=True, help="the other tree (a checkout)")
    opts.add_argument("--rounds", type=int, default=21, help="timed processes of each kind")
    opts.add_argument("--instructions", action="store_true",
                      help="count each process's machine instructions with valgrind as well")
    opts = opts.parse_args()
    trees = {"before": Path(opts.before).resolve(), "this": ROOT}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        base_env = private_env(scratch / "cache")
        envs = {name: dict(base_env, PYTHONPATH=str(tree)) for name, tree in trees.items()}
        rows = synthetic_rows(scratch / "rows")
        results = {name: scratch / f"results-{name}" for name in trees}
        data = [arg for path in rows for arg in ("--data", str(path))]

        def run_args(name: str) -> list[str]:
            return ["run", "--no-progress", "--results-dir", str(results[name]), *data]

        commands: dict[str, tuple[list[str], dict]] = {"floor": ([sys.executable, "-P", "-c",
                                                                  "pass"], base_env)}
        for name in trees:
            shutil.rmtree(results[name], ignore_errors=True)
            subprocess.run(factres() + run_args(name), env=envs[name], check=True,
                           capture_output=True, cwd=scratch)      # fills the parse cache
        same = all((next(results["before"].iterdir()) / f).read_bytes()
                   == (next(results["this"].iterdir()) / f).read_bytes()
                   for f in ("predictions.jsonl", "traces.jsonl"))
        for name in trees:
            modules = top_imports(envs[name], run_args(name))
            commands[f"imports {name}"] = ([sys.executable, "-P", "-c",
                                            "import " + ", ".join(modules)], envs[name])
            commands[f"run {name}"] = (factres() + run_args(name), envs[name])

        wall = {name: [] for name in commands}
        cpu = {name: [] for name in commands}
        names = list(commands)
        for round_ in range(opts.rounds):
            for name in (names if round_ % 2 == 0 else names[::-1]):
                command, env = commands[name]
                for folder in results.values():
                    shutil.rmtree(folder, ignore_errors=True)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd=scratch)
                wall[name].append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime - before.ru_utime
                                 + after.ru_stime - before.ru_stime)
        counted = {}
        if opts.instructions:
            for name in names:
                for folder in results.values():
                    shutil.rmtree(folder, ignore_errors=True)
                command, env = commands[name]
                # one hash seed for every count: str hashes decide set and dict layouts, which
                # move a run's count by tens of millions from one process to the next
                counted[name] = instructions(command, dict(env, PYTHONHASHSEED="0"), scratch)

    print(f"{opts.rounds} alternating rounds; before = {trees['before']}, this = {ROOT}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    print(f"| {'process':<16} | {'wall min':>9} | {'wall median':>11} | {'CPU min':>8} | "
          f"{'CPU median':>10} |")
    print(f"|{'-' * 18}|{'-' * 11}|{'-' * 13}|{'-' * 10}|{'-' * 12}|")
    for name in names:
        print(f"| {name:<16} | {1e3 * min(wall[name]):7.1f}ms | "
              f"{1e3 * statistics.median(wall[name]):9.1f}ms | {1e3 * min(cpu[name]):6.1f}ms | "
              f"{1e3 * statistics.median(cpu[name]):8.1f}ms |")
    for kind in ("imports", "run"):
        b, t = f"{kind} before", f"{kind} this"
        print(f"{kind}: this tree saves {1e3 * (min(wall[b]) - min(wall[t])):.1f} ms wall "
              f"(least), {1e3 * (statistics.median(wall[b]) - statistics.median(wall[t])):.1f}"
              f" ms (median); {1e3 * (min(cpu[b]) - min(cpu[t])):.1f} ms CPU (least), "
              f"{1e3 * (statistics.median(cpu[b]) - statistics.median(cpu[t])):.1f} ms "
              "(median)")
    if counted:
        print("machine instructions (valgrind cachegrind), one process each: " + "; ".join(
            f"{name} {count / 1e6:,.1f} M" for name, count in counted.items()))
        for kind in ("imports", "run"):
            b, t = counted[f"{kind} before"], counted[f"{kind} this"]
            print(f"{kind}: this tree {t / b:.3f}x the instructions of the other "
                  f"({(b - t) / 1e6:,.1f} M fewer)")
    print(f"predictions.jsonl and traces.jsonl the same in both trees: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
