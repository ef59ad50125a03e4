"""The exact ceiling on the tiny haystack of test_oracle_paths.

Worked by hand: keys A = (Alpha, citizenship) and X = (Xland, capital) are contested.
sh0 needs X0, sh1 A1, mh0 A0, mh1 A1+X1, mh3 A1+X0; sh2, sh3 (Delta, born_in asked in one
version only) and mh2 are free; mh4 has no gold path. Best policy A1 X0: sh0 sh1 mh3 + 3 free
= 6. Latest wins A0 X0: sh0 mh0 + sh2 mh2 = 4."""
from test_oracle_paths import write_tiny

from oracle.ceiling import ceiling_markdown, solve
from oracle.paths import find_paths
from resolver.haystack import load


def test_ceiling_counts(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    report = solve(find_paths(dataset, gold))
    assert (report["questions"], report["with_gold_path"], report["optimal"],
            report["latest_wins"]) == (9, 8, 6, 4)
    assert report["per_source"] == {
        "factconsolidation_mh_6k": {"questions": 5, "with_gold_path": 4, "optimal": 2,
                                    "latest_wins": 2, "optimal_alone": 2,
                                    "contested_keys": 2},
        "factconsolidation_sh_6k": {"questions": 4, "with_gold_path": 4, "optimal": 4,
                                    "latest_wins": 2, "optimal_alone": 4,
                                    "contested_keys": 2}}
    assert [(c["subject"], c["relation"], c["optimal_version"])
            for c in report["contested_keys"]] == [("Alpha", "citizenship", 1),
                                                   ("Xland", "capital", 0)]
    assert [(c["keys"], c["questions"], c["search_space"], c["best"])
            for c in report["components"]] == [(2, 5, 4, 3)]
    assert (report["keys_requested"], report["keys_free"], report["questions_free"]) == \
        (6, 4, 3)
    assert "| all | 9 | 8 | 6 | 6 | 4 |" in ceiling_markdown(report)


def test_contested_keys_per_source_agree_with_what_tables_count(tmp_path):
    """resolver.report.paper_tables counts them from older ceiling.json files that lack the
    field."""
    from resolver.report.paper_tables import contested_by_source
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    report = solve(find_paths(dataset, gold))
    written = {s: v["contested_keys"] for s, v in report["per_source"].items()}
    old = dict(report, per_source={s: {k: x for k, x in v.items() if k != "contested_keys"}
                                   for s, v in report["per_source"].items()})
    assert contested_by_source(report) == written
    assert contested_by_source(old) == written
