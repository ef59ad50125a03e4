"""factres: a deterministic resolver for MemoryAgentBench FactConsolidation.

Data flows one way, and the subpackages are its stages, each importing only those below it:

    text     lines -> facts (grammar, parser, parse cache, relation inventory)
    store    facts -> versioned keys and the provenance ledger
    haystack rows -> questions, gold book and one store per context (this module)
    plan     questions -> plans (lexicon, reading, rule and lexicon compilers, plan archive)
    models   the local-LLM lanes (planner, reader, repair) and their prompts
    search   plans -> paths -> predictions (scored path search, plain baseline)
    memory   text arriving piece by piece -> a store that answers (`Memory`)
    run      predictions -> metrics -> run folders (scoring, protocol, run identity)
    report   run folders -> paper tables and figures
    serve    a memory behind an OpenAI-compatible endpoint (`factres serve`)
    cli      the `factres` command line

`errors` (the project's exception types) sits below them all, then `escape` (user text escaped
once per output format: terminal, Markdown, LaTeX) and `strict_json` (JSON read with no key
given twice), which every stage may use. tests/test_layout.py checks the
order and that no module imports another in a loop."""
from __future__ import annotations

__version__ = "0.1.0"
