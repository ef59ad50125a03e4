"""Reader lane (optional): a local model reads only the question and the resolved facts (the
winning path's original lines) and writes the answer. It never sees the haystack.

Temperature 0, a short answer cap, one prompt file (prompts/reader.txt) shared by every row.
A reader never raises mid-run: on any failure it answers "" and says why in `last_error`."""
from __future__ import annotations

from dataclasses import dataclass, field

from .compile_ollama import prompt_text, sha256_text
from .ollama_client import ModelCallError, ModelClient, model_of

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
class OllamaReader:
    client: ModelClient
    prompt: str = field(default_factory=lambda: prompt_text(PROMPT_FILE))
    last_error: str = ""
    calls: int = 0
    failures: int = 0

    @property
    def name(self) -> str:
        return f"ollama:{self.client.model}"

    @property
    def prompt_sha256(self) -> str:
        return sha256_text(self.prompt)

    def describe(self) -> dict:
        """What a run records about its reader."""
        return {"reader": self.name, "prompt_file": PROMPT_FILE,
                "prompt_sha256": self.prompt_sha256, "temperature": 0.0,
                "num_predict": NUM_PREDICT, "host": self.client.base_url,
                "timeout_s": self.client.timeout}

    def answer(self, question_text: str, fact_lines: list[str]) -> str:
        """The reader's answer, or "" (and `last_error` says why)."""
        self.calls += 1
        self.last_error = ""
        messages = [{"role": "system", "content": self.prompt},
                    {"role": "user", "content": user_message(question_text, fact_lines)}]
        try:
            obj, _ = self.client.chat_json(messages, SCHEMA, temperature=0.0,
                                           num_predict=NUM_PREDICT)
            value = obj.get("answer")
            if not isinstance(value, str):
                raise ModelCallError("invalid json", f"no string 'answer' in {obj!r}"[:200])
        except ModelCallError as exc:
            self.failures += 1
            self.last_error = str(exc)
            return ""
        except Exception as exc:   # noqa: BLE001 - a reader must never stop a run
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:200]
            return ""
        return clean_answer(value)


def make_reader(spec: str, host: str | None = None, timeout: float = 30.0) -> OllamaReader:
    """A reader for "ollama:MODEL" (InputError for any other spec)."""
    return OllamaReader(ModelClient(model_of(spec), host=host, timeout=timeout))
