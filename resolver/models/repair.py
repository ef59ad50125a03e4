"""Repair lane (optional): when the selector finds its answer suspicious (no complete path, or
an answer-type mismatch), a local model is asked for a different plan. Like the compiler it sees
the question, the entity names the question mentions and the suspicious plan, never a fact; its
reply is validated the same way. On any failure `repair` returns [] and `last_error` says why."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from resolver.models.compile_ollama import (
    NUM_PREDICT,
    prompt_text,
    render_relations,
    reply_schema,
    user_message,
    validate_reply,
)
from resolver.models.ollama_client import ModelClient, ModelLane, model_of
from resolver.plan.plans import Plan

PROMPT_FILE = "repair.txt"


def repair_prompt() -> str:
    return prompt_text(PROMPT_FILE).replace("{{RELATIONS}}", render_relations())


@dataclass
class OllamaRepairer(ModelLane):
    ROLE: ClassVar[str] = "repair"
    PROMPT_FILE: ClassVar[str] = PROMPT_FILE
    NUM_PREDICT: ClassVar[int] = NUM_PREDICT

    prompt: str = field(default_factory=repair_prompt)

    def repair(self, question_text: str, plan: Plan | None, store) -> list[Plan]:
        """A repaired plan (one, validated), or [] when the model gave none usable."""
        note = f"repair of: {plan.describe()}" if plan is not None else "repair of: no plan"
        new = self._ask(user_message(question_text, store, plan), reply_schema("relation"),
                        lambda obj: validate_reply(
                            obj, store, "relation", self.name,
                            f"{PROMPT_FILE} sha256:{self.prompt_sha256[:12]}", note))
        if new is None:
            return []
        if plan is not None and (new.entity, new.chain) == (plan.entity, plan.chain):
            self.last_error = "the model returned the same plan"
            return []
        return [new]


def make_repairer(spec: str, host: str | None = None, timeout: float = 30.0) -> OllamaRepairer:
    """A repairer for "ollama:MODEL" (InputError for any other spec)."""
    return OllamaRepairer(ModelClient(model_of(spec), host=host, timeout=timeout))
