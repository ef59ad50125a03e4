"""Version classes of the gold on the tiny haystack of test_oracle_paths."""
from test_oracle_paths import write_tiny

from oracle.paths import find_paths
from oracle.versions import versions_report
from resolver.haystack import load


def test_version_classes(tmp_path):
    dataset, gold = load([write_tiny(tmp_path)], use_cache=False)
    summary, rows = versions_report(find_paths(dataset, gold))
    assert summary["factconsolidation_sh_6k"] == {
        "kind": "sh", "questions": 4, "several_versions": 3,
        "classes": {"latest": 2, "other": 1, "first": 1, "none": 0}}
    assert summary["factconsolidation_mh_6k"] == {
        "kind": "mh", "questions": 5, "latest_and_first": 1,
        "classes": {"latest": 2, "first": 1, "mix": 1, "none": 1}}
    assert [r["class"] for r in rows] == ["latest", "first", "latest", "mix", "none",
                                          "latest", "first", "latest", "other"]
