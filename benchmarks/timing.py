"""What the speed benchmarks share: timing whole processes in alternating rounds, the reference
floor (benchmarks/regex_parse.py), the `factres` command and the synthetic test-size rows.

Not a benchmark itself; commands.py and resolve.py import it (run them from anywhere: Python
puts benchmarks/ on the path of a script that lives there)."""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGEX_SCRIPT = ROOT / "benchmarks" / "regex_parse.py"
SYNTHETIC_SCRIPT = ROOT / "benchmarks" / "synthetic.py"
CONTEXT_262K = ROOT / "resolver" / "data" / "fc" / "factconsolidation_262k_context.txt"
TEST_SIZES = ("32k", "64k", "262k")


def factres() -> list[str]:
    """The `factres` console script beside this interpreter (as a user runs it), else the
    same entry point through `python -c`."""
    script = Path(sys.executable).parent / "factres"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from oracle.cli import main; "
            "sys.argv[0] = 'factres'; sys.exit(main())"]


def reference_command() -> list[str]:
    """The floor every whole-process figure is compared with: a bare regex parse of the 262K
    context in a fresh interpreter (stdlib only)."""
    return [sys.executable, str(REGEX_SCRIPT), str(CONTEXT_262K)]


@dataclass
class Timed:
    name: str
    command: list[str]
    seconds: list[float]
    cpu: list[float] = field(default_factory=list)   # user + system, workers included

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def best_cpu(self) -> float:
        return min(self.cpu)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def time_processes(commands: dict[str, list[str]], rounds: int, env: dict | None = None,
                   before: dict | None = None) -> dict[str, Timed]:
    """Wall time of each command as a whole process (start to exit, output discarded), the
    commands run one after the other, in alternating order from round to round so that each
    sees the same machine noise. `before[name]()` runs untimed before each run of `name` (say,
    to clear a folder). A command that fails stops the benchmark with its error output."""
    timed = {name: Timed(name, cmd, []) for name, cmd in commands.items()}
    names = list(commands)
    for round_ in range(rounds):
        for name in (names if round_ % 2 == 0 else names[::-1]):
            if before and name in before:
                before[name]()
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(commands[name], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, cwd=ROOT)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                sys.exit(f"{name} failed ({' '.join(commands[name])}):\n"
                         f"{done.stderr.decode(errors='replace')}")
            timed[name].seconds.append(elapsed)
            # the process's CPU time and its workers' (each waited for before it exits)
            timed[name].cpu.append(after.ru_utime - used.ru_utime
                                   + after.ru_stime - used.ru_stime)
    return timed


def synthetic_rows(folder: Path, sizes: tuple[str, ...] = TEST_SIZES) -> list[Path]:
    """Seeded synthetic rows (100 single-hop + 100 multi-hop questions) for each size, written
    by benchmarks/synthetic.py into `folder`."""
    paths = []
    for size in sizes:
        subprocess.run([sys.executable, str(SYNTHETIC_SCRIPT), "--size", size, "--out",
                        str(folder)], check=True, capture_output=True)
        paths.append(folder / f"synthetic_{size}.json")
    return paths


def private_env(cache: Path) -> dict:
    """The environment of the timed processes: a private parse cache, and Python's compiled
    bytecode kept in a private folder beside it (`PYTHONPYCACHEPREFIX`), whatever
    `PYTHONDONTWRITEBYTECODE` says: an installed package has its modules compiled (pip compiles
    them on install; a checkout writes `__pycache__` on its first run), so a user's process
    reads them, where a process that may not write bytecode compiles every module of the
    package from source at each start (about 0.1 s of a run). The first process of each
    benchmark (the cache fill) writes it; nothing is written into the checkout."""
    env = dict(os.environ, FACTRES_CACHE=str(cache),
               PYTHONPYCACHEPREFIX=str(cache.parent / "bytecode"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def empty_folder(folder: Path):
    """A `before` hook that leaves `folder` empty (each run writes a new run folder there)."""
    def clear() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    return clear


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def instructions(command: list[str], env: dict, cwd: Path) -> int:
    """Machine instructions of a process (valgrind's cachegrind, its `I refs`)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                           "--cachegrind-out-file=/dev/null", *command], env=env, cwd=cwd,
                          capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"valgrind failed:\n{done.stderr}")
    return int(found[1].replace(",", ""))


def stage_rounds(script: str, rounds: int, before: Path | None, count_instructions: bool
                 ) -> tuple[dict[str, list[dict]], dict[str, tuple[int, int]]]:
    """What a stage script (`plan_stage.py`, `search_stage.py`) measures: fresh processes of
    `script --child ROWS` over the synthetic rows, for this checkout and `before` (a checkout of
    the code before a change, first on PYTHONPATH), `rounds` each in alternating order after
    one untimed process per tree (the parse cache and the bytecode); each prints its figures as
    JSON on its last line. With `count_instructions`: per tree, valgrind's instruction counts
    of `--child` and of `--child-no-stage` (the same process without the stage)."""
    trees = {"this checkout": ROOT}
    if before:
        trees = {f"before ({before})": before.resolve(), **trees}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        rows = [str(p) for p in synthetic_rows(scratch / "rows")]
        base_env = private_env(scratch / "cache")

        def env_of(tree: Path) -> dict:
            return dict(base_env, PYTHONPATH=os.pathsep.join(
                [str(tree), str(ROOT / "benchmarks"), base_env.get("PYTHONPATH", "")]))

        def once(tree: Path) -> dict:
            done = subprocess.run([sys.executable, script, "--child", *rows],
                                  env=env_of(tree), capture_output=True, text=True, cwd=scratch)
            if done.returncode:
                raise SystemExit(f"the child of {tree} failed:\n{done.stderr}")
            return json.loads(done.stdout.strip().splitlines()[-1])

        for tree in trees.values():
            once(tree)
        found: dict[str, list[dict]] = {name: [] for name in trees}
        names = list(trees)
        for round_ in range(rounds):
            for name in (names if round_ % 2 == 0 else names[::-1]):
                found[name].append(once(trees[name]))
        counted = {}
        if count_instructions:
            for name, tree in trees.items():
                counted[name] = tuple(instructions([sys.executable, script, flag, *rows],
                                                   env_of(tree), scratch)
                                      for flag in ("--child", "--child-no-stage"))
    return found, counted


def stage_arguments(doc: str) -> argparse.Namespace:
    """The command line of a stage script (`stage_rounds`): --rounds, --before,
    --instructions, and the children's own flags."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--before", type=Path, help="a checkout of the code before a change")
    ap.add_argument("--instructions", action="store_true",
                    help="count the stage's machine instructions with valgrind as well")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    ap.add_argument("--child-no-stage", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return ap.parse_args()


def print_instructions(counted: dict[str, tuple[int, int]], stage: str) -> None:
    """`stage_rounds`' instruction counts: per tree, the stage's own (with it less without)."""
    if not counted:
        return
    print(f"\nmachine instructions of the {stage} (valgrind cachegrind: a process with the "
          f"{stage} less one without)")
    stages = {name: with_ - without for name, (with_, without) in counted.items()}
    for name, count in stages.items():
        print(f"| {name:<40} | {count / 1e6:,.1f} M |")
    if len(stages) == 2:
        before, after = stages.values()
        print(f"{stage}, instructions: {after / before:.2f}x the code before")
