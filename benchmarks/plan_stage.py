"""The plan stage of a run, timed apart: compiling the live rule and lexicon sets for
benchmarks/commands.py's 600 synthetic questions (32K, 64K and 262K contexts).

    python benchmarks/plan_stage.py [--rounds 10] [--before /tmp/before] [--instructions]

Each round runs a fresh process (`--child`) that loads the rows (parse cache warm), builds each
store's lookup tables (the first name lookup builds them; the search needs them as well, so a
run pays for them in whichever stage looks first: timed apart, as `store tables`), then times
`load_plan_sets(dataset, ("live:rules", "live:lexicon"))` as `factres run` calls it: the
imports it triggers, the index of the store's names, reading every question, both compilers
and the sets' records. The garbage collector is off, as in `factres run`. With `--before`, a
checkout of the code before a change (`git archive <rev> | tar -x -C /tmp/before`) is timed in
the same rounds, in alternating order, by putting it first on the child's path. Shown: the
least and the median seconds of each tree (the least: the least disturbed on a shared
machine). `--instructions` counts, besides, the machine instructions of the stage with
valgrind (`cachegrind`, no cache simulation): a child run through once with the stage and once
without, the difference; a count other work on the machine does not change."""
from __future__ import annotations

import json
import statistics
import sys
import time

from timing import print_instructions, stage_arguments, stage_rounds

SETS = ("live:rules", "live:lexicon")


def child(rows: list[str], stage: bool = True) -> dict:
    import gc
    gc.disable()
    from resolver.haystack import load
    from resolver.run.runs import load_plan_sets      # imported at start-up in a run
    dataset, _ = load(rows)
    began = time.perf_counter()
    for haystack in dataset.haystacks.values():
        haystack.store.spelling("")                     # builds the store's tables
    tables = time.perf_counter()
    if stage:
        load_plan_sets(dataset, SETS)
    done = time.perf_counter()
    return {"store tables": tables - began, "plan stage": done - tables}


def main() -> int:
    args = stage_arguments(__doc__)
    if args.child or args.child_no_stage:
        print(json.dumps(child(args.child or args.child_no_stage, stage=bool(args.child))))
        return 0
    found, counted = stage_rounds(__file__, args.rounds, args.before, args.instructions)
    print(f"wall seconds over {args.rounds} fresh processes per tree, in alternating order")
    print(f"| {'code':<40} | store tables, least | plan stage, least | median |")
    print(f"|{'-' * 42}|--:|--:|--:|")
    least = {}
    for name, runs in found.items():
        stage = [r["plan stage"] for r in runs]
        least[name] = min(stage)
        print(f"| {name:<40} | {min(r['store tables'] for r in runs):.3f} | {min(stage):.3f} "
              f"| {statistics.median(stage):.3f} |")
    if len(least) == 2:
        before, after = least.values()
        print(f"plan stage, least: {after / before:.2f}x the code before "
              f"({before - after:+.3f} s saved)")
    print_instructions(counted, "plan stage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
