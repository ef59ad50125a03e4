"""Checks the blind multi-hop evaluation set in tests/data/blind_mh/.

Self-contained on purpose: it re-parses the FactConsolidation contexts with the blind sets'
own regexes built from the MQuAKE cloze templates (tests/blind_context.py) and does not import
the project's `resolver` or `oracle` packages (it only reads their bundled data files).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from blind_context import check_hops, context, context_path

try:
    import orjson

    def _loads(data: bytes):
        return orjson.loads(data)

except ImportError:  # pragma: no cover - stdlib fallback
    import json

    def _loads(data: bytes):
        return json.loads(data.decode("utf-8"))


ROOT = Path(__file__).resolve().parent.parent
BLIND = ROOT / "tests" / "data" / "blind_mh"
SIZES = ("64k", "262k")


@functools.lru_cache(maxsize=None)
def _row(size: str):
    return _loads((BLIND / f"blind_{size}.json").read_bytes())


@functools.lru_cache(maxsize=None)
def _chains():
    out = []
    for line in (BLIND / "chains.jsonl").read_bytes().splitlines():
        if line.strip():
            out.append(_loads(line))
    return out


def _size_of(qid: str) -> str:
    m = re.fullmatch(r"blind_mh_(64k|262k)_no(\d+)", qid)
    assert m, qid
    return m.group(1)


@pytest.mark.parametrize("size", SIZES)
def test_row_shape_andcontext(size):
    row = _row(size)
    assert set(row) == {"context", "questions", "answers", "metadata"}
    raw = (context_path(size)).read_bytes()
    assert row["context"].encode("utf-8") == raw, "context must be byte-identical to the .txt"
    src = f"blind_mh_{size}"
    assert row["metadata"]["source"] == src
    ids = row["metadata"]["qa_pair_ids"]
    n = len(row["questions"])
    assert n == len(row["answers"]) == len(ids) > 0
    assert ids == [f"{src}_no{i}" for i in range(n)]
    assert len(set(row["questions"])) == n, "duplicate question"
    for ans in row["answers"]:
        assert isinstance(ans, list) and len(ans) == 1 and isinstance(ans[0], str) and ans[0]


def test_blind_files_are_utf8_not_ascii_escaped():
    for size in SIZES:
        head = (BLIND / f"blind_{size}.json").read_bytes()
        assert b"\\u00" not in head, "written with ensure_ascii=False"


def test_chains_match_rows():
    chains = _chains()
    expected = []
    for size in SIZES:
        row = _row(size)
        expected += list(zip(row["metadata"]["qa_pair_ids"], row["questions"], row["answers"]))
    assert [c["qid"] for c in chains] == [e[0] for e in expected]
    for c, (qid, question, answers) in zip(chains, expected):
        assert set(c) == {"qid", "question", "n_hops", "gold", "hops"}, qid
        assert c["question"] == question, qid
        assert answers == [c["gold"]], qid


def test_total_count_and_hops():
    chains = _chains()
    assert len(chains) >= 150
    for size in SIZES:
        assert sum(_size_of(c["qid"]) == size for c in chains) >= 60
    for c in chains:
        assert 2 <= c["n_hops"] <= 4, c["qid"]
        assert len(c["hops"]) == c["n_hops"], c["qid"]
    counts = {n: sum(c["n_hops"] == n for c in chains) for n in (2, 3, 4)}
    assert all(counts[n] > 0 for n in counts), counts


def test_hops_resolve_latest_incontext():
    for c in _chains():
        qid = c["qid"]
        assert c["hops"][0]["subject"] in c["question"], f"{qid}: base entity not in question"
        assert check_hops(qid, _size_of(qid), c["hops"]) == c["gold"], \
            f"{qid}: last object != gold"


def test_contexts_fully_parsed():
    for size in SIZES:
        text, by_serial, facts, _ = context(size)
        assert len(by_serial) == len(facts) == text.count("\n") - 1
