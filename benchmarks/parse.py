"""Parse speed and memory on the 262K context: the Lark grammar against a plain regex loop.

    python benchmarks/parse.py [--repeat N] [--size 262k]

In one process, min of N runs each (the machine is noisy; the minimum is the least disturbed):
  - grammar: `parse_context` (lark-cython when installed, and pure-Python Lark),
  - regex:   the natural loop of benchmarks/regex_parse.py (the reference floor of every
             speed benchmark): for each line try the 44 MQuAKE cloze templates as regexes
             (compiled once) in a fixed order, first match wins (the loop's facts are checked
             equal to the grammar's),
  - warm:    `cache.load_parse` from a filled cache, and the whole `haystack.load` (store
             included; the store builds its lookup tables on first use, timed separately).
Then, each in a fresh interpreter (imports excluded, grammar load included), the cold parse
without cache and the warm load with it, with the process's peak resident memory."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import regex_parse

from resolver.haystack import BUNDLED, bundled_path, load
from resolver.text import cache, facts
from resolver.text.relations import inventory, mquake_cloze_templates

# Targets of the issue, on the 2-core reference machine.
TARGET_COLD_S = 0.8
TARGET_RATIO = 3.0
TARGET_WARM_S = 0.1
TARGET_PEAK_MB = 200

_CHILD = """
import resource, sys, time
t0 = time.perf_counter()
from resolver.haystack import load
from resolver.text import facts
text = open(sys.argv[2], encoding="utf-8").read()
t1 = time.perf_counter()
if sys.argv[1] == "cold":
    result = facts.parse_context(text)
    n = len(result.facts)
else:
    dataset, _ = load([sys.argv[2]])
    n = sum(len(h.parse.facts) for h in dataset.haystacks.values())
t2 = time.perf_counter()
# ru_maxrss survives exec, so it may be the forking parent's size; the high-water mark of
# this process's own memory (Linux) is not.
try:
    status = open("/proc/self/status").read()
    peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
except (OSError, IndexError):
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(n, t2 - t1, t1 - t0, peak)
"""


def regex_loop():
    """The reference loop's compiled templates, and P-id -> relation name."""
    patterns = regex_parse.patterns(mquake_cloze_templates())
    name_of = {pid: rel.name for rel in inventory().values() for pid in rel.pids}
    return patterns, name_of


def parse_with_regexes(text: str, patterns) -> list[tuple[int, str, str, str, int]]:
    return regex_parse.parse(text, patterns)[0]


def best_of(repeat: int, func) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), result


def in_child(mode: str, path: Path, env: dict) -> tuple[int, float, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode, str(path)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1]), float(out[3])


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    args.add_argument("--repeat", type=int, default=5, help="runs per measurement (min taken)")
    args.add_argument("--size", default="262k", choices=sorted(BUNDLED))
    opts = args.parse_args()
    path = bundled_path(BUNDLED[opts.size])
    text = path.read_text("utf-8")
    n = opts.repeat

    patterns, name_of = regex_loop()
    facts.fact_parser(True), facts.fact_parser(False)   # grammar load is not parse time
    t_fast, parsed = best_of(n, lambda: facts.parse_context(text, fast=True))
    t_pure, pure = best_of(n, lambda: facts.parse_context(text, fast=False))
    t_regex, by_regex = best_of(n, lambda: parse_with_regexes(text, patterns))
    ours = [(f.serial, f.subject, f.relation, f.object, f.line) for f in parsed.facts]
    theirs = [(s, x, name_of[p], o, line) for s, x, p, o, line in by_regex]
    assert [f for f in pure.facts] == list(parsed.facts), "lark-cython and Lark disagree"
    differ = sum(1 for a, b in zip(ours, theirs) if a != b) + abs(len(ours) - len(theirs))

    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, **{cache.ENV: folder})
        os.environ[cache.ENV] = folder
        cache.load_parse(text)                              # fill the cache
        t_warm, _ = best_of(n, lambda: cache.load_parse(text))
        t_load, (dataset, _) = best_of(n, lambda: load([path]))
        store = next(iter(dataset.haystacks.values())).store
        t_index, _ = best_of(1, lambda: store.current("Paris", "capital"))
        cold = [in_child("cold", path, env) for _ in range(n)]
        warm = [in_child("warm", path, env) for _ in range(n)]

    t_cold, peak_cold = min(c[1] for c in cold), max(c[2] for c in cold)
    t_cwarm, peak_warm = min(w[1] for w in warm), max(w[2] for w in warm)
    fast_name = "lark-cython" if facts.accelerated() else "Lark (lark-cython not installed)"
    rows = [
        ("grammar parse, " + fast_name, t_fast, ""),
        ("grammar parse, pure-Python Lark", t_pure, ""),
        ("regex loop, 44 templates", t_regex, ""),
        ("ratio grammar / regex", t_fast / t_regex, f"target <= {TARGET_RATIO}"),
        ("ratio pure Lark / regex", t_pure / t_regex, ""),
        ("cold parse, fresh process", t_cold, f"target <= {TARGET_COLD_S} s"),
        ("warm cache load_parse", t_warm, f"target <= {TARGET_WARM_S} s"),
        ("warm haystack.load (store incl.)", t_load, ""),
        ("warm haystack.load, fresh process", t_cwarm, ""),
        ("store lookup tables, first use", t_index, ""),
        ("peak RSS, cold process (MB)", peak_cold, f"target < {TARGET_PEAK_MB} MB"),
        ("peak RSS, warm process (MB)", peak_warm, ""),
    ]
    print(f"{opts.size}: {len(parsed.facts)} facts, {len(parsed.unparsed)} unparsed, "
          f"min of {n} runs; regex loop facts differing from the grammar's: {differ}")
    print(f"| {'measure':<36} | {'value':>8} | note")
    print(f"|{'-' * 38}|{'-' * 10}|------")
    for name, value, note in rows:
        shown = f"{value:8.3f}" if value < 10 else f"{value:8.1f}"
        print(f"| {name:<36} | {shown} | {note}")


if __name__ == "__main__":
    main()
