"""One results folder for every command: `--results-dir`, else $FACTRES_RESULTS, else
./factres-results; run ids not found there are looked up, read only, in the repository's
committed results/.
`run` -> `oracle` -> `tables` read and write the same folder, and unfinished folders (`.tmp-*`,
the `.incomplete` marker) are refused by every reader."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_oracle_paths import write_tiny

from oracle.cli import main, oracle
from resolver.cli import COMMANDS

READERS_AND_WRITERS = ["run", "table", "tables", "compare", "export"] + [
    f"oracle {n}" for n in sorted(oracle.commands)]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_every_command_that_reads_or_writes_results_takes_results_dir():
    assert {"run", "table", "tables", "compare", "export"} <= set(COMMANDS)
    for command in READERS_AND_WRITERS:
        result = invoke(*command.split(), "-h")
        assert "--results-dir" in result.output, command
        # click may wrap the help after a hyphen ("./factres-" "results")
        text = " ".join(result.output.split()).replace("- ", "-")
        assert "$FACTRES_RESULTS, else ./factres-results" in text, command


@pytest.mark.parametrize("how", ["env", "option"])
def test_run_oracle_and_tables_share_one_results_folder(tmp_path, monkeypatch, how):
    data, results = write_tiny(tmp_path), tmp_path / "elsewhere"
    monkeypatch.chdir(tmp_path)
    option = []
    if how == "env":
        monkeypatch.setenv("FACTRES_RESULTS", str(results))
    else:
        monkeypatch.delenv("FACTRES_RESULTS", raising=False)
        option = ["--results-dir", results]
    assert invoke("run", "--data", data, "--run-id", "r1", *option).exit_code == 0
    nbest = invoke("oracle", "nbest", "r1", *option)
    assert nbest.stderr == (f"wrote {results}/oracle-nbest-r1/nbest.json and "
                            f"{results}/oracle-nbest-r1/nbest.md\n")
    assert invoke("oracle", "ceiling", "--data", data, *option).exit_code == 0
    tables = invoke("tables", "--format", "md", *option)
    assert tables.exit_code == 0, tables.output
    written = {line.split("/")[-1] for line in tables.output.splitlines()}
    assert {"mab-fc.md", "mab-nbest.md", "mab-ceiling.md"} <= written
    assert not (tmp_path / "results").exists()


def test_a_committed_run_is_found_by_its_path_whatever_the_results_folder(tmp_path, monkeypatch):
    data = write_tiny(tmp_path)
    invoke("run", "--data", data, "--run-id", "kept", "--results-dir", tmp_path / "committed")
    monkeypatch.setenv("FACTRES_RESULTS", str(tmp_path / "mine"))
    result = invoke("oracle", "nbest", tmp_path / "committed" / "kept")
    assert result.stderr.startswith(f"wrote {tmp_path / 'mine'}/oracle-nbest-kept/nbest.json")


def test_unfinished_folders_are_refused_by_every_reader(tmp_path):
    data, results = write_tiny(tmp_path), tmp_path / "results"
    invoke("run", "--data", data, "--run-id", "done", "--results-dir", results)
    unfinished = results / ".tmp-done-1234"
    (results / "done").rename(unfinished)
    marked = results / "marked"
    unfinished.rename(marked)
    (marked / ".incomplete").write_text("{}")
    for args in (("table", marked), ("tables", marked, "--out", tmp_path / "t"),
                 ("oracle", "misses", marked)):
        result = invoke(*args)
        assert result.exit_code == 1, args
        assert result.output.startswith(f"Error: {marked}: an unfinished folder (it holds the "
                                        ".incomplete marker)")
    marked.rename(unfinished)
    (unfinished / ".incomplete").unlink()
    for args in (("table", unfinished), ("tables", unfinished, "--out", tmp_path / "t"),
                 ("oracle", "nbest", unfinished)):
        result = invoke(*args)
        assert result.exit_code == 1, args
        assert result.output.startswith(f"Error: {unfinished}: an unfinished folder (.tmp-*")
    # a scan of the results folder skips it: no table has input
    assert invoke("tables", "--results-dir", results, "--table", "mab-fc").exit_code == 1


DEFAULT_ID = re.compile(r"(dev|test)-[0-9a-z-]+-[0-9a-f]{8}(-\d+)?\Z")
COMMITTED = Path(__file__).resolve().parent.parent / "results"


@pytest.mark.parametrize("command", ["table", "tables", "compare", "export", "oracle misses",
                                     "oracle nbest"])
def test_help_examples_name_runs_the_tool_makes(command):
    group, *sub = command.split()
    cmd = main.get_command(None, group)
    cmd = cmd.commands[sub[0]] if sub else cmd
    text = " ".join(cmd.help.split())        # the docstring, as written (not as wrapped)
    words = text.split("Example: factres ")[1].split()[len(command.split()):]
    runs = [w for i, w in enumerate(words)
            if not w.startswith("-") and not (i and words[i - 1].startswith("--"))]
    assert runs
    for run in runs:
        assert DEFAULT_ID.match(run) or (COMMITTED / run).is_dir(), run


def test_an_oracle_command_checks_its_folder_before_the_analysis(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("analysed before checking the folder")
    monkeypatch.setattr("oracle.ceiling.analyse", refuse)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    # --results-dir under a file too, as --out is (verification U)
    result = invoke("oracle", "ceiling", "--results-dir", blocker / "results")
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: --results-dir {blocker / 'results'}: {blocker} is a "
                                  "file, not a folder\n")
    # --out under a file is refused at the option, naming the file (audit E, E59)
    result = invoke("oracle", "ceiling", "--out", blocker / "out")
    assert result.exit_code == 2
    assert result.output.endswith(f"Error: --out {blocker / 'out'}: {blocker} is a file, not a "
                                  "folder\n")


def test_score_tables_and_freeze_refuse_an_unwritable_place_in_one_line(tmp_path):
    """Checked before any work, one line naming the place: never a traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    harness = Path(__file__).parent / "data" / "mab-outputs"
    sample = sorted(harness.glob("factconsolidation_sh_*_results.json"))[0]
    runner = CliRunner()
    # --results-dir under a file is refused at the option (a usage error, exit 2), as --out is
    for args, where in [
            (["score", str(sample), "--results-dir", str(blocker / "r")], blocker / "r"),
            (["tables", "--results-dir", str(blocker / "t")], blocker / "t")]:
        result = runner.invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 2, args
        assert result.output.endswith(f"Error: --results-dir {where}: {blocker} is a file, not "
                                      "a folder\n"), result.output
    result = runner.invoke(main, ["freeze", str(blocker / "f.json")], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {blocker / 'f.json'}: "), result.output
    assert result.output.count("\n") == 1, result.output


def _tracked_tree_hash() -> str:
    """The hash git gives the checkout's tracked files as they are now (staged or not)."""
    import subprocess
    return subprocess.run(["git", "-C", str(COMMITTED.parent), "status", "--porcelain",
                           "--untracked-files=no"], capture_output=True, text=True,
                          check=True).stdout


def test_by_default_everything_is_written_to_factres_results(tmp_path, monkeypatch):
    """With neither --results-dir nor $FACTRES_RESULTS, a user's runs, oracle folders and
    tables go to ./factres-results, never into the checkout's tracked results/."""
    data = write_tiny(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FACTRES_RESULTS", raising=False)
    assert invoke("run", "--data", data, "--run-id", "mine").exit_code == 0
    assert (tmp_path / "factres-results" / "mine" / "meta.json").is_file()
    assert invoke("oracle", "nbest", "mine").exit_code == 0
    assert (tmp_path / "factres-results" / "oracle-nbest-mine" / "nbest.json").is_file()


def test_a_committed_run_id_is_found_and_nothing_tracked_is_touched(tmp_path, monkeypatch):
    """The README's `factres tables ... --table mab-fc` example from a clone: the committed runs
    are read by id from results/, the table is written under ./factres-results/tables/."""
    before = _tracked_tree_hash()
    monkeypatch.chdir(COMMITTED.parent)
    monkeypatch.setenv("FACTRES_RESULTS", str(tmp_path / "factres-results"))
    result = invoke("tables", "dev-6k-search-confidence", "imported-nous-6k", "--table",
                    "mab-fc")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "factres-results" / "tables" / "mab-fc.md").is_file()
    assert _tracked_tree_hash() == before
    # the table re-rendered from the committed run's own files (it states the mode now)
    table = invoke("table", "dev-6k-search-confidence")
    assert table.output == (COMMITTED / "dev-6k-search-confidence" / "table.md").read_text() \
        .replace("| kind | reader |", "| kind | mode | reader |").replace(
            "|---|---|---|--:|", "|---|---|---|---|--:|").replace(" | none | ", " | search | none | ")


def test_no_new_run_takes_a_committed_runs_name(tmp_path):
    """A run named as a committed one would hide it from every lookup by id: refused; a
    default id skips committed names (as an oracle folder's does)."""
    data = write_tiny(tmp_path)
    results = tmp_path / "results"
    refused = invoke("run", "--data", data, "--run-id", "dev-6k-search-confidence",
                     "--results-dir", results)
    assert refused.exit_code == 1
    assert refused.output == (f"Error: 'dev-6k-search-confidence' is a committed folder in "
                              f"{COMMITTED}/: a new run of that name would hide it from every "
                              "lookup by id; choose another --run-id or omit it\n")
    assert not (results / "dev-6k-search-confidence").exists()
    from resolver.run.run_folder import claim
    claimed = claim(results, base="imported-nous-6k")
    assert claimed.run_id == "imported-nous-6k-2"
    claimed.release()


def test_a_name_in_both_places_says_which_folder_was_read(tmp_path):
    """A folder of a committed run's name in the results folder (an older factres made it, or
    a copy) is read first, and the command says so."""
    results = tmp_path / "results"
    results.mkdir()
    import shutil
    shutil.copytree(COMMITTED / "dev-6k-plain-confidence", results / "dev-6k-search-confidence")
    mine = invoke("table", "dev-6k-search-confidence", "--results-dir", results)
    assert mine.exit_code == 0
    assert mine.stdout == invoke("table", results / "dev-6k-search-confidence").stdout
    assert mine.stderr == (f"note: dev-6k-search-confidence is in {results}/ and in the "
                           f"committed {COMMITTED}/: read "
                           f"{results / 'dev-6k-search-confidence'}\n")
    assert "| plain |" in mine.stdout


def test_factres_results_is_git_ignored():
    ignored = (COMMITTED.parent / ".gitignore").read_text().splitlines()
    assert "factres-results/" in ignored
