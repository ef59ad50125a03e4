"""The import graph of the project's packages, read from the source with ast (nothing is
imported): what each module imports anywhere in its body, lazy imports in functions included.
Shared by the layout test and the gold-isolation test."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The package's `__init__` imports the public API module lazily (PEP 562 `__getattr__`): the
# one import from a lower stage to a higher one the layout allows. Graph walkers leave it out.
LAZY_API_EDGE = ("resolver", "resolver.api")


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imports_of(path: Path, root: Path = ROOT) -> set[str]:
    """Every module `path` imports anywhere in its body, as absolute dotted names. For
    `from X import y` both X and X.y are listed (y may be a submodule)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found
