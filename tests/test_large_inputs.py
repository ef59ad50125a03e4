"""The shortcuts that let large inputs be read once: each must give what the long way gives."""
from __future__ import annotations

import hashlib
import json
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


# ---- rows read a row at a time (strict_json.loads_list, loads_lines) -----------------------
CONTEXTS = ["Here is a list of facts:\n0. A is owned by B.\n", 'a "quoted\\" \\\\ line\n',
            "é\u2033 \U0001F600\t", "", "x" * 300]


def _row_values(rng: random.Random):
    if rng.random() < 0.15:
        return _values(rng)                      # not an object: read as it is
    row = {k: _values(rng) for k in rng.sample(["questions", "answers", "metadata", 'a":'],
                                                rng.randint(0, 4))}
    roll = rng.random()
    if roll < 0.8:
        row["context"] = rng.choice(CONTEXTS)
    elif roll < 0.9:
        row["context"] = _values(rng)            # a context that is no string
    return dict(rng.sample(list(row.items()), len(row)))


def _spelled(rng: random.Random, value) -> bytes:
    """`value` as JSON with blanks of every kind between its tokens, or none."""
    raw = orjson.dumps(value)
    if rng.random() < 0.5:
        return raw
    gap = rng.choice([" ", "\n", "\t ", "\r\n  "])
    return json.dumps(value, indent=gap if rng.random() < 0.5 else None,
                      separators=(",", ":" + gap), ensure_ascii=rng.random() < 0.3).encode()


def _whole(data: bytes):
    """What a whole read of `data` gives: its list (itself, or under "data"), else None."""
    try:
        value = strict_json.loads(data)
    except (InputError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        return value["data"]
    return value if isinstance(value, list) else None


def test_rows_read_one_at_a_time_are_the_rows_read_whole():
    rng = random.Random(1)
    for trial in range(3000):
        rows = [_row_values(rng) for _ in range(rng.randint(0, 4))]
        layout = rng.choice(["list", "data"])
        doc = rows if layout == "list" else \
            dict(rng.sample([("data", rows), ("dataset", "x"), ("n", [1, {"a": 2}])],
                            rng.randint(1, 3))) | {"data": rows}
        data = _spelled(rng, doc)
        if trial % 3 == 0:                       # broken: a byte cut, doubled or changed
            at = rng.randrange(len(data))
            data = rng.choice([data[:at] + data[at + 1:], data[:at] + data[at:at + 1] * 2 +
                               data[at + 1:], data[:at] + bytes([rng.randrange(256)]) +
                               data[at + 1:]])
        whole = _whole(data)
        split = strict_json.loads_list(data, key="data", shared="context")
        if whole is None:                        # refused, or no list: never read in rows
            assert split is None, data
        elif split is not None or trial % 3 != 0:    # a document left whole is read in rows
            assert split == whole, data


def test_jsonl_rows_read_one_at_a_time_are_the_rows_read_line_by_line():
    rng = random.Random(2)
    for trial in range(2000):
        lines = [orjson.dumps(_row_values(rng)) if rng.random() < 0.8 else
                 rng.choice([b"", b"  ", b"\t\x0c"]) for _ in range(rng.randint(0, 5))]
        data = b"\n".join(lines)
        if trial % 3 == 0:
            at = rng.randrange(len(data) or 1)
            data = data[:at] + rng.choice([b"\n", b" ", b"{", b'"', b"\x0c"]) + data[at:]
        try:
            whole = [strict_json.loads(line) for line in data.split(b"\n") if line.strip()]
        except (InputError, RecursionError):
            whole = None
        split = strict_json.loads_lines(data, shared="context")
        if whole is None:
            assert split is None, data
        elif split is not None or trial % 3 != 0:
            assert split == whole, data


def test_a_deep_document_is_read_whole():
    data = b'{"data": [' + b"[" * 300 + b"]" * 300 + b"]}"
    assert strict_json.loads_list(data, key="data", shared="context") is None


def _two_rows(tmp_path, suffix: str, context: str):
    rows = [{"context": context, "questions": ["Who owns A?"], "answers": [["B"]],
             "metadata": {"source": f"x_{kind}_6k"}} for kind in ("sh", "mh")]
    path = tmp_path / f"rows{suffix}"
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) if suffix == ".jsonl"
                     else orjson.dumps({"data": rows}))
    return path


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_rows_repeating_a_context_share_one_string_decoded_once(tmp_path, monkeypatch, suffix):
    from resolver import haystack
    context = "Here is a list of facts:\n" + "".join(f"{n}. A{n} is owned by B.\n"
                                                  for n in range(2000))
    path = _two_rows(tmp_path, suffix, context)
    sizes = []
    real = strict_json.orjson.loads
    monkeypatch.setattr(strict_json.orjson, "loads",
                        lambda data: sizes.append(len(data)) or real(data))
    rows, _, _ = haystack.read_rows(path)
    assert rows[0]["context"] == context and rows[0]["context"] is rows[1]["context"]
    # orjson is handed the context once, never the file whole (two copies of it)
    big = [size for size in sizes if size > len(context) / 2]
    assert len(big) == 1 and big[0] < len(context) * 1.1


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_errors_in_rows_read_one_at_a_time_name_the_file_and_the_row(tmp_path, suffix):
    from resolver.haystack import load
    path = _two_rows(tmp_path, suffix, "Here is a list of facts:\n0. A is owned by B.\n")
    path.write_bytes(path.read_bytes().replace(b'"questions":["Who owns A?"]',
                                               b'"questions":"Who owns A?"', 1))
    with pytest.raises(InputError) as err:
        load([path])
    assert str(err.value) == (f"{path}: row 0: 'questions' is a string (expected a list in "
                              "the Hugging Face row layout (context, questions, answers, "
                              "metadata))")


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_bad_byte_in_a_repeated_context_is_named_as_a_whole_read_names_it(tmp_path, suffix):
    from resolver.haystack import load
    path = _two_rows(tmp_path, suffix, "Here is a list of facts:\n0. Mxnchen is owned by B.\n")
    data = path.read_bytes()
    at = data.rindex(b"Mxnchen") + 1
    path.write_bytes(data[:at] + b"\xfc" + data[at + 1:])
    with pytest.raises(InputError) as err:
        load([path])
    line = 2 if suffix == ".jsonl" else 1
    assert str(err.value) == (f"{path}:{line}: not UTF-8: byte 0xfc at offset {at} "
                              "(expected UTF-8 text)")
