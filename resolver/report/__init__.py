"""Stage 13, run folders -> tables, figures and comparisons for papers: the folders read
(`folders`), the paper tables mab-fc, mab-nbest, mab-ceiling and mab-ref (`paper_tables`), PNG
figures (`figures`), the published reference points (`references`), and runs compared question
by question (`compare`, rendered by `compare_report`), and a run's questions read out for an LLM
reader (`readouts`). Reads folders only; it never recomputes a score (the paired statistics of
`compare` work on the EMs the folders record).

May import: `resolver.errors`, `resolver.escape` and `resolver.run` (file names, the results
folder, the one reader, the `Table` row model, the paired statistics), and the memory's readout
renderer (`readouts`)."""
