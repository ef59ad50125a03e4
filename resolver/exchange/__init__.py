"""Stage 12, other systems' files in and out of run folders: their predictions scored into a run
folder (`imported`, `factres score`: MemoryAgentBench result files and generic JSONL, CSV or
JSON read by `mab.result_files`), and a run written back as the harness's result files
(`export`, `factres export`, shaped by `mab.result_records`).

May import: every stage below it (`mab`, `metrics`, `results`, `run`)."""
