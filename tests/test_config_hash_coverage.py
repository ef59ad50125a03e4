"""A run's identity hashes the code that decides its predictions: every resolver module that the
compilers and the resolver import (transitively, lazy imports included) is hashed, or is on the
short list of modules that cannot change a prediction (its inputs are hashed another way)."""
from __future__ import annotations

import ast
from pathlib import Path

import resolver
from resolver.run.identity import LEXICON_FILES, LIVE_COMPILER_FILES, RESOLVER_FILES

PACKAGE = Path(resolver.__file__).resolve().parent
ROOTS = ("search/resolve.py", "search/path_search.py", "plan/compile_rules.py",
         "plan/compile_lexicon.py")
# Hashed another way, or cannot change a prediction.
NOT_DECIDING = {
    "__init__.py": "the package version, recorded on its own",
    "errors.py": "exception types only",
    "text/__init__.py": "a docstring",
    "text/grammar.py": "the grammar file's sha256 is recorded on its own",
    "haystack.py": "the data's sha256 is recorded on its own",
    "text/cache.py": "a parse cache keyed by the data and grammar sha256",
    "plan/__init__.py": "a docstring",
    "plan/plans.py": "the plan data types; plans are hashed as plan sets",
    "store/__init__.py": "a docstring",
    "search/__init__.py": "a docstring",
}


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


def _imports(name: str) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse((PACKAGE / name).read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                for module in (node.module, f"{node.module}.{alias.name}"):
                    if (found := _file_of(module)) is not None:
                        out.add(found)
        elif isinstance(node, ast.Import):
            out.update(f for a in node.names if (f := _file_of(a.name)) is not None)
    return out


def test_every_module_that_decides_a_prediction_is_hashed():
    seen, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imports(name))
    hashed = set(LIVE_COMPILER_FILES) | set(RESOLVER_FILES) | set(LEXICON_FILES)
    assert sorted(seen - hashed - set(NOT_DECIDING)) == []


def test_every_hashed_file_exists():
    hashed = set(LIVE_COMPILER_FILES) | set(RESOLVER_FILES) | set(LEXICON_FILES)
    assert sorted(n for n in hashed if not (PACKAGE / n).is_file()) == []
