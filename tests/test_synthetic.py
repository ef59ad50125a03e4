"""benchmarks/synthetic.py: seeded synthetic FactConsolidation rows (SH + MH) on the bundled
contexts. The module is loaded by path (benchmarks/ is not a package) and imports nothing from
the project; each size is generated once per module."""
from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATH = ROOT / "benchmarks" / "synthetic.py"


def _load():
    name = "factres_bench_synthetic"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


syn = _load()
CLOZE, QUESTIONS = syn.load_templates()


class _Cache:
    def __init__(self):
        self.items = {}

    def get(self, size):
        if size not in self.items:
            text = syn.load_context(size)
            t0 = time.perf_counter()
            rows, chains = syn.generate_with_chains(text, size, seed=0)
            elapsed = time.perf_counter() - t0
            self.items[size] = {"text": text, "rows": rows, "chains": chains,
                                "store": syn.parse_context(text), "seconds": elapsed}
        return self.items[size]


@pytest.fixture(scope="module")
def gen():
    return _Cache()


def test_deterministic_and_seeded():
    text = syn.load_context("32k")
    a_rows, a_chains = syn.generate_with_chains(text, "32k", seed=0)
    b_rows, b_chains = syn.generate_with_chains(text, "32k", seed=0)
    assert syn.dumps_rows(a_rows) == syn.dumps_rows(b_rows)
    assert syn.dumps_chains(a_chains) == syn.dumps_chains(b_chains)
    assert syn.generate(text, "32k", seed=0) == a_rows
    c_rows = syn.generate(text, "32k", seed=1)
    assert syn.dumps_rows(c_rows) != syn.dumps_rows(a_rows)
    assert c_rows[0]["questions"] != a_rows[0]["questions"]
    assert c_rows[1]["questions"] != a_rows[1]["questions"]


@pytest.mark.parametrize("size", syn.SIZES)
def test_rows_layout(gen, size):
    g = gen.get(size)
    rows = g["rows"]
    assert [r["metadata"]["source"] for r in rows] == [f"synthetic_sh_{size}", f"synthetic_mh_{size}"]
    for row in rows:
        assert list(row) == ["context", "questions", "answers", "metadata"]
        assert list(row["metadata"]) == ["source", "qa_pair_ids"]
        assert row["context"].encode("utf-8") == g["text"].encode("utf-8")
        src = row["metadata"]["source"]
        assert row["metadata"]["qa_pair_ids"] == [f"{src}_no{i}" for i in range(100)]
        assert len(row["questions"]) == len(row["answers"]) == 100
        assert len(set(row["questions"])) == 100
        assert all(isinstance(q, str) and q.endswith("?") for q in row["questions"])
        assert all(isinstance(a, list) and len(a) == 1 and isinstance(a[0], str) and a[0]
                   for a in row["answers"])
    assert g["seconds"] < 5.0


@pytest.mark.parametrize("size", syn.SIZES)
def test_chains_valid(gen, size):
    g = gen.get(size)
    store, chains, rows = g["store"], g["chains"], g["rows"]
    lines = g["text"].split("\n")
    assert len(chains) == 200
    by_qid = {qid: (row, i) for row in rows for i, qid in enumerate(row["metadata"]["qa_pair_ids"])}
    for c in chains:
        assert list(c) == ["qid", "question", "gold", "n_hops", "hops"]
        row, i = by_qid[c["qid"]]
        assert row["questions"][i] == c["question"]
        assert row["answers"][i] == [c["gold"]]
        assert c["n_hops"] == len(c["hops"])
        subjects = set()
        for j, h in enumerate(c["hops"]):
            assert list(h) == ["subject", "relation", "serial", "object", "version_rank", "version_serials"]
            # The serial's line is exactly the cloze sentence of (subject, relation, object).
            sentence = CLOZE[h["relation"]].replace("[X]", h["subject"]).replace(" __", "")
            assert lines[h["serial"] + 1] == f"{h['serial']}. {sentence} {h['object']}."
            assert store.facts[h["serial"]] == (h["subject"], h["relation"], h["object"])
            serials = h["version_serials"]
            assert serials == store.versions[(h["subject"], h["relation"])] == sorted(serials)
            assert serials[len(serials) - 1 - h["version_rank"]] == h["serial"]
            if j:
                assert h["subject"] == c["hops"][j - 1]["object"]
            assert h["subject"] not in subjects  # no cycles
            subjects.add(h["subject"])
        assert c["gold"] == c["hops"][-1]["object"]
        keys = [(h["subject"], h["relation"]) for h in c["hops"]]
        if c["n_hops"] == 1:
            assert c["question"] == QUESTIONS[keys[0][1]].replace("[X]", keys[0][0])
        else:
            assert c["question"] == syn.mh_question(keys, QUESTIONS)
            assert keys[0][0] in c["question"]


@pytest.mark.parametrize("size", syn.SIZES)
def test_mix_versions_and_contests(gen, size):
    chains = gen.get(size)["chains"]
    sh = [c for c in chains if c["qid"].startswith("synthetic_sh_")]
    mh = [c for c in chains if c["qid"].startswith("synthetic_mh_")]
    assert {c["n_hops"] for c in sh} == {1}
    assert Counter(c["n_hops"] for c in mh) == {2: 40, 3: 35, 4: 25}
    hops = [h for c in chains for h in c["hops"]]
    older = sum(h["version_rank"] > 0 for h in hops) / len(hops)
    assert 0.12 <= older <= 0.30, older
    # Single-hop questions about keys with several versions, some asking the older value.
    multi = [c["hops"][0] for c in sh if len(c["hops"][0]["version_serials"]) > 1]
    assert len(multi) >= 30
    assert sum(h["version_rank"] > 0 for h in multi) >= 10
    assert any(h["version_rank"] > 0 for c in mh for h in c["hops"])
    # Keys taken at different versions by different questions.
    ranks = defaultdict(set)
    for c in chains:
        for h in c["hops"]:
            ranks[(h["subject"], h["relation"])].add((h["version_rank"], c["qid"]))
    contested = [k for k, v in ranks.items() if len({r for r, _ in v}) > 1]
    assert len(contested) >= 10
    s = syn.summarize(chains)
    assert s["keys_at_several_versions"] == len(contested)
    assert s["components_with_contest_multi_key"] >= 1


def test_parse_fails_loudly():
    ok = "Here is a list of facts:\n0. Steve Jobs was born in the city of San Francisco.\n"
    store = syn.parse_context(ok)
    assert store.facts == [("Steve Jobs", "P19", "San Francisco")]
    with pytest.raises(syn.ParseError, match="Steve Jobs likes tea"):
        syn.parse_context(ok + "1. Steve Jobs likes tea.\n")
    with pytest.raises(syn.ParseError, match="numbering"):
        syn.parse_context(ok + "5. Paris is located in the country of France.\n")
    with pytest.raises(syn.ParseError):
        syn.parse_context("facts:\n" + ok)


def test_specific_template_wins():
    text = ("Here is a list of facts:\n"
            "0. The capital of France is Paris.\n"
            "1. The President of Azerbaijan is Ilham Aliyev.\n"
            "2. The headquarters of Apple is located in the city of Cupertino.\n"
            "3. France is located in the continent of Europe.\n"
            "4. QuickTime was developed by Apple Inc..\n"
            "5. The capital of France is Lyon.\n")
    store = syn.parse_context(text)
    assert store.facts == [
        ("France", "P36", "Paris"),
        ("President of Azerbaijan", "P1308", "Ilham Aliyev"),
        ("Apple", "P159", "Cupertino"),
        ("France", "P30", "Europe"),
        ("QuickTime", "P178", "Apple Inc."),
        ("France", "P36", "Lyon"),
    ]
    assert store.versions[("France", "P36")] == [0, 5]
    assert store.object_at(("France", "P36"), 0) == "Lyon"
    assert store.object_at(("France", "P36"), 1) == "Paris"


def test_cli_writes_files(tmp_path, gen):
    assert syn.main(["--size", "6k", "--seed", "0", "--out", str(tmp_path / "o")]) == 0
    rows_file = tmp_path / "o" / "synthetic_6k.json"
    chains_file = tmp_path / "o" / "synthetic_6k.chains.jsonl"
    g = gen.get("6k")
    assert rows_file.read_text("utf-8") == syn.dumps_rows(g["rows"])
    assert chains_file.read_text("utf-8") == syn.dumps_chains(g["chains"])
    assert json.loads(rows_file.read_text("utf-8"))["data"] == g["rows"]
    assert len(chains_file.read_text("utf-8").splitlines()) == 200
