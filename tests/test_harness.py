"""resolver/mab/harness.py: the harness's prompt is reproduced to the byte (the `query` field
of its own result files), the question is found inside it (never the example), and a context is
chunked as the harness chunks it."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import bundled_context

from resolver.mab import harness

OUTPUTS = Path(__file__).resolve().parent / "data" / "mab-outputs"


def harness_records() -> list[dict]:
    return [r for path in sorted(OUTPUTS.glob("factconsolidation_*_results.json"))
            for r in orjson.loads(path.read_bytes())["data"]]


def test_the_prompt_is_the_harness_query_to_the_byte():
    records = harness_records()
    assert len(records) > 100
    for record in records:
        question = harness.question_of(record["query"])
        assert question and not question.startswith(harness.EXAMPLE_QUESTION)
        assert harness.prompt(question) == record["query"]


@pytest.mark.parametrize("style", sorted(harness.STYLES))
def test_the_question_is_found_in_either_style_never_the_example(style):
    text = harness.prompt("Who is the CEO of Apple?", style)
    assert harness.STYLES[style] in text and harness.EXAMPLE_QUESTION in text
    assert harness.question_of(text) == "Who is the CEO of Apple?"
    assert harness.question_of("  Who is the CEO of Apple?\n") == "Who is the CEO of Apple?"
    lead_only = f"{harness.STYLES[style]}who founded Apple? \nAnswer:"
    assert harness.question_of(lead_only) == "who founded Apple?"
    with pytest.raises(ValueError, match="unknown prompt style"):
        harness.prompt("x", "chat")


def test_the_frame_is_the_dialogue_the_issue_quotes():
    assert harness.frame_chunk("0. A is B.", "2025-01-01") == (
        "Dialogue between User and Assistant 2025-01-01 \n<User> The following context is the "
        "facts I have learned: \n0. A is B.\n<Assistant> I have learned the facts and I will "
        "answer the question you ask.")


def test_chunks_are_whole_sentences_within_the_token_budget_rejoined_with_spaces():
    context = bundled_context("32k")
    chunks = harness.chunk_context(context)
    assert len(chunks) > 5
    assert all(harness.count_tokens(c) <= harness.CHUNK_TOKENS for c in chunks)
    assert all("\n" not in c for c in chunks[1:])            # one long line of facts each
    assert " ".join(chunks) == " ".join(harness.sentences(context))
    assert chunks[0].startswith("Here is a list of facts:\n0. ")
    assert " ".join(chunks).split() == context.split()      # only blanks changed


def test_the_prompt_starts_after_the_frames_of_the_harness_message():
    frames = "\n".join(harness.frame_chunk(c, "t") for c in
                       harness.chunk_context(bundled_context("32k"), 1000)[:3])
    for record in harness_records()[:20]:
        message = frames + "\n" + record["query"]
        start = harness.prompt_start(message)
        assert message[:start] == frames + "\n"
        assert harness.question_of(message[start:]) == harness.question_of(record["query"])
    assert harness.prompt_start(frames) is None
    assert harness.prompt_start("Who is the CEO of Apple?") is None


@pytest.mark.parametrize("style", sorted(harness.STYLES))
def test_a_prompt_without_its_opening_starts_at_now_answer_or_the_last_real_lead(style):
    lead = harness.STYLES[style]
    text = "0. A is B.\nNow Answer the Question: " + lead + "who is A?"
    assert text[harness.prompt_start(text):].startswith("Now Answer")
    example = f"Question: {lead}{harness.EXAMPLE_QUESTION} \nAnswer: Donald Trump \n"
    text = "0. A is B.\n" + example + lead + "who is A? \nAnswer:"
    assert text[harness.prompt_start(text):] == lead + "who is A? \nAnswer:"
    only_example = "0. A is B.\n" + example
    assert only_example[harness.prompt_start(only_example):].startswith(lead)
    assert harness.question_of(only_example[harness.prompt_start(only_example):]) == ""
