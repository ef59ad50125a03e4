"""`factres compare` (resolver/report/compare.py, compare_report.py, cli/compare.py): the figures
against the committed runs and hand counts, the pooled convention (the mean over sizes, the
stratified test), every refusal word for word, --intersect, --out, and the three formats."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from run_folders import write_outcome_folder
from scipy.stats import binomtest

from resolver.cli import main
from resolver.errors import InputError
from resolver.metrics.stats import (
    mcnemar_exact,
    paired_bootstrap,
    stratified_mcnemar,
    stratified_paired_bootstrap,
)
from resolver.report.compare import compare_runs
from resolver.report.compare_report import markdown, p_text, points, render

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "results"
PLAIN, SEARCH = "dev-6k-plain-confidence", "dev-6k-search-confidence"
GEMINI, NOUS = "imported-gemini-2.5-flash-lite-6k", "imported-nous-6k"
SH, MH = "factconsolidation_sh_6k", "factconsolidation_mh_6k"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _ems(run: str) -> dict[str, tuple[str, int]]:
    lines = (RESULTS / run / "predictions.jsonl").read_bytes().splitlines()
    return {r["qid"]: (r["source"], r["em"]) for r in map(orjson.loads, lines)}


def _metrics_em(run: str, source: str) -> float:
    rows = orjson.loads((RESULTS / run / "metrics.json").read_bytes())["rows"]
    return next(r["em"] for r in rows if r["source"] == source)


# ---- figures ----------------------------------------------------------------------------------
@pytest.mark.parametrize("b", [SEARCH, GEMINI, NOUS])
def test_per_source_figures_match_the_runs_and_hand_counts(b):
    comparison = compare_runs([PLAIN, b], RESULTS)
    (pair,) = comparison.pairs
    a_ems, b_ems = _ems(PLAIN), _ems(b)
    for row in pair.rows[:2]:
        qids = [q for q, (s, _) in a_ems.items() if s == row.label]
        x = [a_ems[q][1] for q in qids]
        y = [b_ems[q][1] for q in qids]
        assert row.n == len(qids) == 100
        assert (row.em_a, row.em_b) == (pytest.approx(_metrics_em(PLAIN, row.label)),
                                        pytest.approx(_metrics_em(b, row.label)))
        assert row.a_only_ids == tuple(q for q, i, j in zip(qids, x, y) if i and not j)
        assert row.b_only_ids == tuple(q for q, i, j in zip(qids, x, y) if j and not i)
        assert (row.a_only, row.b_only) == (len(row.a_only_ids), len(row.b_only_ids))
        d = row.a_only + row.b_only
        assert row.p == (binomtest(row.b_only, d, 0.5).pvalue if d else 1.0)
        assert row.ci == paired_bootstrap(x, y, name=row.label).ci
        assert row.difference == pytest.approx(row.em_b - row.em_a)


def test_search_against_plain_flips_five_multi_hop_questions():
    (pair,) = compare_runs([PLAIN, SEARCH], RESULTS).pairs
    sh, mh = pair.rows[0], pair.rows[1]
    assert (sh.label, sh.a_only, sh.b_only, sh.p, sh.ci) == (SH, 0, 0, 1.0, (0.0, 0.0))
    assert (mh.label, mh.em_a, mh.em_b, mh.a_only, mh.b_only) == (MH, 0.89, 0.94, 0, 5)
    # five discordant questions, all one way: p = 2 / 2^5 exactly
    assert mh.p == 2 * 0.5 ** 5 == 0.0625
    assert mh.b_only_ids == tuple(f"{MH}_no{i}" for i in (19, 32, 73, 88, 91))
    assert [r.label for r in pair.rows] == [SH, MH, "pooled sh", "pooled mh", "pooled all"]


def _two_sizes(tmp_path: Path) -> Path:
    """Runs A and B over two sizes of unequal question counts (10 at 6K, 40 at 32K)."""
    a, b = [], []
    for i in range(10):                      # 6K: A right on 2, B right on all 10
        a.append((f"sh6_{i}", "factconsolidation_sh_6k", int(i < 2)))
        b.append((f"sh6_{i}", "factconsolidation_sh_6k", 1))
    for i in range(40):                      # 32K: both right on 20; 3 flip each way
        x = int(i < 20 or 20 <= i < 23)
        y = int(i < 20 or 23 <= i < 26)
        a.append((f"sh32_{i}", "factconsolidation_sh_32k", x))
        b.append((f"sh32_{i}", "factconsolidation_sh_32k", y))
    write_outcome_folder(tmp_path / "a", a)
    write_outcome_folder(tmp_path / "b", b)
    return tmp_path


def test_pooled_rows_are_the_mean_over_sizes_resampled_within_each(tmp_path):
    root = _two_sizes(tmp_path)
    (pair,) = compare_runs(["a", "b"], root).pairs
    six, thirty_two, pooled = pair.rows[0], pair.rows[1], pair.rows[2]
    assert (six.em_a, six.em_b, thirty_two.em_a, thirty_two.em_b) == (0.2, 1.0, 23 / 40, 23 / 40)
    assert pooled.label == "pooled sh" and pooled.sizes == ("6k", "32k") and pooled.n == 50
    # the mean over sizes (0.2 + 0.575) / 2, not the question mean 25 / 50
    assert pooled.em_a == pytest.approx((0.2 + 23 / 40) / 2)
    assert pooled.difference == pytest.approx((0.8 + 0.0) / 2)
    x6, y6 = [int(i < 2) for i in range(10)], [1] * 10
    x32 = [int(i < 23) for i in range(40)]
    y32 = [int(i < 20 or 23 <= i < 26) for i in range(40)]
    strata = {"factconsolidation_sh_6k": (x6, y6), "factconsolidation_sh_32k": (x32, y32)}
    assert pooled.ci == stratified_paired_bootstrap(strata).ci
    # the stratified exact test: the discordant pairs summed over sizes, 3 A-only, 8+3 B-only
    assert (pooled.a_only, pooled.b_only) == (3, 11)
    assert pooled.p == binomtest(11, 14, 0.5).pvalue == stratified_mcnemar(strata).p
    assert pooled.b_only_ids == six.b_only_ids + thirty_two.b_only_ids
    # only single-hop sources: no "pooled all" row
    assert [r.label for r in pair.rows] == ["factconsolidation_sh_6k",
                                            "factconsolidation_sh_32k", "pooled sh"]


def test_numbers_are_written_as_points_and_p_values():
    assert (points(0.05), points(-0.025), points(0.0), points(-1e-17)) == (
        "+5.0", "-2.5", "+0.0", "+0.0")
    assert (p_text(1.0), p_text(0.0625), p_text(2.8e-33)) == ("1.0000", "0.0625", "< 10^-4")


# ---- the command ------------------------------------------------------------------------------
def test_the_markdown_report_word_for_word():
    result = invoke("compare", PLAIN, SEARCH, "--results-dir", RESULTS)
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == f"""\
- A (baseline): {PLAIN}: live:rules + live:lexicon, plain, 200 questions
- B: {SEARCH}: live:rules + live:lexicon, search, 200 questions

| B | source | n | EM A | EM B | B - A | 95% CI | A only | B only | p |
|---|---|--:|--:|--:|--:|--:|--:|--:|--:|
| {SEARCH} | {SH} | 100 | 100.0 | 100.0 | +0.0 | [+0.0, +0.0] | 0 | 0 | 1.0000 |
| {SEARCH} | {MH} | 100 | 89.0 | 94.0 | +5.0 | [+1.0, +10.0] | 0 | 5 | 0.0625 |
| {SEARCH} | pooled sh (6k) | 100 | 100.0 | 100.0 | +0.0 | [+0.0, +0.0] | 0 | 0 | 1.0000 |
| {SEARCH} | pooled mh (6k) | 100 | 89.0 | 94.0 | +5.0 | [+1.0, +10.0] | 0 | 5 | 0.0625 |
| {SEARCH} | pooled all (6k) | 200 | 94.5 | 97.0 | +2.5 | [+0.5, +5.0] | 0 | 5 | 0.0625 |

A: {PLAIN} (live:rules + live:lexicon, plain), the baseline; B: the run in the first column. \
EM: substring exact match (%) over the questions both runs have; B - A: the difference in \
points, with its paired bootstrap 95% interval (10,000 resamples of the questions, the same \
resample for both runs, seed 20240601, one random stream per source).

A only, B only: questions only A, only B answers right (the discordant pairs); p: exact McNemar \
test, two-sided (binomial test of B only among the discordant questions; p = 1 when none is \
discordant); per row, not adjusted for the number of rows or runs compared.

pooled rows: the mean over sizes (each size weighs the same, the benchmark's convention; pooled \
all: the mean over every single-hop and multi-hop source); the interval resamples within each \
size; p: the exact McNemar test stratified by size, which is the exact test on the discordant \
questions summed over the sizes (each discordant question weighs the same).

Flipped questions (A only: A right and B wrong; B only: B right and A wrong):

- {SEARCH}, {MH}: B only (5): {MH}_no19,
  {MH}_no32, {MH}_no73, {MH}_no88,
  {MH}_no91; A only (0): none
"""


def test_the_docs_sample_is_what_the_command_prints(monkeypatch):
    page = (REPO / "docs" / "comparing.md").read_text(encoding="utf-8")
    command = f"factres compare {PLAIN} {SEARCH}"
    head, _, rest = page.partition(f"$ {command}\n\n")
    assert rest, "the docs show no compare sample"
    sample = rest.split("```", 1)[0]
    monkeypatch.chdir(REPO)              # as written, from a clone: the committed results/
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    assert invoke(*command.split()[1:]).stdout == sample


def test_several_runs_are_each_compared_with_the_first():
    comparison = compare_runs([PLAIN, SEARCH, GEMINI], RESULTS)
    assert [(p.a.name, p.b.name) for p in comparison.pairs] == [(PLAIN, SEARCH),
                                                                (PLAIN, GEMINI)]
    alone = compare_runs([PLAIN, GEMINI], RESULTS).pairs[0]
    assert comparison.pairs[1] == alone          # one stream per source: nothing shifts
    text = markdown(comparison)
    assert f"- B: {GEMINI}: Long_context_agent_gemini-2.5-flash-lite (imported), 200" in text


def test_an_imported_run_with_missing_predictions_is_said_so():
    text = render(compare_runs([PLAIN, NOUS], RESULTS), "md")
    assert (f"{NOUS}: 120 of its 200 questions have no prediction in the imported files and "
            "count as wrong, as in its scores.") in text


def test_json_and_latex_carry_the_same_figures(tmp_path):
    result = invoke("compare", PLAIN, SEARCH, "--results-dir", RESULTS, "--format", "json")
    data = json.loads(result.stdout)
    assert data["schema"] == "factres.compare/1" and data["baseline"] == PLAIN
    assert data["shared"] == {SH: 100, MH: 100} and data["dropped"] == []
    mh = data["pairs"][0]["rows"][1]
    assert (mh["label"], mh["em_a"], mh["em_b"], mh["difference"], mh["a_only"],
            mh["b_only"], mh["p"]) == (MH, 0.89, 0.94, 0.05, 0, 5, 0.0625)
    assert mh["b_only_ids"] == [f"{MH}_no{i}" for i in (19, 32, 73, 88, 91)]
    assert data["tests"]["pooled"].startswith("exact McNemar test stratified by size")
    tex = invoke("compare", PLAIN, SEARCH, "--results-dir", RESULTS, "--format",
                 "latex").stdout
    assert tex.startswith("% factres compare: EM of each run B against the baseline A")
    assert (rf"{SEARCH} & factconsolidation\_mh\_6k & 100 & 89.0 & 94.0 & +5.0 & "
            r"[+1.0, +10.0] & 0 & 5 & 0.0625 \\") in tex
    assert tex.count(r"\begin{tabular}{llrrrrrrrr}") == 1 and r"\bottomrule" in tex
    # the flipped ids as comments, wrapped between ids
    flat = " ".join(line[1:].strip() for line in tex.splitlines()[-3:])
    assert flat.endswith(f"{SEARCH}, {MH}: B only (5): {', '.join(mh['b_only_ids'])}; "
                         "A only (0): none")


def test_the_report_is_deterministic():
    first = invoke("compare", PLAIN, GEMINI, "--results-dir", RESULTS, "--format", "json")
    again = invoke("compare", PLAIN, GEMINI, "--results-dir", RESULTS, "--format", "json")
    assert first.stdout == again.stdout


# ---- --out ------------------------------------------------------------------------------------
def test_out_writes_a_new_folder_and_never_overwrites(tmp_path):
    out = tmp_path / "reports" / "search-vs-plain"
    result = invoke("compare", PLAIN, SEARCH, "--results-dir", RESULTS, "--out", out)
    assert result.exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "compare.md",
                                                     "compare.tex"]
    assert result.stderr == "".join(f"wrote {out / n}\n" for n in
                                    ("compare.md", "compare.tex", "compare.json"))
    assert (out / "compare.md").read_text() == result.stdout
    for fmt, name in (("latex", "compare.tex"), ("json", "compare.json")):
        printed = invoke("compare", PLAIN, SEARCH, "--results-dir", RESULTS, "--format", fmt)
        assert (out / name).read_text() == printed.stdout
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".tmp-")]
    before = (out / "compare.md").read_bytes()
    again = invoke("compare", PLAIN, GEMINI, "--results-dir", RESULTS, "--out", out)
    assert again.exit_code == 1 and again.stdout == ""
    assert again.stderr == (f"Error: {out} exists: factres compare writes a new folder and "
                            "never overwrites; choose another --out\n")
    assert (out / "compare.md").read_bytes() == before


def test_a_failed_write_leaves_no_report(tmp_path, monkeypatch):
    from resolver.run import run_folder
    write_file = run_folder.write_file

    def full_disk(path, data):          # compare.md is written, compare.tex is not
        if path.name == "compare.tex":
            raise OSError(28, "No space left on device", str(path))
        write_file(path, data)
    monkeypatch.setattr(run_folder, "write_file", full_disk)
    result = invoke("compare", PLAIN, SEARCH, "--results-dir", RESULTS, "--out",
                    tmp_path / "report")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"Error: {tmp_path / '.tmp-report' / 'compare.tex'}: No space "
                             "left on device\n")
    assert list(tmp_path.iterdir()) == []


def test_a_refused_comparison_writes_nothing(tmp_path):
    out = tmp_path / "report"
    result = invoke("compare", PLAIN, "dev-6k-plian", "--results-dir", RESULTS, "--out", out)
    assert result.exit_code == 1 and result.stdout == ""
    assert not out.exists() and list(tmp_path.iterdir()) == []


# ---- refusals ---------------------------------------------------------------------------------
def test_an_unknown_run_names_the_runs_there():
    result = invoke("compare", PLAIN, "dev-6k-plian", "--results-dir", RESULTS)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"Error: no run 'dev-6k-plian' in {RESULTS}/ (")


def test_an_unscored_run_is_refused_by_name(tmp_path):
    write_outcome_folder(tmp_path / "dev", [("q1", "factconsolidation_sh_262k", 1)])
    write_outcome_folder(tmp_path / "test-run", [("q1", "factconsolidation_sh_262k", 1)],
                         split="test")
    result = invoke("compare", "dev", "test-run", "--results-dir", tmp_path)
    assert result.exit_code == 1
    assert result.output == (f"Error: {tmp_path / 'test-run'}: run test-run is unscored (split "
                             "test: its gold was never read), so it has no per-question EM to "
                             "compare (expected scored runs (the dev split, or imported "
                             "runs))\n")


def test_an_incomplete_folder_is_refused_by_name(tmp_path):
    # copies under names of their own: a committed run's name would be read from here with a
    # note saying so (test_results_dir)
    plain, search = "plain-copy", "search-copy"
    shutil.copytree(RESULTS / PLAIN, tmp_path / plain)
    shutil.copytree(RESULTS / SEARCH, tmp_path / search)
    (tmp_path / search / "predictions.jsonl").unlink()
    result = invoke("compare", plain, search, "--results-dir", tmp_path)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"Error: {tmp_path / search}: no predictions.jsonl (expected a "
                             "finished folder with predictions.jsonl)\n")
    (tmp_path / search).rename(tmp_path / f".tmp-{search}")
    result = invoke("compare", plain, tmp_path / f".tmp-{search}", "--results-dir", tmp_path)
    assert result.stderr.startswith(f"Error: {tmp_path / f'.tmp-{search}'}: an unfinished "
                                    "folder (.tmp-*")


def test_runs_whose_gold_disagrees_are_refused_naming_the_question(tmp_path):
    write_outcome_folder(tmp_path / "a", [("q1", "factconsolidation_sh_6k", 1),
                                          ("q2", "factconsolidation_sh_6k", 0, ["x", "y"])])
    write_outcome_folder(tmp_path / "b", [("q1", "factconsolidation_sh_6k", 1),
                                          ("q2", "factconsolidation_sh_6k", 0, ["y", "z"])])
    result = invoke("compare", "a", "b", "--results-dir", tmp_path)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (f"Error: {tmp_path / 'b' / 'predictions.jsonl'}: runs a and b "
                             "disagree on question 'q2': its gold is ['x', 'y'] in a and "
                             "['y', 'z'] in b (expected runs over the same rows (one source, "
                             "question and gold per question id))\n")
    # the order of the answers does not matter: scoring takes the best of them
    write_outcome_folder(tmp_path / "c", [("q1", "factconsolidation_sh_6k", 0),
                                          ("q2", "factconsolidation_sh_6k", 1, ["y", "x"])])
    assert invoke("compare", "a", "c", "--results-dir", tmp_path).exit_code == 0


def test_runs_whose_question_text_disagrees_are_refused(tmp_path):
    write_outcome_folder(tmp_path / "a", [("q1", "factconsolidation_sh_6k", 1, ["r"], "Who?")])
    write_outcome_folder(tmp_path / "b", [("q1", "factconsolidation_sh_6k", 1, ["r"], "What?")])
    with pytest.raises(InputError, match="disagree on question 'q1': its question text is "
                                         "'Who\\?' in a and 'What\\?' in b"):
        compare_runs(["a", "b"], tmp_path)


def _partial(tmp_path: Path) -> Path:
    """a: 6 sh + 4 mh questions; b lacks sh q4, q5 and every mh; c lacks sh q5."""
    sh = [(f"sh{i}", "factconsolidation_sh_6k", i % 2) for i in range(6)]
    mh = [(f"mh{i}", "factconsolidation_mh_6k", 1) for i in range(4)]
    write_outcome_folder(tmp_path / "a", sh + mh)
    write_outcome_folder(tmp_path / "b", [(q, s, 1) for q, s, _ in sh[:4]])
    write_outcome_folder(tmp_path / "c", [(q, s, 0) for q, s, _ in sh[:5] + mh])
    return tmp_path


def test_different_question_sets_are_refused_naming_what_each_lacks(tmp_path):
    root = _partial(tmp_path)
    result = invoke("compare", "a", "b", "c", "--results-dir", root)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == ("Error: the runs cover different questions: b lacks 6 of the 10 "
                             "(factconsolidation_sh_6k: 2, factconsolidation_mh_6k: 4); c lacks "
                             "1 of the 10 (factconsolidation_sh_6k: 1); --intersect compares "
                             "the 4 questions every run has (expected runs over the same "
                             "questions, or --intersect)\n")


def test_intersect_compares_the_shared_questions_and_says_what_it_dropped(tmp_path):
    root = _partial(tmp_path)
    comparison = compare_runs(["a", "b", "c"], root, intersect=True)
    assert comparison.shared == (("factconsolidation_sh_6k", 4),)
    assert [(d.source, d.dropped, d.lacking) for d in comparison.dropped] == [
        ("factconsolidation_sh_6k", 2, (("b", 2), ("c", 1))),
        ("factconsolidation_mh_6k", 4, (("b", 4),))]
    ab = comparison.pairs[0]
    assert [r.label for r in ab.rows] == ["factconsolidation_sh_6k", "pooled sh"]
    assert (ab.rows[0].n, ab.rows[0].em_a, ab.rows[0].em_b) == (4, 0.5, 1.0)
    assert ab.rows[0].b_only_ids == ("sh0", "sh2")
    text = invoke("compare", "a", "b", "c", "--intersect", "--results-dir", root).stdout
    assert ("--intersect: compared on the 4 questions every run has; 6 dropped, per source: "
            "factconsolidation_sh_6k: 2 (b lacks 2, c lacks 1); factconsolidation_mh_6k: 4 "
            "(b lacks 4).") in text
    same = compare_runs([PLAIN, SEARCH], RESULTS, intersect=True)
    assert "none was dropped" in render(same, "md") and same.dropped == ()


def test_no_shared_question_is_refused_even_with_intersect(tmp_path):
    write_outcome_folder(tmp_path / "a", [("q1", "factconsolidation_sh_6k", 1)])
    write_outcome_folder(tmp_path / "b", [("q2", "factconsolidation_sh_6k", 1)])
    result = invoke("compare", "a", "b", "--intersect", "--results-dir", tmp_path)
    assert result.output == ("Error: the runs have no question in common: nothing to compare "
                             "(expected runs over the same rows)\n")


def test_one_run_or_a_run_twice_is_refused():
    result = invoke("compare", PLAIN, "--results-dir", RESULTS)
    assert result.exit_code == 2
    assert "give a baseline run and at least one run to compare with it" in result.output
    result = invoke("compare", PLAIN, RESULTS / PLAIN, "--results-dir", RESULTS)
    assert result.exit_code == 1
    assert result.output == (f"Error: run {PLAIN} is given twice ('{PLAIN}' and "
                             f"'{RESULTS / PLAIN}') (expected each run once)\n")


def test_names_and_ids_are_escaped_per_format(tmp_path):
    name = "a|b*c"
    write_outcome_folder(tmp_path / "b_a*se", [("q|1", "factconsolidation_sh_6k", 0)])
    write_outcome_folder(tmp_path / name, [("q|1", "factconsolidation_sh_6k", 1)])
    md = invoke("compare", "b_a*se", name, "--results-dir", tmp_path).stdout
    assert r"| a\|b\*c | factconsolidation_sh_6k |" in md
    assert r"- a\|b\*c, factconsolidation_sh_6k: B only (1): q\|1; A only (0): none" in md
    assert "\nA: b_a\\*se (live:rules + live:lexicon, search), the baseline;" in md
    tex = invoke("compare", "b_a*se", name, "--results-dir", tmp_path, "--format",
                 "latex").stdout
    assert r"a|b*c & factconsolidation\_sh\_6k &" in tex
    assert r"{\footnotesize A: b\_a*se (live:rules + live:lexicon, search), the baseline;" in tex


def test_help_ends_with_an_example_that_runs():
    result = invoke("compare", "-h")
    assert result.exit_code == 0
    text = " ".join(main.get_command(None, "compare").help.split())    # as written
    example = "factres compare dev-6k-plain-confidence dev-6k-search-confidence"
    assert text.endswith(f"Example: {example}")
    assert invoke(*example.split()[1:], "--results-dir", RESULTS).exit_code == 0


def test_the_flipped_question_list_is_wrapped_between_ids():
    """Issue 34, item 9: each run's and source's list is one list item, wrapped at 100
    columns between ids (never inside one), its lines indented."""
    result = invoke("compare", PLAIN, SEARCH)
    tail = result.stdout.split("Flipped questions")[1].splitlines()[2:]
    assert tail and all(len(line) <= 100 for line in tail)
    assert tail[0].startswith("- ") and all(line.startswith("  ") for line in tail[1:])
    ids = " ".join(line.strip() for line in tail).split()
    assert "factconsolidation_mh_6k_no19," in ids
