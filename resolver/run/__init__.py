"""Stage 11, executing and writing runs: `RunConfig` (`config`), the code and environment
identity of a run (`identity`), the dev/test protocol (`protocol`), the run itself (`runs`: plans
compiled, questions resolved, scored), its folder on disk (`run_folder`: the id claimed, the
files written), and the score table every run writes (`tables`). The `Table` row model lives
here, not in report/, because a run writes its own table and report/ sits above run/.

May import: every stage below (`text` to `search`, `models` for the reader and repair lanes,
`metrics` for scoring, `results` for the folders' schema)."""
