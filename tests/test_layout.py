"""The house's layout: resolver/ is grouped by pipeline stage, each stage imports only the stages
below it, and no module of resolver/ or oracle/ imports another in a loop (lazy imports inside
functions count). The graph is built from the source with ast, so nothing is imported to check
it."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest
from import_graph import LAZY_API_EDGE, imports_of

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("resolver", "oracle")
# The stages in data-flow order; a module may import its own stage and the ones before it.
# `resolver` is the package itself (its version); `haystack` (rows -> questions and stores)
# sits between the store it builds and the plans that read its questions; `hub` (the rows of
# the Hugging Face dataset) just below it, which reads them as a file's. `escape` (user text
# per output format) and `strict_json` (JSON with no key twice) sit just above `errors`: every
# stage writes user text or reads JSON. `mab` (MemoryAgentBench's formats: pure functions) sits
# just above `haystack`, low enough for the memory to read its frame and prompt. `memory` (ingest
# and query) sits on the search it shares with runs; `metrics` (scoring) below `results` (the
# folders read and checked, whose derived values rescore rows) below `run` (which writes folders
# of that schema); `exchange` (other systems' files in and out) joins records to run folders;
# `serve` (the HTTP endpoint) on the memory, below only the command line. `_version`
# (the version string) sits below the package itself, whose `__init__` reads it; `api` (the
# public names the package re-exports) sits on top of everything.
STAGES = ("resolver._version", "resolver", "resolver.errors", "resolver.escape",
          "resolver.strict_json", "resolver.text", "resolver.store", "resolver.hub",
          "resolver.haystack",
          "resolver.mab", "resolver.plan", "resolver.models", "resolver.search",
          "resolver.memory", "resolver.metrics", "resolver.results", "resolver.run",
          "resolver.exchange", "resolver.report", "resolver.serve", "resolver.cli",
          "resolver.api")
# __init__, _version, api, errors, escape, strict_json, hub, haystack: the rest are stage
# folders
TOP_LEVEL_LIMIT = 8


def _modules() -> dict[str, Path]:
    """Dotted name -> file for every module of both packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            if "data" in parts:
                continue
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _targets(path: Path, name: str) -> set[str]:
    """The modules of both packages that `path` imports anywhere in its body (for `from X import
    y`: X, and X.y when y is a submodule)."""
    return {n for n in imports_of(path) if n in MODULES and n != name}


# The one exception to the stage order: the package's `__init__` resolves the public names
# lazily (PEP 562) from `resolver.api`, the top stage. It is taken out of the graph here, and
# the tests below check that it is the only upward import of `__init__` and that it is lazy.
RAW_GRAPH = {name: _targets(path, name) for name, path in MODULES.items()}
GRAPH = {name: targets - ({LAZY_API_EDGE[1]} if name == LAZY_API_EDGE[0] else set())
         for name, targets in RAW_GRAPH.items()}


def _stage(module: str) -> int | None:
    """The rank of the longest stage name that is `module` or a package holding it."""
    matches = [(len(stage), rank) for rank, stage in enumerate(STAGES)
               if module == stage or module.startswith(stage + ".")]
    return max(matches)[1] if matches else None


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_cycle_finder_finds_a_loop():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_resolver_or_oracle():
    assert _cycles(GRAPH) == []


def test_every_resolver_module_belongs_to_a_stage():
    assert sorted(m for m in MODULES if m.startswith("resolver") and _stage(m) is None) == []


def test_no_stage_imports_a_later_stage():
    upward = [f"{a} -> {b}" for a in sorted(GRAPH) if a.startswith("resolver")
              for b in sorted(GRAPH[a]) if b.startswith("resolver") and _stage(b) > _stage(a)]
    assert upward == []


def test_the_package_init_imports_only_the_version_and_lazily_the_api():
    """`import resolver` stays cheap: its `__init__` imports `_version` at the top and
    `resolver.api` only inside `__getattr__`, and nothing else of the package."""
    assert RAW_GRAPH["resolver"] == {"resolver._version", "resolver.api"}
    tree = ast.parse((ROOT / "resolver" / "__init__.py").read_text("utf-8"))
    top = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert "resolver._version" in top and "resolver" not in top
    (getter,) = [n for n in tree.body if isinstance(n, ast.FunctionDef)
                 and n.name == "__getattr__"]
    lazy = {a.name for n in ast.walk(getter) if isinstance(n, ast.ImportFrom)
            and n.module == "resolver" for a in n.names}
    assert lazy == {"api"}


def test_no_module_of_the_package_imports_the_api():
    """The public names are for users: no module of resolver/ or oracle/ imports them."""
    assert sorted(m for m, targets in GRAPH.items() if "resolver.api" in targets) == []


def test_resolver_never_imports_oracle():
    assert [f"{a} -> {b}" for a in sorted(GRAPH) if a.startswith("resolver")
            for b in sorted(GRAPH[a]) if b.startswith("oracle")] == []


def test_the_walker_sees_lazy_imports():
    # runs imports the reader lane inside execute(); the edge must be in the graph.
    assert "resolver.models.reader" in GRAPH["resolver.run.runs"]


def test_few_modules_directly_under_resolver():
    top = sorted(p.name for p in (ROOT / "resolver").glob("*.py"))
    assert len(top) <= TOP_LEVEL_LIMIT, top


def test_no_command_module_imports_the_group():
    assert sorted(m for m in GRAPH if m.startswith("resolver.cli.")
                  and "resolver.cli" in GRAPH[m]) == []


def test_the_lazy_command_map_matches_the_commands():
    from oracle.cli import main
    ctx = click.Context(main)
    for name, (target, summary) in sorted(main.lazy.items()):
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name, target
        assert summary == command.get_short_help_str(10_000), name


def test_help_imports_no_command_module():
    code = ("import sys\nfrom oracle.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('resolver.', 'oracle.', "
            "'numpy', 'lark'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.splitlines()[-1]
    loaded = set(ast.literal_eval(out))
    # resolver.escape: the error messages' terminal escaping, no command
    assert loaded <= {"resolver.cli", "resolver.cli.options", "resolver.errors", "resolver.escape",
                      "resolver._version", "oracle.cli"}, sorted(loaded)


SUBPACKAGES = [s for s in STAGES if (ROOT / Path(*s.split(".")) / "__init__.py").is_file()]


@pytest.mark.parametrize("stage", SUBPACKAGES[1:])
def test_each_subpackage_says_what_it_holds_and_may_import(stage):
    path = ROOT / Path(*stage.split(".")) / "__init__.py"
    doc = ast.get_docstring(ast.parse(path.read_text("utf-8"))) or ""
    assert "May import" in doc or stage == "resolver.cli", stage


# What spells MemoryAgentBench's own formats: the memorize frame, the exact match, the result
# records' field names. Defined in one room, `resolver.mab`, and nowhere else.
MAB_NAMES = ("FRAME_OPENING", "FRAME_INSTRUCTION", "FRAME_ACKNOWLEDGEMENT", "frame_chunk",
             "chunk_context", "prompt", "question_of", "prompt_start", "normalize_answer",
             "substring_exact_match", "parse_output", "harness_score", "MAB_FIELDS",
             "harness_metrics", "file_name")
RUN_MODULE_LIMIT = 9


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments)."""
    out = set()
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def test_memoryagentbench_formats_live_in_one_room():
    where = {name: sorted(m for m, path in MODULES.items() if m.startswith("resolver.")
                          and name in _defined(path))
             for name in MAB_NAMES}
    assert {n: ms for n, ms in where.items()
            if not ms or any(not m.startswith("resolver.mab.") for m in ms)} == {}


def test_the_run_room_holds_few_modules():
    modules = sorted(p.name for p in (ROOT / "resolver" / "run").glob("*.py")
                     if p.name != "__init__.py")
    assert len(modules) <= RUN_MODULE_LIMIT, modules
