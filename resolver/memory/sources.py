"""What `factres memory ingest` feeds a memory: the text of a file (or of standard input) in the
chunks it is ingested by, one `ingest` (one transaction) each.

A row file (.json, .jsonl, .parquet: the Hugging Face row layout) gives its context, once for all
the rows that share it; any other file is text (UTF-8, a byte-order mark dropped, CRLF read as
LF, as `factres parse` reads it). With `harness_chunks` the text is cut as MemoryAgentBench cuts
a context (`harness.chunk_context`: whole sentences, at most `tokens` tokens) and each chunk is
put in the memorize frame, as the harness hands it to a memory agent; otherwise it is fed as it
is, in blocks of BLOCK characters (a raw text may be cut anywhere)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from resolver.errors import InputError
from resolver.haystack import ROW_FILES, decode, read_rows
from resolver.mab import harness

BLOCK = 1 << 20                 # characters per ingest when the text is fed as it is
STDIN = "-"


@dataclass(frozen=True)
class Source:
    """A text to ingest, cut into the chunks each `ingest` takes."""
    name: str                   # the path, or "-" for standard input
    chunks: tuple[str, ...]

    @property
    def characters(self) -> int:
        return sum(map(len, self.chunks))


def read_source(name: str, *, harness_chunks: bool = False,
                tokens: int = harness.CHUNK_TOKENS, stdin: BinaryIO | None = None) -> Source:
    """The text of `name` ("-": `stdin`, read to its end) in its chunks (see the module
    docstring). InputError for a missing file, a folder, text that is not UTF-8, or a row file
    whose rows hold several contexts."""
    if name == STDIN:
        text, _ = decode(stdin.read(), "<stdin>")
    elif Path(name).suffix.lower() in ROW_FILES:
        rows, _, _ = read_rows(name)
        contexts = list(dict.fromkeys(str(r.get("context", "")) for r in rows))
        if len(contexts) != 1:
            raise InputError(f"{len(contexts)} distinct contexts; a memory reads one", path=name,
                             expected="a file whose rows share one context (or a text file)")
        text = contexts[0]
    else:
        path = Path(name)
        if not path.exists():
            raise InputError("no such file", path=name)
        if path.is_dir():
            raise InputError("is a folder, not a file", path=name, expected="a text file")
        text, _ = decode(path.read_bytes(), name)
    if harness_chunks:
        chunks = tuple(harness.frame_chunk(c) for c in harness.chunk_context(text, tokens))
    else:
        chunks = tuple(text[i:i + BLOCK] for i in range(0, len(text), BLOCK))
    return Source(name, chunks)
