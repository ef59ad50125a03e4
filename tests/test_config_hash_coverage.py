"""A run's identity hashes the code that decides its predictions: every resolver module that the
compilers and the resolver import (transitively) is hashed, or is on the short list of modules
that cannot change a prediction (its inputs are hashed another way)."""
from __future__ import annotations

import re
from pathlib import Path

from resolver.runs import LEXICON_FILES, LIVE_COMPILER_FILES, RESOLVER_FILES

PACKAGE = Path(__file__).resolve().parent.parent / "resolver"
ROOTS = ("resolve.py", "search.py", "compile_rules.py", "compile_lexicon.py")
# Hashed another way, or cannot change a prediction.
NOT_DECIDING = {
    "errors.py": "exception types only",
    "grammar.py": "the grammar file's sha256 is recorded on its own",
    "haystack.py": "the data's sha256 is recorded on its own",
    "cache.py": "a parse cache keyed by the data and grammar sha256",
    "plans.py": "the plan data types; plans are hashed as plan sets",
    "__init__.py": "the package version, recorded on its own",
}
_IMPORT = re.compile(r"^\s*from \.(\w*) import|^\s*from \. import (\w+)", re.M)


def _imports(name: str) -> set[str]:
    text = (PACKAGE / name).read_text("utf-8")
    out = set()
    for module, sibling in _IMPORT.findall(text):
        out.add(f"{module or sibling}.py")
    return {m for m in out if (PACKAGE / m).is_file()}


def test_every_module_that_decides_a_prediction_is_hashed():
    seen, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_imports(name))
    hashed = set(LIVE_COMPILER_FILES) | set(RESOLVER_FILES) | set(LEXICON_FILES)
    assert sorted(seen - hashed - set(NOT_DECIDING)) == []
