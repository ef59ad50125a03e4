"""Questions written for the reading work (tests/data/own_questions/) over the bundled 32K, 64K
and 262K contexts: multi-hop ones with office phrasings, inverted and in-place question words,
possessives, relative clauses, words that restate a relation (mh.txt), and single-hop
paraphrases of every relation (sh.txt). The search must answer each with the object its chain
reaches at the latest version of every key."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from resolver.haystack import BUNDLED, Question, bundled_path, load
from resolver.plan.compile_lexicon import compile_question as lexicon_plans
from resolver.plan.compile_rules import compile_question as rule_plans
from resolver.search.resolve import resolve_question

FOLDER = Path(__file__).parent / "data" / "own_questions"


def _cases(kind: str) -> list[tuple[str, str, tuple[str, ...], str]]:
    out = []
    for line in (FOLDER / f"{kind}.txt").read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            size, base, chain, text = (part.strip() for part in line.split("|"))
            out.append((size, base, tuple(chain.split(",")), text))
    return out


@lru_cache(maxsize=None)
def _store(size: str):
    dataset, _ = load([bundled_path(BUNDLED[size])])
    return next(iter(dataset.haystacks.values())).store


def _latest_object(store, base: str, chain: tuple[str, ...]) -> str:
    entity = base
    for relation in chain:
        head = store.head(entity, relation)
        assert head is not None, f"{entity!r} has no {relation}"
        entity = head.value
    return entity


@pytest.mark.parametrize("kind, hops, least", [("mh", {2, 3}, 130), ("sh", {1}, 200)])
def test_the_question_files_are_varied_enough(kind, hops, least):
    cases = _cases(kind)
    assert len(cases) >= least
    assert {size for size, *_ in cases} == {"32k", "64k", "262k"}
    assert {len(chain) for _, _, chain, _ in cases} == hops
    assert len({(size, text) for size, *_, text in cases}) == len(cases)


@pytest.mark.parametrize("size, base, chain, text", _cases("mh") + _cases("sh"),
                         ids=lambda v: v if isinstance(v, str) and len(v) > 20 else None)
def test_the_search_answers_at_the_latest_versions(size, base, chain, text):
    store = _store(size)
    gold = _latest_object(store, base, chain)
    question = Question("own", f"own_mh_{size}", 0, text, "mh", size, "")
    compiled = [("live:rules", rule_plans(text, store)),
                ("live:lexicon", lexicon_plans(text, store))]
    assert resolve_question(question, store, compiled).answer == gold
