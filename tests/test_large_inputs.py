"""The shortcuts that let large inputs be read once: each must give what the long way gives."""
from __future__ import annotations

import hashlib
import random

import orjson
import pytest

from resolver import strict_json
from resolver.errors import InputError
from resolver.haystack import sha256_text
from resolver.text import cache, facts

# Strings where a quote, blanks and a colon meet: inside a string, at its start, at its end.
TRICKY = ['', ':', ' :', '  : x', '":', '" :', 'a":b', 'a" :b" :', '"', '""', 'a" ', ' ',
          '\t:', 'x\n:', '\\":', 'é":', '"\u00e9 :']


def _values(rng: random.Random, depth: int = 0):
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        return rng.choice(TRICKY + [1, 2.5, None, True])
    if roll < 0.65:
        return {rng.choice(TRICKY) + str(i): _values(rng, depth + 1)
                for i in range(rng.randint(0, 4))}
    return [_values(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_key_ends_are_counted_as_in_orjsons_writing():
    rng = random.Random(0)
    for _ in range(2000):
        value = _values(rng)
        written = len(strict_json._KEY_END.findall(orjson.dumps(value)))
        assert strict_json._key_ends_written(value) == written, value


def test_a_large_document_with_a_key_twice_is_refused(monkeypatch):
    monkeypatch.setattr(strict_json, "_LARGE", 10)        # the counting path, not the writing
    assert strict_json.loads(b'{"a": {"b": "x\\" :", "c": [1, {"d": 2}]}}') == \
        {"a": {"b": 'x" :', "c": [1, {"d": 2}]}}
    with pytest.raises(InputError, match="twice"):
        strict_json.loads(b'{"a": {"b": "x", "c": [1, {"d": 2, "d": 3}]}}')


def test_the_text_is_hashed_in_chunks_as_a_whole(monkeypatch):
    monkeypatch.setattr("resolver.haystack._CHUNK", 7)
    for text in ("", "short", "é" * 30 + "a\U0001F600b" * 9):
        assert sha256_text(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("text", ["plain text\nno hidden", "a\x00b", "\u200bx", "é\u202ey",
                                  "x" * 50 + "\x7f", "日本\ufeff", "é" * 9])
def test_the_scan_for_control_characters_finds_what_the_pattern_finds(text, monkeypatch):
    monkeypatch.setattr(facts, "_SCAN", 4)
    assert facts._may_hold_hidden(text) == bool(facts._HIDDEN.search(text))


def test_the_cache_parses_a_text_as_a_parse_without_it():
    text = "\ufeff\ufeffHere is a list of facts:\r\r\n0. A is owned by B.\r\n"
    assert cache.load_parse(text) == cache.load_parse(text) == \
        cache.load_parse(text, use_cache=False) == facts.parse_context(text)
