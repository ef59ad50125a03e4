"""Stage 7, text arriving piece by piece -> a store that answers: the `Memory` object (`memory`:
`ingest`, `query`, `reset`, read access to the store, ledger, history and frontier, and the
`Answer` and `IngestResult` records), the streaming fact reader that cuts text arriving in any
chunks into facts (`stream`), and the MemoryAgentBench harness's own text shapes (`harness`: the
memorize frame, the instruction prompt around a question, how the harness chunks a context),
which a server and a load benchmark reuse.

A memory answers through the run's own code path: the live plan sets and the path search over a
`FactStore`. No gold here.

May import: the stages below it (`errors`, `text`, `store`, `haystack`, `plan`, `models`,
`search`); `run` and what follows build on it."""
