"""`factres tables`: CLI doors onto resolver.report.paper_tables (exact output and errors)."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from resolver.cli import main

FIXTURES = Path(__file__).parent / "data" / "tables"
GOLDEN = Path(__file__).parent / "data" / "golden"
REFERENCES = str(FIXTURES / "references.json")


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def unchecked(*runs: str) -> str:
    """The notes on the hand-made score runs here: they name no data, so the reader says what
    it could not check of them (nothing is skipped silently)."""
    return "".join(f"note: {run}: meta.json names no data file: its questions and gold are not "
                   "compared with any data\n" for run in runs)


def test_tables_of_named_folders_in_both_formats(tmp_path):
    runs = ["dev-plain-dirty", "dev-small", "test-262k-unfrozen", "oracle-nbest-dev-small",
            "oracle-ceiling-small", "oracle-ceiling-sizes"]
    result = invoke("tables", *runs, "--results-dir", str(FIXTURES), "--out", str(tmp_path),
                    "--references", REFERENCES)
    assert result.exit_code == 0
    names = [f"{t}.{e}" for t in ("mab-fc", "mab-nbest", "mab-ceiling", "mab-ref")
             for e in ("md", "tex")] + ["preview.tex"]
    assert result.stdout == "".join(f"wrote {tmp_path / n}\n" for n in names)
    assert result.stderr == unchecked("dev-plain-dirty", "dev-small", "test-262k-unfrozen") + (
        "note: mab-ref: test-262k-unfrozen left out: unscored (a test run)\n")
    for name in names[:-1]:
        assert (tmp_path / name).read_text() == (GOLDEN / name).read_text(), name


def test_baseline_and_references_in_mab_fc(tmp_path):
    baseline = Path(__file__).parent / "data" / "baseline" / "dev-weak"
    runs = ["dev-plain-dirty", "dev-small", "test-262k-unfrozen"]
    result = invoke("tables", *runs, "--results-dir", str(FIXTURES), "--out", str(tmp_path),
                    "--references", REFERENCES, "--table", "mab-fc", "--baseline",
                    str(baseline), "--with-references")
    assert result.exit_code == 0
    assert result.stderr == unchecked("dev-plain-dirty", "dev-small", "test-262k-unfrozen")
    for ext in ("md", "tex"):
        assert (tmp_path / f"mab-fc.{ext}").read_text() == \
            (GOLDEN / f"mab-fc-marked.{ext}").read_text()
    # a baseline that is no run is refused before anything is written
    result = invoke("tables", *runs, "--results-dir", str(FIXTURES), "--out",
                    str(tmp_path / "other"), "--baseline", "dev-nope")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"Error: no run 'dev-nope' in {FIXTURES}/ (4 runs there: ")
    assert not (tmp_path / "other" / "mab-fc.md").exists()


def test_default_reads_the_results_dir_and_notes_what_it_leaves_out(tmp_path):
    result = invoke("tables", "--results-dir", str(FIXTURES), "--out", str(tmp_path),
                    "--format", "md", "--references", REFERENCES)
    assert result.exit_code == 0
    assert result.stderr == unchecked("dev-plain-dirty", "dev-small", "heldout-other",
                                      "test-262k-unfrozen") + (
        "note: mab-fc: heldout-other left out: no MemoryAgentBench FactConsolidation source "
        "(factconsolidation_sh/mh_<size>)\n"
        "note: mab-ref: test-262k-unfrozen left out: unscored (a test run)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "mab-ceiling.md", "mab-fc.md", "mab-nbest.md", "mab-ref.md"]


def test_missing_input_is_a_note_unless_the_table_is_asked_for(tmp_path):
    result = invoke("tables", "dev-small", "--results-dir", str(FIXTURES), "--out",
                    str(tmp_path), "--format", "latex", "--references", REFERENCES)
    assert result.exit_code == 0
    assert result.stderr == unchecked("dev-small") + (
        "note: mab-nbest: no oracle nbest folder (nbest.json) to build it from (make one with "
        "`factres oracle nbest RUN` (it writes <results>/oracle-nbest-RUN/) and name it); not written\n"
        "note: mab-ceiling: no oracle ceiling folder (ceiling.json) to build it from (make one "
        "with `factres oracle ceiling [--data ROWS]` (it writes <results>/oracle-ceiling-<sizes>/) "
        "and name it); "
        "not written\n")
    result = invoke("tables", "dev-small", "--results-dir", str(FIXTURES), "--out",
                    str(tmp_path), "--table", "mab-nbest")
    assert result.exit_code == 1
    assert result.output == ("Error: table mab-nbest: no oracle nbest folder "
                             "(nbest.json) to build it from (make one with `factres oracle nbest "
                             "RUN` (it writes <results>/oracle-nbest-RUN/) and name it) (expected at least one oracle nbest "
                             "folder (nbest.json))\n")


def test_unknown_folder_and_unread_kind_are_errors(tmp_path):
    result = invoke("tables", "nope", "--results-dir", str(FIXTURES), "--out", str(tmp_path))
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: no folder 'nope' in {FIXTURES}/ (8 folders there: dev-plain-dirty, dev-small, "
        "heldout-other, oracle-ceiling-sizes, oracle-ceiling-small and 3 more) or in "
        f"{Path(__file__).resolve().parent.parent / 'results'}/ (")
    assert result.output.endswith(
        "(expected a folder under the results folder (--results-dir, $FACTRES_RESULTS or "
        "./factres-results) or the repository's committed results/, or a folder path)\n")
    result = invoke("tables", "oracle-paths-small", "--results-dir", str(FIXTURES))
    assert result.exit_code == 1
    assert result.output == (f"Error: {FIXTURES / 'oracle-paths-small'}: not a folder factres "
                             "tables reads (expected a score run (meta.json and metrics.json) "
                             "or an oracle folder with nbest.json or ceiling.json)\n")


def _built_from(table: Path) -> list[str]:
    """The folders a committed table names in its "built by factres tables from:" comment."""
    line = next(l for l in table.read_text().splitlines() if "built by factres tables" in l)
    return line.split("from:", 1)[1].removesuffix("-->").replace(",", " ").split()


def test_the_committed_dev_runs_give_all_four_tables(tmp_path):
    repo = Path(__file__).resolve().parent.parent
    committed = repo / "results" / "tables"
    # in the order the tables name them: rows follow the order of the arguments
    runs = list(dict.fromkeys(f for t in ("mab-fc", "mab-nbest", "mab-ceiling")
                              for f in _built_from(committed / f"{t}.md")))
    assert "dev-6k-search-reading" in runs and "oracle-ceiling-6k-2" in runs
    assert any(r.startswith("imported-") for r in runs)
    # two search runs: the n-best one named apart (docs/tables.md gives the same command)
    result = invoke("tables", *runs, "--results-dir", str(repo / "results"), "--out",
                    str(tmp_path), "--label",
                    "dev-6k-search-nbest-reading=factres search, n-best sets")
    assert result.exit_code == 0 and result.stderr == ""
    for t in ("mab-fc", "mab-nbest", "mab-ceiling", "mab-ref"):
        assert (tmp_path / f"{t}.md").is_file() and (tmp_path / f"{t}.tex").is_file()
    fc = (tmp_path / "mab-fc.md").read_text()
    # the runs by label; the current dev runs from a clean tree at 2b821e8 (no mark), in the
    # rows' footnote; imported systems follow
    assert "| factres search | 100.0 [100.0, 100.0] | 94.0 [89.0, 98.0] |" in fc
    assert "| factres plain | 100.0 [100.0, 100.0] | 89.0 [83.0, 94.0] |" in fc
    assert "factres plain: run dev-6k-plain-reading, plan sets live:rules + live:lexicon, mode " \
        "plain, reader none, split dev, commit 2b821e8;" in fc
    assert "| nous-memoryAgentBench§ | 38.0 [29.0, 47.0] |" in fc
    # the committed results/tables/ are exactly what the command writes
    for path in sorted(committed.glob("mab-*")):
        if path.suffix in (".md", ".tex"):
            assert (tmp_path / path.name).read_text() == path.read_text(), path.name


def test_plot_writes_figures(tmp_path):
    pytest.importorskip("matplotlib")
    result = invoke("tables", "oracle-nbest-dev-small", "oracle-ceiling-small", "--results-dir",
                    str(FIXTURES), "--out", str(tmp_path), "--table", "mab-nbest", "--plot")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-2:] == [f"wrote {tmp_path / 'mab-nbest.png'}",
                                               f"wrote {tmp_path / 'mab-ceiling.png'}"]
    for name in ("mab-nbest.png", "mab-ceiling.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install_it(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    result = invoke("tables", "oracle-ceiling-small", "--results-dir", str(FIXTURES), "--out",
                    str(tmp_path), "--plot")
    assert result.exit_code == 1
    assert result.output.endswith("Error: --plot needs matplotlib, which is not installed: "
                                  "pip install 'factres[plot]'\n")


@pytest.mark.parametrize("command", ["tables", "freeze"])
def test_help_ends_with_an_example(command):
    result = invoke(command, "-h")
    assert result.exit_code == 0
    assert "Example: factres " + command in result.output
    if command == "tables":
        assert "--baseline RUN" in result.output and "--with-references" in result.output


def test_the_docs_show_the_committed_dev_table_verbatim():
    repo = Path(__file__).resolve().parent.parent
    table = (repo / "results" / "tables" / "mab-fc.md").read_text()
    assert table in (repo / "docs" / "tables.md").read_text()


def test_plot_draws_the_main_result_with_the_baseline_set_apart(tmp_path):
    """Issue 34, item 3: mab-fc.png and mab-fc.pdf, one mark per run, the same bytes for the
    same folders."""
    pytest.importorskip("matplotlib")
    repo = Path(__file__).resolve().parent.parent / "results"
    runs = [str(repo / r) for r in ("dev-6k-plain-confidence", "dev-6k-search-confidence",
                                    "imported-nous-6k")]
    outs = []
    for n in (1, 2):
        out = tmp_path / str(n)
        result = invoke("tables", *runs, "--out", str(out), "--table", "mab-fc", "--plot",
                        "--baseline", runs[0])
        assert result.exit_code == 0, result.output
        assert f"wrote {out / 'mab-fc.png'}" in result.stdout.splitlines()
        outs.append(out)
    assert (outs[0] / "mab-fc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (outs[0] / "mab-fc.pdf").read_bytes()[:5] == b"%PDF-"
    for name in ("mab-fc.png", "mab-fc.pdf"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name


def test_columns_and_labels_are_checked(tmp_path):
    bad = invoke("tables", "dev-small", "--results-dir", str(FIXTURES), "--out", str(tmp_path),
                 "--columns", "mode,colour")
    assert bad.exit_code == 1
    assert bad.stderr.endswith("Error: unknown mab-fc column 'colour' (expected run, plan-sets, "
                               "mode, reader, split, commit)\n")
    unknown = invoke("tables", "dev-small", "--results-dir", str(FIXTURES), "--out",
                     str(tmp_path), "--label", "dev-nope=X", "--table", "mab-fc")
    assert unknown.exit_code == 1
    assert "--label names 'dev-nope', which is no run of mab-fc" in unknown.stderr
    shown = invoke("tables", "dev-small", "--results-dir", str(FIXTURES), "--out", str(tmp_path),
                   "--label", "dev-small=My system", "--columns", "mode", "--table", "mab-fc",
                   "--format", "md")
    assert shown.exit_code == 0
    assert "| My system | search |" in (tmp_path / "mab-fc.md").read_text()
