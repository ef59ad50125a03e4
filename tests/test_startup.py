"""Each command imports only what it uses: numpy only where a bootstrap interval is computed, scipy
only where a paired statistic is (resolver/metrics/stats.py; never for a run's own intervals), Lark
only where a context is parsed (not on a parse-cache hit, not to list the relation templates),
Starlette and uvicorn only where `factres serve` starts its server (resolver/serve/app.py);
and a run, `--help` and a cached parse load none of the modules a run once loaded for one small
thing (NOT_IN_A_RUN). Each case runs the command in a fresh interpreter and lists the heavy
modules it loaded. (Speed itself is measured by benchmarks/commands.py, never by a test.)"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from import_graph import imports_of

from resolver.haystack import BUNDLED, bundled_path

ROOT = Path(__file__).resolve().parents[1]
# The web stack (the serve extra) loads only when `factres serve` starts a server.
HEAVY = ("numpy", "scipy", "lark", "lark_cython", "starlette", "uvicorn")

# What no run needs, each a module and its submodules (issue 35): annotated_types (the
# run-folder schema bounds an EM through a pydantic hook of its own) and difflib (only an
# error's "did you mean" needs it).
NOT_IN_A_RUN = ("annotated_types", "difflib")

_CODE = """
import sys
from oracle.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code or 0
print(code, (sorted({m.split(".")[0] for m in sys.modules} & set(%r)),
             sorted(n for n in %r if any(m == n or m.startswith(n + ".") for m in sys.modules))))
""" % (HEAVY, NOT_IN_A_RUN)


def _loaded(args: list[str], cache: Path) -> tuple[set[str], set[str]]:
    """The HEAVY packages and the NOT_IN_A_RUN modules a command loaded."""
    env = dict(os.environ, FACTRES_CACHE=str(cache))
    out = subprocess.run([sys.executable, "-c", _CODE, *args], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env).stdout.splitlines()[-1]
    code, _, loaded = out.partition(" ")
    assert code == "0", (args, out)
    heavy, unneeded = ast.literal_eval(loaded)
    return set(heavy), set(unneeded)


def _heavy_modules(args: list[str], cache: Path) -> set[str]:
    return _loaded(args, cache)[0]


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A parse cache holding the 6K and 262K contexts."""
    cache = tmp_path_factory.mktemp("startup-cache")
    for size in ("6k", "262k"):
        _heavy_modules(["parse", str(bundled_path(BUNDLED[size]))], cache)
    return cache


def test_a_parse_that_misses_the_cache_loads_lark_and_not_numpy(tmp_path):
    loaded = _heavy_modules(["parse", str(bundled_path(BUNDLED["6k"]))], tmp_path)
    assert "lark" in loaded and "numpy" not in loaded


@pytest.mark.parametrize("args", [
    ["--help"],
    ["run", "--help"],
    ["serve", "--help"],
    ["parse", str(bundled_path(BUNDLED["262k"]))],
    ["parse", str(bundled_path(BUNDLED["6k"])), "--json"],
    ["history", "australia", "--relation", "capital"],
    ["frontier", "--relation", "capital"],
    ["table", "dev-6k-search-typed-2"],
    ["plans", "list"],
], ids=lambda a: " ".join(Path(x).name for x in a))
def test_commands_that_compute_no_interval_and_hit_the_cache_load_neither(args, warm_cache):
    assert _heavy_modules(args, warm_cache) == set()


def test_a_scored_run_loads_numpy_and_not_lark_nor_what_it_does_not_use(warm_cache, tmp_path):
    heavy, unneeded = _loaded(["run", "--results-dir", str(tmp_path), "--no-progress"],
                              warm_cache)
    assert heavy == {"numpy"}
    assert unneeded == set()


def test_only_the_statistics_module_imports_scipy():
    """Read from the source, lazy imports included: commands other than those computing paired
    statistics cannot load scipy (the oracle's AUC and permutation test stay numpy)."""
    users = sorted(p.relative_to(ROOT).as_posix() for package in ("resolver", "oracle")
                   for p in (ROOT / package).rglob("*.py")
                   if any(m.split(".")[0] == "scipy" for m in imports_of(p)))
    assert users == ["resolver/metrics/stats.py"]


def test_the_paper_tables_load_none(warm_cache, tmp_path):
    loaded = _heavy_modules(["tables", "dev-6k-search-reading", "--out", str(tmp_path)],
                            warm_cache)
    assert loaded == set()


def test_paired_statistics_load_scipy(warm_cache, tmp_path):
    """compare and tables --baseline compute paired tests: they load scipy (and numpy)."""
    assert _heavy_modules(["compare", "dev-6k-plain-confidence", "dev-6k-search-confidence"],
                          warm_cache) == {"numpy", "scipy"}
    assert _heavy_modules(["tables", "dev-6k-search-reading", "--out", str(tmp_path),
                           "--table", "mab-fc", "--baseline", "dev-6k-plain-reading"],
                          warm_cache) == {"numpy", "scipy"}


def test_an_unscored_test_run_loads_neither(warm_cache, tmp_path):
    loaded = _heavy_modules(["run", "--split", "test", "--allow-dirty", "--results-dir",
                             str(tmp_path), "--no-progress"], warm_cache)
    assert loaded == set()


def test_only_the_server_module_imports_the_web_stack():
    """Read from the source, lazy imports included: no module but resolver/serve/app.py imports
    Starlette or uvicorn, and no module but the serve command imports it."""
    stack = sorted(p.relative_to(ROOT).as_posix() for package in ("resolver", "oracle")
                   for p in (ROOT / package).rglob("*.py")
                   if any(m.split(".")[0] in ("starlette", "uvicorn", "fastapi")
                          for m in imports_of(p)))
    assert stack == ["resolver/serve/app.py"]
    users = sorted(p.relative_to(ROOT).as_posix() for package in ("resolver", "oracle")
                   for p in (ROOT / package).rglob("*.py")
                   if "resolver.serve.app" in imports_of(p))
    assert users == ["resolver/cli/serve.py"]
