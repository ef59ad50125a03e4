"""Where a whole `factres` process spends its time: start-up and imports, then each stage.

    python benchmarks/run_phases.py [--rounds 5]

Three commands, as benchmarks/commands.py times them (the same synthetic rows and context,
a private parse cache): `factres run` over the 600 synthetic questions of the 32K, 64K and
262K contexts (cache warm), twice: with `--jobs 1` (every stage in one process, so each is
timed on its own) and as a user runs it (`--jobs auto`: the per-question stages in forked
workers, one phase seen from the parent); `factres parse` of the 262K context with
`--no-cache` (cold) and from the cache (warm). Each runs in a fresh process of this script
(`--child`) that imports the CLI, wraps the library functions that make up each stage with a
wall-clock timer (a stage's time includes the imports it triggers), and runs the command in
process; the rest of the process (click, argument checks, the store and its counts for
`parse`, the output) is `other`; the interpreter's own start, before this script's first
line, is in none. The least figure of each phase over `--rounds` processes is shown: on a
shared machine the least disturbed. This is a breakdown, not a target: the targets are
commands.py's."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START = time.perf_counter()

from timing import CONTEXT_262K, private_env, synthetic_rows  # noqa: E402

# (module, function, phase): each call's wall time is added to its phase; a call inside
# another timed call counts in the outer one only.
STAGES = {
    "run": (("resolver.haystack", "load", "load rows + parse cache"),
            ("resolver.plan.compile_rules", "compile_question", "plans (compile rules + lexicon)"),
            ("resolver.plan.compile_lexicon", "compile_question",
             "plans (compile rules + lexicon)"),
            ("resolver.run.runs", "resolve_compiled", "search"),
            ("resolver.run.runs", "readout_row", "readout sizes"),
            ("resolver.metrics.scoring", "prepare", "scoring (bootstrap, numpy)"),
            ("resolver.metrics.scoring", "metrics_rows", "scoring (bootstrap, numpy)"),
            ("resolver.run.runs", "write_run", "write the run folder")),
    # with workers, the stages they run are one phase seen from the parent (which loads
    # numpy meanwhile: `scoring.prepare`, inside it)
    "run-workers": (("resolver.haystack", "load", "load rows + parse cache"),
                    ("resolver.store.fact_store", "FactStore.prepare",
                     "indexes + ledgers, before the fork"),
                    ("resolver.run.runs", "spread",
                     "workers: plans + search + readout sizes"),
                    ("resolver.metrics.scoring", "metrics_rows", "scoring (bootstrap, numpy)"),
                    ("resolver.run.runs", "write_run", "write the run folder")),
    "parse": (("resolver.text.cache", "_read", "read + check the cache entry"),
              ("resolver.text.facts", "parse_normalised", "grammar parse"),
              ("resolver.text.facts", "normalise", "normalise (BOM, CRLF, control scan)"),
              ("resolver.haystack", "read_rows", "read + hash the file")),
}


def child(stages: str, command: list[str]) -> dict:
    import functools
    import importlib
    phases: dict[str, float] = {}
    depth = [0]

    def timed(function, phase):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            depth[0] += 1
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    phases[phase] = phases.get(phase, 0.0) + time.perf_counter() - began
        return wrapper

    # benchmarks/oracle.py would shadow the oracle package: the script's folder goes
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]
    from oracle.cli import main
    command_module = importlib.import_module(f"resolver.cli.{command[0]}")  # (loaded lazily)
    imported = time.perf_counter() - START
    for module, name, phase in STAGES[stages]:
        mod = importlib.import_module(module)
        owner, _, attribute = name.rpartition(".")     # "Class.method" or a function
        holder = getattr(mod, owner) if owner else mod
        setattr(holder, attribute, timed(getattr(holder, attribute), phase))
    # the names the callers imported before the wrapping
    holders = [importlib.import_module(m) for m in ("resolver.haystack", "resolver.text.cache")]
    if command[0] == "run":
        holders.append(importlib.import_module("resolver.run.runs"))
    for holder in (*holders, command_module):
        for module, name, phase in STAGES[stages]:
            if "." not in name and getattr(holder, name, None) is not None \
                    and holder.__name__ != module:
                mod = importlib.import_module(module)
                setattr(holder, name, getattr(mod, name))
    sys.argv = ["factres", *command]
    try:
        main()
    except SystemExit:
        pass
    total = time.perf_counter() - START
    out = {"start-up and imports": imported, **phases}
    out["other"] = total - sum(out.values())
    out["total"] = total
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1:])))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        env = private_env(scratch / "cache")
        rows = synthetic_rows(scratch / "rows")
        run = ["run", "--no-progress", "--results-dir", str(scratch / "results")]
        for path in rows:
            run += ["--data", str(path)]
        commands = {
            "factres run --jobs 1, 600 questions, cache warm": ("run", run + ["--jobs", "1"]),
            "factres run (--jobs auto), 600 questions, cache warm": ("run-workers", run),
            "factres parse 262K --no-cache": ("parse", ["parse", str(CONTEXT_262K), "--no-cache"]),
            "factres parse 262K, cache hit": ("parse", ["parse", str(CONTEXT_262K)])}
        me = [sys.executable, __file__, "--child"]
        for stages, command in (("run", run), ("parse", ["parse", str(CONTEXT_262K)])):
            subprocess.run(me + [stages] + command, env=env, check=True,  # fill the cache
                           capture_output=True)
        found: dict[str, list[dict]] = {label: [] for label in commands}
        for round_ in range(args.rounds):
            for label, (stages, command) in commands.items():
                done = subprocess.run(me + [stages] + command, env=env, capture_output=True,
                                      text=True)
                if done.returncode:
                    raise SystemExit(f"{label} failed:\n{done.stderr}")
                found[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"wall seconds, least over {args.rounds} fresh processes per phase (the total: the "
          "least total, not the sum)")
    for label, runs in found.items():
        print(f"\n{label}")
        print(f"| {'phase':<40} | {'s':>6} | share of the least total |")
        print(f"|{'-' * 42}|{'-' * 8}|--:|")
        total = min(r["total"] for r in runs)
        names = [n for n in runs[0] if n != "total"]
        for name in names:
            least = min(r.get(name, 0.0) for r in runs)
            print(f"| {name:<40} | {least:6.3f} | {least / total:.0%} |")
        print(f"| {'total':<40} | {total:6.3f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
