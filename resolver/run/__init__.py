"""Stage 8, predictions -> metrics -> run folders: `RunConfig` (`config`), the code and environment
identity of a run (`identity`), the dev/test protocol (`protocol`), MemoryAgentBench scoring
with intervals (`scoring`, the one resolver module that reads gold, with `imported`), paired
statistics of two systems over the same questions (`stats`: paired bootstrap, exact McNemar;
pure functions over outcome vectors), the run itself (`runs`), its folder on disk (`run_folder`:
the id claimed, the files written), the shapes of its files (`result_schema`), the one reader of
run and oracle folders that validates them (`reader`, which every command that reads a folder
asks; its `load_data` hands the analyses the gold), the score table every run writes (`tables`),
and other systems' predictions (`harness_files` reads them, `imported` scores them into a run
folder for `factres score`; `export` writes a run back in the harness's format). The `Table` row model lives here, not in report/, because a run
writes its own table and report/ sits above run/.

May import: every stage below (`text` to `search`, and `models` for the reader and repair
lanes)."""
