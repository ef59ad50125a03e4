"""The MemoryAgentBench harness's own text shapes, for FactConsolidation: the memorize frame
around a chunk, the instruction prompt around a question (both styles), and how the harness cuts
a context into chunks. `Memory` reads them; a server or a load benchmark writes them.

The prompt is the one in the `query` field of the harness's own result files
(tests/data/mab-outputs/factconsolidation_*_results.json). Its example question ("what is the
name of the current president of Russia? ... Answer: Donald Trump") stands before the real one
and must never be taken for it: `question_of` takes the text after "Now Answer the Question:".

Chunking (`chunk_context`) simulates the harness: the context is split into sentences, and the
sentences are packed into chunks of at most CHUNK_TOKENS tokens, re-joined with single spaces.
The harness splits sentences with a trained splitter and counts tokens with a BPE tokenizer; here
a sentence ends at every ".", "!" or "?" followed by whitespace (every cut a trained splitter
makes in these contexts, and more: after each serial's "N." and inside names such as "L. Ron
Hubbard", so facts are cut across chunks more often than the harness cuts them), and a token is
a run of word characters or one other non-blank character (`count_tokens`), which is close to a
BPE count for this English text and the same on every machine. Re-joining turns the line breaks
between facts into spaces, so a chunk is one long line of facts, as the harness makes it."""
from __future__ import annotations

import re

CHUNK_TOKENS = 4096

# The memorize frame: the first line ends with a time stamp, the chunk sits between the
# instruction and the acknowledgement.
FRAME_OPENING = "Dialogue between User and Assistant"
FRAME_INSTRUCTION = "<User> The following context is the facts I have learned:"
FRAME_ACKNOWLEDGEMENT = "<Assistant> I have learned the facts and I will answer the question you ask."

KNOWLEDGE_POOL = "Based on the provided Knowledge Pool, "   # RAG and long-context agents
ARCHIVAL_MEMORY = "Based on the Archival Memory, "          # agentic-memory agents
STYLES = {"knowledge-pool": KNOWLEDGE_POOL, "archival-memory": ARCHIVAL_MEMORY}
NOW_ANSWER = "Now Answer the Question: "
ANSWER_CUE = "\nAnswer:"
EXAMPLE_QUESTION = "what is the name of the current president of Russia?"
PROMPT_OPENING = "Pretend you are a knowledge management system."

# The instruction prompt as the harness writes it ({lead} is one of STYLES' values).
_PROMPT = (PROMPT_OPENING + " Each fact in the knowledge pool is provided with a serial "
           "number at the beginning, and the newer fact has larger serial number. \n You need to "
           "solve the conflicts of facts in the knowledge pool by finding the newest fact with "
           "larger serial number. You need to answer a question based on this rule. You should "
           "give a very concise answer without saying other words for the question **only** "
           "from the knowledge pool you have memorized rather than the real facts in real world. "
           "\n\nFor example:\n\n [Knowledge Pool] \n\n Question: {lead}"
           + EXAMPLE_QUESTION + " \nAnswer: Donald Trump \n\n " + NOW_ANSWER + "{lead}{question}"
           " \nAnswer:")

# A label before a bare question ("Question: What is ...?", "Q: ..."): not part of it.
QUESTION_LABEL = re.compile(r"(?:Question|Q)[ \t]*:[ \t]*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"\w+|[^\w\s]")


def frame_chunk(chunk: str, time: str = "") -> str:
    """A chunk as the harness hands it to a memory agent: the dialogue frame around it."""
    stamp = f" {time}" if time else ""
    return (f"{FRAME_OPENING}{stamp} \n{FRAME_INSTRUCTION} \n{chunk}\n"
            f"{FRAME_ACKNOWLEDGEMENT}")


def prompt(question: str, style: str = "knowledge-pool") -> str:
    """The instruction prompt around a question; `style` is "knowledge-pool" (RAG and
    long-context agents) or "archival-memory" (agentic-memory agents)."""
    if style not in STYLES:
        raise ValueError(f"unknown prompt style {style!r}; known: {', '.join(STYLES)}")
    return _PROMPT.format(lead=STYLES[style], question=question)


def question_of(text: str) -> str:
    """The question inside a harness prompt, or the text itself (stripped) when it is a bare
    question. The instruction's example question is never taken: the question is what follows
    "Now Answer the Question:", else what follows the last lead-in ("Based on ..., ") that does
    not introduce the example; the trailing "Answer:" cue is cut off, and a bare question's
    leading "Question:" label (`unlabelled`). "" when the prompt holds only the example."""
    now = text.rfind(NOW_ANSWER.strip())
    if now >= 0:
        body = text[now + len(NOW_ANSWER.strip()):].lstrip()
        for lead in STYLES.values():
            if body.startswith(lead):
                body = body[len(lead):]
                break
        return _cut_answer_cue(body)
    starts = [(m.end(), lead) for lead in STYLES.values()
              for m in re.finditer(re.escape(lead), text)]
    for end, _ in sorted(starts, reverse=True):
        body = _cut_answer_cue(text[end:])
        if not body.startswith(EXAMPLE_QUESTION):
            return body
    if starts:
        return ""
    return unlabelled(_cut_answer_cue(text))


def unlabelled(question: str) -> str:
    """A bare question without a leading "Question:" or "Q:" label (the server finds the
    question in a plain message the same way)."""
    label = QUESTION_LABEL.match(question)
    return question[label.end():].lstrip() if label else question


def prompt_start(text: str) -> int | None:
    """Where the instruction prompt starts in a message that may hold memory before it (the
    harness sends its memorize frames, a line break, then the prompt, in one message), or None
    when the message holds no prompt. The prompt starts at its opening sentence ("Pretend you
    are a knowledge management system."), the last one in the text; a prompt without it starts
    at the last "Now Answer the Question:", else at the last lead-in ("Based on ..., ") that
    does not introduce the instruction's example, else at the first that does (a prompt holding
    only the example). `question_of` then reads the question from `text[start:]`."""
    opening = text.rfind(PROMPT_OPENING)
    if opening >= 0:
        return opening
    now = text.rfind(NOW_ANSWER.strip())
    if now >= 0:
        return now
    starts = sorted(m.start() for lead in STYLES.values()
                    for m in re.finditer(re.escape(lead), text))
    for start in reversed(starts):
        body = text[start:]
        if not any(body.startswith(lead + EXAMPLE_QUESTION) for lead in STYLES.values()):
            return start
    return starts[0] if starts else None


def _cut_answer_cue(body: str) -> str:
    cue = body.find(ANSWER_CUE)
    if cue >= 0:
        body = body[:cue]
    return body.strip()


def count_tokens(text: str) -> int:
    """Tokens as this module counts them: runs of word characters, and every other non-blank
    character on its own (see the module docstring)."""
    return len(_TOKEN.findall(text))


def sentences(text: str) -> list[str]:
    """The context's sentences: cut after ".", "!" or "?" and the whitespace that follows."""
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def chunk_context(context: str, chunk_tokens: int = CHUNK_TOKENS) -> list[str]:
    """The context cut as the harness cuts it: whole sentences packed into chunks of at most
    `chunk_tokens` tokens (a longer sentence is a chunk of its own), each chunk's sentences
    re-joined with single spaces."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in sentences(context):
        n = count_tokens(sentence)
        if current and size + n > chunk_tokens:
            chunks.append(" ".join(current))
            current, size = [], 0
        current.append(sentence)
        size += n
    if current:
        chunks.append(" ".join(current))
    return chunks
