"""factres: a deterministic resolver for MemoryAgentBench FactConsolidation.

The public Python API is importable from here (`from resolver import load, resolve, Memory`);
`__all__` lists it and `resolver.api` documents each name. The names resolve lazily (PEP 562
`__getattr__`), so `import resolver` imports nothing but the version. Every other module is
internal by convention.

Data flows one way, and the subpackages are its stages, each importing only those below it:

    text      lines -> facts (grammar, parser, parse cache, relation inventory)
    store     facts -> versioned keys and the provenance ledger
    haystack  rows -> questions, gold book and one store per context (this module)
    mab       MemoryAgentBench's own formats: memorize frame and prompt, exact match, result files
    plan      questions -> plans (lexicon, reading, rule and lexicon compilers, plan archive)
    models    the local-LLM lanes (planner, reader, repair) and their prompts
    search    plans -> paths -> predictions (scored path search, plain baseline)
    memory    text arriving piece by piece -> a store that answers (`Memory`)
    metrics   predictions -> metrics (scoring against the gold, paired statistics)
    results   run and oracle folders read and checked (schema, reader, derived values)
    run       runs executed and written (config, protocol, identity, run folder, score table)
    exchange  other systems' files in and out (`factres score`, `factres export`)
    report    run folders -> paper tables and figures
    serve     a memory behind an OpenAI-compatible endpoint (`factres serve`)
    cli       the `factres` command line
    api       the public names this package re-exports

`_version` (the version) sits below everything, then `errors` (the project's exception types),
`escape` (user text escaped once per output format: terminal, Markdown, LaTeX) and
`strict_json` (JSON read with no key given twice), which every stage may use. This `__init__`
imports `_version`, and `api` lazily, nothing else: the one upward import tests/test_layout.py
allows. The test checks the order and that no module imports another in a loop."""
from __future__ import annotations

from resolver._version import __version__

# The public names, in resolver.api's order; kept here so that `dir(resolver)` and `from
# resolver import *` import nothing until a name is used (a test keeps it equal to api.__all__).
__all__ = [
    "Answer", "Applied", "Comparison", "Dataset", "FactresError", "Gold", "IngestResult",
    "InputError", "Memory", "MemoryFileError", "MemoryLockedError", "PlanSet", "Prediction",
    "ProvenanceError", "Question",
    "Run", "RunConfig", "RunFolder", "__version__", "bundled_path", "compare_runs", "execute",
    "harness", "live_plan_sets", "load", "plan_sets", "read_run", "resolve",
]


def __getattr__(name: str):
    """A public name, imported from resolver.api when first asked for (then cached here)."""
    if name in __all__:
        from resolver import api
        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'resolver' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
