"""Where a whole `factres run --no-cache` process holds its memory, stage by stage, over the
262K context repeated (the rows of `scale.py --axes repeated`).

    python benchmarks/memory_phases.py [--repeats 64]

The parent writes the rows as scale.py does (`{"data": [row, row]}`, both rows carrying the
context repeated) and runs this script again as a child (`--child`), which wraps the library
functions that make up each stage, and orjson's reader for a document of 1 MB or more, and
runs `factres run --no-cache` in process. A sampling thread cannot see inside orjson (it holds
the interpreter's lock while it reads), so each wrapper reads the resident set and the
high-water mark (VmHWM, this process's own: ru_maxrss may be the forking parent's) on the way in and on the way out: a peak inside a call shows as
the mark rising between the two. One line per call, indented by depth: seconds since start,
resident MB and high-water MB (MB = 10^6 bytes). A breakdown, not a target: the target is
scale.py's, which measures the process from outside."""
from __future__ import annotations

import argparse
import functools
import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import private_env

MB = 10 ** 6
# (module, function) of each stage, in the order a run calls them
STAGES = (("resolver.run.runs", "load"), ("resolver.haystack", "read_rows"),
          ("resolver.haystack", "_one_copy"), ("resolver.haystack", "sha256_text"),
          ("resolver.text.cache", "load_parse"), ("resolver.haystack", "read_context"),
          ("resolver.run.runs", "load_plan_sets"), ("resolver.run.runs", "resolve_dataset"),
          ("resolver.run.runs", "readout_rows"), ("resolver.run.runs", "write_run"))


def child(command: list[str]) -> None:
    start = time.perf_counter()
    depth = [0]

    def mark(sign: str, name: str) -> None:
        with open("/proc/self/status") as f:
            status = dict(line.split(":", 1) for line in f)
        resident, high = (int(status[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM"))
        print(f"{time.perf_counter() - start:7.2f} s  {'  ' * depth[0]}{sign} {name:<24}"
              f"resident {resident / MB:6.1f} MB, high-water {high / MB:6.1f} MB",
              file=sys.__stderr__, flush=True)

    def watched(function, name, large=None):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            if large is not None and len(args[0]) < large:
                return function(*args, **kwargs)
            mark(">", name)
            depth[0] += 1
            try:
                return function(*args, **kwargs)
            finally:
                depth[0] -= 1
                mark("<", name)
        return wrapper

    # benchmarks/oracle.py would shadow the oracle package: the script's folder goes
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent]
    import orjson
    orjson.loads = watched(orjson.loads, "orjson.loads", large=MB)
    from oracle.cli import main
    for module, name in STAGES:
        mod = importlib.import_module(module)
        setattr(mod, name, watched(getattr(mod, name), name))
    for module, name in STAGES:            # the names callers imported before the wrapping
        for holder in ("resolver.haystack", "resolver.run.runs"):
            held = importlib.import_module(holder)
            if holder != module and hasattr(held, name):
                setattr(held, name, getattr(importlib.import_module(module), name))
    sys.argv = ["factres", *command]
    try:
        main()
    except SystemExit:
        pass
    mark("=", "end of the run")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=64)
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    from scale import repeated_rows
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        data, facts, questions = repeated_rows(args.repeats, scratch)
        print(f"factres run --no-cache, the 262K context repeated {args.repeats} times "
              f"({facts:,} facts, {questions} questions; the rows file "
              f"{data.stat().st_size / MB:.1f} MB)", flush=True)
        command = ["run", "--no-cache", "--no-progress", "--results-dir",
                   str(scratch / "results"), "--data", str(data)]
        done = subprocess.run([sys.executable, __file__, "--child", *command],
                              env=private_env(scratch / "cache"), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode:
            raise SystemExit(f"failed:\n{done.stderr}")
        print(done.stderr, end="")          # the marks (and the run's own notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
