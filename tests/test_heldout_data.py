"""Audit of the hand-written held-out set in tests/data/heldout_32k/.

Checks the data only (no resolver is run): the row's shape, that every chain's fact lines are
lines of the 32K context, that every hop uses the latest serial of its (subject, relation) key,
that the hops chain (each hop's subject is the previous hop's object), and that the gold answer
is the final hop's object. The latest serial is recomputed two ways: with the project's parser
(resolver.text.facts.parse_context + resolver.store.fact_store.FactStore) and, independently
of any parser, from the line text itself.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from resolver.store.fact_store import FactStore
from resolver.text.facts import parse_context

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "heldout_32k"
CONTEXT_TXT = ROOT / "resolver" / "data" / "fc" / "factconsolidation_32k_context.txt"
N_QUESTIONS = 40
LINE = re.compile(r"^(\d+)\. (.*)$")


@lru_cache(maxsize=None)
def row() -> dict:
    with open(DATA / "heldout_32k.json", encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=None)
def chains() -> tuple[dict, ...]:
    with open(DATA / "chains.jsonl", encoding="utf-8") as fh:
        return tuple(json.loads(s) for s in fh if s.strip())


@lru_cache(maxsize=None)
def context_text() -> str:
    return CONTEXT_TXT.read_bytes().decode("utf-8")


@lru_cache(maxsize=None)
def context_lines() -> tuple[str, ...]:
    return tuple(context_text().split("\n"))


@lru_cache(maxsize=None)
def parsed():
    result = parse_context(context_text())
    return result, FactStore(result.facts), {f.serial: f for f in result.facts}


def all_hops():
    for chain in chains():
        for i, hop in enumerate(chain["hops"]):
            yield chain["qid"], i, hop


# --- shape of the row -------------------------------------------------------------------------

def test_row_shape():
    r = row()
    assert set(r) >= {"context", "questions", "answers", "metadata"}
    assert len(r["questions"]) == N_QUESTIONS
    assert len(r["answers"]) == N_QUESTIONS
    assert all(isinstance(a, list) and len(a) == 1 and isinstance(a[0], str) and a[0]
               for a in r["answers"])
    meta = r["metadata"]
    assert meta["source"] == "heldout_mh_32k"
    assert meta["qa_pair_ids"] == [f"heldout_mh_32k_no{i}" for i in range(N_QUESTIONS)]
    assert len(set(r["questions"])) == N_QUESTIONS, "duplicate questions"


def test_context_is_byte_identical_to_the_txt():
    assert row()["context"].encode("utf-8") == CONTEXT_TXT.read_bytes()


def test_json_is_utf8_without_ascii_escapes():
    raw = (DATA / "heldout_32k.json").read_bytes().decode("utf-8")
    assert "\\u00" not in raw and "Piñera" in raw


def test_chains_match_the_row():
    r, cs = row(), chains()
    assert len(cs) == N_QUESTIONS
    for i, chain in enumerate(cs):
        assert chain["qid"] == r["metadata"]["qa_pair_ids"][i]
        assert chain["question"] == r["questions"][i]
        assert r["answers"][i] == [chain["gold"]]
        assert 2 <= len(chain["hops"]) <= 4


def test_counts_by_hop_length_and_versions():
    cs = chains()
    assert Counter(len(c["hops"]) for c in cs) == {2: 20, 3: 15, 4: 5}
    assert sum(any(h["several_versions"] for h in c["hops"]) for c in cs) >= 15
    assert len({h["relation"] for _, _, h in all_hops()}) >= 25


# --- the chains against the context text -----------------------------------------------------

def test_fact_lines_exist_verbatim():
    lines = set(context_lines())
    for qid, i, hop in all_hops():
        text = hop["relation_sentence"]
        assert text in lines, f"{qid} hop {i}: line not in context: {text!r}"
        m = LINE.match(text)
        assert m and int(m.group(1)) == hop["serial"], f"{qid} hop {i}: serial mismatch"
        # the serial is also the line's position (the header is line 0)
        assert context_lines()[hop["serial"] + 1] == text


def test_hops_chain_and_gold_is_final_object():
    for chain in chains():
        qid, hops = chain["qid"], chain["hops"]
        assert hops[0]["subject"] in chain["question"], f"{qid}: base entity not in question"
        for i, hop in enumerate(hops):
            sentence = LINE.match(hop["relation_sentence"]).group(2)
            assert hop["subject"] in sentence, f"{qid} hop {i}: subject not in its line"
            assert sentence.endswith(hop["object"] + "."), f"{qid} hop {i}: object not at end"
            if i + 1 < len(hops):
                assert hops[i + 1]["subject"] == hop["object"], f"{qid}: hop {i + 1} breaks chain"
        assert chain["gold"] == hops[-1]["object"], f"{qid}: gold is not the final object"


def test_latest_serial_from_text_alone():
    """Parser-free recomputation: the key's cloze is the line minus its object; every context
    line with the same cloze prefix is a version of the key; the hop must use the highest."""
    for qid, i, hop in all_hops():
        sentence = LINE.match(hop["relation_sentence"]).group(2)
        prefix = sentence[: len(sentence) - len(hop["object"]) - 1]
        versions = [int(m.group(1)) for s in context_lines()
                    if (m := LINE.match(s)) and m.group(2).startswith(prefix)]
        assert versions and max(versions) == hop["serial"], (
            f"{qid} hop {i}: serial {hop['serial']} is not the latest of {versions}")
        assert hop["several_versions"] == (len(versions) > 1), f"{qid} hop {i}: several_versions"


# --- the chains against the project's parser -------------------------------------------------

def test_context_parses_cleanly():
    result, _, _ = parsed()
    assert not result.unparsed
    assert len(result.facts) == 2310


def test_latest_serial_with_parse_context():
    _, store, by_serial = parsed()
    for qid, i, hop in all_hops():
        fact = by_serial.get(hop["serial"])
        assert fact is not None, f"{qid} hop {i}: serial {hop['serial']} not parsed"
        assert fact.text == hop["relation_sentence"]
        assert fact.subject.casefold() == hop["subject"].casefold()
        current = store.current(fact.subject, fact.relation)
        assert current is not None and current.serial == hop["serial"], (
            f"{qid} hop {i}: latest of ({fact.subject!r}, {fact.relation}) is "
            f"{current.serial if current else None}, chain uses {hop['serial']}")
        versions = store.versions(fact.subject, fact.relation)
        assert hop["several_versions"] == (len(versions) > 1), f"{qid} hop {i}: several_versions"


@pytest.mark.parametrize("index", range(N_QUESTIONS))
def test_parser_agrees_on_each_hop_object(index):
    _, _, by_serial = parsed()
    chain = chains()[index]
    for i, hop in enumerate(chain["hops"]):
        fact = by_serial[hop["serial"]]
        assert fact.object == hop["object"], f"{chain['qid']} hop {i}: parser object {fact.object!r}"
    assert by_serial[chain["hops"][-1]["serial"]].object == chain["gold"]
