"""Stage 8, text arriving piece by piece -> a store that answers: the `Memory` object (`memory`:
`ingest`, `query`, `reset`, read access to the store, ledger, history and frontier, and the
`Answer` and `IngestResult` records, `Memory.open` for a memory kept in a file), the streaming
fact reader that cuts text arriving in any chunks into facts (`stream`), the readout, a store's
cells for one question as short text for a language model to read (`readout`: from a store and
a prediction, so `Memory.readout` and a run's readout.jsonl share it), the reader's state as a
file keeps it (`reader_state`), what `forget` erases (`erasure`) and the texts `factres memory
ingest` feeds (`sources`). The MemoryAgentBench harness's own text shapes it reads (the
memorize frame, the instruction prompt around a question) live in `mab.harness`.

A memory answers through the run's own code path: the live plan sets and the path search over a
`FactStore`. No gold here.

May import: the stages below it (`errors`, `text`, `store`, `haystack`, `mab`, `plan`,
`models`, `search`); `metrics`, `run` and what follows build on it."""
