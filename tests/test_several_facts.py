"""A line holding several numbered facts (the harness's chunk layout) and a blank the chunker
dropped between two unframed chunks: `factres parse`/`run` (the file reader) and `Memory` cut
them with the same code (resolver/text/segment.py) and read the same facts; the official
contexts parse exactly as before."""
from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner
from conftest import bundled_context

from oracle.cli import main
from resolver.haystack import BUNDLED, bundled_path, load
from resolver.mab import harness
from resolver.memory.memory import Memory
from resolver.text import cache
from resolver.text.facts import parse_context

HEADER = "Here is a list of facts:\n"
ONE_LINE = ("0. Tim Cook is employed by Apple. 1. Tim Cook is employed by Google. "
            "2. The capital of France is Paris.")
GLUED = ("0. Tim Cook is employed by Apple. 1. Tim Cook is employed by Google.2. Tim Cook is "
         "employed by Microsoft. 3. Tim Cook is employed by IBM.")


def _rows(facts) -> list[tuple]:
    return [(f.serial, f.subject, f.relation, f.object, f.line, f.text) for f in facts]


def _read(facts) -> list[tuple]:
    """What the two readers agree on: the memory numbers a piece with its line in the canonical
    layout (one piece a line), the file reader with its line in the file."""
    return [(f.serial, f.subject, f.relation, f.object, f.text) for f in facts]


def _memory(*chunks: str) -> Memory:
    memory = Memory()
    for chunk in chunks:
        memory.ingest(chunk)
    memory.flush()
    return memory


def test_a_line_of_several_facts_is_read_as_its_facts_each_with_its_text():
    result = parse_context(HEADER + ONE_LINE + "\n")
    assert _rows(result.facts) == [
        (0, "Tim Cook", "employer", "Apple", 2, "0. Tim Cook is employed by Apple."),
        (1, "Tim Cook", "employer", "Google", 2, "1. Tim Cook is employed by Google."),
        (2, "France", "capital", "Paris", 2, "2. The capital of France is Paris.")]
    assert result.unparsed == () and result.several == (2,)
    assert result.notes == ("1 line(s) hold more than one numbered fact (the first: line 2): "
                            "each fact read on its own, numbered with its line",)


def test_the_file_reader_and_the_memory_read_the_same_facts():
    text = (HEADER + ONE_LINE + "\n3. Rome is located in the country of Italy.\n"
            "4. X is owned by Y. 5. junk text. 6. Z is owned by W.\n" + GLUED.replace("0.", "7.")
            .replace("1.", "8.").replace("2.", "9.").replace("3.", "10.") + "\n")
    parsed = parse_context(text)
    memory = _memory(text)
    assert _read(memory.store) == _read(parsed.facts)
    assert [f.serial for f in parsed.facts] == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]
    assert [(u.line, u.text) for u in parsed.unparsed] == [(4, "5. junk text.")]
    assert parsed.several == (2, 4, 5)


def test_one_fact_lines_with_number_dot_names_are_one_fact_each():
    text = (HEADER + "4853. Czech 2. Liga is associated with the sport of association football."
            "\n7373. 1. FFC Frankfurt is associated with the sport of association football.\n"
            "7374. X is owned by Version 1.2. Y is employed by Z.\n"
            "7375. Pi is owned by Apple Inc.3. Y is employed by Z.\n")
    result = parse_context(text)
    # "1.2. Y" and "Inc.3. Y": 2 and 3 are below the line's serial, so neither is a cut
    assert [(f.subject, f.object) for f in result.facts] == [
        ("Czech 2. Liga", "association football"), ("1. FFC Frankfurt", "association football"),
        ("X is owned by Version 1.2. Y", "Z"), ("Pi is owned by Apple Inc.3. Y", "Z")]
    assert result.several == () and result.notes == ()
    assert _rows(_memory(text).store) == _rows(result.facts)


def test_the_parse_cache_keeps_the_pieces(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV, str(tmp_path))
    text = HEADER + ONE_LINE + " 3. bad piece.\n4. Rome is located in the country of Italy.\n"
    fresh = parse_context(text)
    first, again = cache.load_parse(text), cache.load_parse(text)
    assert cache.cache_file(text).exists()
    for result in (first, again):
        assert _rows(result.facts) == _rows(fresh.facts)
        assert result.unparsed == fresh.unparsed and result.notes == fresh.notes
        assert result.several == (2,)
    assert [(u.line, u.text) for u in again.unparsed] == [(2, "3. bad piece.")]


def test_parse_notes_the_lines_and_strict_fails_on_a_bad_piece(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text(HEADER + ONE_LINE + "\n", "utf-8")
    result = CliRunner().invoke(main, ["parse", "--strict", "--no-cache", str(good)],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert "facts: 3\n" in result.output and "unparsed lines: 0\n" in result.output
    assert ("note: 1 line(s) hold more than one numbered fact (the first: line 2)"
            in result.output)
    bad = tmp_path / "bad.txt"
    bad.write_text(HEADER + ONE_LINE + " 3. Tim Cook blah.\n", "utf-8")
    result = CliRunner().invoke(main, ["parse", "--strict", "--no-cache", str(bad)])
    assert result.exit_code == 1
    assert "line 2: 3. Tim Cook blah.  (fits no fact template)" in result.output


def test_history_names_each_facts_own_text(tmp_path):
    path = tmp_path / "glued.txt"
    path.write_text(HEADER + GLUED + "\n", "utf-8")
    result = CliRunner().invoke(main, ["history", "--data", str(path), "Tim Cook"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for serial, value in enumerate(["Apple", "Google", "Microsoft", "IBM"]):
        assert f"{value:<9}  {serial}. Tim Cook is employed by {value}." in result.output


# ---- N2: a blank the chunker dropped -------------------------------------------------------
def test_a_full_stop_glued_to_the_next_serial_is_a_cut():
    for memory in (_memory(HEADER + GLUED), _memory(*HEADER + GLUED)):
        assert [(f.serial, f.object) for f in memory.store] == [
            (0, "Apple"), (1, "Google"), (2, "Microsoft"), (3, "IBM")]
    assert _read(parse_context(HEADER + GLUED).facts) == _read(_memory(HEADER + GLUED).store)


def test_a_serial_glued_to_its_fact_is_a_cut_only_as_the_next_serial():
    text = (HEADER + "339. Tim Cook is employed by Apple. 340.Stojko Vranković plays the "
            "position of center. 341. Rome is located in the country of Italy.")
    memory = _memory(text)
    assert [(f.serial, f.subject, f.text) for f in memory.store][1] == (
        340, "Stojko Vranković", "340. Stojko Vranković plays the position of center.")
    assert _read(parse_context(text).facts) == _read(memory.store)
    # 342 is not the next serial: no cut, the text stays as written (one fact, as before)
    other = text.replace("340.Stojko", "342.Stojko")
    assert [f.serial for f in parse_context(other).facts] == [339, 341]


@pytest.mark.parametrize("tokens", [harness.CHUNK_TOKENS, 2048])
def test_unframed_harness_chunks_of_the_32k_context_give_the_runs_store(tokens):
    context = bundled_context("32k")
    chunks = harness.chunk_context(context, tokens)
    # the chunker drops the blank between chunks: both glued forms occur
    joined = "".join(chunks)
    assert ".1689. Rand" in joined or tokens != harness.CHUNK_TOKENS
    assert ". 340.Stojko" in joined or tokens != harness.CHUNK_TOKENS
    memory = Memory()
    reports = []
    for chunk in chunks:
        reports += memory.ingest(chunk).reports
    reports += memory.flush().reports
    assert reports == []
    dataset, _ = load([bundled_path(BUNDLED["32k"])])
    (haystack,) = dataset.haystacks.values()
    assert _rows(memory.store) == _rows(haystack.store)     # serial, line, text, ...
    assert memory.store.keys() == haystack.store.keys()
    assert memory.ledger.dump() == haystack.store.ledger.dump()


# ---- the official contexts parse as before ---------------------------------------------------
def _digest(result) -> str:
    digest = hashlib.sha256()
    for f in result.facts:
        digest.update(repr((f.serial, f.subject, f.relation, f.object, f.line, f.text)).encode())
    for u in result.unparsed:
        digest.update(repr((u.line, u.text, u.reason)).encode())
    digest.update(repr(result.notes).encode())
    return digest.hexdigest()


# Computed with the code before the segmenter (commit 3e67e4c): every fact, line, text,
# unparsed line and note of the parse.
BEFORE = {
    "6k": "f9ff11a7baa00e8c7600e8f38500d46f70076f36e7b70cc96ebcf2bca9a38777",
    "32k": "85046518e82147b417f35e2c54525fd4ea4ebefb1ab0da1617a69f83e370b75e",
    "64k": "0b7161ef69555831bc78293ace974ed6c46e15d3904c5c147204029bf782de66",
    "262k": "963fba32d9590393ce9e8202877fe8bc1a422e806cc6b7803e8726d83e6fdfd1",
}


@pytest.mark.parametrize("size", sorted(BEFORE))
def test_the_official_contexts_parse_exactly_as_before(size):
    result = parse_context(bundled_context(size))
    assert result.several == ()
    assert _digest(result) == BEFORE[size]
