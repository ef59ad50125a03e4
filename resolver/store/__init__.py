"""Stage 2, facts -> store: versions per (subject, relation) key, append-only (`fact_store`),
the provenance ledger of typed, never-deleting operations behind it and its operation log
(`provenance`), a context's text without the facts a later serial of their key supersedes
(`prune`), and where a memory's state lasts: the `Record` interface and the in-memory record
(`record`), a SQLite memory file (`memory_file`) and its writer lock (`writer_lock`).

May import: `resolver.errors` and `resolver.text`. Above it, `resolver.haystack` builds stores
from rows."""
