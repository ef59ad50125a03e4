"""The model name `factres-readout`: the reply's message is the memory's readout for the
question (`Memory.readout`'s text, 600 characters at most, no disclosure) instead of the
answer, for a client that hands it to a language model of its own. Rendered from the
prediction the answer was made from, so the readout is the answer's own paths."""
from __future__ import annotations

import dataclasses

from resolver.memory.memory import Answer, Memory
from resolver.memory.readout import render
from resolver.serve.config import READOUT_MODEL


def reply_answer(model: str, memory: Memory, answer: Answer) -> Answer:
    """`answer` as the reply gives it for `model`: with `factres-readout`, its text is the
    readout ("" when the answer has no prediction: an empty memory, no question)."""
    if model != READOUT_MODEL:
        return answer
    text = render(memory.store, answer.prediction) if answer.prediction is not None else ""
    return dataclasses.replace(answer, text=text)
