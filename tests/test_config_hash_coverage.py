"""A run's identity hashes the code that decides its predictions and scores: every resolver file
that the resolver, the compilers, the model lanes and scoring import (transitively, lazy and
relative imports included) is in the run id's hash (`RESOLVER_FILES`), and the prompts the
lanes send are too. Live plan sets are pinned by the code that compiles them
(`LIVE_COMPILER_FILES`)."""
from __future__ import annotations

from pathlib import Path

from import_graph import LAZY_API_EDGE, imports_of

import resolver
from resolver.run.identity import LIVE_COMPILER_FILES, RESOLVER_FILES

PACKAGE = Path(resolver.__file__).resolve().parent
DECIDING_ROOTS = ("search/resolve.py", "search/path_search.py", "plan/compile_rules.py",
                  "plan/compile_lexicon.py", "models/reader.py", "models/repair.py",
                  "models/compile_ollama.py", "metrics/scoring.py", "memory/readout.py")
COMPILER_ROOTS = ("plan/compile_rules.py", "plan/compile_lexicon.py", "plan/planning.py")


def _file_of(module: str) -> str | None:
    """resolver.a.b -> "a/b.py" (or "a/b/__init__.py"), None outside the package."""
    if module != "resolver" and not module.startswith("resolver."):
        return None
    parts = module.split(".")[1:]
    if not parts:
        return "__init__.py"
    rel = Path(*parts)
    for candidate in (rel.with_suffix(".py"), rel / "__init__.py"):
        if (PACKAGE / candidate).is_file():
            return candidate.as_posix()
    return None


def _closure(roots: tuple[str, ...]) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for module in imports_of(PACKAGE / name, PACKAGE.parent):
            if name == "__init__.py" and module == LAZY_API_EDGE[1]:
                continue      # the public names, resolved lazily: no run imports them
            found = _file_of(module)
            if found is not None:
                todo.append(found)
    return seen


def test_every_module_that_decides_a_run_is_in_its_identity():
    assert sorted(_closure(DECIDING_ROOTS) - set(RESOLVER_FILES)) == []


def test_the_prompts_the_lanes_send_are_in_the_identity():
    prompts = sorted(p.relative_to(PACKAGE).as_posix()
                     for p in (PACKAGE / "models" / "prompts").glob("*.txt"))
    assert prompts and set(prompts) <= set(RESOLVER_FILES)


def test_every_module_that_makes_live_plans_pins_them():
    assert sorted(_closure(COMPILER_ROOTS) - set(LIVE_COMPILER_FILES)) == []


def test_the_walker_sees_relative_imports(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f():\n    from .b import g\n")
    assert "pkg.b" in imports_of(tmp_path / "pkg" / "a.py", tmp_path)


def test_every_hashed_file_exists():
    hashed = set(LIVE_COMPILER_FILES) | set(RESOLVER_FILES)
    assert sorted(n for n in hashed if not (PACKAGE / n).is_file()) == []
