"""The search stage of a run, timed apart: resolving benchmarks/commands.py's 600 synthetic
questions (32K, 64K and 262K contexts) with their live rule and lexicon plan sets.

    python benchmarks/search_stage.py [--rounds 10] [--before /tmp/before] [--instructions]

Each round runs a fresh process (`--child`) that loads the rows (parse cache warm), compiles
the live plan sets (`load_plan_sets`, untimed), then times only the search: every question
through `resolve_dataset` (search mode), as `factres run --jobs 1` resolves it. The garbage
collector is off, as in `factres run`. With `--before`, a checkout of the code before a change
(`git archive <rev> | tar -x -C /tmp/before`) is timed in the same rounds, in alternating
order, by putting it first on the child's path. Shown: the least and the median wall and CPU
seconds of each tree (the least: the least disturbed on a shared machine). `--instructions`
counts, besides, the machine instructions of the stage with valgrind (`cachegrind`, no cache
simulation): a child run through once with the stage and once without, the difference; a
count other work on the machine does not change."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plan_stage import SETS
from timing import ROOT, instructions, private_env, synthetic_rows


def child(rows: list[str], stage: bool = True) -> dict:
    import gc
    gc.disable()
    from resolver.haystack import load
    from resolver.run.runs import load_plan_sets
    from resolver.search.resolve import resolve_dataset
    dataset, _ = load(rows)
    plan_sets, _ = load_plan_sets(dataset, SETS)
    wall, cpu = time.perf_counter(), time.process_time()
    if stage:
        resolve_dataset(dataset, plan_sets)
    return {"search": time.perf_counter() - wall, "search cpu": time.process_time() - cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--before", type=Path, help="a checkout of the code before a change")
    ap.add_argument("--instructions", action="store_true",
                    help="count the stage's machine instructions with valgrind as well")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    ap.add_argument("--child-no-stage", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child or args.child_no_stage:
        print(json.dumps(child(args.child or args.child_no_stage, stage=bool(args.child))))
        return 0
    trees = {"this checkout": ROOT}
    if args.before:
        trees = {f"before ({args.before})": args.before.resolve(), **trees}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        rows = [str(p) for p in synthetic_rows(scratch / "rows")]
        base_env = private_env(scratch / "cache")

        def env_of(tree: Path) -> dict:
            return dict(base_env, PYTHONPATH=os.pathsep.join(
                [str(tree), str(ROOT / "benchmarks"), base_env.get("PYTHONPATH", "")]))

        def once(tree: Path) -> dict:
            done = subprocess.run([sys.executable, __file__, "--child", *rows],
                                  env=env_of(tree), capture_output=True, text=True, cwd=scratch)
            if done.returncode:
                raise SystemExit(f"the child of {tree} failed:\n{done.stderr}")
            return json.loads(done.stdout.strip().splitlines()[-1])

        for tree in trees.values():                 # the parse cache and the bytecode
            once(tree)
        found: dict[str, list[dict]] = {name: [] for name in trees}
        names = list(trees)
        for round_ in range(args.rounds):
            for name in (names if round_ % 2 == 0 else names[::-1]):
                found[name].append(once(trees[name]))
        counted = {}
        if args.instructions:
            for name, tree in trees.items():
                counted[name] = [instructions([sys.executable, __file__, flag, *rows],
                                              env_of(tree), scratch)
                                 for flag in ("--child", "--child-no-stage")]
    print(f"seconds over {args.rounds} fresh processes per tree, in alternating order")
    print(f"| {'code':<40} | search wall, least | median | search CPU, least | median |")
    print(f"|{'-' * 42}|--:|--:|--:|--:|")
    least = {}
    for name, runs in found.items():
        wall = [r["search"] for r in runs]
        cpu = [r["search cpu"] for r in runs]
        least[name] = (min(wall), min(cpu))
        print(f"| {name:<40} | {min(wall):.3f} | {statistics.median(wall):.3f} "
              f"| {min(cpu):.3f} | {statistics.median(cpu):.3f} |")
    if len(least) == 2:
        (before, before_cpu), (after, after_cpu) = least.values()
        print(f"search, least wall: {after / before:.2f}x the code before "
              f"({before - after:+.3f} s saved); least CPU: {after_cpu / before_cpu:.2f}x")
    if counted:
        print("\nmachine instructions of the search (valgrind cachegrind: a process with "
              "the search less one without)")
        stages = {name: with_ - without for name, (with_, without) in counted.items()}
        for name, count in stages.items():
            print(f"| {name:<40} | {count / 1e6:,.1f} M |")
        if len(stages) == 2:
            before, after = stages.values()
            print(f"search, instructions: {after / before:.2f}x the code before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
