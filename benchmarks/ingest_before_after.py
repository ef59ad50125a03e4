"""Ingest of the 262K context by the code before a change and after it, alternately, in one
sitting (issue 32's target: at most 1.05x the ingest before the change).

    git archive <before> | tar -x -C /tmp/before
    python benchmarks/ingest_before_after.py /tmp/before [--rounds N]

Each round runs one fresh process per tree, in alternating order (the tree given on
PYTHONPATH, then this checkout, then the other way round): each process times, min of 3, the
two ingests `benchmarks/memory.py` times, with Python's cyclic collector paused as there, in
CPU seconds of the process (`time.process_time`: the machine is shared, and the wall time of
a process waiting for a core says nothing of the code):
  memory  the 262K context fed to a `Memory` in framed harness chunks, then `flush`;
  run     the context parsed with the cache off and its store made as `haystack.load` makes
          it (with this change: the correction lines read and applied, `read_context`).
Prints the min of each side over the rounds and the ratio after / before; exits 1 when a
ratio is above 1.05."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 1.05

CHILD = r"""
import gc, json, sys, time
from pathlib import Path
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.store.fact_store import FactStore
from resolver.text.cache import load_parse
context = Path(sys.argv[1]).read_text("utf-8")
chunks = [harness.frame_chunk(c, f"2025-01-01 00:00:{i % 60:02d}")
          for i, c in enumerate(harness.chunk_context(context))]
try:
    from resolver.store.operations import read_context
except ImportError:                      # the code before the change
    read_context = None

def memory():
    m = Memory()
    for chunk in chunks:
        m.ingest(chunk)
    m.flush()

def run():
    parsed = load_parse(context, use_cache=False)
    store = read_context(parsed, context)[1] if read_context else FactStore(parsed.facts)
    store.ledger

out = {}
for name, fn in (("memory", memory), ("run", run)):
    best = None
    for _ in range(3):
        gc.disable()
        start = time.process_time()
        fn()
        took = time.process_time() - start
        gc.enable()
        best = took if best is None else min(best, took)
    out[name] = best
import resolver
out["resolver"] = str(Path(resolver.__file__).parent)
print(json.dumps(out))
"""


def measure(tree: Path | None, context: Path) -> dict:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    else:
        env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", CHILD, str(context)], env=env, check=True,
                         capture_output=True, text=True, cwd=tree or ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path, help="a checkout of the code before the change")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    context = ROOT / "resolver" / "data" / "fc" / "factconsolidation_262k_context.txt"
    sides: dict[str, list[dict]] = {"before": [], "after": []}
    for round_ in range(args.rounds):
        order = ["before", "after"] if round_ % 2 == 0 else ["after", "before"]
        for side in order:
            sides[side].append(measure(args.before if side == "before" else None, context))
    failed = False
    print(f"262K context, {args.rounds} alternating rounds, one process per side and round, "
          f"min of 3 inside each, CPU seconds")
    print(f"before: {sides['before'][0]['resolver']}  after: {sides['after'][0]['resolver']}")
    for name in ("memory", "run"):
        before = min(s[name] for s in sides["before"])
        after = min(s[name] for s in sides["after"])
        ratio = after / before
        failed |= ratio > TARGET
        print(f"{name:<7} before {before:.3f} s, after {after:.3f} s: ratio {ratio:.3f} "
              f"(target <= {TARGET})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
