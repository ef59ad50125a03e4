"""Every oracle analysis that relates questions to each other works per haystack: the result for
a file in a multi-file call equals the result for that file alone. Synthetic rows
(benchmarks/synthetic.py) on two bundled contexts, whose keys overlap by name (the same
(subject, relation) appears in both stores) and whose questions contest keys."""
import orjson
import pytest
from click.testing import CliRunner
from test_synthetic import syn

from oracle import signals
from oracle.ceiling import OPTIMAL, solve
from oracle.cli import main
from oracle.paths import find_paths, paths_report
from oracle.signals import signals_report
from oracle.versions import versions_report
from resolver.haystack import load
from resolver.plan.planning import live_plan_sets

SIZES = ("6k", "32k")


def _inputs(paths):
    dataset, gold = load(paths, use_cache=False)
    plan_sets = live_plan_sets(dataset)
    return dataset, plan_sets, find_paths(dataset, gold, plan_sets)


@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    out = tmp_path_factory.mktemp("synthetic")
    files = {size: str(syn.write(size, out, n_sh=60, n_mh=60)[0]) for size in SIZES}
    return {"together": _inputs([files[s] for s in SIZES]),
            **{size: _inputs([files[size]]) for size in SIZES}}


def _mine(items, sha):
    return [x for x in items if x["haystack"] == sha]


def test_the_stores_share_key_names(calls):
    dataset, _, _ = calls["together"]
    keys = [{(f.subject, f.relation) for f in h.store} for h in dataset.haystacks.values()]
    assert len(keys) == 2 and len(keys[0] & keys[1]) > 50


@pytest.mark.parametrize("size", SIZES)
def test_ceiling_of_a_file_is_the_same_alone_and_together(calls, size):
    together = solve(calls["together"][2])
    alone = solve(calls[size][2])
    (sha,) = alone["per_haystack"]
    assert alone["status"] == together["status"] == OPTIMAL
    assert together["per_haystack"][sha] == alone["per_haystack"][sha]
    assert {s: together["per_source"][s] for s in alone["per_source"]} == alone["per_source"]
    for part in ("rows", "components", "contested_keys"):
        assert _mine(together[part], sha) == alone[part]
    # the synthetic questions do contest keys, so the optimum is a real choice
    assert alone["contested_keys"] and alone["optimal"] > alone["latest_wins"]


def test_ceiling_sums_the_haystacks_and_never_merges_them(calls):
    together = solve(calls["together"][2])
    alone = [solve(calls[size][2]) for size in SIZES]
    for name in ("questions", "optimal", "latest_wins", "bound", "keys_requested"):
        assert together[name] == sum(a[name] for a in alone)
    assert len(together["per_haystack"]) == 2


@pytest.mark.parametrize("size", SIZES)
def test_signals_of_a_file_are_the_same_alone_and_together(calls, size, monkeypatch):
    monkeypatch.setattr(signals, "PERMUTATIONS", 20)     # few draws: the same seed either way
    dataset, plan_sets, qps = calls["together"]
    together = signals_report(qps, plan_sets, dataset)
    dataset, plan_sets, qps = calls[size]
    alone = signals_report(qps, plan_sets, dataset)
    qids = {q.qid for q in dataset.questions}
    assert [h for h in together["hop_rows"] if h["qid"] in qids] == alone["hop_rows"]
    assert any(h["signals"]["other_question_key"] for h in alone["hop_rows"])
    # each haystack's separation (AUC, p, separating signals) is its own, whatever shares the call
    (sha,) = alone["per_haystack"]
    assert together["per_haystack"][sha] == alone["per_haystack"][sha]
    assert len(together["per_haystack"]) == 2


@pytest.mark.parametrize("size", SIZES)
def test_paths_and_versions_of_a_file_are_the_same_alone_and_together(calls, size):
    qids = {q.qid for q in calls[size][0].questions}
    for report in (paths_report, versions_report):
        summary, rows = report(calls["together"][2])
        summary_alone, rows_alone = report(calls[size][2])
        assert [r for r in rows if r["qid"] in qids] == rows_alone
        assert {s: summary[s] for s in summary_alone} == summary_alone


def test_a_component_past_64_bits_of_search_space_is_written(tmp_path):
    """400 + 400 questions on one store make a component whose search space (the product of its
    keys' version counts) passes 2^64: the report records its log10 and writes cleanly."""
    data = syn.write("64k", tmp_path, n_sh=400, n_mh=400, seed=1)[0]
    out = tmp_path / "c"
    result = CliRunner().invoke(main, ["oracle", "ceiling", "--data", str(data), "--out",
                                       str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = orjson.loads((out / "ceiling.json").read_bytes())
    big = [c for c in report["components"] if c["search_space"] is None]
    assert big and all(c["search_space_log10"] > 19.3 for c in big)
    assert report["status"] == OPTIMAL
    assert f'10^{big[0]["search_space_log10"]:.1f}' in (out / "ceiling.md").read_text()
