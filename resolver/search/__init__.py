"""Stage 7, plans -> paths -> predictions: the relaxed, scored path search over a store
(`path_search`), the hops it reads from the store version by version (`hops`), the
`Hop`/`Candidate` records it produces (`candidates`), and the resolver
that runs every plan of every plan set and keeps the best complete path (`resolve`, with the
plain-mode baseline: the plans in order, the latest version at every hop), and how sure its
answer is (`confidence`: the ordered label, read from the winning path and its rivals), the
contested cells the winning path reads (`contested`) and the path walked again at the versions
a history cue of the question asks for (`history`). No model and no gold at execution time.

May import: the stages below (`text`, `store`, `haystack`, `plan`); it needs no model lane."""
