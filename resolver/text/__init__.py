"""Stage 1, text -> facts: the fact-line grammar (`grammar`, over grammars/facts.lark), the
parser that turns a context into `Fact`s (`facts`), where the facts of a line holding several
begin (`segment`, shared with the memory), the parse cache (`cache`), and the relation
inventory the grammar defines (`relations`: names, templates, families, answer types). The
inventory is the vocabulary every later stage speaks, which is why it lives here and not with
the plans.

May import: `resolver` (the version) and `resolver.errors`; nothing above."""
