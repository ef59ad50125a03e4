"""Stage 2, facts -> store: versions per (subject, relation) key, append-only (`fact_store`),
and the provenance ledger of typed, never-deleting operations behind it (`provenance`).

May import: `resolver.errors` and `resolver.text`. Above it, `resolver.haystack` builds stores
from rows."""
