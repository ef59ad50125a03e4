"""Stage 5, questions -> plans: the `Plan`/`PlanSet` records (`plans`), the lexicon of cue
phrases and type words (`lexicon`), relation signatures (`signatures`), the reading of a
question into base entities and cue spans (`question`), the type it asks for (`asked`) and the
history it asks for (`history`: "previous", "as of serial N", ...), the
rule and lexicon compilers (`compile_rules`, `compile_lexicon`), the live plan sets
(`planning`) and the archive of plan sets under plans/ (`archive`). No model and no gold here.

May import: `resolver.errors`, `resolver.text`, `resolver.store` and `resolver.haystack`."""
