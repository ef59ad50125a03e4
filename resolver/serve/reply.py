"""The reply: a standard `chat.completion` object whose one choice's content is the answer
string, or the same as server-sent `chat.completion.chunk` events ending with `[DONE]`, and
beside the standard fields a `factres` field (clients ignore unknown fields).

`usage` counts whitespace-separated words, not a tokenizer's tokens: `prompt_tokens` is the words
of every message's text (memory part and question), `completion_tokens` the words of the
answer. The same conversation always gives the same counts.

The `factres` field: the question found, the answer, why it is empty (`reason`), the confidence
label and its reasons, the winning path hop by hop (subject, relation, object, serial, line,
text, version, ledger status, versions passed over), its score and score terms, the plan that
found it, and what the memory holds and did (`memory`: its key, whether this request found it
cached, facts, what was passed over and reported), with the server's version, plan sets and
mode, and `warnings` (a context its client cut before sending it: `context_cut`; [] when
none). `max_tokens` is ignored: the answer is never cut, however long the entity's name."""
from __future__ import annotations

import secrets
import time

import orjson

from resolver.memory.memory import Answer
from resolver.serve.conversation import Conversation, Remembered

FINGERPRINT = "factres"


def factres_field(answer: Answer, remembered: Remembered, cached: bool, server: dict,
                  warnings: list[str] | tuple[str, ...] = ()) -> dict:
    winner = answer.prediction.winner if answer.prediction else None
    plan = winner.plan.to_json() if winner is not None and winner.plan is not None else None
    return {**answer.to_json(), "plan": plan,
            "plan_set": winner.plan_set if winner is not None else None,
            "memory": {**remembered.to_json(), "cached": cached},
            # what the server found wrong with the request's context (a cut one), [] if none
            "warnings": list(warnings), **server}


def usage(conversation: Conversation, remembered: Remembered, answer: Answer) -> dict:
    prompt = remembered.words + conversation.words
    completion = len(answer.text.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def new_id() -> str:
    return "chatcmpl-" + secrets.token_hex(12)


def completion(model: str, answer: Answer, usage_: dict, extra: dict) -> bytes:
    """The `chat.completion` object, as JSON bytes."""
    return orjson.dumps({
        "id": new_id(), "object": "chat.completion", "created": int(time.time()),
        "model": model, "system_fingerprint": FINGERPRINT,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text,
                                             "refusal": None},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": usage_, "factres": extra})


def chunks(model: str, answer: Answer, usage_: dict, extra: dict, include_usage: bool
           ) -> list[bytes]:
    """The streamed reply as server-sent events: the role, the answer in one piece, the finish
    (with the `factres` field), the usage when asked (`stream_options.include_usage`: every
    chunk then has `"usage": null` but this last one, whose choices are empty), `[DONE]`."""
    head = {"id": new_id(), "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "system_fingerprint": FINGERPRINT}
    if include_usage:
        head["usage"] = None

    def choice(delta: dict, finish: str | None) -> dict:
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}

    events = [head | {"choices": [choice({"role": "assistant", "content": ""}, None)]}]
    if answer.text:
        events.append(head | {"choices": [choice({"content": answer.text}, None)]})
    events.append(head | {"choices": [choice({}, "stop")], "factres": extra})
    if include_usage:
        events.append(head | {"choices": [], "usage": usage_})
    return [b"data: " + orjson.dumps(e) + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]
