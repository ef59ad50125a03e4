"""The parse cache: keyed by context, grammar and version; never stale; corrupt files rewritten."""
from __future__ import annotations

from pathlib import Path

import pytest

from resolver.text import cache, facts

TEXT = "Here is a list of facts:\n0. A is owned by B.\n1. C likes D.\n2. E is owned by F.  \n"


@pytest.fixture
def parses(monkeypatch):
    calls = []
    # the cache parses a missed text with `parse_normalised` (it has normalised it to look
    # it up), and with `parse_context` when it is off
    for name in ("parse_context", "parse_normalised"):
        real = getattr(facts, name)
        monkeypatch.setattr(cache, name,
                            lambda *a, real=real, **k: calls.append(1) or real(*a, **k))
    return calls


def test_second_load_reads_the_cache_and_equals_a_fresh_parse(parses):
    first = cache.load_parse(TEXT, path="x.txt")
    second = cache.load_parse(TEXT, path="x.txt")
    assert parses == [1]
    assert second == first == facts.parse_context(TEXT, path="x.txt")
    assert second.unparsed[0].text == "1. C likes D."
    assert second.facts[1].text == "2. E is owned by F.  "


def test_cache_file_is_named_by_the_key_and_in_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path))
    cache.load_parse(TEXT)
    assert [p.name for p in tmp_path.iterdir()] == [f"{cache.cache_key(TEXT)}.json"]


def test_changed_context_or_grammar_never_reuses_the_cache(parses, monkeypatch):
    cache.load_parse(TEXT)
    cache.load_parse(TEXT + "3. G is owned by H.\n")
    assert parses == [1, 1]
    monkeypatch.setattr(cache.grammar, "grammar_sha256", lambda: "0" * 64)
    cache.load_parse(TEXT)
    assert parses == [1, 1, 1]


def test_changed_parsing_code_never_reuses_the_cache(parses, monkeypatch):
    cache.load_parse(TEXT)
    assert parses == [1]
    monkeypatch.setattr(cache, "parsing_code_sha256", lambda: "1" * 64)
    cache.load_parse(TEXT)
    assert parses == [1, 1]


def test_the_parsing_code_hash_reads_the_parser_sources():
    here = Path(cache.__file__).resolve().parent
    assert {"facts.py", "grammar.py", "segment.py"} == set(cache.PARSING_CODE)
    assert all((here / name).is_file() for name in cache.PARSING_CODE)
    assert len(cache.parsing_code_sha256()) == 64


def _damaged(file) -> str:
    return (f"parse cache entry {file} does not match its own sha256 (edited or damaged?): not "
            "read; parsed afresh and rewritten")


def test_corrupt_cache_file_is_ignored_rewritten_and_noted(parses):
    cache.load_parse(TEXT)
    file = cache.cache_file(TEXT)
    good = file.read_bytes()
    file.write_bytes(good[:len(good) // 2])
    again = cache.load_parse(TEXT)
    fresh = facts.parse_context(TEXT)
    assert again.facts == fresh.facts and again.notes == fresh.notes + (_damaged(file),)
    assert parses == [1, 1] and file.read_bytes() == good
    assert cache.load_parse(TEXT) == fresh and parses == [1, 1]       # whole again: read


def test_an_edited_cache_entry_is_never_read(parses):
    """The third audit (C36): an entry edited into other valid JSON ("B" -> "X": another owner)
    was read as it was, and a run answered from it."""
    cache.load_parse(TEXT)
    file = cache.cache_file(TEXT)
    good = file.read_bytes()
    assert b'"B"' in good
    file.write_bytes(good.replace(b'"B"', b'"X"'))
    again = cache.load_parse(TEXT)
    assert [f.object for f in again.facts] == ["B", "F"]
    assert again.notes[-1] == _damaged(file)
    assert parses == [1, 1] and file.read_bytes() == good


def test_no_cache_neither_reads_nor_writes(parses, tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path / "c"))
    cache.load_parse(TEXT, use_cache=False)
    cache.load_parse(TEXT, use_cache=False)
    assert parses == [1, 1] and not (tmp_path / "c").exists()


def test_input_errors_are_not_cached(parses):
    bad = "0. A is owned by B.\n0. C is owned by D.\n"
    for _ in range(2):
        with pytest.raises(facts.InputError, match="duplicate serial 0"):
            cache.load_parse(bad)
    assert parses == [1, 1]


def test_folder_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path / "f"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache.cache_dir() == tmp_path / "f"
    monkeypatch.delenv("FACTRES_CACHE")
    assert cache.cache_dir() == tmp_path / "x" / "factres"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert cache.cache_dir() == tmp_path / "h" / ".cache" / "factres"


def test_write_leaves_no_temporary_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTRES_CACHE", str(tmp_path))
    cache.load_parse(TEXT)
    cache.load_parse(TEXT + "\n")
    assert all(p.suffix == ".json" and not p.name.startswith(".") for p in tmp_path.iterdir())


def test_a_cache_that_cannot_be_written_is_skipped_with_a_note(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("FACTRES_CACHE", str(blocker / "sub"))
    result = cache.load_parse(TEXT)
    assert result.facts == facts.parse_context(TEXT).facts
    (note,) = result.notes
    assert note.startswith(f"parse cache not written ({Path(blocker) / 'sub'}: ")
    assert note.endswith("); parsed without it (set FACTRES_CACHE to a writable folder to "
                         "keep parses)")
