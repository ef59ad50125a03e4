"""The cue matcher of plan/question.py (`_cue_spans`, cues indexed by first word) finds exactly
the spans the plain algorithm finds (every cue of every relation tried at every position, kept
below as `reference_spans`), in the same order: over every dev question, the 40 held-out
questions, seeded synthetic questions on the 32K, 64K and 262K contexts, and seeded token
sequences built from the cue words themselves (prefix and wildcard words, cues at the end)."""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import orjson
import pytest

from resolver.haystack import bundled_path
from resolver.plan.lexicon import cues
from resolver.plan.question import CueSpan, _cue_index, _cue_spans, _match
from resolver.store.fact_store import name_tokens

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "tests" / "data" / "heldout_32k" / "heldout_32k.json"
SEQUENCES = 500


def reference_spans(tokens: tuple[str, ...]) -> tuple[CueSpan, ...]:
    """The matcher as it was before the index: every cue at every token position, with the
    same cue-match predicate (`_match`, unchanged)."""
    spans = []
    for relation, items in sorted(cues().items()):
        for cue, weight in items:
            for at in range(len(tokens)):
                if _match(cue, tokens, at):
                    spans.append(CueSpan(relation, at, at + len(cue), weight, " ".join(cue)))
    return tuple(spans)


def _synthetic():
    name = "factres_bench_synthetic"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "synthetic.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module          # its dataclasses look the module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def _questions_of(rows: list[dict]) -> list[str]:
    return [q for row in rows for q in row["questions"]]


def _check(questions: list[str]) -> int:
    spans = 0
    for text in questions:
        tokens = name_tokens(text)
        expected = reference_spans(tokens)
        assert _cue_spans(tokens) == expected, text
        spans += len(expected)
    return spans


def test_every_dev_question():
    rows = orjson.loads(bundled_path().read_bytes())["data"]
    questions = _questions_of(rows)
    assert len(questions) == 200
    assert _check(questions) > 1000          # the comparison is not vacuous


def test_the_heldout_questions():
    questions = orjson.loads(HELDOUT.read_bytes())["questions"]
    assert len(questions) == 40
    assert _check(questions) > 100


@pytest.mark.parametrize("size", ["32k", "64k", "262k"])
def test_synthetic_questions(size):
    syn = _synthetic()
    rows = syn.generate(syn.load_context(size), size, seed=13)
    questions = _questions_of(rows)
    assert len(questions) == 200
    assert _check(questions) > 500


def test_token_sequences_made_of_cue_words():
    """Cue words written out (a prefix word with and without a tail, "*" as any word), shuffled
    into sequences, so multi-word, prefix and wildcard cues match at every position, the last
    one included."""
    words = set()
    for items in cues().values():
        for cue, _ in items:
            for word in cue:
                if word == "*":
                    words.add("anything")
                elif word.endswith("*"):
                    words.update({word[:-1], word[:-1] + "ed", word[:-1] + "s"})
                else:
                    words.add(word)
    vocabulary = sorted(words | {"of", "the", "x"})
    rng = random.Random(13)
    checked = 0
    for _ in range(SEQUENCES):
        tokens = tuple(rng.choice(vocabulary) for _ in range(rng.randint(1, 14)))
        assert _cue_spans(tokens) == reference_spans(tokens), tokens
        checked += 1
    # every cue written out alone: it starts and ends the sequence
    for items in cues().values():
        for cue, _ in items:
            tokens = tuple("anything" if w == "*" else w.rstrip("*") for w in cue)
            expected = reference_spans(tokens)
            assert expected and _cue_spans(tokens) == expected, tokens
    assert checked == SEQUENCES


def test_the_index_holds_every_cue_of_the_lexicon_once():
    index = _cue_index()
    indexed = [c for group in index.exact.values() for c in group]
    indexed += [c for group in index.prefixed.values() for c in group] + index.anywhere
    listed = [(rel, cue, weight) for rel, items in sorted(cues().items())
              for cue, weight in items]
    assert sorted(indexed) == [(i, rel, cue, w, " ".join(cue))
                               for i, (rel, cue, w) in enumerate(listed)]
