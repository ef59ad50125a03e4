"""Stage 7, predictions -> metrics -> run folders: `RunConfig` (`config`), the code and
environment identity of a run (`identity`), the dev/test protocol (`protocol`),
MemoryAgentBench scoring with intervals (`scoring`, the one resolver module that reads gold),
the run itself (`runs`), its folder on disk (`run_folder`: the id claimed, the files written,
read back), the shapes of its files (`result_schema`) and the score table every run writes
(`tables`). The `Table` row model lives here, not in report/, because a run writes its
own table and report/ sits above run/.

May import: every stage below (`text` to `search`, and `models` for the reader and repair
lanes)."""
