"""`factres oracle ...`: help, output folders, errors."""
import shutil
from pathlib import Path

import orjson
from click.testing import CliRunner
from test_oracle_paths import write_tiny

from oracle.cli import main, oracle
from oracle.report import claim_dir


def test_every_oracle_command_has_help_with_an_example():
    runner = CliRunner()
    for name in sorted(oracle.commands):
        result = runner.invoke(main, ["oracle", name, "-h"], catch_exceptions=False)
        assert result.exit_code == 0
        assert "Example: factres oracle " + name in result.output
    assert sorted(oracle.commands) == ["calibration", "ceiling", "misses", "nbest", "paths",
                                       "signals", "versions"]


def test_ceiling_writes_json_and_markdown_and_never_overwrites(tmp_path):
    data, out = write_tiny(tmp_path), tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(main, ["oracle", "ceiling", "--data", str(data), "--out", str(out)],
                           catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stderr == f"wrote {out}/ceiling.json and {out}/ceiling.md\n"
    assert result.stdout.startswith("# Ceiling of one-version-per-key stores\n")
    assert "| factconsolidation_mh_6k | 6k | 5 | 4 | 2 | 2 | 2 |" in (out / "ceiling.md").read_text()
    again = runner.invoke(main, ["oracle", "ceiling", "--data", str(data), "--out", str(out)],
                          catch_exceptions=False)
    assert again.exit_code == 1
    assert again.output == (f"Error: {out} exists: factres oracle ceiling writes a new folder "
                            "and never overwrites; choose another --out\n")


def test_default_folders_take_the_next_suffix(tmp_path):
    first, claimed = claim_dir("paths", "tiny", root=tmp_path)
    assert first == tmp_path / "oracle-paths-tiny"
    assert claimed == tmp_path / ".tmp-oracle-paths-tiny" and claimed.is_dir()
    # claimed, not yet written: a second command started meanwhile takes the next name
    assert claim_dir("paths", "tiny", root=tmp_path)[0] == tmp_path / "oracle-paths-tiny-2"
    (tmp_path / "oracle-paths-tiny-3").mkdir()
    assert claim_dir("paths", "tiny", root=tmp_path)[0] == tmp_path / "oracle-paths-tiny-4"


def test_a_new_folder_takes_no_committed_folders_name(tmp_path):
    """In a clone, `factres oracle ceiling` must not write oracle-ceiling-6k or -2 (the
    committed folders): every later lookup of those names would read the new one."""
    committed = Path(__file__).resolve().parents[1] / "results"
    assert (committed / "oracle-ceiling-6k").is_dir() and (committed / "oracle-ceiling-6k-2").is_dir()
    assert claim_dir("ceiling", "6k", root=tmp_path)[0] == tmp_path / "oracle-ceiling-6k-3"
    # the repository's own results/ as the results folder: its names are its own
    from resolver.run.run_folder import taken
    assert taken(tmp_path, "oracle-ceiling-6k") and not taken(committed, "oracle-ceiling-6k-9")


def test_missing_run_is_a_clean_error(tmp_path):
    result = CliRunner().invoke(main, ["oracle", "misses", str(tmp_path / "nope")],
                                catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output == (f"Error: no run folder '{tmp_path / 'nope'}' (expected a run id "
                             "under the results folder (--results-dir, $FACTRES_RESULTS or "
                             "./factres-results) or the repository's committed results/, or a "
                             "run folder path)\n")


def test_ceiling_cut_short_by_its_time_limit_says_so(tmp_path):
    data, out = write_tiny(tmp_path), tmp_path / "out"
    result = CliRunner().invoke(main, ["oracle", "ceiling", "--data", str(data), "--out",
                                       str(out), "--time-limit", "1e-9"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stderr.endswith(f"wrote {out}/ceiling.json and {out}/ceiling.md\n")
    assert result.stderr.startswith("note: Status: NOT proven optimal: the time limit of 1e-09 s "
                                    "stopped the solver first (6k haystack ")
    assert "best found 5, bound 8" in result.stderr
    assert '"status": "FEASIBLE"' in (out / "ceiling.json").read_text()


def _copy_run(tmp_path, run_id, data):
    """A committed run folder copied under tmp_path/results/, its meta.json's data paths
    replaced by `data` (the recorded sha256 kept under the new name)."""
    src = Path(__file__).resolve().parent.parent / "results" / run_id
    dst = tmp_path / "results" / run_id
    shutil.copytree(src, dst)
    meta = orjson.loads((dst / "meta.json").read_bytes())
    (old,) = meta["data"]
    meta["data_sha256"] = {data: meta["data_sha256"][old]}
    meta["data"] = [data]
    (dst / "meta.json").write_bytes(orjson.dumps(meta))
    return dst


def test_a_run_made_in_another_checkout_finds_its_bundled_data(tmp_path):
    run = _copy_run(tmp_path, "dev-6k-search-reading",
                    "/nowhere/else/resolver/data/fc/factconsolidation_6k.json")
    out = tmp_path / "nb"
    result = CliRunner().invoke(main, ["oracle", "nbest", str(run), "--out", str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (out / "nbest.json").is_file()


def test_a_run_whose_data_is_gone_is_found_by_its_sha256_or_is_one_clean_error(tmp_path):
    from resolver.haystack import bundled_path
    # another name, the bundled rows' sha256: the bundled file is found by its content (C54)
    run = _copy_run(tmp_path, "dev-6k-search-reading", "/nowhere/else/mine.json")
    result = CliRunner().invoke(main, ["oracle", "misses", str(run), "--out",
                                       str(tmp_path / "m")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # no file anywhere with the recorded sha256
    meta = orjson.loads((run / "meta.json").read_bytes())
    sha = "0" * 64
    meta["data_sha256"] = {"/nowhere/else/mine.json": sha}
    (run / "meta.json").write_bytes(orjson.dumps(meta))
    result = CliRunner().invoke(main, ["oracle", "misses", str(run), "--out",
                                       str(tmp_path / "m2")], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output == (f"Error: {run / 'meta.json'}: the run's data file "
                             "/nowhere/else/mine.json is gone (tried /nowhere/else/mine.json, "
                             f"{bundled_path('mine.json')}, every bundled file "
                             f"({bundled_path().parent})) (expected the data file it names, or "
                             f"a copy with the sha256 meta.json records for it ({sha}))\n")


def test_an_analysis_of_a_bare_context_is_refused(tmp_path):
    context = Path(__file__).resolve().parent.parent / "resolver" / "data" / "fc" / \
        "factconsolidation_32k_context.txt"
    for command in ("paths", "versions", "ceiling", "signals"):
        result = CliRunner().invoke(main, ["oracle", command, "--data", str(context), "--out",
                                           str(tmp_path / command)], catch_exceptions=False)
        assert result.exit_code == 1, command
        assert result.output == (f"Error: {context}: the data has no questions: nothing to "
                                 "analyse (a bare context?) (expected rows with questions and "
                                 "answers)\n"), command
        assert not (tmp_path / command).exists()


def test_nbest_of_an_imported_run_is_refused(tmp_path):
    run = Path(__file__).resolve().parent.parent / "results" / "imported-nous-6k"
    result = CliRunner().invoke(main, ["oracle", "nbest", str(run), "--out", str(tmp_path / "n")],
                                catch_exceptions=False)
    assert result.exit_code == 1
    assert "it has no plan sets, so plan recall@N means nothing for it" in result.output


def test_every_oracle_command_prints_its_summary_table(tmp_path):
    """Each command prints its summary (the Markdown up to the per-question detail: title,
    legend, summary tables) on stdout, and where the files went on stderr; calibration prints
    its own summary table."""
    data, results = write_tiny(tmp_path), tmp_path / "results"
    runner = CliRunner()
    made = runner.invoke(main, ["run", "--data", str(data), "--run-id", "tiny", "--results-dir",
                                str(results)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    calls = {"paths": ["--data", str(data)], "versions": ["--data", str(data)],
             "ceiling": ["--data", str(data)], "signals": ["--data", str(data)],
             "misses": ["tiny"], "nbest": ["tiny"], "calibration": ["tiny"]}
    assert sorted(calls) == sorted(oracle.commands)
    for name, args in calls.items():
        result = runner.invoke(main, ["oracle", name, *args, "--results-dir", str(results)],
                               catch_exceptions=False)
        assert result.exit_code == 0, (name, result.output)
        (folder,) = [p for p in results.iterdir() if p.name.startswith(f"oracle-{name}-")]
        assert result.stderr.endswith(f"wrote {folder}/{name}.json and {folder}/{name}.md\n")
        printed = result.stdout.splitlines()
        assert any(line.startswith("| ") for line in printed), name
        if name != "calibration":
            assert printed[0].startswith("# "), name
            markdown = (folder / f"{name}.md").read_text().splitlines()
            assert set(printed) <= set(markdown), name
            # the detail sections stay in the file
            assert not any(line.startswith(("## Questions", "## Misses", "## Components"))
                           for line in printed), name


def test_the_misses_help_names_the_buckets_as_the_output_does():
    from oracle.misses import BUCKETS, IMPORTED_BUCKETS
    text = " ".join(oracle.commands["misses"].help.split())
    assert all(f" {bucket}," in text or f" {bucket}." in text
               for bucket in BUCKETS + IMPORTED_BUCKETS)
