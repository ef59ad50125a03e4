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

import json
import statistics
import sys
import time

from plan_stage import SETS
from timing import print_instructions, stage_arguments, stage_rounds


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
    args = stage_arguments(__doc__)
    if args.child or args.child_no_stage:
        print(json.dumps(child(args.child or args.child_no_stage, stage=bool(args.child))))
        return 0
    found, counted = stage_rounds(__file__, args.rounds, args.before, args.instructions)
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
    print_instructions(counted, "search")
    return 0


if __name__ == "__main__":
    sys.exit(main())
