"""Repair lane (optional): when the selector finds its answer suspicious (no complete path, or
an answer-type mismatch), a local model is asked for a different plan. Like the compiler it sees
the question, the entity names the question mentions and the suspicious plan, never a fact; its
reply is validated the same way. On any failure `repair` returns [] and `last_error` says why."""
from __future__ import annotations

from dataclasses import dataclass, field

from .compile_ollama import (NUM_PREDICT, prompt_text, render_relations, reply_schema,
                             sha256_text, user_message, validate_reply)
from .ollama_client import ModelCallError, ModelClient, model_of
from .plans import Plan

PROMPT_FILE = "repair.txt"


def repair_prompt() -> str:
    return prompt_text(PROMPT_FILE).replace("{{RELATIONS}}", render_relations())


@dataclass
class OllamaRepairer:
    client: ModelClient
    prompt: str = field(default_factory=repair_prompt)
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
        """What a run records about its repairer."""
        return {"repair": self.name, "prompt_file": PROMPT_FILE,
                "prompt_sha256": self.prompt_sha256, "temperature": 0.0,
                "num_predict": NUM_PREDICT, "host": self.client.base_url,
                "timeout_s": self.client.timeout}

    def repair(self, question_text: str, plan: Plan | None, store) -> list[Plan]:
        """A repaired plan (one, validated), or [] when the model gave none usable."""
        self.calls += 1
        self.last_error = ""
        messages = [{"role": "system", "content": self.prompt},
                    {"role": "user", "content": user_message(question_text, store, plan)}]
        note = f"repair of: {plan.describe()}" if plan is not None else "repair of: no plan"
        try:
            obj, _ = self.client.chat_json(messages, reply_schema("relation"), temperature=0.0,
                                           num_predict=NUM_PREDICT)
            new = validate_reply(obj, store, "relation", self.name,
                                 f"{PROMPT_FILE} sha256:{self.prompt_sha256[:12]}", note)
        except ModelCallError as exc:
            self.failures += 1
            self.last_error = str(exc)
            return []
        except Exception as exc:   # noqa: BLE001 - a repair must never stop a run
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"[:200]
            return []
        if plan is not None and (new.entity, new.chain) == (plan.entity, plan.chain):
            self.last_error = "the model returned the same plan"
            return []
        return [new]


def make_repairer(spec: str, host: str | None = None, timeout: float = 30.0) -> OllamaRepairer:
    """A repairer for "ollama:MODEL" (InputError for any other spec)."""
    return OllamaRepairer(ModelClient(model_of(spec), host=host, timeout=timeout))
