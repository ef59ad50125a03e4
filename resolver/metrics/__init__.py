"""Stage 9, predictions -> metrics: a run scored against the gold (`scoring`: each prediction's
EM by MemoryAgentBench's exact match, the stale rate, per-source and pooled rows with bootstrap
intervals; the one resolver module that reads gold, with `exchange.imported`), and paired
statistics of two systems over the same questions (`stats`: paired bootstrap, exact McNemar on
scipy.stats; pure functions over outcome vectors).

May import: every stage below it (`haystack` for the questions and gold, `mab` for the exact
match, `search` for the predictions and, lazily, `plan` for the stale rate's keys)."""
