"""Stage 14, a memory behind an OpenAI-compatible endpoint: `factres serve` answers
`POST /v1/chat/completions` with a `Memory` per conversation, so a harness that talks to models
through the OpenAI API evaluates factres with no adapter code.

`config` (`ServeConfig`: where to bind, the key, the body limit, the model names, the cache
budget, the bounds on slow clients), `body` (the request body read within its size and time
limits), `request` (the request body checked), `question` (the question found in the last
user message), `conversation` (a conversation split into its memory part and its question, the
memory's cache key, the memory built from it),
`cache` (`MemoryCache`: memories by key, least recently used out, bounded by an estimate of
their resident bytes), `named` (named memories, `--store`: one memory file each, the
prefix rule for a resent conversation, the open-file pool), `reply` (the `chat.completion`
object, its streamed chunks and the `factres` field), `readout` (the model name
`factres-readout`, whose reply is the memory's readout), `api_errors` (OpenAI's error
objects), `app` (`create_app(config)`, the Starlette app, and `serve` / `serving`, which run it
on uvicorn).

Only `app` imports the web stack (Starlette, uvicorn: the `serve` extra); nothing imports
`app` but the `serve` command, inside its function, so no other command loads the stack.

May import: the stages below it (`errors`, `text`, `store`, `haystack`, `plan`, `models`,
`search`, `memory`, `run`, `report`); only `cli` builds on it."""
