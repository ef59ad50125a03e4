"""Cells, bootstrap intervals and pooled rows (mean over sizes)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from resolver.haystack import load
from resolver.metrics import scoring
from resolver.metrics.scoring import Cell, bootstrap_means, build_cells, interval, metrics_rows
from resolver.search.resolve import Prediction

SMALL = Path(__file__).parent / "data" / "runs_small.json"


def _predictions(dataset, answers: dict[str, str]) -> list[Prediction]:
    return [Prediction(q.qid, q.text, q.source, answers.get(q.qid, ""))
            for q in dataset.questions]


def test_bootstrap_is_deterministic_and_seeded_per_cell():
    values = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
    a = bootstrap_means(values, "cell")
    assert a.shape == (scoring.BOOTSTRAP_RESAMPLES,)
    assert np.array_equal(a, bootstrap_means(values, "cell"))
    assert not np.array_equal(a, bootstrap_means(values, "other cell"))


def test_interval_brackets_the_mean():
    values = [1] * 60 + [0] * 40
    low, high = interval(bootstrap_means(values, "c"))
    assert low < 0.6 < high
    assert 0.45 < low and high < 0.75


def test_constant_cell_has_a_degenerate_interval():
    assert interval(bootstrap_means([1, 1, 1], "c")) == (1.0, 1.0)


def test_cells_score_unanswered_as_zero_and_count_them():
    dataset, gold = load([SMALL])
    answers = {"sh6_0": "Jane Austen", "sh6_1": "", "sh6_2": "Spain",
               "mh6_0": "France", "sh32_0": "Zenda"}
    cells, ems, stales = build_cells(dataset, _predictions(dataset, answers), gold)
    assert [c.source for c in cells] == ["factconsolidation_sh_6k", "factconsolidation_sh_32k",
                                         "factconsolidation_mh_6k"]
    by = {c.source: c for c in cells}
    assert by["factconsolidation_sh_6k"].em == [1, 0, 0]
    assert by["factconsolidation_sh_6k"].answered == [1, 0, 1]
    assert by["factconsolidation_mh_6k"].em == [1, 0]
    assert by["factconsolidation_sh_32k"].em == [1, 0]
    assert ems == [1, 0, 0, 1, 0, 1, 0]
    assert len(stales) == 7


def test_stale_counts_reach_the_cell():
    dataset, gold = load([SMALL])
    # (Ruritania, capital) was Strelsau, then Zenda: answering Strelsau is stale.
    answers = {"sh32_0": "Strelsau", "sh6_0": "Charles Dickens"}
    cells, _, _ = build_cells(dataset, _predictions(dataset, answers), gold)
    by = {c.source: c for c in cells}
    assert (by["factconsolidation_sh_32k"].stale, by["factconsolidation_sh_32k"].stale_eligible) \
        == (1, 1)
    assert (by["factconsolidation_sh_6k"].stale, by["factconsolidation_sh_6k"].stale_eligible) \
        == (1, 1)
    assert by["factconsolidation_mh_6k"].stale_eligible == 0


def test_unscored_cells_have_no_em():
    dataset, _ = load([SMALL])
    cells, ems, stales = build_cells(dataset, _predictions(dataset, {"sh6_0": "x"}), None)
    assert ems == [None] * 7 and stales == [None] * 7
    rows = metrics_rows(cells, "none", scored=False)
    assert all(r["em"] is None and r["ci"] is None and r["stale_rate"] is None for r in rows)
    assert rows[0]["answered"] == pytest.approx(1 / 3, abs=1e-6)


def _cell(source, kind, size, em, stale=0, eligible=0):
    return Cell(source, kind, size, list(em), [1] * len(em), stale, eligible)


def test_pooled_is_the_mean_over_sizes_not_over_questions():
    cells = [_cell("sh_6k", "sh", "6k", [1] * 10, 1, 4),          # EM 1.0, 10 questions
             _cell("sh_32k", "sh", "32k", [0] * 30, 3, 6),        # EM 0.0, 30 questions
             _cell("mh_6k", "mh", "6k", [1, 0, 0, 0])]            # EM 0.25
    rows = {r["label"]: r for r in metrics_rows(cells, "none", scored=True)}
    pooled_sh = rows["pooled sh"]
    assert pooled_sh["em"] == 0.5                                  # not 10/40
    assert pooled_sh["n"] == 40 and pooled_sh["sizes"] == ["6k", "32k"]
    assert pooled_sh["ci"] == [0.5, 0.5]                          # both cells are constant
    assert pooled_sh["stale_rate"] == pytest.approx((1 / 4 + 3 / 6) / 2, abs=1e-6)
    assert (pooled_sh["stale"], pooled_sh["stale_eligible"]) == (4, 10)
    assert rows["pooled mh"]["em"] == 0.25 and rows["pooled mh"]["stale_rate"] is None
    assert rows["pooled all"]["em"] == pytest.approx((1 + 0 + 0.25) / 3, abs=1e-6)
    assert [r["label"] for r in metrics_rows(cells, "none", True)] == [
        "sh_6k", "sh_32k", "mh_6k", "pooled sh", "pooled mh", "pooled all"]


def test_cell_row_fields():
    row = metrics_rows([_cell("sh_6k", "sh", "6k", [1, 0, 1, 1], 1, 2)], "ollama:m", True)[0]
    assert row["em"] == 0.75 and row["n"] == 4 and row["reader"] == "ollama:m"
    assert row["stale_rate"] == 0.5 and (row["stale"], row["stale_eligible"]) == (1, 2)
    low, high = row["ci"]
    assert 0 <= low <= 0.75 <= high <= 1
    assert row["pooled"] is False and row["sizes"] == ["6k"]


def test_no_eligible_question_means_no_stale_rate():
    row = metrics_rows([_cell("sh_6k", "sh", "6k", [1])], "none", True)[0]
    assert row["stale_rate"] is None and (row["stale"], row["stale_eligible"]) == (0, 0)
