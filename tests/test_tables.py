"""Markdown and LaTeX tables rendered from the one row model."""
from __future__ import annotations

from resolver.run.tables import cells, latex, markdown


def _row(label, kind, em, ci, stale_rate=None, stale=None, eligible=None, pooled=False,
         sizes=("6k",), n=100, answered=1.0, reader="none"):
    return {"label": label, "source": label, "kind": kind, "size": "mean" if pooled else "6k",
            "sizes": list(sizes), "pooled": pooled, "reader": reader, "n": n, "em": em,
            "ci": ci, "answered": answered, "stale_rate": stale_rate, "stale": stale,
            "stale_eligible": eligible}


ROWS = [
    _row("factconsolidation_sh_6k", "sh", 0.97, [0.93, 1.0], 0.125, 1, 8),
    _row("factconsolidation_mh_6k", "mh", 0.5, [0.4, 0.6], answered=0.955),
    _row("pooled all", "all", 0.735, [0.68, 0.79], 0.125, 1, 8, pooled=True,
         sizes=("6k", "32k"), n=200),
]


def test_markdown():
    assert markdown(ROWS) == (
        "| source/size | kind | mode | reader | n | EM (95% CI) | answered | stale rate |\n"
        "|---|---|---|---|--:|--:|--:|--:|\n"
        "| factconsolidation_sh_6k | sh | search | none | 100 | 97.0 [93.0, 100.0] | 100.0 | "
        "12.5 (1/8) |\n"
        "| factconsolidation_mh_6k | mh | search | none | 100 | 50.0 [40.0, 60.0] | 95.5 | — |\n"
        "| pooled all (6k+32k) | all | search | none | 200 | 73.5 [68.0, 79.0] | 100.0 | 12.5 "
        "(mean over sizes; 1/8 pooled) |\n")


def test_the_score_table_states_the_mode():
    """A plain run, a search run and an imported one say which they are on every row."""
    for mode in ("plain", "search", "imported"):
        lines = markdown(ROWS, mode=mode).splitlines()
        assert lines[0].split(" | ")[2] == "mode"
        assert all(line.split(" | ")[2] == mode for line in lines[2:])


def test_a_stale_rate_pooled_over_one_size_is_its_own_fraction():
    row = _row("pooled sh", "sh", 0.97, [0.93, 1.0], 0.125, 1, 8, pooled=True, sizes=("6k",))
    assert cells(row)[-1] == "12.5 (1/8)"


def test_latex_is_booktabs_with_a_rule_before_pooled_rows():
    assert latex(ROWS) == (
        "\\begin{tabular}{llllrrrr}\n"
        "\\toprule\n"
        "source/size & kind & mode & reader & n & EM (95\\% CI) & answered & stale rate \\\\\n"
        "\\midrule\n"
        "factconsolidation\\_sh\\_6k & sh & search & none & 100 & 97.0 [93.0, 100.0] & 100.0 & "
        "12.5 (1/8) \\\\\n"
        "factconsolidation\\_mh\\_6k & mh & search & none & 100 & 50.0 [40.0, 60.0] & 95.5 & "
        "--- \\\\\n"
        "\\midrule\n"
        "pooled all (6k+32k) & all & search & none & 200 & 73.5 [68.0, 79.0] & 100.0 & 12.5 "
        "(mean over sizes; 1/8 pooled) \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n")


def test_unscored_row_and_reader_name():
    row = _row("factconsolidation_sh_6k", "sh", None, None, answered=0.5,
               reader="ollama:qwen2.5:3b")
    assert cells(row) == ("factconsolidation_sh_6k", "sh", "search", "ollama:qwen2.5:3b",
                          "100", "unscored", "50.0", "—")


def test_latex_escapes_special_characters():
    row = _row("a&b_50%#", "sh", 1.0, [1.0, 1.0])
    assert latex([row]).splitlines()[4].startswith("a\\&b\\_50\\%\\# & sh")
