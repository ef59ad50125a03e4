"""Reader lane (optional): a local model reads only the question and the resolved facts (the
winning path's original lines) and writes the answer. It never sees the haystack.

Temperature 0, a short answer cap, one prompt file (prompts/reader.txt) shared by every row.
A reader never raises mid-run: on any failure it answers "" and says why in `last_error`."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from resolver.models.compile_ollama import prompt_text
from resolver.models.ollama_client import ModelCallError, ModelClient, ModelLane, model_of

PROMPT_FILE = "reader.txt"
NUM_PREDICT = 48             # an entity name; a longer reply is an explanation, cut it off
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}},
          "required": ["answer"]}


def user_message(question_text: str, fact_lines: list[str]) -> str:
    facts = "\n".join(line.strip() for line in fact_lines) or "(no facts)"
    return f"Facts:\n{facts}\n\nQuestion: {question_text}\nReply:"


def clean_answer(text: str) -> str:
    """The entity name alone: no surrounding quotes, no final full stop."""
    text = " ".join(text.split()).strip().strip("\"'“”‘’").strip()
    return text[:-1].rstrip() if text.endswith(".") else text


@dataclass
class OllamaReader(ModelLane):
    ROLE: ClassVar[str] = "reader"
    PROMPT_FILE: ClassVar[str] = PROMPT_FILE
    NUM_PREDICT: ClassVar[int] = NUM_PREDICT

    prompt: str = field(default_factory=lambda: prompt_text(PROMPT_FILE))

    def answer(self, question_text: str, fact_lines: list[str]) -> str:
        """The reader's answer, or "" (and `last_error` says why)."""
        def check(obj: dict) -> str:
            value = obj.get("answer")
            if not isinstance(value, str):
                raise ModelCallError("invalid json", f"no string 'answer' in {obj!r}"[:200])
            return clean_answer(value)
        answer = self._ask(user_message(question_text, fact_lines), SCHEMA, check)
        return "" if answer is None else answer


def make_reader(spec: str, host: str | None = None, timeout: float = 30.0) -> OllamaReader:
    """A reader for "ollama:MODEL" (InputError for any other spec)."""
    return OllamaReader(ModelClient(model_of(spec), host=host, timeout=timeout))
