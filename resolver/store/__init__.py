"""Stage 2, facts -> store: versions per (subject, relation) key, append-only (`fact_store`),
the provenance ledger of typed, never-deleting operations behind it (`provenance`), and a
context's text without the facts a later serial of their key supersedes (`prune`).

May import: `resolver.errors` and `resolver.text`. Above it, `resolver.haystack` builds stores
from rows."""
