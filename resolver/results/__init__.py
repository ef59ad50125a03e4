"""Stage 10, run and oracle folders read and checked: the shapes of their files
(`result_schema`, validated with pydantic), the one reader every command that reads a folder
asks (`reader`: found by id or path, validated, its data and gold loaded on demand), and the
values a folder derives from its own rows, recomputed or bounded before they are believed
(`derived`).

May import: every stage below it. It sits below `run`, whose folder writer shares the schema,
and reads `metrics.scoring` lazily (the pooled rows), which sits below it."""
