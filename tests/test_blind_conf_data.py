"""Checks the blind confidence set in tests/data/blind_conf/.

Self-contained on purpose: it parses the FactConsolidation contexts with the blind sets' own
regexes built from the MQuAKE cloze templates (tests/blind_context.py), and it imports neither `resolver` nor `oracle`
(it only reads their bundled data files). Stdlib + pytest.

What it checks:
- every row's context is byte-identical to the bundled context file;
- ids, sources and counts (per size: 20 single-hop, 35 multi-hop, 20 unanswerable);
- every answerable chain re-derived from the context: each hop's line exists, is the latest
  version of its (subject, relation) key, hop objects chain into the next hop's subject, and
  gold is the last hop's object;
- every unanswerable question: its answerable prefix hops are re-derived the same way, and
  the missing relation really is absent (no line of it for the named subject, nor for any older
  value of the previous hop, nor an officeholder line for the listed roles, nor a reverse
  "... is married to <subject>" line for a spouse question), or the named entity occurs
  nowhere in the context.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from pathlib import Path

import pytest

from blind_context import HOP_KEYS, OFFICE_PREFIX, check_hops, context, context_path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "blind_conf"
SIZES = ("32k", "64k", "262k")
N_SH, N_MH, N_UN = 20, 35, 20


@functools.lru_cache(maxsize=None)
def _answerable(size: str):
    return json.loads((DATA / f"blind_conf_{size}.json").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _unanswerable(size: str):
    return json.loads((DATA / f"unanswerable_{size}.json").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _chains():
    out = []
    for line in (DATA / "chains.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def _chains_by_qid():
    return {c["qid"]: c for c in _chains()}


# ---------------------------------------------------------------- file shape


@pytest.mark.parametrize("size", SIZES)
def test_answerable_file_shape_andcontext(size):
    doc = _answerable(size)
    assert set(doc) == {"data"} and len(doc["data"]) == 2
    raw = (context_path(size)).read_bytes()
    for row, kind, n in zip(doc["data"], ("sh", "mh"), (N_SH, N_MH)):
        assert set(row) == {"context", "questions", "answers", "metadata"}
        assert row["context"].encode("utf-8") == raw, "context must be byte-identical to the .txt"
        src = f"blind_conf_{kind}_{size}"
        assert row["metadata"] == {"source": src, "qa_pair_ids": row["metadata"]["qa_pair_ids"]}
        ids = row["metadata"]["qa_pair_ids"]
        assert len(row["questions"]) == len(row["answers"]) == len(ids) == n
        assert ids == [f"{src}_no{i}" for i in range(n)]
        assert len(set(row["questions"])) == n, "duplicate question"
        for ans in row["answers"]:
            assert isinstance(ans, list) and len(ans) == 1 and isinstance(ans[0], str) and ans[0]


@pytest.mark.parametrize("size", SIZES)
def test_unanswerable_file_shape_andcontext(size):
    doc = _unanswerable(size)
    assert set(doc) == {"data"} and len(doc["data"]) == 1
    row = doc["data"][0]
    assert set(row) == {"context", "questions", "metadata"}, "no answers key"
    raw = (context_path(size)).read_bytes()
    assert row["context"].encode("utf-8") == raw
    src = f"blind_conf_un_{size}"
    ids = [f"{src}_no{i}" for i in range(N_UN)]
    assert row["metadata"] == {"source": src, "qa_pair_ids": ids, "unanswerable": True}
    assert len(row["questions"]) == N_UN == len(set(row["questions"]))


def test_files_are_utf8_not_ascii_escaped():
    files = [DATA / f"blind_conf_{s}.json" for s in SIZES]
    files += [DATA / f"unanswerable_{s}.json" for s in SIZES] + [DATA / "chains.jsonl"]
    for path in files:
        assert b"\\u00" not in path.read_bytes(), f"{path.name}: write with ensure_ascii=False"


def test_no_question_repeats_across_files():
    qs = [c["question"] for c in _chains()]
    assert len(qs) == len(set(qs))


# ---------------------------------------------------------------- chains.jsonl


def test_chains_match_rows():
    chains = _chains()
    expected = []
    for size in SIZES:
        sh, mh = _answerable(size)["data"]
        for kind, row in (("sh", sh), ("mh", mh)):
            for qid, q, ans in zip(row["metadata"]["qa_pair_ids"], row["questions"], row["answers"]):
                expected.append((qid, q, ans[0], kind, size))
        un = _unanswerable(size)["data"][0]
        for qid, q in zip(un["metadata"]["qa_pair_ids"], un["questions"]):
            expected.append((qid, q, None, "unanswerable", size))
    assert sorted(c["qid"] for c in chains) == sorted(e[0] for e in expected)
    by_qid = _chains_by_qid()
    for qid, q, gold, kind, size in expected:
        c = by_qid[qid]
        base = {"qid", "question", "kind", "size", "gold", "n_hops", "hops"}
        assert set(c) == (base | {"why", "check"} if kind == "unanswerable" else base), qid
        assert (c["question"], c["gold"], c["kind"], c["size"]) == (q, gold, kind, size), qid
        assert c["n_hops"] == len(c["hops"]), qid


def test_counts_and_composition():
    chains = _chains()
    for size in SIZES:
        mine = [c for c in chains if c["size"] == size]
        kinds = Counter(c["kind"] for c in mine)
        assert kinds == {"sh": N_SH, "mh": N_MH, "unanswerable": N_UN}, (size, kinds)
        hops = Counter(c["n_hops"] for c in mine if c["kind"] == "mh")
        assert set(hops) == {2, 3, 4}, hops
        assert 12 <= hops[2] <= 16 and 10 <= hops[3] <= 14 and 7 <= hops[4] <= 11, (size, hops)
        sh = [c for c in mine if c["kind"] == "sh"]
        assert all(c["n_hops"] == 1 for c in sh)
        assert sum(c["hops"][0]["several_versions"] for c in sh) == N_SH // 2, size
        mh = [c for c in mine if c["kind"] == "mh"]
        assert sum(any(h["several_versions"] for h in c["hops"]) for c in mh) >= 30, size
        un = [c for c in mine if c["kind"] == "unanswerable"]
        # "tempting": the entity whose relation is missing exists and has other relations
        tempting = [c for c in un if c["check"]["type"] == "missing_relation"
                    and _has_relations(size, c["check"]["subjects"][0])]
        assert 8 <= len(tempting) <= 12, (size, len(tempting))
        assert any(c["hops"] and len(c["hops"]) >= 2 for c in un), "some multi-hop unanswerables"


def _has_relations(size: str, name: str) -> bool:
    """True when some line has `name` as its subject (or is an officeholder line of it)."""
    _, _, facts, _ = context(size)
    return any(su == name or (rel == "P1308" and su.endswith(" " + name))
               for rel, su, _ in facts.values())


# ---------------------------------------------------------------- answerable gold


@pytest.mark.parametrize("size", SIZES)
def test_answerable_chains_resolve_latest_incontext(size):
    for c in _chains():
        if c["size"] != size or c["kind"] == "unanswerable":
            continue
        qid, hops = c["qid"], c["hops"]
        assert hops[0]["subject"] in c["question"], f"{qid}: base entity not in question"
        assert (len(hops) == 1) if c["kind"] == "sh" else (2 <= len(hops) <= 4), qid
        assert check_hops(qid, size, hops) == c["gold"], f"{qid}: last object != gold"


# ---------------------------------------------------------------- unanswerable


@pytest.mark.parametrize("size", SIZES)
def test_unanswerable_why_is_consistent(size):
    text, _, facts, _ = context(size)
    for c in _chains():
        if c["size"] != size or c["kind"] != "unanswerable":
            continue
        qid, check, hops = c["qid"], c["check"], c["hops"]
        assert c["gold"] is None and isinstance(c["why"], str) and c["why"], qid
        if check["type"] == "absent_entity":
            ent = check["entity"]
            assert hops == [], qid
            assert ent in c["question"], qid
            assert ent not in text, f"{qid}: {ent!r} occurs in the context"
            assert ent in c["why"], qid
            continue
        assert check["type"] == "missing_relation", qid
        *prefix, missing = hops
        assert set(missing) == HOP_KEYS, qid
        assert missing["serial"] is None and missing["object"] is None, qid
        assert missing["relation_sentence"] is None and missing["version_serials"] == [], qid
        subject = missing["subject"]
        assert check["subjects"][0] == subject, qid
        assert subject in c["why"], qid
        rels, roles = set(check["relations"]), list(check["roles"])
        assert rels or roles, qid
        first = missing["relation"]
        assert first in rels or first == OFFICE_PREFIX + roles[0], qid
        if prefix:
            last = check_hops(qid, size, prefix)
            assert last == subject, f"{qid}: prefix does not lead to {subject!r}"
            # every older value of the previous hop is checked too
            older = {facts[s][2] for s in prefix[-1]["version_serials"]}
            assert older <= set(check["subjects"]), qid
            assert prefix[0]["subject"] in c["question"], qid
        else:
            assert subject in c["question"], qid
        for sj in check["subjects"]:
            for serial, (rel, su, obj) in facts.items():
                assert not (su == sj and rel in rels), f"{qid}: line {serial} answers it"
                if rel == "P1308":
                    for role in roles:
                        assert su not in (f"{role} {sj}", f"{role} the {sj}"), f"{qid}: line {serial}"
                if "P26" in rels and rel == "P26":
                    assert obj != sj, f"{qid}: line {serial} is a reverse spouse line"
