"""Stage 9, run folders -> tables and figures for papers: the folders read (`folders`), the
paper tables mab-fc, mab-nbest, mab-ceiling and mab-ref (`paper_tables`), PNG figures
(`figures`) and the published reference points (`references`). Reads folders only; it never
recomputes a score.

May import: `resolver.errors` and `resolver.run` (file names, the results folder, the `Table`
row model)."""
