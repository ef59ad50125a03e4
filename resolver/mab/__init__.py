"""Stage 4, MemoryAgentBench's own formats, as pure functions and records (no run folders): the
harness's text shapes around a memory (`harness`: the memorize frame, the chunker, the
instruction prompt and the question inside it), its exact match (`exact_match`: the answer
normalisation, `substring_exact_match`, the parsing of a raw output), and its result files
(`result_files` reads them and other systems' generic prediction files, with the field names
`MAB_FIELDS`; `result_records` writes a record and a file as the harness does, with its
per-record metrics and file name). Where factres speaks MemoryAgentBench, it speaks through here.

May import: `errors`, `escape`, `strict_json` and `haystack` (its byte decoding and sha256).
`memory` reads the frame and prompt; `metrics` scores with the exact match; `exchange` joins
records to run folders."""
