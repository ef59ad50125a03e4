"""Stage 6, every model lane in one wing: the Ollama client with its retries and fallbacks
(`ollama_client`), the local-LLM plan compiler (`compile_ollama`), the reader that answers from
a winning path's fact lines (`reader`), the repairer that re-plans distrusted questions
(`repair`), and their prompts (`prompts/`). A model sees questions, store names and fact lines,
never gold.

May import: the stages below (`text`, `store`, `haystack`, `plan`)."""
